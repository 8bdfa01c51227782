"""apply_edits on one large Python file (125,000 one-line functions, 3.8 MB): the dry run and
the real apply (recorded in an indexed workspace), beside GNU `patch` applying the same edit.

Run: .venv/bin/python benchmarks/apply_speed.py [--runs N] [--functions N] [--profile]

Each run builds fresh workspaces (their own file content, so no cache carries over from an
earlier run or from one measurement to the next) and takes their index baseline (not timed);
then it times a real apply alone, a dry run followed by the real apply of the same edit, and
`patch` on a copy of the file with the unified diff of the same edit.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import symdiff
from symdiff.config import Settings


def source(functions: int, salt: int) -> str:
    """`functions` one-line functions; `salt` makes each run's content its own."""
    return "".join(f"def f{k}(a): return a+{k + salt}\n" for k in range(functions))


def edit_message(functions: int, salt: int) -> str:
    """One block: a changed body in the middle of the file."""
    k = functions // 2
    return (f"FILE: gen.py\n<<<<<<< SEARCH\ndef f{k}(a): return a+{k + salt}\n=======\n"
            f"def f{k}(a):\n    return a * {k + salt}\n>>>>>>> REPLACE\n")


def _workspace(tmp: Path, name: str, text: str) -> Settings:
    """A workspace holding gen.py, indexed (a workspace the daemon has seen)."""
    root = tmp / name
    root.mkdir()
    (root / "gen.py").write_text(text)
    settings = Settings.resolve(root, db=f"sqlite:///{tmp / name}.db")
    symdiff.index(settings)
    return settings


def _timed_apply(settings: Settings, msg: str, prof: cProfile.Profile | None
                 ) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    if prof is not None:
        prof.enable()
    done = symdiff.apply_edits(msg, settings=settings, dry_run=False)
    if prof is not None:
        prof.disable()
    seconds = time.perf_counter() - start
    assert done["applied"] and "record_error" not in done, done.get("record_error")
    assert [r["change_type"] for r in done["recorded"]] == ["modify"]  # type: ignore[attr-defined]
    return seconds, done


def _gnu_patch(tmp: Path, old: str, new: bytes) -> float:
    """GNU patch applying the same edit's unified diff to a copy of the file."""
    peer = tmp / "peer"
    peer.mkdir()
    (peer / "gen.py").write_text(old)
    (peer / "expected.py").write_bytes(new)
    res = subprocess.run(["diff", "-u", "gen.py", "expected.py"], cwd=peer, capture_output=True)
    (tmp / "edit.patch").write_bytes(res.stdout)
    start = time.perf_counter()
    subprocess.run(["patch", "-s", "-p0", "gen.py", str(tmp / "edit.patch")], cwd=peer,
                   check=True)
    seconds = time.perf_counter() - start
    assert (peer / "gen.py").read_bytes() == new
    return seconds


def one_run(functions: int, salt: int, profile: bool) -> tuple[float, float, float, float, int]:
    """(dry run, apply alone, apply after its dry run, GNU patch) seconds, and the file's size.

    "apply alone" is a real apply with nothing before it in the process (as `symdiff apply`
    runs); "after its dry run" is the real apply that follows a preview of the same edit in the
    same process (as over MCP, where an agent previews first).
    """
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        text = source(functions, 2 * salt)
        alone = _workspace(tmp, "alone", text)
        prof = cProfile.Profile() if profile else None
        cold, _ = _timed_apply(alone, edit_message(functions, 2 * salt), prof)
        if prof is not None:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)

        text2 = source(functions, 2 * salt + 1)  # its own content: nothing cached from above
        previewed = _workspace(tmp, "previewed", text2)
        msg = edit_message(functions, 2 * salt + 1)
        start = time.perf_counter()
        preview = symdiff.apply_edits(msg, settings=previewed, dry_run=True)
        dry = time.perf_counter() - start
        warm, done2 = _timed_apply(previewed, msg, None)
        assert preview["files"] == done2["files"]

        new = (previewed.root / "gen.py").read_bytes()
        gnu = _gnu_patch(tmp, text2, new)
        return dry, cold, warm, gnu, len(text.encode())


def main() -> None:
    """Time the runs and print each figure's median and best."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--functions", type=int, default=125_000)
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the first run's real apply (alone)")
    args = parser.parse_args()
    runs = [one_run(args.functions, salt, args.profile and salt == 0)
            for salt in range(args.runs)]
    size = runs[0][4]
    print(f"one file of {args.functions:,} functions, {size / 1e6:.2f} MB, one block; "
          f"{args.runs} runs (median, best)")
    names = ("apply_edits dry run", "apply_edits apply + record, alone",
             "apply + record after its dry run", "GNU patch (process)")
    for i, name in enumerate(names):
        times = [r[i] for r in runs]
        print(f"  {name:34s} {statistics.median(times):7.3f} s  {min(times):7.3f} s")


if __name__ == "__main__":
    main()
