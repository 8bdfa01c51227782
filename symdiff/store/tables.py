"""The database schema as SQLAlchemy Core tables; Alembic migrations create it."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# Paths compare bytewise on both backends, so directory prefixes are index ranges.
PATH = Text().with_variant(Text(collation="C"), "postgresql")

# One watched tree on one machine.
workspaces = Table(
    "workspaces",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("root", Text, nullable=False),
    Column("host", String(255), nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Column("baseline_done", Boolean, nullable=False, default=False),
    UniqueConstraint("root", "host"),
)

# Content-addressed snapshots: git blob SHA-1 of the bytes. `data` is NULL for hash-only
# content (binary or over the size cap); `codec` says how `data` is stored.
blobs = Table(
    "blobs",
    metadata,
    Column("hash", String(40), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("binary", Boolean, nullable=False),
    Column("codec", String(8), nullable=False),
    Column("data", LargeBinary, nullable=True),
)

# What each tracked file looked like when last seen.
files = Table(
    "files",
    metadata,
    Column("workspace_id", Integer, ForeignKey("workspaces.id"), primary_key=True),
    Column("path", PATH, primary_key=True),
    Column("blob_hash", String(40), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("checked_ns", BigInteger, nullable=False),
)

# One file-level change. Never deleted: a deleted file keeps its history.
changes = Table(
    "changes",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("workspace_id", Integer, ForeignKey("workspaces.id"), nullable=False),
    Column("ts_us", BigInteger, nullable=False),
    Column("path", Text, nullable=False),
    Column("old_path", Text, nullable=True),
    Column("change_type", String(8), nullable=False),
    Column("lines_added", Integer, nullable=False),
    Column("lines_removed", Integer, nullable=False),
    Column("scope", String(8), nullable=False),
    Column("language", String(32), nullable=True),
    Column("old_hash", String(40), nullable=True),
    Column("new_hash", String(40), nullable=True),
    # Who made the change (edit | git | watch | scan | commit), what is known of them, and
    # where git stood ({"branch", "head"}): compact JSON, or NULL.
    Column("origin", String(8), nullable=False, server_default="scan"),
    Column("origin_info", Text, nullable=True),
    Column("git", Text, nullable=True),
    # The writing transaction (PostgreSQL's xid; 0 on SQLite): cursors read in (txid, id)
    # order, below the oldest transaction still running (docs/query.md, cursors).
    Column("txid", BigInteger, nullable=False, server_default="0"),
    Index(None, "workspace_id", "ts_us"),
    Index(None, "workspace_id", "scope", "ts_us"),
    Index(None, "ts_us"),
    Index(None, "scope", "ts_us"),
    Index(None, "txid", "id"),
    Index(None, "workspace_id", "txid", "id"),
)

# One definition a change touched: the only copy of a record's symbols. `ordinal` keeps
# SPEC.md's line order. Clustered by (change_id, ordinal) (WITHOUT ROWID on SQLite) so a
# change's symbols are read in one range; indexed by qualified name for one symbol's history.
symbol_changes = Table(
    "symbol_changes",
    metadata,
    Column(
        "change_id",
        BigInteger().with_variant(Integer, "sqlite"),
        ForeignKey("changes.id"),
        primary_key=True,
    ),
    Column("ordinal", Integer, primary_key=True),
    Column("name", Text, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("change_type", String(24), nullable=False),
    Column("start_line", Integer, nullable=False),
    Column("end_line", Integer, nullable=False),
    Column("renamed_from", Text, nullable=True),
    Column("renamed_to", Text, nullable=True),
    Index(None, "name"),
    sqlite_with_rowid=False,
)


# A named reader's cursor, kept by the server between answers (and restarts).
readers = Table(
    "readers",
    metadata,
    Column("name", Text, primary_key=True),
    Column("cursor", Text, nullable=False),
    Column("updated_us", BigInteger, nullable=False),
)

# What an apply_edits is about to write: the change that brings `path` to `new_hash` is an edit,
# whoever records it first (the edit's own recording or the watching daemon).
edit_intents = Table(
    "edit_intents",
    metadata,
    Column("workspace_id", Integer, ForeignKey("workspaces.id"), primary_key=True),
    Column("path", PATH, primary_key=True),
    Column("new_hash", String(40), primary_key=True),
    Column("origin_info", Text, nullable=True),
    Column("expires_us", BigInteger, nullable=False),
)
