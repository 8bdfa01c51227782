"""Edit intents in SQL (the table `edit_intents`): an edit says which content it is about to
write, so that the daemon records the write as that edit's (`origin: "edit"`), not as `watch`."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, delete, insert, select

from symdiff.store import tables as t

INTENT_TTL_S = 120.0  # an edit's intent outlives any settle window and retry of the daemon


def add_intents(
    conn: Connection, workspace_id: int, intents: Sequence[tuple[str, str]],
    info: Mapping[str, object] | None,
) -> None:  # fmt: skip
    """Say that `path` is about to become `new_hash` by an edit (replacing an older intent)."""
    expires = int((time.time() + INTENT_TTL_S) * 1e6)
    text = None if info is None else json.dumps(info, separators=(",", ":"), sort_keys=True)
    it = t.edit_intents.c
    for path, new_hash in intents:
        conn.execute(delete(t.edit_intents).where(
            it.workspace_id == workspace_id, it.path == path, it.new_hash == new_hash))
        conn.execute(insert(t.edit_intents).values(
            workspace_id=workspace_id, path=path, new_hash=new_hash, origin_info=text,
            expires_us=expires))  # fmt: skip


def intents(conn: Connection, workspace_id: int) -> dict[tuple[str, str], dict[str, object]]:
    """The live intents of a workspace: (path, new_hash) -> origin_info ({} when none)."""
    it = t.edit_intents.c
    now = int(time.time() * 1e6)
    rows = conn.execute(
        select(it.path, it.new_hash, it.origin_info)
        .where(it.workspace_id == workspace_id, it.expires_us >= now)
    ).all()
    return {(p, h): ({} if info is None else json.loads(info)) for p, h, info in rows}


def consume_intent(conn: Connection, workspace_id: int, path: str, new_hash: str) -> None:
    """An intent fulfilled (its change recorded) is gone; expired ones go with it."""
    it = t.edit_intents.c
    conn.execute(delete(t.edit_intents).where(
        it.workspace_id == workspace_id,
        ((it.path == path) & (it.new_hash == new_hash)) | (it.expires_us < int(time.time() * 1e6)),
    ))  # fmt: skip
