"""Inert domain values: what symdiff extracts, attributes, stores and serves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
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


class Origin(StrEnum):
    """Who made a change, as far as symdiff can tell (docs/provenance.md)."""

    EDIT = "edit"  # symdiff's own apply_edits
    GIT = "git"  # a git operation in this work tree (checkout, reset, merge, stash, ...)
    WATCH = "watch"  # seen live by the watcher: an editor, a formatter, another tool
    SCAN = "scan"  # found by a reconcile pass: writer unknown, time only bounded
    COMMIT = "commit"  # imported from git history
    AGENT = "agent"  # written while an agent's tool call was open (docs/agents.md)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who writes what a reconcile pass is about to record, as far as its caller knows.

    `origin_info` and `git` are JSON-ready mappings. A pass records `edit` for a change an
    `apply_edits` announced (an edit intent), whatever its caller says.
    """

    origin: Origin = Origin.SCAN
    origin_info: Mapping[str, object] | None = None
    git: Mapping[str, object] | None = None
    # The agents' tool windows (`agents.attribute.Windows`): a write inside one is the agent's.
    # Typed `object` so that the domain values import nothing of the agents' package.
    agents: object = None


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
    `start_byte`/`end_byte` are the same span in bytes (end exclusive), when known; attribution
    uses them to tell apart definitions that share a line.
    """

    name: str
    kind: str
    start_line: int
    end_line: int
    header_end_line: int
    signature: str
    parent: str | None = None
    start_byte: int | None = None
    end_byte: int | None = None


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
    origin: Origin = Origin.SCAN
    origin_info: Mapping[str, object] | None = None
    git: Mapping[str, object] | None = None  # {"branch", "head"} when observed in a git tree
