"""The store: migrations from code, SQLite's connection rules, snapshots, the write path."""

from __future__ import annotations

import json
import random
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import stored
from sqlalchemy import inspect, text

from symdiff.diffs.blobid import blob_id
from symdiff.errors import StoreError
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.records import of_change
from symdiff.store import ChangeFilter, FileState, Mutation, Position, Store
from symdiff.store.blobs import pack, unpack
from symdiff.store.engine import make_engine
from symdiff.store.migrate import current_revision, head_revision, upgrade
from symdiff.store.schema import HEAD
from symdiff.timestamps import format_us, from_us, to_us

TABLES = {"workspaces", "blobs", "files", "changes", "symbol_changes", "symbol_names",
          "provenance", "alembic_version"}


def _change(path: str, ts: datetime, scope: Scope = Scope.IMPL) -> FileChange:
    return FileChange(
        path=path, old_path=None, timestamp=ts, change_type=ChangeType.MODIFY, lines_added=1,
        lines_removed=2, scope=scope, language="python",
        symbols=(SymbolChange("A.f", "method", SymbolChangeType.MODIFIED, 3, 9),
                 SymbolChange("g", "function", SymbolChangeType.ADDED, 12, 14,
                              renamed_from="h")),
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_opening_runs_the_migrations_once(backend: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    with Store(url) as store:
        assert set(inspect(store.engine).get_table_names()) >= TABLES
        with store.engine.connect() as conn:
            assert current_revision(conn) == head_revision()
    with Store(url) as again:  # a second open finds nothing to do and keeps the data
        again.ensure_workspace("/r", "h")
    with Store(url) as third:
        assert [w.root for w in third.workspaces()] == ["/r"]


def test_the_schema_head_is_the_newest_migration() -> None:
    """The one-SELECT currency check compares with HEAD; Alembic's own view must agree."""
    assert head_revision() == HEAD


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_round_1_database_upgrades_in_place(backend: str, request: pytest.FixtureRequest
                                              ) -> None:  # fmt: skip
    """A database made by revision 0001, with records written as round 1 wrote them (symbols
    both as JSON on the change row and as rows), opens at HEAD with every record intact."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0001")
    ts = datetime(2026, 11, 22, 1, 38, 13, 123456, tzinfo=UTC)
    syms = [{"name": "A.f", "kind": "method", "change_type": "modified", "start_line": 3,
             "end_line": 9},
            {"name": "g", "kind": "function", "change_type": "added", "start_line": 12,
             "end_line": 14, "renamed_from": "h"}]  # fmt: skip
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        for i, (path, scope, symbols) in enumerate([("a.py", "impl", syms),
                                                    ("tests/t.py", "test", [])], start=1):
            conn.execute(text(
                "INSERT INTO changes (id, workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, symbols) "
                "VALUES (:id, 1, :ts, :path, NULL, 'modify', 1, 2, :scope, 'python', NULL, "
                "NULL, :symbols)"), {"id": i, "ts": to_us(ts) - i, "path": path, "scope": scope,
                                     "symbols": json.dumps(symbols)})  # fmt: skip
            for n, sym in enumerate(symbols):
                conn.execute(text(
                    "INSERT INTO symbol_changes (change_id, ordinal, name, kind, change_type, "
                    "start_line, end_line, renamed_from, renamed_to) VALUES (:c, :n, :name, "
                    ":kind, :change_type, :start_line, :end_line, :rf, NULL)"),
                    {"c": i, "n": n, "rf": sym.get("renamed_from"), **sym})  # fmt: skip
    engine.dispose()
    with Store(url) as store:
        with store.engine.connect() as conn:
            assert current_revision(conn) == HEAD
            columns = {c["name"] for c in inspect(conn).get_columns("changes")}
            assert "symbols" not in columns
            indexes = {i["name"] for i in inspect(conn).get_indexes("symbol_changes")}
            assert "ix_symbol_changes_name_id" in indexes
        got = store.stored_changes(ChangeFilter(None, 0, None, 10))
    assert [c.record for c in got] == [
        {"path": "a.py", "old_path": None, "timestamp": format_us(to_us(ts) - 1),
         "change_type": "modify", "lines_added": 1, "lines_removed": 2, "scope": "impl",
         "language": "python", "symbols": syms, "origin": "scan", "origin_info": None,
         "git": None},
        {"path": "tests/t.py", "old_path": None, "timestamp": format_us(to_us(ts) - 2),
         "change_type": "modify", "lines_added": 1, "lines_removed": 2, "scope": "test",
         "language": "python", "symbols": [], "origin": "scan", "origin_info": None,
         "git": None},
    ]  # fmt: skip


def test_sqlite_uses_wal_and_a_busy_timeout(sqlite_url: str) -> None:
    with Store(sqlite_url) as store, store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 30000


def test_a_new_sqlite_file_has_2k_pages_an_existing_one_keeps_its_own(tmp_path: Path) -> None:
    """New files are made with 2 KiB pages and incremental auto-vacuum; a file that already
    has pages keeps their size (SQLite cannot change it in WAL mode) and works the same."""
    import sqlite3

    new, old = tmp_path / "new.db", tmp_path / "old.db"
    with Store(f"sqlite:///{new}"):
        pass
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE earlier (x)")  # a file made elsewhere, 4 KiB pages
    con.close()
    with Store(f"sqlite:///{old}") as store:
        store.apply(store.ensure_workspace("/w", "h").id, [Mutation(blobs=(pack(b"x\n"),))])
        assert store.get_blob(blob_id(b"x\n")) == b"x\n"
    pragmas = {}
    for path in (new, old):
        con = sqlite3.connect(path)
        pragmas[path.name] = tuple(con.execute(f"PRAGMA {p}").fetchone()[0]
                                   for p in ("page_size", "auto_vacuum", "journal_mode"))
        con.close()
    assert pragmas == {"new.db": (2048, 2, "wal"), "old.db": (4096, 0, "wal")}


def test_unreachable_database_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open database"):
        Store("postgresql+psycopg://nobody@127.0.0.1:1/none")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_changes_round_trip_with_symbols(backend: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    now = datetime(2026, 11, 22, 1, 38, 13, 123456, tzinfo=UTC)
    blob = pack(b"print('x')\n")
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h")
        state = FileState("a.py", blob.hash, 11, 1, 2)
        store.apply(ws.id, [Mutation(upserts=(state,), blobs=(blob,), change=_change("a.py", now)),
                            Mutation(change=_change("tests/t.py", now - timedelta(hours=2),
                                                    Scope.TEST))])  # fmt: skip
        got = stored(store, workspace_ids=[ws.id], since=now - timedelta(hours=1), limit=10)
        assert [of_change(c) for c in got] == [of_change(_change("a.py", now))]
        tests = stored(store, since=now - timedelta(days=1), scope=Scope.TEST, limit=10)
        assert [c.path for c in tests] == ["tests/t.py"]
        assert store.get_blob(blob.hash) == b"print('x')\n"
        assert store.file_states(ws.id) == {"a.py": state}


def test_a_stale_mutation_is_skipped_not_duplicated(sqlite_url: str) -> None:
    now = datetime.now(UTC)
    with Store(sqlite_url) as store:
        ws = store.ensure_workspace("/r", "h")
        m = Mutation(upserts=(FileState("a.py", "1" * 40, 1, 1, 1),), change=_change("a.py", now))
        assert store.apply(ws.id, [m], {"a.py": None}) == [m]
        assert store.apply(ws.id, [m], {"a.py": None}) == []  # someone recorded it first
        assert store.count_changes(ws.id) == 1


def test_a_reader_is_not_blocked_by_an_open_write(sqlite_url: str) -> None:
    with Store(sqlite_url) as writer, Store(sqlite_url) as reader:
        ws = writer.ensure_workspace("/r", "h")
        started, release = threading.Event(), threading.Event()
        held_until_released: list[bool] = []

        def hold_write_lock() -> None:
            with writer.engine.connect().execution_options(symdiff_write=True) as conn, \
                    conn.begin():  # fmt: skip
                conn.execute(text("UPDATE workspaces SET host = 'h'"))
                started.set()
                # A reader that waited for this write lock would let this wait time out.
                held_until_released.append(release.wait(5))

        th = threading.Thread(target=hold_write_lock)
        th.start()
        assert started.wait(5)
        try:
            assert reader.count_changes(ws.id) == 0
        finally:
            release.set()
            th.join()
        assert held_until_released == [True]


def test_blobs_are_git_objects_and_compressed() -> None:
    data = b"def f():\n    return 1\n" * 100
    blob = pack(data)
    assert blob.hash == blob_id(data)
    assert blob.codec == "zstd" and blob.data is not None and len(blob.data) < len(data) // 10
    assert unpack(blob.codec, blob.data) == data
    assert pack(b"\0binary").data is None
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_the_timestamp_formatter_matches_isoformat() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        ts = datetime(1971, 1, 1, tzinfo=UTC) + timedelta(microseconds=rng.randrange(2**52))
        expected = ts.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
        assert format_us(to_us(ts)) == expected


def test_timestamps_keep_microseconds() -> None:
    ts = datetime(2026, 11, 22, 1, 38, 13, 123456, tzinfo=UTC)
    assert from_us(to_us(ts)) == ts


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_file_states_under_a_path_is_that_file_or_that_directory(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    paths = ["a", "a/x.py", "a/b/y.py", "a.txt", "ab/z.py", "a-b/q.py", "A/u.py", "b/a/v.py"]
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h")
        store.apply(
            ws.id, [Mutation(upserts=tuple(FileState(p, "0" * 40, 1, 1, 1) for p in paths))]
        )
        assert sorted(store.file_states(ws.id, under=["a"])) == ["a", "a/b/y.py", "a/x.py"]
        assert sorted(store.file_states(ws.id, under=["a/b", "ab"])) == ["a/b/y.py", "ab/z.py"]
        assert sorted(store.file_states(ws.id, under=["", "zzz"])) == sorted(paths)
        assert store.file_states(ws.id, under=["missing"]) == {}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_reader_store_refuses_writes(backend: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    with Store(url) as writer:
        ws = writer.ensure_workspace("/r", "h")
        writer.apply(ws.id, [Mutation(change=_change("a.py", datetime.now(UTC)))])
    with Store(url, read_only=True) as reader:
        assert [w.root for w in reader.workspaces()] == ["/r"]
        assert reader.count_changes(ws.id) == 1
        with pytest.raises(StoreError, match=r"write failed: .*read.?only"):
            reader.ensure_workspace("/other", "h")
        with pytest.raises(StoreError, match="write failed"):
            reader.apply(ws.id, [Mutation(change=_change("b.py", datetime.now(UTC)))])
        assert reader.count_changes(ws.id) == 1


def test_a_reader_store_migrates_a_database_that_is_behind(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        upgrade(conn, to="0001")
    engine.dispose()
    with Store(sqlite_url, read_only=True) as reader:
        assert reader.revision() == HEAD


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0002_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    """Records written at revision 0002 read back the same at HEAD, with origin `scan` (their
    writer is unknown), no git state, and a place in the cursor order."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0002")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        for i in (1, 2, 3):
            conn.execute(text(
                "INSERT INTO changes (id, workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash) VALUES "
                "(:id, 1, :ts, :path, NULL, 'add', 3, 0, 'impl', 'python', NULL, NULL)"),
                {"id": i, "ts": 1_000_000 * i, "path": f"m{i}.py"})  # fmt: skip
        conn.execute(text(
            "INSERT INTO symbol_changes (change_id, ordinal, name, kind, change_type, "
            "start_line, end_line, renamed_from, renamed_to) VALUES (2, 0, 'f', 'function', "
            "'added', 1, 3, NULL, NULL)"))  # fmt: skip
    engine.dispose()
    with Store(url) as store:
        assert store.revision() == HEAD
        page = store.page(ChangeFilter(None, 0, None, 10, after=Position(-1, 0)))
    assert [c.record["path"] for c in page.changes] == ["m1.py", "m2.py", "m3.py"]
    assert {c.record["origin"] for c in page.changes} == {"scan"}
    assert [c.record["git"] for c in page.changes] == [None, None, None]
    assert page.changes[1].record["symbols"] == [
        {"name": "f", "kind": "function", "change_type": "added", "start_line": 1,
         "end_line": 3}]  # fmt: skip
    assert page.changes[0].record["timestamp"] == "1970-01-01T00:00:01.000000Z"
    assert not page.more
