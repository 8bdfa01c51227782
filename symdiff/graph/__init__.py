"""The reference graph and the impact walk (docs/impact.md): pure, no I/O.

Files come in as `FileFacts` (their symbols and references); `Graph.impact` walks from changed
symbols to their callers and to the tests that reach them.
"""

from __future__ import annotations

from symdiff.graph.facts import CallerHit, Changed, FileFacts, Impact, TestHit
from symdiff.graph.index import Graph
from symdiff.graph.keys.golang import parse_gomod
from symdiff.graph.policy import DEFAULT_POLICY, Policy

__all__ = [
    "DEFAULT_POLICY",
    "CallerHit",
    "Changed",
    "FileFacts",
    "Graph",
    "Impact",
    "Policy",
    "TestHit",
    "parse_gomod",
]
