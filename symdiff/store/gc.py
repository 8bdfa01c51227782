"""Retention's SQL: records older than the window go with their symbol rows, then the snapshots
nothing needs any more, then SQLite gives the freed pages back. Every step is a short
transaction of its own; the policy (the window, readers' pins, the schedule) is record/retention.py.

Why it is safe while daemons write (docs/retention.md):

- A record and its symbol rows leave in one transaction: never one without the other.
- Snapshots are found garbage by one consistent read (everything no record, file state or
  edit intent names, with the transitive `base` closure of what is kept), then deleted in
  batches whose DELETE re-checks, under the writer lock, what could have changed since that
  read: records written after it, every file state and intent, and any blob stored against
  the one going. On SQLite the batch is a `BEGIN IMMEDIATE` writer; on PostgreSQL it first
  takes `SHARE ROW EXCLUSIVE` on `blobs`, which waits for every writer that has inserted a
  snapshot and not yet committed (their records must be visible to the re-check) and holds
  new ones back for the batch's few milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Text,
    and_,
    bindparam,
    delete,
    func,
    or_,
    select,
    text,
)
from sqlalchemy.exc import SQLAlchemyError

from symdiff.errors import StoreError
from symdiff.store import facts
from symdiff.store import tables as t
from symdiff.store.changes import Position

RECORD_BATCH = 500
BLOB_BATCH = 500
# Pages freed per step: 512 KiB of a new file's 2 KiB pages (engine.PAGE_SIZE), 1 MiB of an
# older file's 4 KiB ones; a writer waits a few ms at most.
VACUUM_STEP_PAGES = 256
PG_LOCK_TIMEOUT = "10s"  # a batch that cannot get the blobs lock gives up (next run retries)

_GARBAGE = """
WITH RECURSIVE live(h) AS (
    SELECT old_hash FROM changes WHERE old_hash IS NOT NULL
    UNION SELECT new_hash FROM changes WHERE new_hash IS NOT NULL
    UNION SELECT blob_hash FROM files
    UNION SELECT new_hash FROM edit_intents
    UNION SELECT b.base FROM blobs b JOIN live ON b.hash = live.h WHERE b.base IS NOT NULL
)
SELECT hash, base FROM blobs WHERE {not_live}
"""

# Anti-joins as each backend runs them well: SQLite builds one ephemeral index for `NOT IN`;
# PostgreSQL turns `NOT EXISTS` into a hash anti-join (a `NOT IN` larger than work_mem would be
# re-scanned for every row).
_NOT_IN = {
    "sqlite": ("hash NOT IN (SELECT h FROM live)", "hash NOT IN (SELECT blob_hash FROM files)"),
    "postgresql": ("NOT EXISTS (SELECT 1 FROM live WHERE live.h = blobs.hash)",
                   "NOT EXISTS (SELECT 1 FROM files f WHERE f.blob_hash = blobs.hash)"),
}

# `:mark` splits the records the garbage read saw from those written since: on SQLite ids
# grow in commit order (writers are serialised), so newer rows have id > mark; on PostgreSQL
# every row the read could not see has a txid at or above the xmin taken before it.
_DELETE_BLOBS = """
DELETE FROM blobs WHERE hash IN :hashes
AND hash NOT IN (SELECT c.old_hash FROM changes c WHERE {newer} AND c.old_hash IS NOT NULL
                 UNION SELECT c.new_hash FROM changes c WHERE {newer} AND c.new_hash IS NOT NULL)
AND {not_in_files}
AND hash NOT IN (SELECT new_hash FROM edit_intents)
AND NOT EXISTS (SELECT 1 FROM blobs d WHERE d.base IS NOT NULL AND d.base = blobs.hash)
"""


@dataclass(frozen=True, slots=True)
class Garbage:
    """Snapshots no record, file state or intent needed at one consistent read, in levels: a
    delta is in an earlier level than the blob it is stored against (one DELETE sees its own
    table as it was, so the two never share a statement); `mark` dates that read."""

    levels: tuple[tuple[str, ...], ...]
    mark: int

    @property
    def count(self) -> int:
        """How many snapshots were garbage at the read."""
        return sum(len(level) for level in self.levels)


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except SQLAlchemyError as exc:
        raise StoreError(f"gc failed: {str(exc).splitlines()[0]}") from exc


@contextmanager
def _write(engine: Engine, held: list[float]) -> Iterator[Connection]:
    """A writer transaction; how long it held the writer lock (SQLite) or ran (PostgreSQL) is
    appended to `held`: from just after BEGIN IMMEDIATE got the lock to the commit. (A commit
    in WAL mode with synchronous=NORMAL writes the WAL without fsync; the checkpoint SQLite
    may run right after it holds no writer lock, so neither is counted.)"""
    with _errors(), engine.connect().execution_options(symdiff_write=True) as conn, \
            conn.begin():  # fmt: skip
        started = time.monotonic()
        yield conn
        held.append(time.monotonic() - started)


@contextmanager
def _read(engine: Engine) -> Iterator[Connection]:
    with _errors(), engine.connect() as conn, conn.begin():
        yield conn


def oldest_us(engine: Engine) -> int | None:
    """When the oldest record was observed; None when there is none."""
    with _read(engine) as conn:
        return conn.execute(select(func.min(t.changes.c.ts_us))).scalar()


def reader_cursors(engine: Engine, *, active_since_us: int) -> list[str]:
    """The cursors of the named readers that moved at or after `active_since_us`."""
    r = t.readers.c
    with _read(engine) as conn:
        return list(conn.execute(select(r.cursor).where(r.updated_us >= active_since_us))
                    .scalars())  # fmt: skip


def delete_records(
    engine: Engine, *, before_us: int, pin: Position | None = None, pin_floor_us: int = 0,
    batch: int = RECORD_BATCH, held: list[float] | None = None,
) -> tuple[int, int]:
    """Delete the records observed before `before_us`, oldest first, each batch with its symbol
    rows in one transaction; returns (records, symbol rows) deleted. `held` gets each
    transaction's duration.

    `pin`: records after this position in the reading order stay (a reader has not read them
    yet), unless observed before `pin_floor_us`.
    """
    c = t.changes.c
    doomed = c.ts_us < before_us
    if pin is not None:
        doomed = and_(doomed, or_(c.ts_us < pin_floor_us, c.txid < pin.txid,
                                  and_(c.txid == pin.txid, c.id <= pin.id)))  # fmt: skip
    records = symbols = 0
    held = [] if held is None else held
    while True:
        with _write(engine, held) as conn:
            ids = list(conn.execute(select(c.id).where(doomed).order_by(c.ts_us).limit(batch))
                       .scalars())  # fmt: skip
            if not ids:
                return records, symbols
            symbols += conn.execute(delete(t.symbol_changes).where(
                t.symbol_changes.c.change_id.in_(ids))).rowcount  # fmt: skip
            records += conn.execute(delete(t.changes).where(c.id.in_(ids))).rowcount


# Rows that records share (revision 0006, where present): (table, the table whose rows name
# one, by which column). They go once no record names them.
_SHARED = (
    ("provenance", "changes", "provenance_id"),
    ("symbol_names", "symbol_changes", "name_id"),
)


def delete_orphans(engine: Engine, *, batch: int = RECORD_BATCH,
                   held: list[float] | None = None) -> int:  # fmt: skip
    """Delete the shared rows (a batch's provenance, symbol names) no record uses any more,
    found by one read and deleted in batches whose DELETE re-checks under the writer lock.
    On PostgreSQL the batch first takes SHARE ROW EXCLUSIVE on both tables: a writer holds
    ROW EXCLUSIVE on them from before it looks an id up until it commits (store/changes.py),
    so the re-check sees every record that uses a row it deletes, and no writer picks a row
    the batch deletes. Should a batch still fail (its lock timeout, a foreign key), it is left
    for the next collection."""
    held = [] if held is None else held
    deleted = 0
    for name, user_name, column in _SHARED:
        table, user = t.metadata.tables.get(name), t.metadata.tables.get(user_name)
        if table is None or user is None or column not in user.c:
            continue
        key, ref = table.c.id, user.c[column]
        with _read(engine) as conn:
            unused = list(conn.execute(select(key).except_(
                select(ref).where(ref.is_not(None)))).scalars())  # fmt: skip
        for i in range(0, len(unused), batch):
            ids = unused[i : i + batch]
            try:
                with _write(engine, held) as conn:
                    if conn.dialect.name == "postgresql":
                        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{PG_LOCK_TIMEOUT}'")
                        conn.exec_driver_sql(
                            "LOCK TABLE symbol_names, provenance IN SHARE ROW EXCLUSIVE MODE")
                    deleted += conn.execute(delete(table).where(key.in_(ids), key.not_in(
                        select(ref).where(ref.in_(ids))))).rowcount  # fmt: skip
            except StoreError:
                if engine.dialect.name != "postgresql":
                    raise
    return deleted


def delete_facts(engine: Engine, *, extractor: str, before_us: int,
                 held: list[float] | None = None, batch: int = RECORD_BATCH) -> int:  # fmt: skip
    """Facts by content (store/facts.py) no longer kept: another extractor's, and those written
    before `before_us` for blobs no record or file state names; `batch` rows a transaction."""
    gone = 0
    while True:
        with _write(engine, held if held is not None else []) as conn:
            step = facts.collect_step(conn, extractor, before_us, batch)
        if not step:
            return gone
        gone += step


def _mark(conn: Connection) -> int:
    if conn.dialect.name == "postgresql":
        return int(conn.execute(select(
            func.pg_snapshot_xmin(func.pg_current_snapshot()).cast(Text).cast(BigInteger)
        )).scalar_one())  # fmt: skip
    return int(conn.execute(select(func.coalesce(func.max(t.changes.c.id), 0))).scalar_one())


def find_garbage(engine: Engine) -> Garbage:
    """The snapshots nothing needs, as one consistent read sees them (a mark taken first)."""
    with _read(engine) as conn:
        mark = _mark(conn)  # before the read: PostgreSQL's next statement sees no less
        not_live = _NOT_IN["postgresql" if conn.dialect.name == "postgresql" else "sqlite"][0]
        q = text(_GARBAGE.format(not_live=not_live)).columns(hash=t.DIGEST, base=t.DIGEST)
        rows = conn.execute(q).all()
    return Garbage(_deltas_first({h: b for h, b in rows}), mark)


def _deltas_first(base_of: dict[str, str | None]) -> tuple[tuple[str, ...], ...]:
    """Garbage blobs in levels: first those no garbage delta is stored against, then their
    bases, and so on."""
    waiting: dict[str, int] = dict.fromkeys(base_of, 0)
    for base in base_of.values():
        if base is not None and base in waiting:
            waiting[base] += 1
    level = [h for h, n in waiting.items() if n == 0]
    levels = []
    while level:
        levels.append(tuple(level))
        following = []
        for h in level:
            base = base_of[h]
            if base is not None and base in waiting:
                waiting[base] -= 1
                if waiting[base] == 0:
                    following.append(base)
        level = following
    return tuple(levels)  # a cycle (impossible: a base is committed first) is never deleted


def delete_blobs(engine: Engine, garbage: Garbage, *, batch: int = BLOB_BATCH,
                 held: list[float] | None = None) -> int:  # fmt: skip
    """Delete the garbage snapshots that are still garbage, one short transaction per batch;
    returns how many went. `held` gets each transaction's duration."""
    deleted = 0
    held = [] if held is None else held
    for level in garbage.levels:
        for i in range(0, len(level), batch):
            with _write(engine, held) as conn:
                deleted += _delete_batch(conn, level[i : i + batch], garbage.mark)
    return deleted


def _delete_batch(conn: Connection, hashes: Sequence[str], mark: int) -> int:
    pg = conn.dialect.name == "postgresql"
    if pg:
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{PG_LOCK_TIMEOUT}'")
        conn.exec_driver_sql("LOCK TABLE blobs IN SHARE ROW EXCLUSIVE MODE")
    newer = "c.txid >= :mark" if pg else "c.id > :mark"
    not_in_files = _NOT_IN["postgresql" if pg else "sqlite"][1]
    stmt = text(_DELETE_BLOBS.format(newer=newer, not_in_files=not_in_files)).bindparams(
        bindparam("hashes", expanding=True, type_=t.DIGEST))
    return int(conn.execute(stmt, {"hashes": list(hashes), "mark": mark}).rowcount)


def _shrink_wal(db: Any, held: list[float] | None) -> None:
    """Copy the WAL into the file and truncate it, if the readers of the moment let it within a
    second (it holds the writer lock meanwhile: a writer waits that long at most; readers
    never); else it shrinks later."""
    started = time.monotonic()
    db.execute("PRAGMA busy_timeout=1000")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        db.execute("PRAGMA busy_timeout=30000")
        if held is not None:
            held.append(time.monotonic() - started)


@dataclass(frozen=True, slots=True)
class Reclaimed:
    """What giving space back did: `mode` is `incremental`, `converted` (one VACUUM switched
    the file to incremental), `reused` (freed pages stay in the file for reuse), `vacuum`
    (PostgreSQL: a plain VACUUM made the room reusable) or `server` (another backend)."""

    mode: str
    pages: int


def _vacuum_postgresql(engine: Engine) -> Reclaimed:
    """A plain VACUUM of the tables gc deletes from (never FULL: its lock blocks neither reads
    nor writes), so their room is reusable now, not whenever autovacuum comes by."""
    with _errors(), engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM symbol_changes, changes, blobs, symbol_names, provenance")
    return Reclaimed("vacuum", 0)


def reclaim(engine: Engine, *, convert: bool = False, step_pages: int = VACUUM_STEP_PAGES,
            held: list[float] | None = None) -> Reclaimed:  # fmt: skip
    """Give freed SQLite pages back to the file system in small steps, each its own short write
    transaction; `convert`: a database made before incremental vacuum is switched by one VACUUM
    (it blocks writers, never readers, for as long as it copies the file)."""
    if engine.dialect.name == "postgresql":
        return _vacuum_postgresql(engine)
    if engine.dialect.name != "sqlite":
        return Reclaimed("server", 0)
    with _errors():
        raw = engine.raw_connection()
        try:
            db = raw.driver_connection
            assert db is not None
            mode = db.execute("PRAGMA auto_vacuum").fetchone()[0]
            if mode != 2:
                free = db.execute("PRAGMA freelist_count").fetchone()[0]
                if not convert:
                    return Reclaimed("reused", 0)
                db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                db.execute("VACUUM")
                _shrink_wal(db, held)
                return Reclaimed("converted", int(free))
            freed = 0
            while True:
                free = db.execute("PRAGMA freelist_count").fetchone()[0]
                if free == 0:
                    break
                started = time.monotonic()
                # executescript steps the pragma to its end; execute would free one page.
                db.executescript(f"PRAGMA incremental_vacuum({int(step_pages)});")
                if held is not None:
                    held.append(time.monotonic() - started)
                after = db.execute("PRAGMA freelist_count").fetchone()[0]
                if after >= free:
                    break
                freed += free - after
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            if freed:
                _shrink_wal(db, held)
            return Reclaimed("incremental", freed)
        finally:
            raw.close()
