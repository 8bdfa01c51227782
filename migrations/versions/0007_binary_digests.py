"""Issue 16: content hashes as their 20 bytes, and no cursor index SQLite does not need.

- `blobs.hash`, `blobs.base`, `changes.old_hash`, `changes.new_hash`, `files.blob_hash` and
  `edit_intents.new_hash` hold the hash's bytes instead of its 40 hex digits: half the room in
  each row and in each index over them (the primary key of `blobs`, `ix_blobs_base`).
  symdiff.store.tables.Digest turns them back into hex text as they are read.
  PostgreSQL: the columns become `bytea` (ALTER ... USING decode(..., 'hex')).
  SQLite: the values are rewritten in place; the declared type stays (a column's declared type
  is an affinity there, and a BLOB value is stored and compared as a BLOB under any affinity).
- SQLite writes txid 0 on every record, so the rowid is its (txid, id) order: the index
  `ix_changes_txid_id` is dropped there (PostgreSQL keeps it; both keep
  `ix_changes_workspace_id_txid_id`).

Converted in place; every record and snapshot reads back identical. SQLite gives the room the
rewrite frees back at the next collection (`symdiff db gc`, or the daemon's own).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_COLUMNS = {  # table: its hash columns
    "blobs": ("hash", "base"),
    "changes": ("old_hash", "new_hash"),
    "files": ("blob_hash",),
    "edit_intents": ("new_hash",),
}
_CURSOR_INDEXES = {"ix_changes_txid_id": ["txid", "id"]}


def _unhex(value: str | bytes | None) -> bytes | None:
    """A stored hex digest as its bytes (a value already converted is left as it is)."""
    if value is None or isinstance(value, bytes):
        return value
    return bytes.fromhex(value)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        for table, columns in _COLUMNS.items():
            op.execute(f"ALTER TABLE {table} " + ", ".join(
                f"ALTER COLUMN {c} TYPE bytea USING decode({c}, 'hex')" for c in columns))
        return
    db = conn.connection.driver_connection
    assert db is not None
    db.create_function("symdiff_unhex", 1, _unhex, deterministic=True)
    for table, columns in _COLUMNS.items():
        op.execute(f"UPDATE {table} SET " + ", ".join(
            f"{c} = symdiff_unhex({c})" for c in columns) + " WHERE " + " OR ".join(
            f"typeof({c}) = 'text'" for c in columns))
    for name in _CURSOR_INDEXES:
        op.drop_index(name, table_name="changes")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        for table, columns in _COLUMNS.items():
            op.execute(f"ALTER TABLE {table} " + ", ".join(
                f"ALTER COLUMN {c} TYPE VARCHAR(40) USING encode({c}, 'hex')" for c in columns))
        return
    for table, columns in _COLUMNS.items():
        op.execute(f"UPDATE {table} SET " + ", ".join(
            f"{c} = CASE WHEN typeof({c}) = 'blob' THEN lower(hex({c})) ELSE {c} END"
            for c in columns))
    for name, columns in _CURSOR_INDEXES.items():
        op.create_index(name, "changes", columns)
