"""Issue 25: the database's budget with the symbols cache in it; provenance texts compacted.

`provenance.origin_info` and `provenance.git` hold `symdiff.store.compact`'s form of their
texts instead of the texts: a git id as its 20 bytes instead of 40 hex digits in quotes, a
usual key as one byte (a checkout's pair: 202 bytes of text, 77 stored).
symdiff.store.tables.CompactText turns them back into the same texts as they are read; the
`digest` of each row is of the texts and does not change.
PostgreSQL: the columns become `bytea`. SQLite: the values are rewritten in place; the declared
type stays (an affinity there: a BLOB value is stored and read back as a BLOB under it).

Converted in place; every record reads back identical. SQLite gives the room the rewrite frees
back at the next collection (`symdiff db gc`, or the daemon's own).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from alembic import op
from sqlalchemy import text

from symdiff.store import compact

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COLUMNS = ("origin_info", "git")
_BATCH = 5000  # rows a read


def _rewrite(convert: Callable[[Any], str | bytes], *, where: str) -> None:
    """Each provenance row whose columns `where` selects, rewritten by `convert` in Python."""
    conn = op.get_bind()
    after = 0
    while True:
        rows = conn.execute(text(
            f"SELECT id, origin_info, git FROM provenance WHERE id > :after AND ({where}) "
            f"ORDER BY id LIMIT {_BATCH}"), {"after": after}).all()  # fmt: skip
        if not rows:
            return
        conn.execute(text("UPDATE provenance SET origin_info = :o, git = :g WHERE id = :id"),
                     [{"id": id_, "o": None if o is None else convert(o),
                       "g": None if g is None else convert(g)} for id_, o, g in rows])
        after = rows[-1][0]


def _encode(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else compact.encode(value)


def _decode(value: str | bytes) -> str:
    return value if isinstance(value, str) else compact.decode(bytes(value))


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE provenance " + ", ".join(
            f"ALTER COLUMN {c} TYPE bytea USING convert_to({c}, 'UTF8')" for c in _COLUMNS))
        _rewrite(lambda v: compact.encode(bytes(v).decode()), where="true")
        return
    _rewrite(_encode, where=" OR ".join(f"typeof({c}) = 'text'" for c in _COLUMNS))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rewrite(lambda v: _decode(v).encode(), where="true")
        op.execute("ALTER TABLE provenance " + ", ".join(
            f"ALTER COLUMN {c} TYPE TEXT USING convert_from({c}, 'UTF8')" for c in _COLUMNS))
        return
    _rewrite(_decode, where=" OR ".join(f"typeof({c}) = 'blob'" for c in _COLUMNS))
