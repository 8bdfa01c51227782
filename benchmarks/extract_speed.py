"""Parse+extract time of symdiff over a real Python tree, beside `ctags -R` on the same tree.

Run: .venv/bin/python benchmarks/extract_speed.py [TREE] [--repeat N] [--against REV]
(default tree: the Django 5.2.8 sdist, downloaded once into benchmarks/.cache; TREE may be any
checkout, e.g. a clone of django/django). Sources are read into memory first (time parsing, not
the disk). Each round times, in turn, tree-sitter's parse alone (the floor that extraction adds
to), symdiff's parse + extract, and `ctags -R`, as wall time and as CPU time (steadier on a
shared machine; ctags' is its child-process time); the order rotates from round to round.
Figures are medians over N rounds; ratios are medians of the per-round ratios.

The floor parses each file and drops its tree, as extraction does. The floor of earlier rounds
kept every tree in a list until the end (`parse alone, trees kept`): taking fresh memory for
2,818 trees and freeing them at once costs ~15% more than the parse, which made that floor
higher and every ratio to it lower; it is printed too, for comparison with those figures.
`--against REV` also times a git revision's parse + extract in the same rounds (its
`symdiff/parse` exported with `git archive` and imported under another package name).
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
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


def revision_extract(rev: str, into: Path) -> Callable[[str, bytes], object]:
    """`extract_uncached` of revision `rev`, imported from a copy of its `symdiff/parse`."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", rev, "symdiff/parse"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "symdiff_rev"
    (into / "symdiff").rename(package)
    (package / "__init__.py").write_text("")
    for path in package.rglob("*.py"):  # symdiff.model and the rest stay shared
        path.write_text(path.read_text().replace("symdiff.parse", "symdiff_rev.parse"))
    sys.path.insert(0, str(into))
    extract: Callable[[str, bytes], object] = importlib.import_module(
        "symdiff_rev.parse.extract"
    ).extract_uncached
    return extract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (medians are kept)")
    parser.add_argument("--against", help="also time this git revision's parse + extract")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    files = sorted(tree.rglob("*.py"))
    sources = [p.read_bytes() for p in files]
    size = sum(map(len, sources))
    lines = sum(s.count(b"\n") for s in sources)
    symbols = sum(len(extract_uncached("python", s)) for s in sources)  # also warms the caches

    python = _parser("python")
    ctags = ["ctags", "-R", "--languages=Python", "--fields=+neKZ", "-f", "/dev/null", str(tree)]

    def parse_each() -> None:
        for s in sources:
            python.parse(s)

    contenders: dict[str, Callable[[], object]] = {
        "parse": parse_each,
        "kept": lambda: [python.parse(s) for s in sources],
        "ours": lambda: [extract_uncached("python", s) for s in sources],
        "ctags": lambda: subprocess.run(ctags, check=True),
    }
    rows = [
        ("tree-sitter parse alone", "parse"),
        ("parse alone, trees kept", "kept"),
        ("symdiff parse + extract", "ours"),
    ]
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        if args.against:
            theirs = revision_extract(args.against, Path(scratch))
            assert [theirs("python", s) for s in sources] == [
                extract_uncached("python", s) for s in sources
            ], "the revision's symbols differ"
            contenders["rev"] = lambda: [theirs("python", s) for s in sources]
            rows.append((f"parse + extract @ {args.against}"[:24], "rev"))
        figures = rounds(args.repeat, contenders)
    rows.append(("ctags -R", "ctags"))

    def median(name: str, index: int) -> float:
        return statistics.median(r[name][index] for r in figures)

    def ratio(name: str, index: int, floor: str = "parse") -> float:
        return statistics.median(r[name][index] / r[floor][index] for r in figures)

    print(f"tree: {tree} — {len(files)} files, {lines} lines, {size / 1e6:.1f} MB")
    print("load average before / after: {:.2f} {:.2f} {:.2f} / {:.2f} {:.2f} {:.2f}".format(
        *load, *os.getloadavg()))  # fmt: skip
    print(f"{symbols} symbols; median of {args.repeat} rounds, wall s / CPU s, and ÷ parse alone:")
    for label, name in rows:
        print(
            f"  {label:24s} {median(name, 0):6.2f} / {median(name, 1):6.2f}"
            f"   {ratio(name, 0):5.2f}x / {ratio(name, 1):5.2f}x"
        )
    print("÷ parse alone with trees kept (the earlier floor), wall / CPU:")
    for label, name in rows[2:]:
        print(f"  {label:24s}                   {ratio(name, 0, 'kept'):5.2f}x /"
              f" {ratio(name, 1, 'kept'):5.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
