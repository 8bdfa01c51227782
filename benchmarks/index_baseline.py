"""Cold baseline of a real tree (the Django sdist) beside universal-ctags' `ctags -R`.

Prints files/s, MB/s, peak memory and database size of `symdiff index` on an empty
database, and the time `ctags -R` takes on the same tree in the same run.

    python benchmarks/index_baseline.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _corpus import django_tree


def _tree_size(root: Path) -> tuple[int, int]:
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".symdiff")]
        for name in filenames:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size


def _timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tree = django_tree()
    files, size = _tree_size(tree)
    print(f"tree: {tree.name}: {files} files, {size / 1e6:.1f} MB")
    ours, ctags, peaks, db_sizes = [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "tree"
            shutil.copytree(tree, work)
            subprocess.run(["sync"], check=True)
            db = Path(tmp) / "index.db"
            t, peak = _timed(
                [sys.executable, "-m", "symdiff", "index", str(work), "--db", f"sqlite:///{db}"],
                work,
            )
            ours.append(t)
            peaks.append(peak)
            db_sizes.append(sum(p.stat().st_size for p in Path(tmp).glob("index.db*")))
            ct, _ = _timed(["ctags", "-R", "-f", str(Path(tmp) / "tags"), "."], work)
            ctags.append(ct)
    best, best_ctags = min(ours), min(ctags)
    print(f"symdiff index (cold baseline): {best:.2f} s  ({files / best:,.0f} files/s, "
          f"{size / 1e6 / best:.1f} MB/s), peak RSS {max(peaks) / 1024:.0f} MiB, "
          f"database {min(db_sizes) / 1e6:.1f} MB")  # fmt: skip
    print(f"ctags -R (universal-ctags):    {best_ctags:.2f} s")
    print(f"ratio symdiff / ctags: {best / best_ctags:.2f}x  (target <= 8x)")


if __name__ == "__main__":
    main()
