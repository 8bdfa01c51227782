"""Parse+extract time of symdiff over a real Python tree, beside `ctags -R` on the same tree.

Run: .venv/bin/python benchmarks/extract_speed.py [TREE] [--repeat N]
(default tree: the Django 5.2.8 sdist, downloaded once into benchmarks/.cache). Sources are read
into memory first (time parsing, not the disk); each figure is the best of N runs, as wall time
and as CPU time (steadier on a shared machine; ctags' is its child-process time), and
tree-sitter's parse alone is timed too: the floor that extraction adds to.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from _corpus import django_tree

from symdiff.parse.extract import _parser, extract_uncached


def _cpu() -> float:
    """CPU seconds of this process and its finished children (ctags)."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """The shortest wall time and the shortest CPU time of `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), _cpu()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    files = sorted(tree.rglob("*.py"))
    sources = [p.read_bytes() for p in files]
    size = sum(map(len, sources))
    lines = sum(s.count(b"\n") for s in sources)
    symbols = sum(len(extract_uncached("python", s)) for s in sources)  # also warms the caches

    ours = best_of(args.repeat, lambda: [extract_uncached("python", s) for s in sources])
    python = _parser("python")
    parse = best_of(args.repeat, lambda: [python.parse(s) for s in sources])
    ctags = ["ctags", "-R", "--languages=Python", "--fields=+neKZ", "-f", "/dev/null", str(tree)]
    theirs = best_of(args.repeat, lambda: subprocess.run(ctags, check=True))

    print(f"tree: {tree} — {len(files)} files, {lines} lines, {size / 1e6:.1f} MB")
    print(f"{symbols} symbols; best of {args.repeat}, wall s / CPU s:")
    print(f"symdiff parse + extract: {ours[0]:6.2f} / {ours[1]:6.2f}")
    print(f"  tree-sitter parse alone: {parse[0]:6.2f} / {parse[1]:6.2f}")
    print(f"ctags -R:                {theirs[0]:6.2f} / {theirs[1]:6.2f}")
    print(f"ratio symdiff/ctags (CPU): {ours[1] / theirs[1]:.2f}")


if __name__ == "__main__":
    main()
