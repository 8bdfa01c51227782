"""The database schema as SQLAlchemy Core tables; Alembic migrations create it."""

from __future__ import annotations

import binascii
from typing import Any

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
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from symdiff.store import compact

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


class Digest(TypeDecorator[str]):
    """A content hash: hex text in Python, its bytes in the database (BLOB / bytea; revision
    0007), half the room in the row and in every index over it. A value that is not hex (none
    we write) is bound as its UTF-8 bytes, which no stored digest equals."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        if value is None or isinstance(value, bytes):
            return value
        try:
            return binascii.unhexlify(value)
        except (binascii.Error, ValueError, TypeError):
            return str(value).encode()

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else bytes(value).hex()


DIGEST = Digest()


class CompactText(TypeDecorator[str]):
    """A provenance text: text in Python, `store.compact`'s form in the database (BLOB / bytea;
    revision 0011), its git ids as bytes and its usual keys as one byte each."""

    impl = LargeBinary
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> bytes | None:
        return None if value is None else compact.encode(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None or isinstance(value, str):  # a text no writer of 0011 left: as it is
            return value
        return compact.decode(bytes(value))


COMPACT_TEXT = CompactText()

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
# content (binary or over the size cap); `codec` says how `data` is stored. `base` is the blob
# a delta (`codec` zdelta) is stored against, NULL for a whole snapshot; a delta's base is
# committed no later than the delta, and whatever deletes blobs keeps every kept blob's
# transitive `base` closure.
blobs = Table(
    "blobs",
    metadata,
    Column("hash", DIGEST, primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("binary", Boolean, nullable=False),
    Column("codec", String(8), nullable=False),
    Column("data", LargeBinary, nullable=True),
    Column("base", DIGEST, nullable=True),
    # Which blobs are stored against this one: gc's re-check before it deletes. Revision 0005
    # makes it partial (WHERE base IS NOT NULL) on both backends; the migrations make the
    # schema, and naming a dialect's options here would import the PostgreSQL dialect into
    # every process that opens a store, SQLite's too (44 ms of a hook's start).
    Index("ix_blobs_base", "base"),
)

# What each tracked file looked like when last seen.
files = Table(
    "files",
    metadata,
    Column("workspace_id", Integer, ForeignKey("workspaces.id"), primary_key=True),
    Column("path", PATH, primary_key=True),
    Column("blob_hash", DIGEST, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("mtime_ns", BigInteger, nullable=False),
    Column("checked_ns", BigInteger, nullable=False),
    # Whether a file still holds a blob whose references a record is about to drop (0010).
    Index(None, "blob_hash"),
)

# A change's `origin_info` and `git` (compact JSON, either may be NULL; in `store.compact`'s
# form since revision 0011), stored once for every record that carries the same pair (one
# checkout batch: one row). `digest` (a 63-bit hash of the pair's texts) finds an existing row;
# rows with the same digest are told apart by their texts.
# Retention deletes rows no record uses any more (revision 0006).
provenance = Table(
    "provenance",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("digest", BigInteger, nullable=False),
    Column("origin_info", COMPACT_TEXT, nullable=True),
    Column("git", COMPACT_TEXT, nullable=True),
    # The agent session and turn `origin_info` names (revision 0008): a turn's records.
    Column("session", Text, nullable=True),
    Column("turn", Integer, nullable=True),
    Index(None, "digest"),
    Index(None, "session", "turn"),
)

# Every (qualified name, kind) a symbol row uses, stored once (revision 0006); the unique index
# finds a name's ids. Retention deletes rows no symbol row uses any more.
symbol_names = Table(
    "symbol_names",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("kind", String(32), nullable=False),
    UniqueConstraint("name", "kind"),
)

# A symbol row's change type as one letter (revision 0006): the first of its docs/spec.md name.
SYMBOL_CHANGE_CODES = {"added": "a", "removed": "r", "modified": "m", "signature_changed": "s"}
SYMBOL_CHANGE_TYPES = {code: name for name, code in SYMBOL_CHANGE_CODES.items()}

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
    Column("old_hash", DIGEST, nullable=True),
    Column("new_hash", DIGEST, nullable=True),
    # Who made the change (edit | git | watch | scan | commit); what is known of them and where
    # git stood are a `provenance` row (NULL: neither), shared by a batch's records (0006).
    Column("origin", String(8), nullable=False, server_default="scan"),
    Column("provenance_id", Integer, ForeignKey("provenance.id"), nullable=True),
    # The writing transaction (PostgreSQL's xid; 0 on SQLite): cursors read in (txid, id)
    # order, below the oldest transaction still running (docs/query.md, cursors).
    Column("txid", BigInteger, nullable=False, server_default="0"),
    Index(None, "workspace_id", "ts_us"),
    Index(None, "workspace_id", "scope", "ts_us"),
    Index(None, "ts_us"),
    Index(None, "scope", "ts_us"),
    # Cursor order; on SQLite (txid always 0) the rowid's serves (txid, id) (revision 0007).
    Index(None, "txid", "id").ddl_if(dialect="postgresql"),
    Index(None, "workspace_id", "txid", "id"),
    # Retention's delete of unused provenance rows: each deleted row's foreign-key check (and
    # its re-check) probes this instead of scanning `changes` (revision 0006).
    Index(None, "provenance_id"),
)

# One definition a change touched: the only copy of a record's symbols. `ordinal` keeps
# docs/spec.md's line order. Clustered by (change_id, ordinal) (WITHOUT ROWID on SQLite) so a
# change's symbols are read in one range; indexed by name id for one symbol's history. The name
# and kind are a `symbol_names` row, the change type a letter (revision 0006).
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
    Column("name_id", Integer, ForeignKey("symbol_names.id"), nullable=False),
    Column("change_type", String(1), nullable=False),  # SYMBOL_CHANGE_CODES
    Column("start_line", Integer, nullable=False),
    Column("end_line", Integer, nullable=False),
    Column("renamed_from", Text, nullable=True),
    Column("renamed_to", Text, nullable=True),
    Index(None, "name_id"),
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
    Column("new_hash", DIGEST, primary_key=True),
    Column("origin_info", Text, nullable=True),
    Column("expires_us", BigInteger, nullable=False),
)


# An agent session in a workspace, and its turns (revision 0008; docs/agents.md): what the
# hooks' journals under `.symdiff/agents/` said, kept beyond them.
agent_sessions = Table(
    "agent_sessions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("workspace_id", Integer, ForeignKey("workspaces.id"), nullable=False),
    Column("session", Text, nullable=False),
    Column("agent", String(64), nullable=False),
    Column("model", Text, nullable=True),
    Column("started_us", BigInteger, nullable=False),
    Column("ended_us", BigInteger, nullable=True),
    UniqueConstraint("workspace_id", "session"),
)

agent_turns = Table(
    "agent_turns",
    metadata,
    Column("session_id", Integer, ForeignKey("agent_sessions.id"), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("started_us", BigInteger, nullable=False),
    Column("ended_us", BigInteger, nullable=True),
)


# What was learned about a blob's content, once per (blob, fact set) (revision 0009;
# docs/storage.md, "Symbols by content"). A fact set names the extractor version, the language
# the blob was read as, and the kind of fact (`symbols`; the reference index adds `refs`), so a
# new extractor is a new set and the rows of an older one are never read again.
fact_sets = Table(
    "fact_sets",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("extractor", String(32), nullable=False),
    Column("language", String(32), nullable=False),
    Column("kind", String(16), nullable=False),
    UniqueConstraint("extractor", "language", "kind"),
)

blob_facts = Table(
    "blob_facts",
    metadata,
    # A rowid table (not WITHOUT ROWID): a whole payload is often over the ~490 bytes an index
    # b-tree page keeps in place, and each would take an overflow page of its own.
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("blob", DIGEST, nullable=False),
    Column("set_id", Integer, ForeignKey("fact_sets.id"), nullable=False),
    Column("data", LargeBinary, nullable=False),  # parse/codec.py's pack
    # A delta's base: the row (same set) whose raw form `data` was packed against; NULL: whole.
    Column("base", Integer, nullable=True),
    Column("depth", Integer, nullable=False),  # bases below this one (0: whole)
    Column("day", Integer, nullable=False),  # written on (days since 1970): retention's clock
    UniqueConstraint("blob", "set_id"),
)
