"""Walk rules proposed to the graph, tried in the benchmark's process only (`--experiment`):
each wraps `symdiff.graph.walk.Edges._compute`, so a figure can say what a rule would buy
before anyone writes it in symdiff/graph. Off unless asked for; never used by symdiff itself.

- `nested`: a definition nested in a function (a closure, a decorated inner command, a class
  built inside a test) is used by that function: the walk climbs from it to its parent.
- `deadend`: a method nothing calls by a name the index can resolve (visitor dispatch through
  getattr, a callback) is reached through its class: the walk continues from the class's users,
  as a `name` edge.
- `imported`: pytest collects a test class or function again in every test module that imports
  it at its top level (`from test_a import TestC` in test_b.py runs `test_b.py::TestC::test_f`):
  each answer's `test_a.py::TestC::…` is also given as `test_b.py::TestC::…` (applied to the
  answer, as `tests_of` in symdiff/graph/testing.py would).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable, Mapping
from typing import Any

FUNCTION_KINDS = frozenset({"function", "method", "async_function", "async_method"})
RULES = ("nested", "deadend", "imported")
Reimports = dict[tuple[str, str], list[tuple[str, str]]]


def install(rules: tuple[str, ...]) -> None:
    """Wrap the walk's edges with the named rules."""
    if not rules:
        return
    from symdiff.graph import walk
    from symdiff.graph.keys.common import CLASS_KINDS

    original = walk.Edges._compute
    # The walk's users carry a confidence: its name, or (since the faster walk) its rank.
    from symdiff.graph.edges import RANK

    ranked = "RANK[" in inspect.getsource(original)
    strong = RANK[walk.RESOLVED] if ranked else walk.RESOLVED
    weak = RANK[walk.NAME] if ranked else walk.NAME

    def compute(self: Any, node: tuple[str, str], by_name: bool) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = original(self, node, by_name)
        path, name = node
        entry = self.ix.files.get(path)
        parent = name.rpartition(".")[0]
        owner = entry.symbols.get(parent) if entry is not None and parent else None
        if owner is None:
            return out
        if "nested" in rules and owner.kind in FUNCTION_KINDS:
            out.setdefault((path, parent), strong)
        if "deadend" in rules and not out and owner.kind in CLASS_KINDS:
            out[(path, parent)] = weak
        return out

    walk.Edges._compute = compute


def reimports(texts: Mapping[str, str], test_files: Iterable[str]) -> Reimports:
    """(defining file, test name) -> the (file, bound name) pairs that import it at top level."""
    files = sorted(test_files)
    dotted = {f: f.removesuffix(".py").replace("/", ".") for f in files}
    out: Reimports = {}
    for importer in files:
        tree = ast.parse(texts.get(importer, ""))
        folder = importer.split("/")[:-1]
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom):
                continue
            base = folder[: len(folder) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                bound = alias.asname or alias.name
                if not bound.startswith(("Test", "test")):
                    continue  # pytest's default python_classes and python_functions
                for origin in files:
                    if origin != importer and (dotted[origin] == module
                                               or dotted[origin].endswith("." + module)):
                        out.setdefault((origin, alias.name), []).append((importer, bound))
    return out


def widen(predicted: dict[str, str], moved: Reimports) -> dict[str, str]:
    """An answer's tests, plus each one again where its class or function is imported."""
    out = dict(predicted)
    for node_id, confidence in predicted.items():
        path, _, rest = node_id.partition("::")
        first, _, tail = rest.partition("::")
        for importer, bound in moved.get((path, first), ()):
            out.setdefault("::".join(p for p in (importer, bound, tail) if p), confidence)
    return out
