"""The walk's policy changed in the benchmark's process only (`--policy NAME=VALUE`), to measure
what a knob of symdiff/graph/policy.py would buy before anyone changes its default.

(The first experiments here wrapped the walk itself: `nested`, `deadend` and `imported`, as of
commit d0e7ac8, and `--aliases` as of 20c2774; symdiff/graph does all four since 3ba26db and
8b59219.)
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

