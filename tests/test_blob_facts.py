"""Symbols by content (revision 0009, docs/storage.md): a blob's symbols are stored once per
(blob, language, extractor version) by whoever parses it first — the daemon, the history
import, `against` — and read back, identical, by everyone else; a revision 0008 database
upgrades in place; an extractor change invalidates by version; retention bounds the rows."""

from __future__ import annotations

import importlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import LANGUAGES, git, make_settings, sample_of, table_columns, table_rows
from sqlalchemy import text

from symdiff.api import import_history
from symdiff.attribute.spans import symbol_changes
from symdiff.diffs.blobid import blob_id
from symdiff.parse import codec, reparse
from symdiff.parse.extract import extract_uncached
from symdiff.parse.languages import language_for
from symdiff.parse.shelf import CHAIN, SymbolShelf
from symdiff.query.answer import DiffQuery, diff
from symdiff.record.indexer import reconcile
from symdiff.record.retention import collect
from symdiff.store import ChangeFilter, Position, Store, facts
from symdiff.store.engine import make_engine
from symdiff.store.gc import delete_facts
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD

extract_module = importlib.import_module("symdiff.parse.extract")
spans_module = importlib.import_module("symdiff.attribute.spans")


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The languages of every from-scratch extraction from here on (a counting seam around the
    real extractor), with this process's in-memory symbol caches emptied first, as in a new
    process."""
    calls: list[str] = []
    real = extract_module._extract

    def counted(language: str, source: bytes, key: bytes | None, base: bytes | None) -> object:
        calls.append(language)
        return real(language, source, key, base)

    _forget()
    monkeypatch.setattr(extract_module, "_extract", counted)
    yield calls
    _forget()


def _forget() -> None:
    reparse.forget()
    extract_module._cache.clear()
    extract_module._cache_held = 0
    spans_module._memo.clear()
    spans_module._memo_held = 0


# ---- the stored form -------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_stored_symbols_read_back_identical(language: str) -> None:
    source = sample_of(language)
    name = "x.mli" if language == "ocaml_interface" else None
    lang = language_for(name) if name else language
    symbols = extract_uncached(lang or language, source)
    assert symbols, f"the {language} sample has symbols"
    assert codec.from_raw(codec.unpack(codec.pack(codec.raw(symbols)))) == tuple(symbols)


def test_a_stored_change_reads_back_identical() -> None:
    old = b"def f(a):\n    return a\n\n\nclass C:\n    def m(self):\n        pass\n"
    new = b"def f(a, b):\n    return a\n\n\nclass D:\n    def m(self):\n        pass\n"
    changes = symbol_changes("python", old, new)
    assert {c.change_type.value for c in changes} >= {"signature_changed"}
    assert codec.decode_pair(codec.pack(codec.raw_pair(3, 2, changes))) == (3, 2, tuple(changes))
    with pytest.raises(codec.CodecError):
        codec.decode_pair(codec.pack(codec.raw([])))


def test_a_payload_that_is_not_ours_is_refused() -> None:
    whole = codec.pack(codec.raw(extract_uncached("python", sample_of("python"))))
    for junk in (b"", b"not zstd", whole[:-3], b"[2]"):
        with pytest.raises(codec.CodecError):
            codec.from_raw(codec.unpack(junk))
    assert codec.from_raw(codec.unpack(codec.pack(codec.raw([])))) == ()


# ---- the store -------------------------------------------------------------------------------


def _shelf_with(source: bytes, version: str | None = None) -> tuple[SymbolShelf, str]:
    shelf = SymbolShelf(version)
    blob = blob_id(source)
    shelf.symbols("python", source, blob)
    return shelf, blob


def test_symbols_of_another_extractor_version_are_never_read(sqlite_url: str) -> None:
    source = sample_of("python")
    with Store(sqlite_url) as store:
        old, blob = _shelf_with(source, "0123456789abcdef")
        assert store.keep_shelf(old) == 1
        now = SymbolShelf()
        assert store.load_shelf(now, [("python", blob)]) == 0 and not now.has(("python", blob))
        assert store.keep_shelf(_shelf_with(source)[0]) == 1
        assert store.load_shelf(now, [("python", blob)]) == 0  # a shelf asks once per blob
        later = SymbolShelf()
        assert store.load_shelf(later, [("python", blob)]) == 1
        assert later.get(("python", blob)) == tuple(extract_uncached("python", source))


def test_a_damaged_row_is_parsed_again(sqlite_url: str) -> None:
    source = sample_of("python")
    with Store(sqlite_url) as store:
        shelf, blob = _shelf_with(source)
        store.keep_shelf(shelf)
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE blob_facts SET data = x'00'"))
        again = SymbolShelf()
        assert store.load_shelf(again, [("python", blob)]) == 0
        assert again.symbols("python", source, blob) == extract_uncached("python", source)


def test_retention_drops_other_versions_and_old_rows_nothing_names(sqlite_url: str,
                                                                   repo: Path) -> None:
    (repo / "a.py").write_text("def f():\n    return 1\n")
    settings = make_settings(repo, sqlite_url)
    with Store(sqlite_url) as store:
        reconcile(store, settings)  # the baseline: a.py's blob is named by a file state
        (repo / "a.py").write_text("def f(x):\n    return x\n")
        reconcile(store, settings)  # a record names both blobs, and stores their symbols
        orphan, orphan_blob = _shelf_with(b"def g():\n    pass\n")
        store.keep_shelf(orphan, now_us=0)  # written long ago, named by nothing
        stale, _ = _shelf_with(b"def h():\n    pass\n", "fedcba9876543210")
        store.keep_shelf(stale)
        with store.engine.begin() as conn:
            # f's second version (whole: the record that replaced the first dropped its
            # symbols and references, since no file and no HEAD holds it), g, h; and beside
            # them the references of f's second version
            rows = conn.execute(text(
                "SELECT kind, depth, base IS NULL FROM blob_facts JOIN fact_sets"
                " ON fact_sets.id = blob_facts.set_id ORDER BY kind, depth"))
            assert [tuple(r) for r in rows] == [("refs", 0, 1), ("symbols", 0, 1),
                                                ("symbols", 0, 1), ("symbols", 0, 1)]
        report = collect(settings, store=store)  # the window keeps the record
        assert (report.records, report.facts) == (0, 2)  # g and h
        assert report.as_json()["facts"] == 2
        kept = SymbolShelf()
        names = [("python", blob_id(b"def f():\n    return 1\n")),
                 ("python", blob_id(b"def f(x):\n    return x\n")), ("python", orphan_blob)]
        assert store.load_shelf(kept, names) == 1 and not kept.has(("python", orphan_blob))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_record_drops_the_references_of_the_blob_it_replaced(
        backend: str, request: pytest.FixtureRequest, repo: Path) -> None:  # fmt: skip
    """The reference index is of the tree as it is: a record that replaces or deletes a blob no
    file holds any more drops that blob's references at once (retention's rule, docs/impact.md),
    and the old side it parsed is not stored; a blob another file still holds keeps them."""
    from symdiff.impact.index import build, missing
    from symdiff.parse.version import extractor_version

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    settings = make_settings(repo, url)
    v1, v2 = b"def f():\n    return g()\n", b"def f(x):\n    return h(x)\n"
    c1 = b"def c():\n    f()\n"
    (repo / "a.py").write_bytes(v1)
    (repo / "b.py").write_bytes(v1)
    (repo / "c.py").write_bytes(c1)
    version = extractor_version()
    keys = [("python", blob_id(text)) for text in (v1, v2, c1)]
    with Store(url) as store:
        reconcile(store, settings)
        ws = store.find_workspace(str(settings.root), settings.host)
        assert ws is not None
        build(store, version, missing(store, version, store.file_states(ws.id)), read=False)
        assert store.have_refs(version, keys) == {keys[0], keys[2]}
        (repo / "a.py").write_bytes(v2)
        (repo / "c.py").unlink()
        reconcile(store, settings)
        assert store.have_refs(version, keys) == {keys[0], keys[1]}  # b.py holds v1
        (repo / "b.py").write_bytes(c1)  # v1 -> c1: v1's go
        reconcile(store, settings)
        # c1's symbols went with c.py (no file and no HEAD held it), so the record parsed it
        # and stored its references: the index lacks nothing
        assert store.have_refs(version, keys) == {keys[1], keys[2]}
        assert missing(store, version, store.file_states(ws.id)) == []
        with store._read() as conn:  # v1's symbols stay: a.py's v2 is stored against them
            assert facts.present(conn, version, facts.SYMBOLS, keys) == set(keys)


# ---- who writes, who reads -------------------------------------------------------------------


def test_the_daemons_records_serve_against_without_a_parse(repo: Path, sqlite_url: str,
                                                           parses: list[str]) -> None:
    for i in range(3):
        (repo / f"m{i}.py").write_text(f"def f{i}(a):\n    return a\n\n\nclass C{i}:\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    settings = make_settings(repo, sqlite_url)
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        for i in range(3):
            (repo / f"m{i}.py").write_text(f"def f{i}(a, b):\n    return a + b\n\n\nclass C{i}:\n"
                                           "    pass\n")  # fmt: skip
        report = reconcile(store, settings)
    assert len(report.changes) == 3 and len(parses) == 6  # both sides of each, parsed once
    recorded = {c.path: c.symbols for c in report.changes}
    _forget()  # as in another process: only the database remembers
    parses.clear()
    answer = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert parses == []
    assert {r["path"]: r["symbols"] for r in answer.records} == {
        path: [{"name": s.name, "kind": s.kind, "change_type": s.change_type.value,
                "start_line": s.start_line, "end_line": s.end_line} for s in symbols]
        for path, symbols in recorded.items()}  # fmt: skip


def _symbol_rows(store: Store) -> dict[str, tuple[int, bool]]:
    """The stored symbols: blob -> (depth, whether a delta)."""
    with store.engine.connect() as conn:
        return {bytes(blob).hex(): (depth, delta) for blob, depth, delta in conn.execute(text(
            "SELECT blob, depth, base IS NOT NULL FROM blob_facts JOIN fact_sets"
            " ON fact_sets.id = blob_facts.set_id WHERE kind = 'symbols'"))}


def test_the_daemon_keeps_the_symbols_of_heads_and_the_current_versions_only(
        repo: Path, sqlite_url: str, parses: list[str]) -> None:  # fmt: skip
    """A version a record leaves keeps its symbols while a file or HEAD holds it: `against
    HEAD` finds both sides stored however often a file was saved since the commit, and the
    versions in between go (docs/storage.md, "Symbols by content")."""
    v = [f"def f(a):\n    return a + {n}\n\n\nclass C:\n    pass\n".encode() for n in range(4)]
    ids = [blob_id(x) for x in v]
    gone = b"def g():\n    pass\n"
    (repo / "a.py").write_bytes(v[0])
    (repo / "gone.py").write_bytes(gone)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    settings = make_settings(repo, sqlite_url)
    with Store(sqlite_url) as store:
        reconcile(store, settings)  # the baseline: HEAD's versions
        for x in v[1:3]:
            (repo / "a.py").write_bytes(x)
            reconcile(store, settings)
        (repo / "gone.py").unlink()
        reconcile(store, settings)
        # v0 and gone.py are HEAD's; v2 is a.py's; v1 went as v2 replaced it, so v2 (stored
        # against v1 at first) is whole
        assert _symbol_rows(store) == {ids[0]: (0, False), blob_id(gone): (0, False),
                                       ids[2]: (0, False)}  # fmt: skip
    _forget()  # as in another process: only the database remembers
    parses.clear()
    answer = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert parses == []
    assert sorted(r["path"] for r in answer.records) == ["a.py", "gone.py"]
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")  # HEAD holds v2 now
    (repo / "a.py").write_bytes(v[3])
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        rows = _symbol_rows(store)
    assert rows[ids[2]] == (0, False) and rows[ids[3]] == (1, True)  # v2 kept: v3 against it
    _forget()
    parses.clear()
    answer = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert parses == [] and [r["path"] for r in answer.records] == ["a.py"]


def test_a_left_version_that_a_row_is_stored_against_keeps_its_symbols(
        repo: Path, sqlite_url: str) -> None:  # fmt: skip
    """An imported commit's version may be stored against a version a record left: that row
    stays, and so the other reads back without a parse."""
    v = _versions(3)
    ids = [blob_id(x) for x in v]
    settings = make_settings(repo, sqlite_url)
    (repo / "a.py").write_bytes(v[0])
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        (repo / "a.py").write_bytes(v[1])
        reconcile(store, settings)
        shelf = SymbolShelf(pairs=False)  # v2 stored against v1, as an import stores it
        store.load_shelf(shelf, [("python", ids[1]), ("python", ids[2])])
        symbol_changes("python", v[1], v[2], shelf=shelf, old_blob=ids[1], new_blob=ids[2])
        store.keep_shelf(shelf)
        (repo / "a.py").write_bytes(v[0])  # back to v0: v1 is left
        reconcile(store, settings)
        rows = _symbol_rows(store)
    assert rows[ids[1]] == (0, False) and rows[ids[2]] == (1, True)
    _forget()
    with Store(sqlite_url) as store:
        again = SymbolShelf()
        assert store.load_shelf(again, [("python", ids[2])]) == 1
    assert again.get(("python", ids[2])) == tuple(extract_uncached("python", v[2]))


def test_against_stores_what_it_parsed_for_the_next_call(repo: Path, sqlite_url: str,
                                                         parses: list[str]) -> None:
    (repo / "a.py").write_text("def f():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    settings = make_settings(repo, sqlite_url)
    first = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert first.records == [] and parses == []
    (repo / "a.py").write_text("def f():\n    return 2\n\n\ndef g():\n    pass\n")
    first = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert parses == ["python", "python"]  # no database yet: against does not make one
    Store(sqlite_url).close()
    diff(settings, DiffQuery(against="HEAD", scope="all"))
    _forget()
    parses.clear()
    again = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert parses == []
    assert [{**r, "timestamp": None} for r in again.records] == [
        {**r, "timestamp": None} for r in first.records]


def test_against_stores_behind_its_answer(repo: Path, sqlite_url: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer is out before its symbols are stored; the next `against` waits for them and
    parses nothing; a one-shot CLI process stores them before it exits."""
    (repo / "a.py").write_text("def f():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "a.py").write_text("def f():\n    return 2\n\n\ndef g():\n    pass\n")
    Store(sqlite_url).close()
    settings = make_settings(repo, sqlite_url)
    gate, real = threading.Event(), Store.keep_shelf

    def held(store: Store, shelf: SymbolShelf) -> None:
        assert gate.wait(30)
        real(store, shelf)

    monkeypatch.setattr(Store, "keep_shelf", held)
    first = diff(settings, DiffQuery(against="HEAD", scope="all"))
    assert [s["name"] for s in first.records[0]["symbols"]] == ["f", "g"]
    stored = lambda url: len(table_rows(url, {"blob_facts": ("id",)})["blob_facts"])  # noqa: E731
    assert stored(sqlite_url) == 0  # the answer came before the write
    threading.Timer(0.3, gate.set).start()
    _forget()
    parses: list[str] = []
    monkeypatch.setattr(extract_module, "_extract", lambda *a: parses.append(a[0]))
    again = diff(settings, DiffQuery(against="HEAD", scope="all"))  # waits for the first's write
    assert parses == [] and gate.is_set() and stored(sqlite_url) > 0
    assert again.records[0]["symbols"] == first.records[0]["symbols"]

    other = sqlite_url.replace("index.db", "cli.db")
    Store(other).close()
    run = subprocess.run([sys.executable, "-m", "symdiff", "changes", "--root", str(repo),
                          "--db", other, "--against", "HEAD", "--json"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert stored(other) == stored(sqlite_url) > 0


def test_a_second_import_of_an_overlapping_window_parses_nothing_twice(
        repo: Path, sqlite_url: str, parses: list[str]) -> None:  # fmt: skip
    for n in range(6):
        (repo / "lib.py").write_text("".join(f"def f{i}(a):\n    return a + {n}\n\n\n"
                                             for i in range(n + 1)))  # fmt: skip
        (repo / f"t{n}.py").write_text(f"def test_{n}():\n    assert True\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"c{n}")
    settings = make_settings(repo, sqlite_url)
    import_history(settings, max_commits=3)  # c5, c4, c3
    assert len(parses) == 7  # lib.py's versions 2 to 5, t3 to t5: each blob once
    _forget()
    parses.clear()
    report = import_history(settings, max_commits=5)
    assert report.already == 6 and report.recorded == 4
    # c2 and c1 are new: lib.py's version 2 was stored by the first import (c3's old side);
    # versions 0 and 1, t1 and t2 were never met.
    assert len(parses) == 4
    with Store(sqlite_url) as store, store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM blob_facts")).scalar_one() == 11
        every = ChangeFilter(None, 0, None, 100, after=Position(-1, 0))
        assert len(store.page(every).changes) == 10


# ---- the upgrade from 0008 -------------------------------------------------------------------


def _fill_0008(url: str) -> None:
    """A database at revision 0008 as 0008 wrote it: records with symbols and a session."""
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0008")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        prov = conn.execute(text(
            "INSERT INTO provenance (digest, origin_info, git, session, turn) VALUES "
            "(7, :i, NULL, 'S', 2) RETURNING id"),
            {"i": '{"agent":"claude-code","session":"S","turn":2}'}).scalar_one()  # fmt: skip
        for id_, origin, pid in ((1, "watch", None), (2, "agent", prov)):
            conn.execute(text(
                "INSERT INTO changes (workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, origin, "
                "provenance_id, txid) VALUES (1, :ts, 'a.py', NULL, 'modify', 1, 1, "
                "'impl', 'python', :old, :new, :o, :p, 0)"),
                {"ts": id_ * 1000, "o": origin, "p": pid, "old": bytes([id_]) * 20,
                 "new": bytes([id_ + 1]) * 20})  # fmt: skip
        name = conn.execute(text("INSERT INTO symbol_names (name, kind) VALUES ('f', 'function') "
                                 "RETURNING id")).scalar_one()  # fmt: skip
        for change_id in (1, 2):
            conn.execute(text(
                "INSERT INTO symbol_changes (change_id, ordinal, name_id, change_type, "
                "start_line, end_line, renamed_from, renamed_to) "
                "VALUES (:c, 0, :n, 'm', 1, 2, NULL, NULL)"), {"c": change_id, "n": name})
        session = conn.execute(text(
            "INSERT INTO agent_sessions (workspace_id, session, agent, model, started_us, "
            "ended_us) VALUES (1, 'S', 'claude-code', 'm', 10, NULL) RETURNING id")).scalar_one()
        conn.execute(text("INSERT INTO agent_turns (session_id, turn, started_us, ended_us) "
                          "VALUES (:s, 2, 10, 20)"), {"s": session})  # fmt: skip
    engine.dispose()


def _assert_0008_records(store: Store) -> None:
    """The records and the session `_fill_0008` wrote, as they read back."""
    every = ChangeFilter(None, 0, None, 10, after=Position(-1, 0))
    records = [(c.record["origin"], c.old_hash, c.record["symbols"])
               for c in store.page(every).changes]
    assert records == [
        ("watch", "01" * 20, [{"name": "f", "kind": "function", "change_type": "modified",
                               "start_line": 1, "end_line": 2}]),
        ("agent", "02" * 20, [{"name": "f", "kind": "function", "change_type": "modified",
                               "start_line": 1, "end_line": 2}]),
    ]  # fmt: skip
    [session] = store.sessions([1])
    assert [(t.number, t.ended_us) for t in session.turns] == [(2, 20)]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0008_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0008(url)
    at_0008 = table_columns(url)
    before = table_rows(url, at_0008)
    assert len(before["changes"]) == 2 and len(before["agent_turns"]) == 1
    with Store(url) as store:
        assert store.revision() == HEAD == "0011"
    assert table_rows(url, at_0008) == before  # every row of 0008 survived, column for column
    assert set(table_columns(url)) == set(at_0008) | {"fact_sets", "blob_facts"}
    with Store(url) as store:
        _assert_0008_records(store)
        shelf, blob = _shelf_with(sample_of("python"))
        assert store.keep_shelf(shelf, now_us=int(datetime.now(UTC).timestamp() * 1e6)) == 1
        again = SymbolShelf()
        assert store.load_shelf(again, [("python", blob)]) == 1


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_downgrade_to_0008_drops_what_0009_added(backend: str,
                                                     request: pytest.FixtureRequest) -> None:
    from alembic import command

    from symdiff.store.migrate import _config, current_revision

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0008(url)
    before = table_rows(url, table_columns(url))
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            upgrade(conn, to="0009")
            assert current_revision(conn) == "0009"
            command.downgrade(_config(conn), "0008")
            conn.commit()
            assert current_revision(conn) == "0008"
    finally:
        engine.dispose()
    assert table_rows(url, table_columns(url)) == before


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0009_database_gets_the_files_blob_index_in_place(
        backend: str, request: pytest.FixtureRequest) -> None:  # fmt: skip
    """0010 indexes files.blob_hash in place: the records, file states and stored symbols
    written at 0009 read back the same, and a record's probe of the blob it replaced finds the
    file that still holds it."""
    from sqlalchemy import inspect

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0008(url)
    source = sample_of("python")
    symbols = tuple(extract_uncached("python", source))
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0009")
    with engine.begin() as conn:
        for path, blob in (("a.py", b"\x01" * 20), ("b.py", b"\x01" * 20), ("c.py", b"\x02" * 20)):
            conn.execute(text("INSERT INTO files (workspace_id, path, blob_hash, size, mtime_ns, "
                              "checked_ns) VALUES (1, :p, :b, 1, 1, 1)"), {"p": path, "b": blob})
        facts.save(conn, SymbolShelf().version, facts.SYMBOLS,
                   {("python", blob_id(source)): (codec.raw(symbols), None, None, 0)}, 0)
    engine.dispose()
    at_0009 = table_columns(url)
    before = table_rows(url, at_0009)
    assert len(before["files"]) == 3 and len(before["blob_facts"]) == 1
    with Store(url) as store:
        assert store.revision() == HEAD == "0011"
        names = {ix["name"] for ix in inspect(store.engine).get_indexes("files")}
        assert "ix_files_blob_hash" in names
        with store._read() as conn:
            assert facts.held(conn, ["01" * 20, "03" * 20]) == {"01" * 20}
        _assert_0008_records(store)
        shelf = SymbolShelf()
        assert store.load_shelf(shelf, [("python", blob_id(source))]) == 1
        assert shelf.get(("python", blob_id(source))) == symbols
    assert table_rows(url, at_0009) == before  # every row of 0009, column for column
    engine = make_engine(url)
    try:
        from alembic import command

        from symdiff.store.migrate import _config

        with engine.connect() as conn:
            command.downgrade(_config(conn), "0009")
            conn.commit()
        assert "ix_files_blob_hash" not in {
            ix["name"] for ix in inspect(engine).get_indexes("files")}
    finally:
        engine.dispose()


# ---- deltas ----------------------------------------------------------------------------------


def _versions(count: int) -> list[bytes]:
    """A file edited `count - 1` times, one function more each time, lines shifting below it."""
    return [b"import os\n\n" + b"".join(f"def f{i}(a):\n    return a + {n}\n\n\n".encode()
                                        for i in range(n + 1)) + b"class Tail:\n    pass\n"
            for n in range(count)]  # fmt: skip


def _store_chain(store: Store, versions: list[bytes]) -> list[str]:
    """Each version stored as the daemon stores a change: the new side against the old."""
    blobs = [blob_id(v) for v in versions]
    for old, new, old_id, new_id in zip(versions, versions[1:], blobs, blobs[1:], strict=False):
        shelf = SymbolShelf(pairs=False)
        store.load_shelf(shelf, [("python", old_id), ("python", new_id)])
        symbol_changes("python", old, new, shelf=shelf, old_blob=old_id, new_blob=new_id)
        store.keep_shelf(shelf)
    return blobs


def test_a_files_versions_are_stored_as_deltas_and_read_back_identical(sqlite_url: str) -> None:
    versions = _versions(CHAIN + 10)
    with Store(sqlite_url) as store:
        blobs = _store_chain(store, versions)
        with store.engine.connect() as conn:
            rows = {depth: n for depth, n in conn.execute(
                text("SELECT depth, count(*) FROM blob_facts GROUP BY depth"))}
            whole, delta = conn.execute(text(
                "SELECT sum(CASE WHEN base IS NULL THEN length(data) END) / "
                "sum(CASE WHEN base IS NULL THEN 1 END), sum(CASE WHEN base IS NOT NULL THEN "
                "length(data) END) / sum(CASE WHEN base IS NOT NULL THEN 1 END) "
                "FROM blob_facts")).one()  # fmt: skip
        assert max(rows) == CHAIN - 1 and rows[0] == 2  # a whole one every CHAIN versions
        assert delta * 3 < whole  # a delta holds what the edit moved, not the file
    _forget()
    with Store(sqlite_url) as store:
        shelf = SymbolShelf()
        assert store.load_shelf(shelf, [("python", b) for b in blobs]) == CHAIN + 10
    for version, blob in zip(versions, blobs, strict=True):
        assert shelf.get(("python", blob)) == tuple(extract_uncached("python", version))


def test_a_delta_whose_base_went_is_parsed_again(sqlite_url: str) -> None:
    versions = _versions(3)
    with Store(sqlite_url) as store:
        blobs = _store_chain(store, versions)
        with store.engine.begin() as conn:
            conn.execute(text("DELETE FROM blob_facts WHERE depth = 0"))
        shelf = SymbolShelf()
        assert store.load_shelf(shelf, [("python", b) for b in blobs]) == 0


def test_retention_keeps_the_bases_of_kept_deltas(sqlite_url: str, repo: Path) -> None:
    versions = _versions(5)
    settings = make_settings(repo, sqlite_url)
    with Store(sqlite_url) as store:
        blobs = _store_chain(store, versions)
        with store.engine.begin() as conn:  # all old; the newest stays by its own right
            conn.execute(text("UPDATE blob_facts SET day = 0"))
            conn.execute(text("UPDATE blob_facts SET day = 10000000 WHERE depth = 4"))
        report = collect(settings, store=store)
        assert report.facts == 0  # every other row is a base of the kept one's chain
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE blob_facts SET day = 0"))
        held: list[float] = []  # one entry a transaction: a chain goes leaf by leaf, 2 a step
        assert delete_facts(store.engine, extractor=SymbolShelf().version,
                            before_us=10**18, held=held, batch=2) == 5  # fmt: skip
        assert len(held) == 6  # five one-row steps (each leaf), and the one that found none
        assert store.load_shelf(SymbolShelf(), [("python", b) for b in blobs]) == 0


def test_any_change_to_the_extractor_is_a_new_version(tmp_path: Path) -> None:
    import shutil

    import symdiff.parse
    from symdiff.parse.version import code_digest, extractor_version

    here = tmp_path / "parse"
    shutil.copytree(Path(symdiff.parse.__file__).parent, here,
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    pins = ["tree-sitter==1", "tree-sitter-language-pack==0.13.0"]
    first = code_digest(here, pins)
    assert len(extractor_version()) == 16 and first == code_digest(here, pins)
    engine = here / "languages" / "engine.py"
    engine.write_bytes(engine.read_bytes() + b"\n# a comment is a change\n")
    second = code_digest(here, pins)
    assert second != first
    assert code_digest(here, ["tree-sitter==2", pins[1]]) != second  # a grammar upgrade too
    pool = here / "pool.py"  # how batches are parsed does not change what they give
    pool.write_bytes(pool.read_bytes() + b"\n# not extraction\n")
    assert code_digest(here, pins) == second
