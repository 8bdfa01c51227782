"""Provenance and cursors: who made each change, where git stood, and a stable reading order.

- `changes.origin` (`edit` | `git` | `watch` | `scan` | `commit`), `origin_info` and `git`
  (compact JSON). Records of earlier revisions get `scan`: their writer is unknown.
- `changes.txid`: the writing transaction's id on PostgreSQL (0 on SQLite, whose writers are
  serialised). Cursors read in (txid, id) order and only below the oldest transaction still
  running, so a record committed late is never skipped.
- `readers`: named cursors kept by the server for readers that give a name.
- `edit_intents`: what an `apply_edits` is about to write, so that whoever records the change
  first (the edit itself or the watching daemon) records it as an `edit`.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

PATH = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("changes") as batch:
        batch.add_column(sa.Column("origin", sa.String(8), nullable=False,
                                   server_default="scan"))
        batch.add_column(sa.Column("origin_info", sa.Text(), nullable=True))
        batch.add_column(sa.Column("git", sa.Text(), nullable=True))
        batch.add_column(sa.Column("txid", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_index("ix_changes_txid_id", "changes", ["txid", "id"])
    op.create_index("ix_changes_workspace_id_txid_id", "changes", ["workspace_id", "txid", "id"])
    op.create_table(
        "readers",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("cursor", sa.Text(), nullable=False),
        sa.Column("updated_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_readers"),
    )
    op.create_table(
        "edit_intents",
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("path", PATH, nullable=False),
        sa.Column("new_hash", sa.String(40), nullable=False),
        sa.Column("origin_info", sa.Text(), nullable=True),
        sa.Column("expires_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "path", "new_hash", name="pk_edit_intents"),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"],
                                name="fk_edit_intents_workspace_id_workspaces"),
    )


def downgrade() -> None:
    op.drop_table("edit_intents")
    op.drop_table("readers")
    op.drop_index("ix_changes_workspace_id_txid_id", table_name="changes")
    op.drop_index("ix_changes_txid_id", table_name="changes")
    with op.batch_alter_table("changes") as batch:
        for column in ("txid", "git", "origin_info", "origin"):
            batch.drop_column(column)
