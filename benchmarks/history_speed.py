"""The history import beside `git log --first-parent -M --numstat` over the same commits.

    .venv/bin/python benchmarks/history_speed.py REPO [--since 720h | --max-commits N]

REPO is any git repository (bare or not; e.g. a clone of elixir-lang/elixir). It is cloned
(`--no-checkout --shared`) into a temporary directory; the window ends at the newest commit, so
the figures do not drift with the date. Prints the wall time of `import_history` into a fresh
SQLite database (the whole import: git's diffs, line counts, symbols, storing) beside the git
command that prints the same files and counts, and the import without symbol extraction.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from symdiff import filechange
from symdiff.config import Settings
from symdiff.duration import parse_go_duration
from symdiff.history import import_history
from symdiff.store import Store

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def run_import(clone: Path, db: Path, since: timedelta | None, max_commits: int | None,
               now: datetime) -> tuple[float, int, int]:  # fmt: skip
    settings = Settings.resolve(str(clone), db=f"sqlite:///{db}")
    with Store(settings.db_url) as store:
        started = time.perf_counter()
        report = import_history(settings, store, since=since, max_commits=max_commits, now=now)
        return time.perf_counter() - started, report.commits, report.recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--since", default=None, help="a Go duration (default 720h)")
    parser.add_argument("--max-commits", type=int, default=None)
    args = parser.parse_args()
    since_text = args.since or (None if args.max_commits else "720h")
    since = None if since_text is None else timedelta(
        microseconds=parse_go_duration(since_text) // 1000)
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        git(Path(tmp), "clone", "-q", "--no-checkout", "--shared", str(args.repo), str(clone))
        newest = datetime.fromtimestamp(int(git(clone, "log", "-1", "--format=%ct")), UTC)
        limit = []
        if since is not None:
            limit.append(f"--since={int((newest - since).timestamp())}")
        if args.max_commits:
            limit.append(f"--max-count={args.max_commits}")
        started = time.perf_counter()
        out = git(clone, "log", "--first-parent", "--diff-merges=first-parent", "-M",
                  "--numstat", "--format=%x00%H", *limit, "HEAD", "--")  # fmt: skip
        peer = time.perf_counter() - started
        commits = out.count("\0")
        lines = sum(1 for ln in out.splitlines() if ln and not ln.startswith("\0"))
        ours, walked, recorded = run_import(clone, Path(tmp) / "a.db", since, args.max_commits,
                                            newest)  # fmt: skip
        real = filechange.file_symbols
        filechange.file_symbols = lambda *a: ()  # type: ignore[assignment]
        try:
            bare, _, _ = run_import(clone, Path(tmp) / "b.db", since, args.max_commits, newest)
        finally:
            filechange.file_symbols = real
        window = f"{since_text} before the newest commit" if since_text else ""
        print(f"{args.repo.name}: {walked} first-parent commits {window}"
              f"{'' if not args.max_commits else f' (at most {args.max_commits})'}; "
              f"{recorded} records (git log: {commits} commits, {lines} numstat lines)")
        print(f"history import:                     {ours:8.2f} s")
        print(f"  without symbols:                  {bare:8.2f} s")
        print(f"git log --first-parent -M --numstat: {peer:8.2f} s")
        print(f"ratio: {ours / peer:.2f}x  (without symbols: {bare / peer:.2f}x)")


if __name__ == "__main__":
    main()
