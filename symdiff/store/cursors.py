"""Named readers' cursors in SQL (the table `readers`): where each reader stopped reading."""

from __future__ import annotations

import time

from sqlalchemy import Connection, insert, select, update

from symdiff.store import tables as t


def reader_cursor(conn: Connection, name: str) -> str | None:
    """The cursor a named reader stopped at, or None for a reader never seen."""
    return conn.execute(select(t.readers.c.cursor).where(t.readers.c.name == name)).scalar()


def move_reader(conn: Connection, name: str, old: str | None, new: str) -> bool:
    """Move a reader from `old` to `new`; False when another answer moved it first."""
    now = int(time.time() * 1e6)
    if old is None:
        exists = reader_cursor(conn, name) is not None
        if exists:
            return False
        conn.execute(insert(t.readers).values(name=name, cursor=new, updated_us=now))
        return True
    res = conn.execute(
        update(t.readers)
        .where(t.readers.c.name == name, t.readers.c.cursor == old)
        .values(cursor=new, updated_us=now)
    )
    return bool(res.rowcount)
