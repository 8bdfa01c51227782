"""Retention: an index on `blobs.base` (deltas only), so that gc can tell in one probe, inside
its short delete transaction, whether any blob is still stored against a blob it is about to
delete (docs/retention.md).

Partial (`WHERE base IS NOT NULL`): whole snapshots, which nothing points at through `base`,
add nothing to it. Built in place; no row changes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_DELTAS = sa.text("base IS NOT NULL")


def upgrade() -> None:
    op.create_index("ix_blobs_base", "blobs", ["base"], sqlite_where=_DELTAS,
                    postgresql_where=_DELTAS)


def downgrade() -> None:
    op.drop_index("ix_blobs_base", table_name="blobs")
