"""Inert domain values: what symdiff extracts, attributes, stores and serves."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum


class ChangeType(StrEnum):
    """The kind of a file-level change."""

    ADD = "add"
    MODIFY = "modify"
    DELETE = "delete"
    RENAME = "rename"


class SymbolChangeType(StrEnum):
    """What a change did to one definition."""

    ADDED = "added"
    REMOVED = "removed"
    MODIFIED = "modified"
    SIGNATURE_CHANGED = "signature_changed"


class Scope(StrEnum):
    """Whether a path is test code or implementation code."""

    IMPL = "impl"
    TEST = "test"


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition found in a source file.

    Lines are 1-based and inclusive. `start_line` is the first line of the definition including
    its decorators/attributes; `header_end_line` is the last line of its header (signature);
    `signature` is the header text with whitespace and comments normalised away, the name
    excluded, so that two headers compare equal exactly when the signature is unchanged.
    """

    name: str
    kind: str
    start_line: int
    end_line: int
    header_end_line: int
    signature: str
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class SymbolChange:
    """One definition that a file change touched."""

    name: str
    kind: str
    change_type: SymbolChangeType
    start_line: int
    end_line: int
    renamed_from: str | None = None
    renamed_to: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of SPEC.md."""
        out: dict[str, object] = {
            "name": self.name,
            "kind": self.kind,
            "change_type": self.change_type.value,
            "start_line": self.start_line,
            "end_line": self.end_line,
        }
        if self.renamed_from is not None:
            out["renamed_from"] = self.renamed_from
        if self.renamed_to is not None:
            out["renamed_to"] = self.renamed_to
        return out


def format_timestamp(ts: datetime) -> str:
    """RFC 3339 in UTC with microseconds and a `Z`."""
    if ts.tzinfo is not UTC:
        ts = ts.astimezone(UTC)
    return ts.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file-level change record."""

    path: str
    old_path: str | None
    timestamp: datetime
    change_type: ChangeType
    lines_added: int
    lines_removed: int
    scope: Scope
    language: str | None
    symbols: tuple[SymbolChange, ...] = ()
    workspace: str | None = None
    old_hash: str | None = None
    new_hash: str | None = None
    id: int | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of SPEC.md."""
        return {
            "path": self.path,
            "old_path": self.old_path,
            "timestamp": format_timestamp(self.timestamp),
            "change_type": self.change_type.value,
            "lines_added": self.lines_added,
            "lines_removed": self.lines_removed,
            "scope": self.scope.value,
            "language": self.language,
            "symbols": [s.to_dict() for s in self.symbols],
        }
