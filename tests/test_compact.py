"""Provenance texts stored compact (revision 0011, store/compact.py): any text reads back the
same, a checkout's pair takes under two fifths of its room, and a revision 0010 database upgrades
in place with every record reading back identical (and downgrades back to its texts)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from conftest import table_columns, table_rows
from sqlalchemy import text

from symdiff.model import ChangeType, FileChange, Origin, Scope
from symdiff.store import ChangeFilter, Mutation, Position, Store, compact
from symdiff.store.engine import make_engine
from symdiff.store.interned import provenance_digest
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD

HEAD_BEFORE = "715f357abc1d3966f1059f59d7a0ae5a7b6b5905"
HEAD_AFTER = "8342180f3913daea28fcd6644a0ba4c69391b189"
CHECKOUT = json.dumps({"operation": "checkout", "head_before": HEAD_BEFORE,
                       "head_after": HEAD_AFTER}, separators=(",", ":"), sort_keys=True)
GIT = json.dumps({"branch": None, "head": HEAD_AFTER}, separators=(",", ":"), sort_keys=True)
TEXTS = [
    CHECKOUT, GIT, "", "null", "{}",
    '{"agent":"claude-code","session":"S","turn":2,"tool":"Edit","tool_use_id":"t1"}',
    '{"branch":"main","head":"' + "0" * 40 + '"}',  # an id of zeros: its bytes are NULs
    '{"note":"' + "A" * 40 + '","short":"' + "a" * 39 + '","long":"' + "b" * 41 + '"}',
    '{"x":"\\"checkout\\" null true false"}',  # fragments inside a string
    '{"who":"Zoë","ids":["' + HEAD_BEFORE + '","' + HEAD_AFTER + '"]}',
    "a raw \x01 control byte and \x00 a NUL",  # no writer makes it; still read back the same
    "\x1f starts with the verbatim mark",
]


@pytest.mark.parametrize("value", TEXTS)
def test_any_text_reads_back_the_same(value: str) -> None:
    assert compact.decode(compact.encode(value)) == value


def test_a_checkouts_pair_takes_under_two_fifths_of_its_text() -> None:
    stored = len(compact.encode(CHECKOUT)) + len(compact.encode(GIT))
    assert stored * 5 < (len(CHECKOUT) + len(GIT)) * 2  # 77 bytes for 202
    assert compact.encode(GIT) == b"{\x04\x07,\x05\x00" + bytes.fromhex(HEAD_AFTER) + b"}"


@pytest.mark.parametrize("stored", [b"\x00" + b"\x01" * 19, b'{"a":\x1e}', b"\x1e"])
def test_a_value_this_format_never_wrote_is_an_error(stored: bytes) -> None:
    with pytest.raises(compact.CompactError):
        compact.decode(stored)


# ---- the upgrade from 0010 -------------------------------------------------------------------

PAIRS = [  # (origin, origin_info, git) of the records written at 0010
    ("git", CHECKOUT, GIT),
    ("agent", '{"agent":"claude-code","session":"S","turn":2}', None),
    ("watch", None, '{"branch":"main","head":"' + HEAD_BEFORE + '"}'),
    ("edit", '{"client":"cli","who":"Zoë"}', None),
]


def _fill_0010(url: str) -> None:
    """A database at revision 0010 as 0010 wrote it: records with each kind of provenance."""
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0010")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        for i, (origin, info, git) in enumerate(PAIRS, start=1):
            session, turn = ("S", 2) if origin == "agent" else (None, None)
            conn.execute(text(
                "INSERT INTO provenance (id, digest, origin_info, git, session, turn) "
                "VALUES (:id, :d, :i, :g, :s, :t)"), {"id": i, "d": provenance_digest(info, git),
                                                    "i": info, "g": git, "s": session, "t": turn})
            conn.execute(text(
                "INSERT INTO changes (workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, origin, "
                "provenance_id, txid) VALUES (1, :ts, :path, NULL, 'modify', 1, 1, 'impl', "
                "'python', :old, :new, :o, :p, 0)"),
                {"ts": i * 1000, "path": f"{origin}.py", "o": origin, "p": i,
                 "old": bytes([i]) * 20, "new": bytes([i + 1]) * 20})  # fmt: skip
        conn.execute(text("INSERT INTO changes (workspace_id, ts_us, path, change_type, "
                          "lines_added, lines_removed, scope, language, origin, txid) VALUES "
                          "(1, 9000, 'none.py', 'add', 1, 0, 'impl', 'python', 'scan', 0)"))
    engine.dispose()


def _provenance(store: Store) -> list[tuple[str, object, object]]:
    every = ChangeFilter(None, 0, None, 100, after=Position(-1, 0))
    return [(c.record["path"], c.record.get("origin_info"), c.record.get("git"))
            for c in store.page(every).changes]


def _stored(url: str) -> list[tuple[object, object]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(
                text("SELECT origin_info, git FROM provenance ORDER BY id"))]
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0010_database_stores_its_provenance_compact_in_place(
        backend: str, request: pytest.FixtureRequest) -> None:  # fmt: skip
    """0011 rewrites each provenance text in its compact form; every record reads back with the
    same `origin_info` and `git`, a new record of a known pair finds its row, and the downgrade
    gives back the texts."""
    from alembic import command

    from symdiff.store.migrate import _config

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0010(url)
    at_0010 = table_columns(url)
    records = {t: at_0010[t] for t in ("workspaces", "changes")}
    records_before = table_rows(url, records)
    before = _stored(url)
    assert before == [(info, git) for _, info, git in PAIRS]  # texts, as 0010 wrote them
    expected = [(f"{o}.py", None if i is None else json.loads(i),
                 None if g is None else json.loads(g)) for o, i, g in PAIRS]
    expected.append(("none.py", None, None))
    with Store(url) as store:
        assert store.revision() == HEAD == "0011"
        assert _provenance(store) == expected
    assert table_rows(url, records) == records_before  # every record as it was, row for row
    after = _stored(url)
    for (info, git), stored in zip(before, after, strict=True):
        for value, kept in zip((info, git), stored, strict=True):
            assert kept is None if value is None else (
                isinstance(kept, bytes | memoryview) and compact.decode(bytes(kept)) == value
                and len(bytes(kept)) < len(value))  # fmt: skip
    assert len(bytes(after[0][0])) + len(bytes(after[0][1])) < (len(CHECKOUT) + len(GIT)) / 2
    with Store(url) as store:  # a checkout's next record: the same pair, the same row
        ws = store.workspaces()[0]
        store.apply(ws.id, [Mutation(change=FileChange(
            path="later.py", old_path=None, timestamp=datetime.now(UTC),
            change_type=ChangeType.MODIFY, lines_added=1, lines_removed=0, scope=Scope.IMPL,
            language="python", old_hash="0a" * 20, new_hash="0b" * 20, origin=Origin.GIT,
            origin_info=json.loads(CHECKOUT), git=json.loads(GIT)))])
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM provenance")).scalar_one() == 4
            assert conn.execute(text("SELECT provenance_id FROM changes WHERE path = "
                                     "'later.py'")).scalar_one() == 1  # fmt: skip
    rows = table_rows(url, at_0010)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            command.downgrade(_config(conn), "0010")
            conn.commit()
    finally:
        engine.dispose()
    assert _stored(url)[:4] == before  # the texts again, byte for byte
    assert table_rows(url, at_0010) == rows
