"""Python's CALL references against an oracle built on `ast`, over a real tree.

Run: .venv/bin/python benchmarks/refs_oracle.py [TREE]
(default tree: the Django 5.2.8 sdist, downloaded once into benchmarks/.cache). For each file the
oracle is the set of (enclosing definition's qualified name, dotted callee) of every `ast.Call`
whose callee is a name or a chain of attributes on one (`super().m` read as `super.m`); a
decorator's own call is its definition's DECORATOR, and a definition holds its decorators,
defaults and annotations. The extractor's side: the CALL refs of `python_refs` with the
local-type rewrite off. Prints the totals, what each side has alone, and the first differences.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _corpus import django_tree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pycalls import ast_calls as oracle

from symdiff.parse.extract import extract
from symdiff.parse.reflangs.python import python_refs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    want_total = got_total = missing = extra = files = 0
    shown: list[str] = []
    for path in sorted(tree.rglob("*.py")):
        source = path.read_bytes()
        try:
            want = oracle(source)
        except SyntaxError:
            continue
        files += 1
        refs = python_refs(source, extract("python", source), local_types=False).refs
        got = {(r.source, r.target) for r in refs if r.kind == "call"}
        want_total, got_total = want_total + len(want), got_total + len(got)
        missing, extra = missing + len(want - got), extra + len(got - want)
        rel = path.relative_to(tree)
        shown.extend(f"  only ast:  {rel}: {s or '<module>'} -> {t}" for s, t in sorted(want - got))
        shown.extend(f"  only refs: {rel}: {s or '<module>'} -> {t}" for s, t in sorted(got - want))
    print(f"tree: {tree} — {files} files that ast reads")
    print(f"calls: ast {want_total}, refs {got_total}; only ast {missing}, only refs {extra};"
          f" recall {1 - missing / max(want_total, 1):.5f},"
          f" precision {1 - extra / max(got_total, 1):.5f}")  # fmt: skip
    print("\n".join(shown[:40]))


if __name__ == "__main__":
    main()
