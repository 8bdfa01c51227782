"""Rows many records share, stored once: a symbol's (name, kind) in `symbol_names`, a batch's
`origin_info` and `git` in `provenance` (revision 0006). Writers look them up or add them;
retention deletes those no record uses any more (`gc.delete_orphans`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from sqlalchemy import Connection, insert, select

from symdiff.store import tables as t
from symdiff.store.engine import insert_ignore

_CHUNK = 500  # names per IN (...) list


def hold(conn: Connection) -> None:
    """Before a writer reads an id from `symbol_names` or `provenance` (PostgreSQL): ROW
    EXCLUSIVE on both until it commits. Retention deletes unused rows under SHARE ROW
    EXCLUSIVE, so its delete runs wholly before the lookup or after this transaction's
    records, which then use the row, are visible to its re-check (docs/retention.md)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("LOCK TABLE symbol_names, provenance IN ROW EXCLUSIVE MODE")


def provenance_digest(origin_info: str | None, git: str | None) -> int:
    """A 63-bit hash of a provenance pair (`provenance.digest`): finds an existing row."""
    text = ("-" if origin_info is None else "i" + origin_info) + "\0" + (
        "-" if git is None else "g" + git)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def provenance_id(conn: Connection, origin_info: str | None, git: str | None) -> int | None:
    """The `provenance` row of a pair, added when there is none (None: no provenance)."""
    if origin_info is None and git is None:
        return None
    p = t.provenance.c
    digest = provenance_digest(origin_info, git)
    found = conn.execute(
        select(p.id).where(p.digest == digest, p.origin_info.is_not_distinct_from(origin_info),
                           p.git.is_not_distinct_from(git)).limit(1)
    ).scalar()  # fmt: skip
    if found is not None:
        return int(found)
    session, turn = agent_turn(origin_info)
    return int(conn.execute(insert(t.provenance).values(
        digest=digest, origin_info=origin_info, git=git, session=session, turn=turn,
    ).returning(p.id)).scalar_one())  # fmt: skip


def agent_turn(origin_info: str | None) -> tuple[str | None, int | None]:
    """The agent session and turn an `origin_info` names (revision 0008), if any."""
    if origin_info is None or '"session"' not in origin_info:
        return None, None
    info = json.loads(origin_info)
    session, turn = info.get("session"), info.get("turn")
    return (session if isinstance(session, str) else None,
            turn if isinstance(turn, int) and not isinstance(turn, bool) else None)


def name_ids(conn: Connection, pairs: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The `symbol_names` ids of (name, kind) pairs, adding the missing ones (sorted)."""
    wanted = sorted(pairs)
    ids = _known(conn, wanted)
    missing = [pair for pair in wanted if pair not in ids]
    if missing:
        insert_ignore(conn, t.symbol_names, [{"name": n, "kind": k} for n, k in missing],
                      ["name", "kind"])  # fmt: skip
        ids.update(_known(conn, missing))
    return ids


def _known(conn: Connection, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    n = t.symbol_names.c
    wanted = set(pairs)
    names = sorted({name for name, _ in pairs})
    out: dict[tuple[str, str], int] = {}
    for i in range(0, len(names), _CHUNK):
        rows = conn.execute(select(n.name, n.kind, n.id).where(n.name.in_(names[i : i + _CHUNK])))
        out.update({(name, kind): int(id_) for name, kind, id_ in rows if (name, kind) in wanted})
    return out
