"""The reads behind one symbol's history: its rows by qualified name (`symbol_names`), the
file renames between two instants, and every recorded name (for "did you mean").

Only reads; `symdiff.symbols.history` turns the rows into versions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import select

from symdiff.store import tables as t
from symdiff.store.store import Store

_CHUNK = 500


@dataclass(frozen=True, slots=True)
class SymbolRow:
    """One recorded change to one definition, with what its file change says beside it."""

    change_id: int
    ordinal: int
    ts_us: int
    path: str
    old_path: str | None
    file_change_type: str
    language: str | None
    old_hash: str | None
    new_hash: str | None
    origin: str
    origin_info: str | None  # JSON text, as stored
    name: str
    kind: str
    change_type: str
    start_line: int
    end_line: int
    renamed_from: str | None
    renamed_to: str | None


def symbol_rows(
    store: Store, names: Iterable[str], workspace_ids: Sequence[int] | None
) -> list[SymbolRow]:
    """Every symbol row with one of `names`, oldest first (`oldest_first`)."""
    s, c, n, p = t.symbol_changes.c, t.changes.c, t.symbol_names.c, t.provenance.c
    types = t.SYMBOL_CHANGE_TYPES
    wanted = sorted(set(names))
    out: list[SymbolRow] = []
    with store._read() as conn:
        # The names' ids first, then their rows through the name id index: in one join SQLite
        # may start from a workspace's changes instead (measured: seconds on 1,000,000).
        ids = [i for k in range(0, len(wanted), _CHUNK) for i in conn.execute(
            select(n.id).where(n.name.in_(wanted[k : k + _CHUNK]))).scalars()]  # fmt: skip
        for i in range(0, len(ids), _CHUNK):
            q = (
                select(
                    s.change_id, s.ordinal, c.ts_us, c.path, c.old_path, c.change_type,
                    c.language, c.old_hash, c.new_hash, c.origin, p.origin_info, n.name, n.kind,
                    s.change_type, s.start_line, s.end_line, s.renamed_from, s.renamed_to,
                )
                .select_from(t.symbol_changes)
                .join(t.symbol_names, n.id == s.name_id)
                .join(t.changes, c.id == s.change_id)
                .outerjoin(t.provenance, p.id == c.provenance_id)
                .where(s.name_id.in_(ids[i : i + _CHUNK]))
            )  # fmt: skip
            if workspace_ids is not None:
                q = q.where(c.workspace_id.in_(list(workspace_ids)))
            rows = conn.execute(q).all()  # at once: a hot name has thousands of rows
            for row in rows:
                values = list(cast("tuple[Any, ...]", row))
                values[13] = types[values[13]]  # the change type's letter
                out.append(SymbolRow(*values))
    out.sort(key=oldest_first)
    return out


def oldest_first(r: SymbolRow) -> tuple[int, int, int]:
    """The order rows were made in: by time, then by record id, except that the history import
    writes the commits of a branch newest first, so among imported commits of one second (a
    rebase) the higher id is the older commit."""
    return (r.ts_us, -r.change_id if r.origin == "commit" else r.change_id, r.ordinal)


def file_renames(
    store: Store, workspace_ids: Sequence[int] | None, after_us: int, until_us: int
) -> list[tuple[str, str]]:
    """The (old_path, path) of every file rename recorded in (after_us, until_us], in order.

    Served by the (workspace_id, ts_us) and (ts_us) indexes: the interval is what is read.
    """
    c = t.changes.c
    q = select(c.old_path, c.path).where(
        c.ts_us > after_us, c.ts_us <= until_us, c.change_type == "rename"
    )
    if workspace_ids is not None:
        q = q.where(c.workspace_id.in_(list(workspace_ids)))
    with store._read() as conn:
        rows = conn.execute(q.order_by(c.ts_us, c.id)).all()
    return [(str(old), str(new)) for old, new in rows if old is not None]


def recorded_names(store: Store) -> list[str]:
    """Every qualified name the index holds (one scan of the (name, kind) index). Retention
    deletes a name right after the last record that used it, in the same collection."""
    n = t.symbol_names.c
    with store._read() as conn:
        return [str(x) for x in conn.execute(select(n.name).distinct()).scalars()]
