"""Change records in SQL: the one statement that writes a change, the one read that serves it.

A change is a row of `changes`; the definitions it touched are rows of `symbol_changes`,
ordered by `ordinal` (SPEC.md's line order) and indexed by qualified name for lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select

from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.records import ChangeRecord, SymbolRecord, change_record, symbol_record
from symdiff.store import tables as t
from symdiff.timestamps import from_us, to_us

_CHUNK = 500  # ids per IN (...) list


@dataclass(frozen=True, slots=True)
class ChangeFilter:
    """Which changes a read returns: newest first, scope filtered before the limit."""

    workspace_ids: Sequence[int] | None  # None: every workspace
    since_us: int
    scope: Scope | None  # None: both
    limit: int


@dataclass(frozen=True, slots=True)
class StoredChange:
    """A change as stored: its record, and what a patch or a domain object needs beside it."""

    id: int
    workspace: str  # the workspace's root
    ts_us: int
    old_hash: str | None
    new_hash: str | None
    record: ChangeRecord


def insert_change(conn: Connection, workspace_id: int, c: FileChange) -> int:
    """Write one change and its symbol rows; returns the change id."""
    res = conn.execute(
        t.changes.insert().values(
            workspace_id=workspace_id,
            ts_us=to_us(c.timestamp),
            path=c.path,
            old_path=c.old_path,
            change_type=c.change_type.value,
            lines_added=c.lines_added,
            lines_removed=c.lines_removed,
            scope=c.scope.value,
            language=c.language,
            old_hash=c.old_hash,
            new_hash=c.new_hash,
        )
    )
    change_id = int(res.inserted_primary_key[0])  # type: ignore[index]
    if c.symbols:
        conn.execute(
            t.symbol_changes.insert(),
            [
                {
                    "change_id": change_id,
                    "ordinal": i,
                    "name": s.name,
                    "kind": s.kind,
                    "change_type": s.change_type.value,
                    "start_line": s.start_line,
                    "end_line": s.end_line,
                    "renamed_from": s.renamed_from,
                    "renamed_to": s.renamed_to,
                }
                for i, s in enumerate(c.symbols)
            ],
        )
    return change_id


def select_changes(conn: Connection, f: ChangeFilter) -> list[StoredChange]:
    """The changes a filter selects, newest first, each with its symbols."""
    c = t.changes.c
    q = (
        select(
            c.id, t.workspaces.c.root, c.path, c.old_path, c.ts_us, c.change_type,
            c.lines_added, c.lines_removed, c.scope, c.language, c.old_hash, c.new_hash,
        )
        .join(t.workspaces, t.workspaces.c.id == c.workspace_id)
        .where(c.ts_us >= f.since_us)
    )
    if f.workspace_ids is not None:
        q = q.where(c.workspace_id.in_(list(f.workspace_ids)))
    if f.scope is not None:
        q = q.where(c.scope == f.scope.value)
    rows = conn.execute(q.order_by(c.ts_us.desc(), c.id.desc()).limit(f.limit)).all()
    symbols = _symbols(conn, [r[0] for r in rows])
    return [
        StoredChange(
            id=id_, workspace=root, ts_us=ts_us, old_hash=old_hash, new_hash=new_hash,
            record=change_record(
                path=path, old_path=old_path, ts_us=ts_us, change_type=change_type,
                lines_added=added, lines_removed=removed, scope=scope, language=language,
                symbols=symbols.get(id_, []),
            ),
        )
        for (id_, root, path, old_path, ts_us, change_type, added, removed, scope, language,
             old_hash, new_hash) in rows
    ]


def _symbols(conn: Connection, ids: Sequence[int]) -> dict[int, list[SymbolRecord]]:
    """The symbol records of some changes, in line order, by change id."""
    s = t.symbol_changes.c
    out: dict[int, list[SymbolRecord]] = {}
    for i in range(0, len(ids), _CHUNK):
        rows = conn.execute(
            select(
                s.change_id, s.name, s.kind, s.change_type, s.start_line, s.end_line,
                s.renamed_from, s.renamed_to,
            )
            .where(s.change_id.in_(ids[i : i + _CHUNK]))
            .order_by(s.change_id, s.ordinal)
        ).all()  # rows unpack as tuples: this loop runs for every symbol of every record
        for change_id, name, kind, change_type, start, end, renamed_from, renamed_to in rows:
            out.setdefault(change_id, []).append(symbol_record(
                name=name, kind=kind, change_type=change_type, start_line=start, end_line=end,
                renamed_from=renamed_from, renamed_to=renamed_to,
            ))  # fmt: skip
    return out


def to_file_change(sc: StoredChange) -> FileChange:
    """The domain value of a stored change."""
    r = sc.record
    return FileChange(
        path=r["path"],
        old_path=r["old_path"],
        timestamp=from_us(sc.ts_us),
        change_type=ChangeType(r["change_type"]),
        lines_added=r["lines_added"],
        lines_removed=r["lines_removed"],
        scope=Scope(r["scope"]),
        language=r["language"],
        symbols=tuple(
            SymbolChange(
                name=s["name"], kind=s["kind"], change_type=SymbolChangeType(s["change_type"]),
                start_line=s["start_line"], end_line=s["end_line"],
                renamed_from=s.get("renamed_from"), renamed_to=s.get("renamed_to"),
            )
            for s in r["symbols"]
        ),
        workspace=sc.workspace,
        old_hash=sc.old_hash,
        new_hash=sc.new_hash,
        id=sc.id,
    )
