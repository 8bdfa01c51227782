"""Symbol rows are the one source of a record's symbols: drop the JSON copy on `changes`, and
index `symbol_changes` by qualified name for lookups of one definition's history.

Round 1 wrote both forms in one transaction, so the rows already hold every symbol; nothing is
converted.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Native DROP COLUMN (SQLite >= 3.35, PostgreSQL): no table rebuild, so the foreign key
    # from symbol_changes and the ids stay as they are.
    op.execute("ALTER TABLE changes DROP COLUMN symbols")
    op.create_index("ix_symbol_changes_name", "symbol_changes", ["name"])


def downgrade() -> None:
    op.drop_index("ix_symbol_changes_name", table_name="symbol_changes")
    op.execute("ALTER TABLE changes ADD COLUMN symbols TEXT NOT NULL DEFAULT '[]'")
