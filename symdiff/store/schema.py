"""Whether a database's schema is current, decided by one SELECT, without loading Alembic.

`HEAD` names the newest migration in `migrations/versions/`; a test holds it to Alembic's own
view of the scripts, so that a new revision cannot ship without it.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlalchemy.exc import SQLAlchemyError

HEAD = "0011"


def stored_revision(conn: Connection) -> str | None:
    """The revision the database says it is at; None when it has no schema yet."""
    try:
        with conn.begin_nested() if conn.in_transaction() else conn.begin():
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except SQLAlchemyError:
        return None


def is_current(conn: Connection) -> bool:
    """True when the schema is at HEAD: nothing to migrate."""
    return stored_revision(conn) == HEAD
