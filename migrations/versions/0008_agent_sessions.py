"""Issue 24: agent sessions and their turns; a record's session and turn, indexed.

- `provenance` gains `session` and `turn` (NULL unless the record's `origin_info` names an
  agent session): the records of a turn are found through the index `(session, turn)`, and
  those of everyone else since a turn by `session IS DISTINCT FROM`.
- `agent_sessions` (one row per agent session in a workspace) and `agent_turns` (its turns:
  number, start, end) keep what the hooks' journals (`.symdiff/agents/`) said.

Added in place: no row changes. Rows written before carry no agent, so their new columns stay
NULL, which is what they are.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Native ADD/DROP COLUMN (SQLite >= 3.35, PostgreSQL): no rebuild of `provenance`, whose
    # rows `changes` references.
    op.add_column("provenance", sa.Column("session", sa.Text(), nullable=True))
    op.add_column("provenance", sa.Column("turn", sa.Integer(), nullable=True))
    op.create_index("ix_provenance_session_turn", "provenance", ["session", "turn"])
    op.create_table(
        "agent_sessions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("workspace_id", sa.Integer(), sa.ForeignKey(
            "workspaces.id", name="fk_agent_sessions_workspace_id_workspaces"), nullable=False),
        sa.Column("session", sa.Text(), nullable=False),
        sa.Column("agent", sa.String(64), nullable=False),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("started_us", sa.BigInteger(), nullable=False),
        sa.Column("ended_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_agent_sessions"),
        sa.UniqueConstraint("workspace_id", "session",
                            name="uq_agent_sessions_workspace_id_session"),
    )
    op.create_table(
        "agent_turns",
        sa.Column("session_id", sa.Integer(), sa.ForeignKey(
            "agent_sessions.id", name="fk_agent_turns_session_id_agent_sessions"),
            nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("started_us", sa.BigInteger(), nullable=False),
        sa.Column("ended_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("session_id", "turn", name="pk_agent_turns"),
    )


def downgrade() -> None:
    op.drop_table("agent_turns")
    op.drop_table("agent_sessions")
    op.drop_index("ix_provenance_session_turn", table_name="provenance")
    op.execute("ALTER TABLE provenance DROP COLUMN turn")
    op.execute("ALTER TABLE provenance DROP COLUMN session")
