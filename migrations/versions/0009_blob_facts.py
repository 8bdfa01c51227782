"""Issue 25: symbols by content — what was learned about a blob, once per (blob, fact set).

- `fact_sets`: an extractor version, a language and a kind of fact (`symbols`; the reference
  index adds `refs`), each named once.
- `blob_facts`: per blob and fact set, the facts (parse/codec.py's payload, whole or a delta
  against the facts of the `base` row, `depth` bases deep) and the day they were written,
  which retention reads for blobs no record or file state names.

Added in place: no row changes, nothing is back-filled (the first parse of a blob writes it).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "fact_sets",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("extractor", sa.String(32), nullable=False),
        sa.Column("language", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_fact_sets"),
        sa.UniqueConstraint("extractor", "language", "kind",
                            name="uq_fact_sets_extractor_language_kind"),
    )
    op.create_table(
        "blob_facts",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("blob", sa.LargeBinary(), nullable=False),
        sa.Column("set_id", sa.Integer(), sa.ForeignKey(
            "fact_sets.id", name="fk_blob_facts_set_id_fact_sets"), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("base", sa.Integer(), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("day", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_blob_facts"),
        sa.UniqueConstraint("blob", "set_id", name="uq_blob_facts_blob_set_id"),
    )


def downgrade() -> None:
    op.drop_table("blob_facts")
    op.drop_table("fact_sets")
