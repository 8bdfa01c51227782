"""Per-call time of `git.state.snapshot` beside its peer, `git rev-parse HEAD`.

    .venv/bin/python benchmarks/gitstate_speed.py [REPO] [--calls 2000] [--runs 7]

REPO defaults to this checkout. The daemon takes one snapshot per batch; the peer is the
cheapest question a git-subprocess design would ask per batch. Also shown: reading HEAD's whole
reflog through pygit2, which the snapshot avoids by reading the reflog's last line only.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from symdiff.git.state import open_repo, snapshot

CHECKOUT = Path(__file__).resolve().parent.parent


def _per_call(fn: Callable[[], object], calls: int, runs: int) -> float:
    """The median over `runs` of the mean seconds per call over `calls` calls."""
    fn()  # warm
    means = []
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(calls):
            fn()
        means.append((time.perf_counter() - started) / calls)
    return statistics.median(means)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, default=CHECKOUT)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    repo = open_repo(args.repo)
    if repo is None:
        raise SystemExit(f"not in a git work tree: {args.repo}")
    state = snapshot(repo)
    entries = sum(1 for _ in repo.handle.references["HEAD"].log())

    def rev_parse() -> None:
        subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo.workdir, check=True,
                       capture_output=True)  # fmt: skip

    def whole_reflog() -> int:
        return sum(1 for _ in repo.handle.references["HEAD"].log())

    peer_calls = max(1, args.calls // 20)
    rows = [
        ("git.state.snapshot", _per_call(lambda: snapshot(repo), args.calls, args.runs)),
        ("git rev-parse HEAD (subprocess)", _per_call(rev_parse, peer_calls, args.runs)),
        ("pygit2 HEAD reflog, every entry", _per_call(whole_reflog, args.calls, args.runs)),
    ]
    print(f"repo {repo.workdir}  branch {state.branch}  HEAD reflog: {entries} entries, "
          f"{state.head_reflog.size} bytes")  # fmt: skip
    for label, seconds in rows:
        print(f"{label:34} {seconds * 1e6:10.1f} µs per call")
    print(f"git rev-parse HEAD / snapshot: {rows[1][1] / rows[0][1]:.0f}x")


if __name__ == "__main__":
    main()
