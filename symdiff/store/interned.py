"""Rows many records share, stored once: a symbol's (name, kind) in `symbol_names`, a batch's
`origin_info` and `git` in `provenance` (revision 0006). Writers look them up or add them;
retention deletes those no record uses any more (`gc.delete_orphans`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

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
    return provenance_ids(conn, [(origin_info, git)])[(origin_info, git)]


def provenance_ids(conn: Connection, pairs: Iterable[tuple[str | None, str | None]]
                   ) -> dict[tuple[str | None, str | None], int | None]:  # fmt: skip
    """`provenance_id` of many pairs: the known ones found in one query per 500 digests, the
    others added in one statement, in sorted order (as `name_ids`)."""
    out: dict[tuple[str | None, str | None], int | None] = {(None, None): None}
    wanted = sorted({pair for pair in pairs if pair != (None, None)},
                    key=lambda pair: (pair[0] or "", pair[1] is not None, pair[1] or ""))
    p = t.provenance.c
    digests = {pair: provenance_digest(*pair) for pair in wanted}
    by_digest = sorted(set(digests.values()))
    for i in range(0, len(by_digest), 500):
        for row in conn.execute(select(p.id, p.digest, p.origin_info, p.git).where(
                p.digest.in_(by_digest[i : i + 500]))):  # fmt: skip
            out.setdefault((row.origin_info, row.git), int(row.id))
    missing = [pair for pair in wanted if pair not in out]
    if missing:
        rows = []
        for origin_info, git in missing:
            session, turn = agent_turn(origin_info)
            rows.append({"digest": digests[(origin_info, git)], "origin_info": origin_info,
                         "git": git, "session": session, "turn": turn})
        found = conn.execute(insert(t.provenance).returning(p.id, sort_by_parameter_order=True),
                             rows)  # fmt: skip
        out.update(zip(missing, (int(row[0]) for row in found), strict=True))
    return out


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
