"""Rows records share (revision 0006): symbol names and provenance stored once, read back into
the same records, and the upgrade of a revision 0005 database in place."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

import pytest
from conftest import wait_until
from sqlalchemy import inspect, text

from symdiff.model import ChangeType, FileChange, Origin, Scope, SymbolChange, SymbolChangeType
from symdiff.records import change_record, symbol_record
from symdiff.store import ChangeFilter, Mutation, Position, Store, gc
from symdiff.store.engine import make_engine
from symdiff.store.imported import imported_keys
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD
from symdiff.store.versions import recorded_names, symbol_rows

_CHECKOUT = {"operation": "checkout", "head_before": "a" * 40, "head_after": "b" * 40}
_GIT = {"branch": "main", "head": "b" * 40}

# (id, ts_us, path, origin, origin_info, git, symbols as (name, kind, type, start, end, from))
_RECORDS = [
    (1, 1_000_001, "a.py", "git", _CHECKOUT, _GIT, [
        ("A.f", "method", "modified", 3, 9, None), ("g", "function", "added", 12, 14, "h")]),
    (2, 1_000_002, "b.py", "git", _CHECKOUT, _GIT, [
        ("A.f", "method", "signature_changed", 5, 11, None),
        ("A", "class", "removed", 1, 40, None)]),
    (3, 2_000_000, "c.py", "commit", {"sha": "c" * 40, "summary": "fix"}, None, [
        ("A", "function", "added", 1, 2, None)]),  # the same name, another kind
    (4, 3_000_000, "d.py", "scan", None, None, []),
    (5, 4_000_000, "e.py", "watch", None, {"branch": None, "head": "d" * 40}, [
        ("g", "function", "modified", 12, 15, None)]),
]


def _dump(value: object) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)


def _expected() -> list[dict[str, object]]:
    return [dict(change_record(
        path=path, old_path=None, ts_us=ts, change_type="modify", lines_added=1, lines_removed=2,
        scope="impl", language="python", origin=origin, origin_info=info, git=git,
        symbols=[symbol_record(name=n, kind=k, change_type=ct, start_line=s, end_line=e,
                               renamed_from=rf, renamed_to=None)
                 for n, k, ct, s, e, rf in syms],
    )) for _, ts, path, origin, info, git, syms in _RECORDS]  # fmt: skip


_SELECT_0005 = {
    "changes": "SELECT id, ts_us, path, origin, origin_info, git FROM changes ORDER BY id",
    "symbol_changes": "SELECT change_id, ordinal, name, kind, change_type, start_line, end_line, "
                      "renamed_from, renamed_to FROM symbol_changes ORDER BY change_id, ordinal",
}


def _fill_0005(url: str, backend: str) -> None:
    """A database at revision 0005 holding `_RECORDS` as 0005 wrote them."""
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0005")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        for id_, ts, path, origin, info, git, syms in _RECORDS:
            conn.execute(text(
                "INSERT INTO changes (id, workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, origin, "
                "origin_info, git, txid) VALUES (:id, 1, :ts, :path, NULL, 'modify', 1, 2, "
                "'impl', 'python', NULL, NULL, :origin, :info, :git, 0)"),
                {"id": id_, "ts": ts, "path": path, "origin": origin, "info": _dump(info),
                 "git": _dump(git)})  # fmt: skip
            for n, (name, kind, ct, start, end, rf) in enumerate(syms):
                conn.execute(text(
                    "INSERT INTO symbol_changes (change_id, ordinal, name, kind, change_type, "
                    "start_line, end_line, renamed_from, renamed_to) VALUES (:c, :n, :name, "
                    ":kind, :ct, :s, :e, :rf, NULL)"),
                    {"c": id_, "n": n, "name": name, "kind": kind, "ct": ct, "s": start,
                     "e": end, "rf": rf})  # fmt: skip
        if backend == "postgresql":  # ids given explicitly: the sequence moves past them
            conn.execute(text("SELECT setval(pg_get_serial_sequence('changes', 'id'), 5)"))
    engine.dispose()


def _rows_0005(url: str) -> dict[str, list[tuple[object, ...]]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {t: [tuple(r) for r in conn.execute(text(q))] for t, q in _SELECT_0005.items()}
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0005_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    """Records written at revision 0005 (provenance JSON on each row, names on each symbol row)
    read back identical at HEAD, by page, by cursor and by symbol name; their provenance and
    names are stored once; new records share the converted rows."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0005(url, backend)
    with Store(url) as store:
        assert store.revision() == HEAD
        newest_first = store.page(ChangeFilter(None, 0, None, 10))
        cursor = store.page(ChangeFilter(None, 0, None, 10, after=Position(-1, 0)))
        assert [c.record for c in cursor.changes] == _expected()
        assert [c.id for c in cursor.changes] == [1, 2, 3, 4, 5]
        assert [c.record for c in newest_first.changes] == _expected()[::-1]
        a = symbol_rows(store, ["A"], None)
        assert [(r.change_id, r.kind, r.change_type) for r in a] == [
            (2, "class", "removed"), (3, "function", "added")]
        assert [(r.change_id, r.change_type, r.origin_info) for r in
                symbol_rows(store, ["A.f"], [1])] == [
            (1, "modified", _dump(_CHECKOUT)), (2, "signature_changed", _dump(_CHECKOUT))]
        assert sorted(recorded_names(store)) == ["A", "A.f", "g"]
        assert imported_keys(store, 1) == {("c" * 40, "c.py")}
        with store.engine.connect() as conn:
            names = conn.execute(text("SELECT count(*) FROM symbol_names")).scalar_one()
            provenance = conn.execute(text("SELECT count(*) FROM provenance")).scalar_one()
            columns = {r[1] for r in conn.execute(text(
                "SELECT 0, column_name FROM information_schema.columns WHERE "
                "table_name = 'changes'" if backend == "postgresql" else
                "SELECT 0, name FROM pragma_table_info('changes')"))}  # fmt: skip
        assert (names, provenance) == (4, 3)  # (A, class) and (A, function) are two
        assert "origin_info" not in columns and "git" not in columns
        indexes = {ix["name"] for ix in inspect(store.engine).get_indexes("changes")}
        assert "ix_changes_provenance_id" in indexes  # gc's deletes probe, never scan
        # A new record of the same batch shares the converted provenance row and names.
        store.apply(1, [Mutation(change=_change("f.py", 5, _CHECKOUT, _GIT, "A.f", "method"))])
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM provenance")).scalar_one() == 3
            assert conn.execute(text("SELECT count(*) FROM symbol_names")).scalar_one() == 4
        last = store.page(ChangeFilter(None, 0, None, 1)).changes[0].record
        assert (last["path"], last["origin_info"], last["git"]) == ("f.py", _CHECKOUT, _GIT)


def _change(path: str, second: int, info: dict[str, object] | None, git: dict[str, object] | None,
            name: str, kind: str) -> FileChange:  # fmt: skip
    return FileChange(
        path=path, old_path=None, timestamp=datetime(2026, 11, 22, 12, 0, second, tzinfo=UTC),
        change_type=ChangeType.MODIFY, lines_added=1, lines_removed=1, scope=Scope.IMPL,
        language="python", origin=Origin.GIT, origin_info=info, git=git,
        symbols=(SymbolChange(name, kind, SymbolChangeType.ADDED, 1, 2),),
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_batch_stores_its_provenance_and_names_once(backend: str,
                                                      request: pytest.FixtureRequest) -> None:
    """Twenty records of one checkout: one provenance row; a name shared by all: one row; each
    record reads back its own provenance and symbols."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h").id
        store.apply(ws, [Mutation(change=_change(f"m{i}.py", i, _CHECKOUT, _GIT, "shared", "f"))
                         for i in range(20)])  # fmt: skip
        other = {"operation": "commit"}
        store.apply(ws, [Mutation(change=_change("x.py", 30, other, None, "solo", "f"))])
        with store.engine.connect() as conn:
            provenance = conn.execute(text("SELECT count(*) FROM provenance")).scalar_one()
            names = conn.execute(text("SELECT count(*) FROM symbol_names")).scalar_one()
        records = [c.record for c in store.page(ChangeFilter(None, 0, None, 50)).changes]
    assert (provenance, names) == (2, 2)
    assert [(r["path"], r["origin_info"], r["git"]) for r in records] == [
        ("x.py", other, None), *((f"m{i}.py", _CHECKOUT, _GIT) for i in reversed(range(20)))]
    assert {r["symbols"][0]["name"] for r in records} == {"shared", "solo"}


def test_postgresql_gc_waits_for_a_writer_that_picked_a_name(pg_head_url: str) -> None:
    """A PostgreSQL writer has looked up an unused name and provenance row and not yet written
    the record that uses them; gc's delete batch waits for it instead of deleting them under
    it, then keeps them: the record commits with the ids it picked, nothing is lost."""
    from symdiff.store.changes import insert_changes
    from symdiff.store.interned import hold, name_ids, provenance_id

    with Store(pg_head_url) as store:
        ws = store.ensure_workspace("/r", "h").id
        store.apply(ws, [Mutation(change=_change("a.py", 1, _CHECKOUT, _GIT, "reused", "f"))])
        gc.delete_records(store.engine, before_us=2**62)  # the name and provenance now unused
        result: list[int] = []
        with store.engine.connect() as writer, writer.begin():
            hold(writer)
            name = name_ids(writer, {("reused", "f")})[("reused", "f")]
            provenance = provenance_id(writer, _dump(_CHECKOUT), _dump(_GIT))
            collector = threading.Thread(
                target=lambda: result.append(gc.delete_orphans(store.engine)))
            collector.start()

            def waiting() -> bool:  # the collector's delete asks for the lock the writer holds
                with store.engine.connect() as conn:
                    return bool(conn.execute(text(
                        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                        "WHERE NOT l.granted AND c.relname IN ('symbol_names', 'provenance') "
                        "AND l.database = (SELECT oid FROM pg_database "
                        "WHERE datname = current_database())")).scalar())

            wait_until(waiting, timeout=30, message="the collector waiting on the writer's lock")
            assert collector.is_alive()  # held back by the writer's lock
            insert_changes(writer, ws, [_change("b.py", 2, _CHECKOUT, _GIT, "reused", "f")])
        collector.join(30)
        assert result == [0]
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT s.name_id, c.provenance_id FROM symbol_changes s "
                                     "JOIN changes c ON c.id = s.change_id")).all() == [
                (name, provenance)]  # fmt: skip
        record = store.page(ChangeFilter(None, 0, None, 5)).changes[0].record
        assert (record["path"], record["origin_info"]) == ("b.py", _CHECKOUT)
        assert record["symbols"][0]["name"] == "reused"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_downgrade_to_0005_gives_the_rows_back(backend: str,
                                                   request: pytest.FixtureRequest) -> None:
    """0006's downgrade puts every record's provenance and symbol rows back as 0005 held
    them: the same rows before the upgrade and after the round trip."""
    from alembic import command

    from symdiff.store.migrate import _config, current_revision

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0005(url, backend)
    before = _rows_0005(url)
    assert len(before["changes"]) == 5 and len(before["symbol_changes"]) == 6
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            upgrade(conn, to="0006")
            assert current_revision(conn) == "0006"
            command.downgrade(_config(conn), "0005")
            conn.commit()
            assert current_revision(conn) == "0005"
    finally:
        engine.dispose()
    assert _rows_0005(url) == before
    with Store(url) as store:  # and up again: the downgrade left nothing of 0006 behind
        assert store.revision() == HEAD
        cursor = store.page(ChangeFilter(None, 0, None, 10, after=Position(-1, 0)))
        assert [c.record for c in cursor.changes] == _expected()
