"""Connections: symdiff's SQLite rules and the dialect-specific insert statements."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, delete, event, select
from sqlalchemy.pool import StaticPool

from symdiff.errors import StoreError
from symdiff.store import tables as t
from symdiff.workspace.layout import ensure_state_dir

PAGE_SIZE = 2048  # bytes, new SQLite files only


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # Python's sqlite3 would open transactions on its own; we issue BEGIN ourselves.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=30000")  # first: switching to WAL may have to wait too
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_new_file(dbapi_conn: Any, _record: Any) -> None:
    # Before WAL, which writes the header: a new database frees pages in place, so gc can give
    # space back in small steps (`incremental_vacuum`), and has 2 KiB pages: the rows are small
    # (a record, a symbol row, a delta: 20-300 bytes) and a table or index takes a page at
    # least, so a small history's file is ~10 % smaller than with 4 KiB (docs/storage.md).
    # A no-op on an existing database, and writers' only: on a read-only file (`mode=ro`,
    # `immutable`) SQLite refuses the pragmas.
    # (The page size first: after auto_vacuum, SQLite 3.40 keeps 4 KiB.)
    dbapi_conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
    dbapi_conn.execute("PRAGMA auto_vacuum=INCREMENTAL")


def _sqlite_query_only(dbapi_conn: Any, _record: Any) -> None:
    # A reader's connection refuses every write, whatever a bug upstream asks of it.
    dbapi_conn.execute("PRAGMA query_only=ON")


def _sqlite_begin(conn: Connection) -> None:
    # Writers take the write lock up front, so two writers queue on busy_timeout instead of
    # failing with SQLITE_BUSY on a read-to-write upgrade; readers stay deferred (WAL).
    mode = "IMMEDIATE" if conn.get_execution_options().get("symdiff_write") else "DEFERRED"
    conn.exec_driver_sql(f"BEGIN {mode}")


def _unwritable_reader_url(url: str) -> str:
    """A reader's URL for a SQLite file in a folder it cannot write (a read-only mount, another
    user's `.symdiff/`): WAL readers need the `-shm` file, which they could not create. Opened
    `mode=ro`, and `immutable` when no `-wal` file exists — then no writer can exist either,
    since a writer would have to create it in that same folder."""
    path = url.removeprefix("sqlite:///")
    if "?" in path or os.access(os.path.dirname(path) or ".", os.W_OK):
        return url
    flags = "mode=ro" if os.path.exists(path + "-wal") else "mode=ro&immutable=1"
    return f"sqlite:///file:{path}?{flags}&uri=true"


def make_engine(url: str, *, read_only: bool = False) -> Engine:
    """An engine with symdiff's connection rules (WAL, busy timeout, explicit BEGIN on SQLite).

    `read_only`: every connection refuses writes (SQLite `query_only`, PostgreSQL read-only
    transactions), for processes that only read: the query, `status`.
    """
    if url.startswith("sqlite"):
        memory = url in ("sqlite://", "sqlite:///:memory:")
        if read_only and not memory and url.startswith("sqlite:///"):
            url = _unwritable_reader_url(url)
        if not memory and url.startswith("sqlite:///") and not read_only:
            folder = Path(url.removeprefix("sqlite:///").split("?", 1)[0]).parent
            try:
                ensure_state_dir(folder)
            except OSError as exc:
                raise StoreError(f"cannot create the database folder {folder}: {exc}") from exc
        kwargs: dict[str, Any] = {"poolclass": StaticPool} if memory else {}
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, **kwargs
        )
        if not read_only:
            event.listen(engine, "connect", _sqlite_new_file)
        event.listen(engine, "connect", _sqlite_pragmas)
        if read_only:
            event.listen(engine, "connect", _sqlite_query_only)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if read_only and url.startswith("postgresql"):
        return create_engine(url, pool_pre_ping=True, connect_args={
            "options": "-c default_transaction_read_only=on"})
    return create_engine(url, pool_pre_ping=True)


def _insert_of(dialect: str) -> Any:
    """The dialect's INSERT with ON CONFLICT, imported only for writers and only for the
    database in use: the PostgreSQL dialect's modules cost a SQLite process ~100 ms to import
    (and readers skip both)."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert

        return insert
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    return None  # pragma: no cover - other dialects


def insert_ignore(
    conn: Connection, table: Any, rows: list[dict[str, Any]], keys: list[str]
) -> None:
    if not rows:
        return
    insert = _insert_of(conn.dialect.name)
    if insert is not None:
        conn.execute(insert(table).on_conflict_do_nothing(index_elements=keys), rows)
    else:  # pragma: no cover - other dialects: check first
        for row in rows:
            if conn.execute(select(table).filter_by(**{k: row[k] for k in keys})).first() is None:
                conn.execute(table.insert(), [row])


def upsert_files(conn: Connection, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    cols = ("blob_hash", "size", "mtime_ns", "checked_ns")
    insert = _insert_of(conn.dialect.name)
    if insert is not None:
        ins = insert(t.files)
        stmt = ins.on_conflict_do_update(
            index_elements=["workspace_id", "path"], set_={c: ins.excluded[c] for c in cols}
        )
        conn.execute(stmt, rows)
        return
    for row in rows:  # pragma: no cover - other dialects
        conn.execute(
            delete(t.files).where(
                t.files.c.workspace_id == row["workspace_id"], t.files.c.path == row["path"]
            )
        )
        conn.execute(t.files.insert(), [row])
