"""The graph's inert values: a file's facts in, an impact out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the graph knows of one file: its definitions and what they use."""

    path: str  # workspace-relative POSIX path
    language: str
    symbols: tuple[Symbol, ...]
    refs: FileRefs


@dataclass(frozen=True, slots=True)
class Changed:
    """A changed symbol: where the walk starts."""

    path: str
    name: str  # Symbol.name
    change_type: str  # a SymbolChangeType value, or "given"


# The hits are named tuples, not frozen dataclasses: a wide answer holds tens of thousands
# (11,000 tests for 20 functions of Django), and a frozen dataclass takes twice as long to make.
class CallerHit(NamedTuple):
    """A definition that reaches a changed symbol within the walk's depth."""

    name: str  # "" for module-level code
    path: str
    kind: str
    start_line: int
    depth: int  # 1 = uses a changed symbol directly
    via: str  # the symbol one step nearer the change (its name)
    confidence: str  # "resolved" | "name"


class TestHit(NamedTuple):
    """A test that reaches a changed symbol, or (the weaker fallback) names it."""

    path: str
    name: str  # the test's Symbol.name ("" for a JavaScript or TypeScript test file)
    node_id: str  # pytest node id / Go test name / the file path for JS/TS
    depth: int
    via: str
    confidence: str  # "resolved" | "name" | "mention"


TestHit.__test__ = False  # type: ignore[attr-defined]  # not a pytest class


@dataclass(frozen=True, slots=True)
class TestId:
    """One test as the walk finds it, before its depth and confidence are known."""

    __test__ = False

    path: str
    name: str  # Symbol.name, "" for a JS/TS test file
    node_id: str


@dataclass(frozen=True, slots=True)
class Impact:
    """The callers and the tests that a set of changed symbols reaches."""

    changed: tuple[Changed, ...]
    callers: tuple[CallerHit, ...]
    tests: tuple[TestHit, ...]
    run: Mapping[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        """The issue's JSON shape: changed, callers, tests, run."""
        return {
            "changed": [
                {"name": c.name, "path": c.path, "change_type": c.change_type}
                for c in self.changed
            ],
            # Unpacked, not read by attribute: a wide answer has ten thousand tests.
            "callers": [
                {"name": name, "path": path, "kind": kind, "start_line": line, "depth": depth,
                 "via": via, "confidence": confidence}
                for name, path, kind, line, depth, via, confidence in self.callers
            ],
            "tests": [
                {"path": path, "name": name, "node_id": node_id, "depth": depth, "via": via,
                 "confidence": confidence}
                for path, name, node_id, depth, via, confidence in self.tests
            ],
            "run": dict(self.run),
        }
