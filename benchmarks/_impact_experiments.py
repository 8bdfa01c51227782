"""The walk's policy changed in the benchmark's process only (`--policy NAME=VALUE`), to measure
what a knob of symdiff/graph/policy.py would buy before anyone changes its default.

(The first experiments here wrapped the walk itself: `nested`, `deadend` and `imported`, as of
commit d0e7ac8; symdiff/graph does all three since 3ba26db.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence


def install(settings: Sequence[str]) -> str:
    """Make `Graph`'s default policy the default with these fields changed; says which."""
    if not settings:
        return ""
    from symdiff.graph.index import Graph
    from symdiff.graph.policy import DEFAULT_POLICY

    fields = {f.name: getattr(DEFAULT_POLICY, f.name) for f in dataclasses.fields(DEFAULT_POLICY)}
    changed: dict[str, object] = {}
    for setting in settings:
        name, _, text = setting.partition("=")
        if name not in fields:
            raise SystemExit(f"--policy: no field {name!r}; the fields: {', '.join(fields)}")
        changed[name] = _value(text, fields[name])
    policy = dataclasses.replace(DEFAULT_POLICY, **changed)  # type: ignore[arg-type]
    assert Graph.__init__.__kwdefaults__ is not None
    Graph.__init__.__kwdefaults__["policy"] = policy
    return ", ".join(f"{k}={v!r}" for k, v in changed.items())


def _value(text: str, current: object) -> object:
    if text.lower() in ("none", "null"):
        return None
    if isinstance(current, bool):
        return text.lower() in ("1", "true", "yes", "on")
    if isinstance(current, int) or current is None:
        return int(text)
    return text


def module_aliases(root: str) -> None:
    """Try one rule not in symdiff: a module-level `s = attributes = attrs` re-exports `attrs`
    as `s` and `attributes`, as `from ._make import attrs as s` would (attrs' `attr.s`)."""
    import ast
    import subprocess
    from pathlib import Path

    from symdiff.graph.edges import _module_keys
    from symdiff.impact import index

    pairs: dict[str, list[tuple[str, str]]] = {}  # path -> (bound name, its value's name)
    files = subprocess.run(["git", "-C", root, "ls-files", "*.py"], capture_output=True,
                           text=True, check=True).stdout.split()  # fmt: skip
    for path in files:
        tree = ast.parse(Path(root, path).read_bytes())
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                pairs.setdefault(path, []).extend(
                    (t.id, node.value.id) for t in node.targets if isinstance(t, ast.Name))
    original = index.current
    done: set[int] = set()

    def current(*args: object, **kwargs: object) -> object:
        graph = original(*args, **kwargs)  # type: ignore[arg-type]
        ix = graph._ix
        if id(ix) not in done:
            done.add(id(ix))
            for path, bound in pairs.items():
                for alias, value in bound:
                    for entries in list(ix.exports.values()):
                        for exporter, member, local in list(entries):
                            if exporter == path and local == value:
                                entries.add((exporter, member, alias))
                    if path in ix.files and value in ix.files[path].symbols:
                        for module in _module_keys(ix, path):
                            ix.exports.setdefault(module + value, set()).add((path, value, alias))
            ix.changed()
        return graph

    index.current = current  # type: ignore[assignment]
