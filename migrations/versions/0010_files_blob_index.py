"""The reference index: an index on `files.blob_hash`, so that a record can tell in one probe,
inside its own transaction, whether any file still holds the blob it replaced before it drops
that blob's references (docs/storage.md, "Symbols by content"). Without it the probe reads
every file state of every workspace: 6 ms a save for 80,000 files on SQLite, and more on a
PostgreSQL database that many trees share.

Built in place; no row changes.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_files_blob_hash", "files", ["blob_hash"])


def downgrade() -> None:
    op.drop_index("ix_files_blob_hash", table_name="files")
