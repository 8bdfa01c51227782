"""Agent sessions in the database (revision 0008): a revision 0007 database upgrades in place,
reads back identical, and then stores sessions, turns and a turn's records; on both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conftest import table_columns, table_rows
from sqlalchemy import text

from symdiff.model import ChangeType, FileChange, Origin, Scope
from symdiff.store import ChangeFilter, Mutation, Position, Store
from symdiff.store.engine import make_engine
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD
from symdiff.store.sessions import SessionRow, TurnRow


def _fill_0007(url: str) -> None:
    """A database at revision 0007 as 0007 wrote it: records with and without provenance."""
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0007")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        prov = conn.execute(text("INSERT INTO provenance (digest, origin_info, git) VALUES "
                                 "(7, :i, :g) RETURNING id"),
                            {"i": '{"client":"cli"}', "g": '{"branch":"main","head":null}'}
                            ).scalar_one()  # fmt: skip
        for id_, origin, pid in ((1, "watch", None), (2, "edit", prov)):
            conn.execute(text(
                "INSERT INTO changes (workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, origin, "
                "provenance_id, txid) VALUES (1, :ts, 'a.py', NULL, 'modify', 1, 1, "
                "'impl', 'python', NULL, NULL, :o, :p, 0)"),
                {"id": id_, "ts": id_ * 1000, "o": origin, "p": pid})  # fmt: skip
        name = conn.execute(text("INSERT INTO symbol_names (name, kind) VALUES ('f', 'function') "
                                 "RETURNING id")).scalar_one()  # fmt: skip
        for change_id, code in ((1, "m"), (2, "s")):
            conn.execute(text(
                "INSERT INTO symbol_changes (change_id, ordinal, name_id, change_type, "
                "start_line, end_line, renamed_from, renamed_to) "
                "VALUES (:c, 0, :n, :t, 1, 2, NULL, NULL)"), {"c": change_id, "n": name, "t": code})
    engine.dispose()


def _agent_change(turn: int, path: str) -> FileChange:
    return FileChange(path, None, datetime(2026, 11, 24, 12, 0, turn, tzinfo=UTC),
                      ChangeType.ADD, 1, 0, Scope.IMPL, "python", origin=Origin.AGENT,
                      origin_info={"agent": "claude-code", "session": "S", "turn": turn,
                                   "tool": "Bash", "tool_use_id": f"t{turn}",
                                   "subagent": None, "by": "window"})  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0007_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0007(url)
    at_0007 = table_columns(url)  # the tables and columns as 0007 made them
    before = table_rows(url, at_0007)
    assert len(before["changes"]) == 2 and len(before["symbol_changes"]) == 2
    with Store(url) as store:
        assert store.revision() == HEAD
    assert table_rows(url, at_0007) == before  # every row of 0007 survived, column for column
    with Store(url) as store:
        every = ChangeFilter(None, 0, None, 10, after=Position(-1, 0))
        old = [dict(c.record) for c in store.page(every).changes]
        common = {"path": "a.py", "old_path": None, "change_type": "modify", "lines_added": 1,
                  "lines_removed": 1, "scope": "impl", "language": "python"}  # fmt: skip
        assert [{k: r[k] for k in (*common, "origin", "origin_info", "git", "symbols")}
                for r in old] == [
            {**common, "origin": "watch", "origin_info": None, "git": None,
             "symbols": [{"name": "f", "kind": "function", "change_type": "modified",
                          "start_line": 1, "end_line": 2}]},
            {**common, "origin": "edit", "origin_info": {"client": "cli"},
             "git": {"branch": "main", "head": None},
             "symbols": [{"name": "f", "kind": "function", "change_type": "signature_changed",
                          "start_line": 1, "end_line": 2}]},
        ]  # fmt: skip
        old_ids = sorted(c.id for c in store.page(every).changes)
        assert store.sessions(None) == []
        store.save_sessions([SessionRow(1, "S", "claude-code", "m", 10, None,
                                        (TurnRow(1, 10, 20), TurnRow(2, 30, None)))])
        store.save_sessions([SessionRow(1, "S", "claude-code", "m", 10, 50,
                                        (TurnRow(1, 10, 20), TurnRow(2, 30, 40)))])
        [row] = store.sessions([1])
        assert (row.ended_us, [(t.number, t.ended_us) for t in row.turns]) == (
            50, [(1, 20), (2, 40)])
        store.apply(1, [Mutation(change=_agent_change(1, "x.py")),
                        Mutation(change=_agent_change(2, "y.py"))])  # fmt: skip
        turn2 = store.page(ChangeFilter(None, 0, None, 10, session="S", turn=2)).changes
        assert [c.record["path"] for c in turn2] == ["y.py"]
        others = store.page(ChangeFilter(None, 0, None, 10, not_session="S")).changes
        assert sorted(c.id for c in others) == old_ids
        assert store.count(ChangeFilter(None, 0, None, 10, session="S")) == 2
        counts = store.turn_counts([1], "S")
        assert counts[1].files == 1 and dict(counts[2].by_origin) == {"agent": 1}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_downgrade_to_0007_drops_what_0008_added(backend: str,
                                                     request: pytest.FixtureRequest) -> None:
    from alembic import command

    from symdiff.store.migrate import _config, current_revision

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0007(url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            upgrade(conn, to="0008")
            assert current_revision(conn) == "0008"
            command.downgrade(_config(conn), "0007")
            conn.commit()
            assert current_revision(conn) == "0007"
            cols = list(conn.execute(text("SELECT * FROM provenance")).keys())
            assert "session" not in cols and "turn" not in cols
    finally:
        engine.dispose()
