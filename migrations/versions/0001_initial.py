"""Initial schema: workspaces, blobs, files, changes, symbol_changes.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BIGID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
PATH = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("root", sa.Text(), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("baseline_done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_workspaces"),
        sa.UniqueConstraint("root", "host", name="uq_workspaces_root_host"),
    )
    op.create_table(
        "blobs",
        sa.Column("hash", sa.String(40), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("binary", sa.Boolean(), nullable=False),
        sa.Column("codec", sa.String(8), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("hash", name="pk_blobs"),
    )
    op.create_table(
        "files",
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("path", PATH, nullable=False),
        sa.Column("blob_hash", sa.String(40), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("checked_ns", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "path", name="pk_files"),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name="fk_files_workspace_id_workspaces"
        ),
    )
    op.create_table(
        "changes",
        sa.Column("id", BIGID, autoincrement=True, nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("ts_us", sa.BigInteger(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("old_path", sa.Text(), nullable=True),
        sa.Column("change_type", sa.String(8), nullable=False),
        sa.Column("lines_added", sa.Integer(), nullable=False),
        sa.Column("lines_removed", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("language", sa.String(32), nullable=True),
        sa.Column("old_hash", sa.String(40), nullable=True),
        sa.Column("new_hash", sa.String(40), nullable=True),
        sa.Column("symbols", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_changes"),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name="fk_changes_workspace_id_workspaces"
        ),
    )
    op.create_index("ix_changes_workspace_id_ts_us", "changes", ["workspace_id", "ts_us"])
    op.create_index(
        "ix_changes_workspace_id_scope_ts_us", "changes", ["workspace_id", "scope", "ts_us"]
    )
    op.create_index("ix_changes_ts_us", "changes", ["ts_us"])
    op.create_index("ix_changes_scope_ts_us", "changes", ["scope", "ts_us"])
    op.create_table(
        "symbol_changes",
        sa.Column("change_id", BIGID, nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("change_type", sa.String(24), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("renamed_from", sa.Text(), nullable=True),
        sa.Column("renamed_to", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("change_id", "ordinal", name="pk_symbol_changes"),
        sa.ForeignKeyConstraint(
            ["change_id"], ["changes.id"], name="fk_symbol_changes_change_id_changes"
        ),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    op.drop_table("symbol_changes")
    op.drop_table("changes")
    op.drop_table("files")
    op.drop_table("blobs")
    op.drop_table("workspaces")
