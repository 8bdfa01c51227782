"""Delta snapshots: reading a blob through its chain of bases, the chain cap, and the write-time
check that every delta's base is still there.

A new version of a file is stored as a zstd delta against the version it replaces (its `base`)
when that is smaller than the whole snapshot; the base may itself be a delta, down to a whole
snapshot. Reading a version decodes its chain from the whole snapshot up, so a chain is capped:
at `MAX_DEPTH` deltas, or `MAX_CHAIN_BYTES` of decoded bytes for big files, the next version is
stored whole again. docs/storage.md (content) has the measured read cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import zstandard
from sqlalchemy import Connection, Select, bindparam, literal, select, text

from symdiff.errors import StoreError
from symdiff.store import tables as t
from symdiff.store.blobs import Blob, delta, unpack

MAX_DEPTH = 64  # deltas between a version and its whole snapshot
MAX_CHAIN_BYTES = 32 << 20  # bytes decoded to read one version (a 4 MiB file: 8 deltas)
_RUNAWAY = 10_000  # a chain longer than this is a cycle: refuse it


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stored version's bytes and how deep in a delta chain it lies (0: stored whole)."""

    data: bytes
    depth: int


def _chain_query() -> Select[Any]:
    """A blob's row and its bases', nearest first: one recursive query (built once)."""
    b = t.blobs.c
    chain = (
        select(b.hash, b.codec, b.data, b.base, literal(0).label("n"))
        .where(b.hash == bindparam("digest"))
        .cte("chain", recursive=True)
    )
    link = t.blobs.alias("link")
    chain = chain.union_all(
        select(link.c.hash, link.c.codec, link.c.data, link.c.base, chain.c.n + 1)
        .where(link.c.hash == chain.c.base, chain.c.n < _RUNAWAY)
    )
    return select(chain.c.hash, chain.c.codec, chain.c.data, chain.c.base).order_by(chain.c.n)


_CHAIN = _chain_query()


def read(conn: Connection, digest: str) -> Snapshot | None:
    """The bytes of a stored blob, decoded through its chain of bases (one recursive query);
    None when the blob is unknown or kept by hash only. A chain whose base is missing, or that
    does not decode, is a StoreError: never wrong bytes."""
    rows = conn.execute(_CHAIN, {"digest": digest}).all()
    if not rows:
        return None
    if rows[-1].base is not None:
        if len(rows) > _RUNAWAY:
            raise StoreError(f"snapshot {digest} has a delta chain that loops")
        raise StoreError(
            f"snapshot {digest} cannot be read: it is stored as a delta against "
            f"{rows[-1].base}, which the database no longer holds"
        )
    data: bytes | None = None
    for row in reversed(rows):
        data = _unpacked(row.hash, row.codec, row.data, data)
        if data is None:
            if row.hash != digest:  # a hash-only blob is never a base
                raise StoreError(f"snapshot {digest} is stored against {row.hash}, which "
                                 "keeps no bytes")  # fmt: skip
            return None
    assert data is not None
    return Snapshot(data, len(rows) - 1)


def read_many(conn: Connection, digests: Sequence[str]) -> dict[str, bytes | None]:
    """`read` of many blobs (their bytes; None: unknown or hash only): the whole ones in one
    query per 500, each delta through its chain."""
    b = t.blobs.c
    out: dict[str, bytes | None] = dict.fromkeys(digests)
    wanted = sorted(set(digests))
    for i in range(0, len(wanted), 500):
        rows = conn.execute(select(b.hash, b.codec, b.data, b.base).where(
            b.hash.in_(wanted[i : i + 500])))  # fmt: skip
        for row in rows:
            if row.base is not None:
                found = read(conn, row.hash)
                out[row.hash] = None if found is None else found.data
                continue
            out[row.hash] = _unpacked(row.hash, row.codec, row.data, None)
    return out


def _unpacked(digest: str, codec: str, data: bytes | None, base: bytes | None) -> bytes | None:
    """`blobs.unpack`, a row that does not decode a StoreError naming it."""
    try:
        return unpack(codec, data, base)
    except (zstandard.ZstdError, ValueError) as exc:
        raise StoreError(f"snapshot {digest} does not decode ({codec}): {exc}") from exc


def against(whole: Blob, content: bytes, base_hash: str, base: Snapshot | None) -> Blob:
    """How to store a new version (`whole` packs `content`) that replaces the version
    `base_hash`: a delta against it when that pays and keeps the chain within its cap."""
    if base is None or base_hash == whole.hash:
        return whole
    depth = base.depth + 1
    if depth > MAX_DEPTH or (depth + 1) * max(len(content), len(base.data)) > MAX_CHAIN_BYTES:
        return whole
    return delta(whole, content, base_hash, base.data)


def settle(conn: Connection, blobs: Sequence[Blob]) -> list[Blob]:
    """The blobs to insert (one per hash), inside the writing transaction: a delta whose base
    is neither in the database nor a whole snapshot among `blobs` is written whole instead, so
    every base is committed no later than its delta, and no chain can loop.

    On PostgreSQL the writer first takes the lock its INSERT would take (ROW EXCLUSIVE on
    `blobs`), so that retention's batch (SHARE ROW EXCLUSIVE, then DELETE) runs wholly before
    this check or wholly after the commit, never across it (a deadlock otherwise); the bases
    found are also locked `FOR KEY SHARE` until commit, so any delete of a base waits for the
    delta and must then see it (docs/storage.md, content). On SQLite the writer already holds
    the database's write lock.
    """
    present = {b.hash for b in blobs if b.base is None and b.data is not None}
    wanted = {b.base for b in blobs if b.base is not None} - present
    if wanted and conn.dialect.name == "postgresql":
        conn.execute(text("LOCK TABLE blobs IN ROW EXCLUSIVE MODE"))
    ordered = sorted(wanted)
    for i in range(0, len(ordered), 500):
        q = select(t.blobs.c.hash).where(t.blobs.c.hash.in_(ordered[i : i + 500]),
                                         t.blobs.c.data.is_not(None))  # fmt: skip
        if conn.dialect.name == "postgresql":
            q = q.with_for_update(read=True, key_share=True)
        present.update(conn.execute(q).scalars())
    out = []
    for b in blobs:
        if b.base is not None and b.base not in present:
            assert b.whole is not None
            out.append(b.whole)
        else:
            out.append(b)
    return out
