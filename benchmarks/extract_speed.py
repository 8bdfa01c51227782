"""Parse+extract time of symdiff over a real Python tree, beside `ctags -R` on the same tree.

Run: .venv/bin/python benchmarks/extract_speed.py [TREE] [--repeat N]
(default tree: the Django 5.2.8 sdist, downloaded once into benchmarks/.cache; TREE may be any
checkout, e.g. a clone of django/django). Sources are read into memory first (time parsing, not
the disk). Each round times, in turn, tree-sitter's parse alone (the floor that extraction adds
to), symdiff's parse + extract, and `ctags -R`, as wall time and as CPU time (steadier on a
shared machine; ctags' is its child-process time); the order rotates from round to round.
Figures are medians over N rounds; ratios are medians of the per-round ratios.
"""

from __future__ import annotations

import argparse
import resource
import statistics
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


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), _cpu()
    run()
    return time.perf_counter() - wall, _cpu() - cpu


def rounds(
    repeat: int, contenders: dict[str, Callable[[], object]]
) -> list[dict[str, tuple[float, float]]]:
    """`repeat` rounds of every contender, the order rotated each round."""
    names = list(contenders)
    out = []
    for i in range(repeat):
        order = names[i % len(names) :] + names[: i % len(names)]
        out.append({name: timed(contenders[name]) for name in order})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (medians are kept)")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    files = sorted(tree.rglob("*.py"))
    sources = [p.read_bytes() for p in files]
    size = sum(map(len, sources))
    lines = sum(s.count(b"\n") for s in sources)
    symbols = sum(len(extract_uncached("python", s)) for s in sources)  # also warms the caches

    python = _parser("python")
    ctags = ["ctags", "-R", "--languages=Python", "--fields=+neKZ", "-f", "/dev/null", str(tree)]
    figures = rounds(
        args.repeat,
        {
            "parse": lambda: [python.parse(s) for s in sources],
            "ours": lambda: [extract_uncached("python", s) for s in sources],
            "ctags": lambda: subprocess.run(ctags, check=True),
        },
    )

    def median(name: str, index: int) -> float:
        return statistics.median(r[name][index] for r in figures)

    def ratio(name: str, index: int) -> float:
        return statistics.median(r[name][index] / r["parse"][index] for r in figures)

    print(f"tree: {tree} — {len(files)} files, {lines} lines, {size / 1e6:.1f} MB")
    print(f"{symbols} symbols; median of {args.repeat} rounds, wall s / CPU s, and ÷ parse alone:")
    for label, name in (
        ("tree-sitter parse alone", "parse"),
        ("symdiff parse + extract", "ours"),
        ("ctags -R", "ctags"),
    ):
        print(
            f"  {label:24s} {median(name, 0):6.2f} / {median(name, 1):6.2f}"
            f"   {ratio(name, 0):5.2f}x / {ratio(name, 1):5.2f}x"
        )


if __name__ == "__main__":
    main()
