"""Walk rules proposed to the graph, tried in the benchmark's process only (`--experiment`):
each wraps `symdiff.graph.walk.Edges._compute`, so a figure can say what a rule would buy
before anyone writes it in symdiff/graph. Off unless asked for; never used by symdiff itself.

- `nested`: a definition nested in a function (a closure, a decorated inner command, a class
  built inside a test) is used by that function: the walk climbs from it to its parent.
- `deadend`: a method nothing calls by a name the index can resolve (visitor dispatch through
  getattr, a callback) is reached through its class: the walk continues from the class's users,
  as a `name` edge.
"""

from __future__ import annotations

from typing import Any

FUNCTION_KINDS = frozenset({"function", "method", "async_function", "async_method"})
RULES = ("nested", "deadend")


def install(rules: tuple[str, ...]) -> None:
    """Wrap the walk's edges with the named rules."""
    if not rules:
        return
    from symdiff.graph import walk
    from symdiff.graph.keys.common import CLASS_KINDS

    original = walk.Edges._compute

    def compute(self: Any, node: tuple[str, str], by_name: bool) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = original(self, node, by_name)
        path, name = node
        entry = self.ix.files.get(path)
        parent = name.rpartition(".")[0]
        owner = entry.symbols.get(parent) if entry is not None and parent else None
        if owner is None:
            return out
        if "nested" in rules and owner.kind in FUNCTION_KINDS:
            out.setdefault((path, parent), walk.RESOLVED)
        if "deadend" in rules and not out and owner.kind in CLASS_KINDS:
            out[(path, parent)] = walk.NAME
        return out

    walk.Edges._compute = compute
