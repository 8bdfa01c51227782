"""Run the Alembic migrations from code, on the caller's connection."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection


def script_location() -> str:
    """The directory of the migration scripts (inside the installed package)."""
    spec = importlib.util.find_spec("symdiff.migrations")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("symdiff.migrations is not installed")
    return str(Path(next(iter(spec.submodule_search_locations))))


def _config(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", script_location())
    cfg.attributes["connection"] = conn
    return cfg


def head_revision() -> str | None:
    """The newest migration revision this package ships."""
    return ScriptDirectory(script_location()).get_current_head()


def current_revision(conn: Connection) -> str | None:
    """The revision a database is at (None when it has no schema yet)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(conn: Connection) -> bool:
    """Bring the schema to the newest revision; True when anything ran."""
    if current_revision(conn) == head_revision():
        conn.rollback()
        return False
    if conn.dialect.name == "postgresql":
        # Many daemons may open one database at once: one of them migrates.
        conn.exec_driver_sql("SELECT pg_advisory_lock(727400001)")
    elif conn.dialect.name == "sqlite":
        conn.commit()
    try:
        if current_revision(conn) != head_revision():
            command.upgrade(_config(conn), "head")
        conn.commit()
    finally:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SELECT pg_advisory_unlock(727400001)")
            conn.commit()
    return True
