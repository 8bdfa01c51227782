"""Which commits' records the history import has already stored (its idempotence key)."""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from symdiff.errors import StoreError
from symdiff.store import tables as t
from symdiff.store.store import Store


def imported_keys(store: Store, workspace_id: int) -> set[tuple[str, str]]:
    """(sha, path) of every `commit` record of a workspace."""
    c, p = t.changes.c, t.provenance.c
    q = (select(p.origin_info, c.path).join(t.provenance, p.id == c.provenance_id)
         .where(c.workspace_id == workspace_id, c.origin == "commit"))  # fmt: skip
    keys = set()
    try:
        with store.engine.connect() as conn:
            for info, path in conn.execute(q):
                sha = json.loads(info).get("sha") if info else None
                if isinstance(sha, str):
                    keys.add((sha, path))
    except SQLAlchemyError as exc:
        raise StoreError(f"read failed: {str(exc).splitlines()[0]}") from exc
    return keys
