"""The reads behind blame: every record of one path (or renamed from it), with what its
provenance row says, oldest first. Only reads; `symdiff.agents.blame` walks them.

`changes` has no index on `path` (records are read by time), so this is a scan of the
workspace's records through the (workspace_id, ts_us) index: on 1,000,000 records, seconds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select

from symdiff.store import tables as t
from symdiff.store.store import Store


@dataclass(frozen=True, slots=True)
class FileRow:
    """One recorded change of a file: the content it went from and to, and who made it."""

    id: int
    ts_us: int
    path: str
    old_path: str | None
    change_type: str
    old_hash: str | None
    new_hash: str | None
    origin: str
    origin_info: dict[str, Any] | None


def file_rows(store: Store, workspace_ids: Sequence[int] | None, path: str) -> list[FileRow]:
    """Every record whose `path` or `old_path` is `path`, oldest first (`oldest_first`)."""
    c, p = t.changes.c, t.provenance.c
    q = (
        select(c.id, c.ts_us, c.path, c.old_path, c.change_type, c.old_hash, c.new_hash,
               c.origin, p.origin_info)
        .select_from(t.changes.outerjoin(t.provenance, p.id == c.provenance_id))
        .where(or_(c.path == path, c.old_path == path))
    )  # fmt: skip
    if workspace_ids is not None:
        q = q.where(c.workspace_id.in_(list(workspace_ids)))
    with store._read() as conn:
        rows = conn.execute(q).all()
    out = [FileRow(int(i), int(ts), str(pa), old, str(ct), oh, nh, str(origin),
                   None if info is None else json.loads(info))
           for i, ts, pa, old, ct, oh, nh, origin, info in rows]  # fmt: skip
    out.sort(key=oldest_first)
    return out


def oldest_first(r: FileRow) -> tuple[int, int]:
    """The order records were made in: by time, then id; the history import writes a branch's
    commits newest first, so among imported commits of one second the higher id is older."""
    return (r.ts_us, -r.id if r.origin == "commit" else r.id)
