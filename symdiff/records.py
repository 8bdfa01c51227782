"""The record shape of docs/spec.md: the typed records and the one function that builds each.

Every record symdiff serves (the `diff` query, `index --json`, `apply_edits`' `recorded`) is
built here, from named fields, with the one timestamp formatter.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

# pydantic (the MCP SDK's schemas) needs typing_extensions' TypedDict on Python 3.11.
from typing_extensions import TypedDict

from symdiff.model import FileChange, SymbolChange
from symdiff.timestamps import format_us, to_us


class SymbolRecord(TypedDict):
    """One definition a change touched."""

    name: str
    kind: str
    change_type: Literal["added", "removed", "modified", "signature_changed"]
    start_line: int
    end_line: int
    renamed_from: NotRequired[str]
    renamed_to: NotRequired[str]


class ChangeRecord(TypedDict):
    """One file-level change."""

    path: str
    old_path: str | None
    timestamp: str
    change_type: Literal["add", "modify", "delete", "rename"]
    lines_added: int
    lines_removed: int
    scope: Literal["impl", "test"]
    language: str | None
    symbols: list[SymbolRecord]
    origin: Literal["edit", "git", "watch", "scan", "commit", "agent"]
    origin_info: dict[str, Any] | None
    git: dict[str, Any] | None
    workspace: NotRequired[str]
    acp: NotRequired[dict[str, Any]]


def symbol_record(
    *,
    name: str,
    kind: str,
    change_type: str,
    start_line: int,
    end_line: int,
    renamed_from: str | None,
    renamed_to: str | None,
) -> SymbolRecord:
    """A symbol record; the rename links appear only when set."""
    out: dict[str, object] = {
        "name": name, "kind": kind, "change_type": change_type,
        "start_line": start_line, "end_line": end_line,
    }  # fmt: skip
    if renamed_from is not None:
        out["renamed_from"] = renamed_from
    if renamed_to is not None:
        out["renamed_to"] = renamed_to
    return out  # type: ignore[return-value]


def change_record(
    *,
    path: str,
    old_path: str | None,
    ts_us: int,
    change_type: str,
    lines_added: int,
    lines_removed: int,
    scope: str,
    language: str | None,
    symbols: list[SymbolRecord],
    origin: str,
    origin_info: dict[str, Any] | None,
    git: dict[str, Any] | None,
) -> ChangeRecord:
    """A change record, its timestamp formatted from microseconds since the epoch."""
    out: dict[str, object] = {
        "path": path,
        "old_path": old_path,
        "timestamp": format_us(ts_us),
        "change_type": change_type,
        "lines_added": lines_added,
        "lines_removed": lines_removed,
        "scope": scope,
        "language": language,
        "symbols": symbols,
        "origin": origin,
        "origin_info": origin_info,
        "git": git,
    }
    return out  # type: ignore[return-value]


def of_symbol(s: SymbolChange) -> SymbolRecord:
    """The record of a symbol change."""
    return symbol_record(
        name=s.name, kind=s.kind, change_type=s.change_type.value, start_line=s.start_line,
        end_line=s.end_line, renamed_from=s.renamed_from, renamed_to=s.renamed_to,
    )  # fmt: skip


def of_change(c: FileChange) -> ChangeRecord:
    """The record of a file change (as the indexer made it, before or after storing)."""
    return change_record(
        path=c.path, old_path=c.old_path, ts_us=to_us(c.timestamp),
        change_type=c.change_type.value, lines_added=c.lines_added,
        lines_removed=c.lines_removed, scope=c.scope.value, language=c.language,
        symbols=[of_symbol(s) for s in c.symbols], origin=c.origin.value,
        origin_info=None if c.origin_info is None else dict(c.origin_info),
        git=None if c.git is None else dict(c.git),
    )  # fmt: skip
