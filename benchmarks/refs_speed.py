"""The reference index's cost over a real Python tree, beside the parse it shares.

Run: .venv/bin/python benchmarks/refs_speed.py [TREE] [--repeat N]
(default tree: the Django 5.2.8 sdist, downloaded once into benchmarks/.cache). Sources are read
into memory first. Each round times, in turn, tree-sitter's parse alone (the floor: each tree
dropped, as extraction drops it), symdiff's parse + symbols (`extract_uncached`), and parse +
symbols + references (`extract_with_refs_uncached`: one parse feeds both), the references
alone given the symbols (`python_refs`), and symbols + references by the parse pool's workers
(`ParsePool.with_refs`, started afresh each round: the cold build's way; its CPU time holds
the workers', counted when they exit), as wall and CPU time; the order rotates from
round to round. Figures are medians over N rounds; ratios are medians of the per-round ratios to the
parse. The issue's budget: the cold index (parse, symbols, references, storage) at most 1.5x the
parse, so the references' share is ~0.2x (docs/impact.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable
from pathlib import Path

from _corpus import django_tree
from extract_speed import rounds

from symdiff.parse.extract import _parser, extract_uncached, extract_with_refs_uncached
from symdiff.parse.pool import ParsePool
from symdiff.parse.reflangs.python import python_refs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (medians are kept)")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    sources = [p.read_bytes() for p in sorted(tree.rglob("*.py"))]
    symbols = [extract_uncached("python", s) for s in sources]  # also warms the caches
    found = [python_refs(s, y) for s, y in zip(sources, symbols, strict=True)]
    python = _parser("python")

    def parse_each() -> None:
        for s in sources:
            python.parse(s)

    def pooled() -> None:
        """The cold build's way: the parse pool's workers, started for this round (so that no
        worker's cache holds a text), symbols and references from one parse each."""
        with ParsePool() as pool:
            pool.with_refs([("python", s) for s in sources])

    contenders: dict[str, Callable[[], object]] = {
        "parse": parse_each,
        "symbols": lambda: [extract_uncached("python", s) for s in sources],
        "both": lambda: [extract_with_refs_uncached("python", s) for s in sources],
        "refs": lambda: [python_refs(s, y) for s, y in zip(sources, symbols, strict=True)],
        "pool": pooled,
    }
    rows = [
        ("tree-sitter parse alone", "parse"),
        ("parse + symbols", "symbols"),
        ("parse + symbols + refs", "both"),
        ("refs alone (given symbols)", "refs"),
        ("pool: symbols + refs", "pool"),
    ]
    load = os.getloadavg()
    figures = rounds(args.repeat, contenders)

    def median(name: str, index: int) -> float:
        return statistics.median(r[name][index] for r in figures)

    def ratio(name: str, index: int) -> float:
        return statistics.median(r[name][index] / r["parse"][index] for r in figures)

    refs = sum(len(f.refs) for f in found)
    imports = sum(len(f.imports) for f in found)
    print(f"tree: {tree} — {len(sources)} files, {sum(map(len, sources)) / 1e6:.1f} MB")
    print("load average before / after: {:.2f} {:.2f} {:.2f} / {:.2f} {:.2f} {:.2f}".format(
        *load, *os.getloadavg()))  # fmt: skip
    print(f"{refs} references ({refs / len(sources):.1f} per file), {imports} imports"
          f" ({imports / len(sources):.1f} per file)")  # fmt: skip
    print(f"median of {args.repeat} rounds, wall s / CPU s, and ÷ parse alone:")
    for label, name in rows:
        print(f"  {label:28s} {median(name, 0):6.2f} / {median(name, 1):6.2f}"
              f"   {ratio(name, 0):5.2f}x / {ratio(name, 1):5.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
