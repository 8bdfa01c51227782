"""The reference graph's speed on Django: build, one file's update, `impact` of 20 symbols.

Run: .venv/bin/python benchmarks/graph_speed.py [TREE] [--repeat N] [--seed S]
(default tree: the Django 5.2.8 sdist, benchmarks/.cache). The files' facts come from
`symdiff.parse.extract.extract_with_refs` (one parse for symbols and references); where that
does not exist yet, the references are read with Python's `ast` instead and the script says so
loudly: the graph's figures hold, the references are only an approximation of the extractor's.
Beside each figure: the same tree's parse + extract of symbols (the floor the index shares).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _corpus import django_tree

from symdiff.graph import Changed, FileFacts, Graph
from symdiff.model import Symbol
from symdiff.parse import extract as extract_module
from symdiff.parse.extract import extract_uncached
from symdiff.parse.refs import FileRefs, Import, Ref, RefKind

_WITH_REFS: Callable[..., tuple[list[Symbol], FileRefs]] | None = getattr(
    extract_module, "extract_with_refs", None
)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
        parts.append("super")
    else:
        return None
    return ".".join(reversed(parts))


class _Refs(ast.NodeVisitor):
    """References in the contract's shape, read with `ast` (the stand-in for the extractor)."""

    def __init__(self, test_file: bool) -> None:
        self.scope: list[str] = []
        self.refs: list[Ref] = []
        self.imports: list[Import] = []
        self.test_file = test_file

    def _add(self, target: str | None, kind: RefKind, line: int) -> None:
        if target:
            self.refs.append(Ref(".".join(self.scope), target, kind, line))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(Import(alias.asname or alias.name.partition(".")[0] if not
                                       alias.asname else alias.asname, alias.name, "", node.lineno))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            local = "" if alias.name == "*" else alias.asname or alias.name
            self.imports.append(Import(local, module, alias.name, node.lineno))

    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for deco in node.decorator_list:
            target = _dotted(deco.func if isinstance(deco, ast.Call) else deco)
            self.scope.append(node.name)
            self._add(target, RefKind.DECORATOR, deco.lineno)
            self.scope.pop()
        self.scope.append(node.name)
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                self._add(_dotted(base), RefKind.TYPE, node.lineno)
        else:
            if self.test_file:
                for arg in node.args.args:
                    if arg.arg not in ("self", "cls"):
                        self._add(arg.arg, RefKind.FIXTURE, node.lineno)
            for arg in node.args.args:
                if arg.annotation is not None:
                    self._add(_dotted(arg.annotation), RefKind.TYPE, node.lineno)
        for child in node.body:
            self.visit(child)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_Call(self, node: ast.Call) -> None:
        self._add(_dotted(node.func), RefKind.CALL, node.lineno)
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            self.visit(node.func)
        elif isinstance(node.func, ast.Attribute):
            self._visit_receiver(node.func.value)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.visit(arg)

    def _visit_receiver(self, node: ast.expr) -> None:
        while isinstance(node, ast.Attribute):
            node = node.value
        if not isinstance(node, ast.Name):
            self.visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._add(_dotted(node), RefKind.ATTR, node.lineno)
        self._visit_receiver(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._add(node.id, RefKind.NAME, node.lineno)


def _ast_facts(path: str, text: bytes) -> FileFacts:
    symbols = extract_uncached("python", text)
    visitor = _Refs(test_file="test" in path)
    with contextlib.suppress(SyntaxError, ValueError):
        visitor.visit(ast.parse(text))
    return FileFacts(path, "python", tuple(symbols),
                     FileRefs("", tuple(visitor.imports), tuple(visitor.refs)))  # fmt: skip


def _facts(path: str, text: bytes) -> FileFacts:
    if _WITH_REFS is None:
        return _ast_facts(path, text)
    symbols, refs = _WITH_REFS("python", text)
    return FileFacts(path, "python", tuple(symbols), refs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    tree = args.tree or django_tree()
    texts = {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*.py"))}
    if _WITH_REFS is None:
        print("NOTE: extract_with_refs does not exist yet: references read with Python's ast, "
              "an APPROXIMATION of the extractor's", file=sys.stderr)  # fmt: skip
    start = time.perf_counter()
    for _path, text in texts.items():
        extract_uncached("python", text)
    floor = time.perf_counter() - start
    start = time.perf_counter()
    facts = [_facts(p, t) for p, t in texts.items()]
    read = time.perf_counter() - start
    refs = sum(len(f.refs.refs) for f in facts)
    print(f"{len(facts)} files, {refs} references; symbols alone (parse + extract): "
          f"{floor * 1000:.0f} ms; facts with references: {read * 1000:.0f} ms")  # fmt: skip

    builds = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        graph = Graph(facts)
        builds.append(time.perf_counter() - start)
    print(f"graph build: p50 {statistics.median(builds) * 1000:.0f} ms "
          f"({statistics.median(builds) / floor:.2f}x the symbols' parse + extract)")  # fmt: skip

    rng = random.Random(args.seed)
    updates = []
    for f in rng.sample(facts, 200):
        start = time.perf_counter()
        graph.update(f)
        updates.append(time.perf_counter() - start)
    updates.sort()
    print(f"update of one file: p50 {statistics.median(updates) * 1000:.2f} ms, "
          f"p95 {updates[int(len(updates) * 0.95)] * 1000:.2f} ms")  # fmt: skip

    defs = [(f.path, s.name) for f in facts if "/tests/" not in f"/{f.path}"
            for s in f.symbols if s.kind in ("function", "method")]  # fmt: skip
    times, callers, tests = [], [], []
    for _ in range(max(args.repeat * 4, 20)):
        changed = [Changed(p, n, "modified") for p, n in rng.sample(defs, 20)]
        graph.update(facts[rng.randrange(len(facts))])  # a change between queries: cold caches
        start = time.perf_counter()
        result = graph.impact(changed)
        times.append(time.perf_counter() - start)
        callers.append(len(result.callers))
        tests.append(len(result.tests))
    times.sort()
    print(f"impact of 20 changed functions (depth 2, tests at any depth): "
          f"p50 {statistics.median(times) * 1000:.1f} ms, p95 "
          f"{times[int(len(times) * 0.95)] * 1000:.1f} ms; median {statistics.median(callers)} "
          f"callers, {statistics.median(tests)} tests")  # fmt: skip


if __name__ == "__main__":
    main()
