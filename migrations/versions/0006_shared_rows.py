"""Issue 16: what many records repeat is stored once.

- `symbol_names` (id, name, kind; unique (name, kind)): a symbol row names one instead of
  repeating its qualified name and kind; the name index becomes `ix_symbol_changes_name_id`.
  A symbol row's change type becomes one letter (a, r, m, s: the first of its docs/spec.md name).
  `symbol_changes` is rebuilt (WITHOUT ROWID on SQLite, as before), rows and order kept.
- `provenance` (id, digest, origin_info, git): one row per distinct pair, `changes.provenance_id`
  names it (indexed: retention deletes unused provenance rows, and each delete's foreign-key
  check probes `changes`), and `changes.origin_info` / `changes.git` go (native DROP COLUMN:
  the ids and the foreign key from symbol_changes stay).

Converted in place; every record reads back identical.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BIGID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_CODES = {"added": "a", "removed": "r", "modified": "m", "signature_changed": "s"}
_STEP = 5000  # changes converted per read


def _digest(origin_info: str | None, git: str | None) -> int:
    """As symdiff.store.interned.provenance_digest at this revision."""
    text = ("-" if origin_info is None else "i" + origin_info) + "\0" + (
        "-" if git is None else "g" + git)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def upgrade() -> None:
    conn = op.get_bind()
    pg = conn.dialect.name == "postgresql"
    op.create_table(
        "symbol_names",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_symbol_names"),
        sa.UniqueConstraint("name", "kind", name="uq_symbol_names_name_kind"),
    )
    op.create_table(
        "provenance",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("digest", sa.BigInteger(), nullable=False),
        sa.Column("origin_info", sa.Text(), nullable=True),
        sa.Column("git", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_provenance"),
    )
    op.create_index("ix_provenance_digest", "provenance", ["digest"])

    # Symbol rows: names once, change types as letters.
    op.execute("INSERT INTO symbol_names (name, kind) "
               "SELECT DISTINCT name, kind FROM symbol_changes ORDER BY name, kind")
    op.drop_index("ix_symbol_changes_name", table_name="symbol_changes")
    op.rename_table("symbol_changes", "symbol_changes_0005")
    if pg:
        op.execute("ALTER INDEX pk_symbol_changes RENAME TO pk_symbol_changes_0005")
    op.create_table(
        "symbol_changes",
        sa.Column("change_id", BIGID, nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("name_id", sa.Integer(), nullable=False),
        sa.Column("change_type", sa.String(1), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("renamed_from", sa.Text(), nullable=True),
        sa.Column("renamed_to", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("change_id", "ordinal", name="pk_symbol_changes"),
        sa.ForeignKeyConstraint(["change_id"], ["changes.id"],
                                name="fk_symbol_changes_change_id_changes"),
        sa.ForeignKeyConstraint(["name_id"], ["symbol_names.id"],
                                name="fk_symbol_changes_name_id_symbol_names"),
        sqlite_with_rowid=False,
    )
    code = "CASE o.change_type " + " ".join(
        f"WHEN '{name}' THEN '{letter}'" for name, letter in _CODES.items()) + " END"
    op.execute(
        "INSERT INTO symbol_changes (change_id, ordinal, name_id, change_type, start_line, "
        "end_line, renamed_from, renamed_to) "
        f"SELECT o.change_id, o.ordinal, n.id, {code}, o.start_line, o.end_line, "
        "o.renamed_from, o.renamed_to FROM symbol_changes_0005 o "
        "JOIN symbol_names n ON n.name = o.name AND n.kind = o.kind "
        "ORDER BY o.change_id, o.ordinal"
    )
    op.drop_table("symbol_changes_0005")
    op.create_index("ix_symbol_changes_name_id", "symbol_changes", ["name_id"])

    # Provenance: one row per distinct (origin_info, git).
    if pg:
        op.execute("ALTER TABLE changes ADD COLUMN provenance_id INTEGER CONSTRAINT "
                   "fk_changes_provenance_id_provenance REFERENCES provenance (id)")
    else:
        op.execute("ALTER TABLE changes ADD COLUMN provenance_id INTEGER "
                   "REFERENCES provenance (id)")
    _fill_provenance(conn)
    # Deleting a provenance row checks its foreign key in `changes`: probed here, not scanned.
    op.create_index("ix_changes_provenance_id", "changes", ["provenance_id"])
    op.execute("ALTER TABLE changes DROP COLUMN origin_info")
    op.execute("ALTER TABLE changes DROP COLUMN git")


def _fill_provenance(conn: sa.Connection) -> None:
    ids: dict[tuple[str | None, str | None], int] = {}
    last = 0
    while True:
        rows = conn.execute(sa.text(
            "SELECT id, origin_info, git FROM changes WHERE id > :last "
            "AND (origin_info IS NOT NULL OR git IS NOT NULL) ORDER BY id LIMIT :n"
        ), {"last": last, "n": _STEP}).all()  # fmt: skip
        if not rows:
            return
        updates = []
        for change_id, origin_info, git in rows:
            pair = (origin_info, git)
            if pair not in ids:
                ids[pair] = int(conn.execute(sa.text(
                    "INSERT INTO provenance (digest, origin_info, git) VALUES (:d, :o, :g) "
                    "RETURNING id"
                ), {"d": _digest(origin_info, git), "o": origin_info, "g": git}).scalar_one())
            updates.append({"p": ids[pair], "i": change_id})
        conn.execute(sa.text("UPDATE changes SET provenance_id = :p WHERE id = :i"), updates)
        last = rows[-1][0]


def downgrade() -> None:
    conn = op.get_bind()
    pg = conn.dialect.name == "postgresql"
    op.execute("ALTER TABLE changes ADD COLUMN origin_info TEXT")
    op.execute("ALTER TABLE changes ADD COLUMN git TEXT")
    op.execute("UPDATE changes SET origin_info = (SELECT p.origin_info FROM provenance p WHERE "
               "p.id = changes.provenance_id), git = (SELECT p.git FROM provenance p WHERE "
               "p.id = changes.provenance_id) WHERE provenance_id IS NOT NULL")
    op.drop_index("ix_changes_provenance_id", table_name="changes")
    if pg:
        op.execute("ALTER TABLE changes DROP CONSTRAINT fk_changes_provenance_id_provenance")
    op.execute("ALTER TABLE changes DROP COLUMN provenance_id")
    op.drop_index("ix_provenance_digest", table_name="provenance")
    op.drop_table("provenance")

    op.drop_index("ix_symbol_changes_name_id", table_name="symbol_changes")
    op.rename_table("symbol_changes", "symbol_changes_0006")
    if pg:
        op.execute("ALTER INDEX pk_symbol_changes RENAME TO pk_symbol_changes_0006")
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
        sa.ForeignKeyConstraint(["change_id"], ["changes.id"],
                                name="fk_symbol_changes_change_id_changes"),
        sqlite_with_rowid=False,
    )
    name = "CASE o.change_type " + " ".join(
        f"WHEN '{letter}' THEN '{full}'" for full, letter in _CODES.items()) + " END"
    op.execute(
        "INSERT INTO symbol_changes (change_id, ordinal, name, kind, change_type, start_line, "
        "end_line, renamed_from, renamed_to) "
        f"SELECT o.change_id, o.ordinal, n.name, n.kind, {name}, o.start_line, o.end_line, "
        "o.renamed_from, o.renamed_to FROM symbol_changes_0006 o "
        "JOIN symbol_names n ON n.id = o.name_id ORDER BY o.change_id, o.ordinal"
    )
    op.drop_table("symbol_changes_0006")
    op.drop_table("symbol_names")
    op.create_index("ix_symbol_changes_name", "symbol_changes", ["name"])
