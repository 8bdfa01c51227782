"""Run the Alembic migrations from code, on the caller's connection (only when behind)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from symdiff.errors import StoreError


def script_location() -> str:
    """The directory of the migration scripts (inside the installed package)."""
    spec = importlib.util.find_spec("symdiff.migrations")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("symdiff.migrations is not installed: reinstall symdiff")
    return str(Path(next(iter(spec.submodule_search_locations))))


def _config(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", script_location())
    cfg.attributes["connection"] = conn
    return cfg


def head_revision() -> str | None:
    """The newest migration revision this package ships, as Alembic reads the scripts."""
    return ScriptDirectory(script_location()).get_current_head()


def current_revision(conn: Connection) -> str | None:
    """The revision a database is at (None when it has no schema yet)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(conn: Connection, *, to: str = "head") -> bool:
    """Bring the schema to revision `to` (the newest by default); True when anything ran."""
    target = head_revision() if to == "head" else to
    if current_revision(conn) == target:
        conn.rollback()
        return False
    if conn.dialect.name == "postgresql":
        # Many daemons may open one database at once: one of them migrates.
        conn.exec_driver_sql("SELECT pg_advisory_lock(727400001)")
    elif conn.dialect.name == "sqlite":
        conn.commit()
    try:
        if current_revision(conn) != target:
            command.upgrade(_config(conn), to)
        conn.commit()
    finally:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SELECT pg_advisory_unlock(727400001)")
            conn.commit()
    return True
