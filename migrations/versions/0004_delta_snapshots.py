"""Compact snapshots: a blob may be stored as a delta against another blob.

- `blobs.base`: the git blob id of the blob this one is a delta against (codec `zdelta`: zstd
  with the base's bytes as a raw-content dictionary); NULL for a whole snapshot (`zstd`, `raw`,
  `none`). A delta's base is committed in the same or an earlier transaction as the delta, and
  whoever deletes blobs keeps the transitive `base` closure of every blob it keeps.

Nothing is converted: rows written before this revision keep their codec and read as before;
new versions are written as deltas where that pays (docs/storage.md, content).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("blobs") as batch:
        batch.add_column(sa.Column("base", sa.String(40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("blobs") as batch:
        batch.drop_column("base")
