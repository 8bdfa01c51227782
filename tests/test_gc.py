"""Retention (issue 16): `symdiff db gc` and the daemon's collections on real SQLite and
PostgreSQL, with concurrent writers, and a real gc process killed with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import symdiff_cli, wait_until
from sqlalchemy import text

from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.errors import InvalidArgs
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.query.args import encode_cursor
from symdiff.record.retention import Collector, collect, overdue
from symdiff.store import FileState, Mutation, Position, Store, gc
from symdiff.store.blobs import pack
from symdiff.store.engine import make_engine
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD

DAY_S = 86400.0
T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=10)
KEEP_US = 4 * 86400 * 1_000_000  # a 96h window: days 6-10 of the history stay


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest) -> str:
    name = "sqlite_url" if request.param == "sqlite" else "pg_head_url"
    return str(request.getfixturevalue(name))


def settings_for(url: str, tmp_path: Path, keep_us: int = KEEP_US) -> Settings:
    return replace(Settings.resolve(tmp_path, db=url), keep_us=keep_us)


def content(path: str, version: int) -> bytes:
    body = "".join(f"    x{i} = {version * 7 + i}\n" for i in range(20))
    return f"def f_{path.replace('/', '_')[:-3]}():\n{body}    return {version}\n".encode()


def fill(store: Store, *, files: int, versions: int, start: datetime = T0,
         step: timedelta = timedelta(hours=6), root: str = "/w") -> int:  # fmt: skip
    """`versions` rounds of edits to `files` files, one record each, through the write path;
    returns the workspace id."""
    ws = store.ensure_workspace(root, "h")
    for v in range(versions):
        when = start + step * v
        muts = []
        for f in range(files):
            path = f"pkg/m{f}.py"
            blob = pack(content(path, v))
            old = None if v == 0 else blob_id(content(path, v - 1))
            change = FileChange(
                path=path, old_path=None, timestamp=when,
                change_type=ChangeType.ADD if v == 0 else ChangeType.MODIFY,
                lines_added=21, lines_removed=0 if v == 0 else 21, scope=Scope.IMPL,
                language="python", old_hash=old, new_hash=blob.hash,
                symbols=(SymbolChange(f"f_{f}", "function", SymbolChangeType.MODIFIED, 1, 22),
                         SymbolChange(f"g_{f}", "function", SymbolChangeType.ADDED, 23, 24)),
            )  # fmt: skip
            state = FileState(path, blob.hash, blob.size, 1, 1)
            muts.append(Mutation(upserts=(state,), blobs=(blob,), change=change))
        store.apply(ws.id, muts)
    return ws.id


def rows(store: Store, sql: str, **params: Any) -> list[Any]:
    with store.engine.connect() as conn:
        return list(conn.execute(text(sql), params).all())


def _hex(value: Any) -> Any:
    """A stored digest (its bytes since revision 0007) as the hex text the code uses."""
    return bytes(value).hex() if isinstance(value, bytes | memoryview) else value


def snapshot(store: Store) -> dict[str, Any]:
    """Everything the checks compare: records with their symbol rows, and raw blob rows (hashes
    as hex)."""
    changes = {r[0]: tuple(_hex(v) if k in ("old_hash", "new_hash") else v
                           for k, v in r._mapping.items())
               for r in rows(store, "SELECT * FROM changes")}  # fmt: skip
    symbols = {(r[0], r[1]): tuple(r) for r in rows(store, "SELECT * FROM symbol_changes")}
    blobs = {_hex(r[0]): (r[1], r[2], r[3], None if r[4] is None else bytes(r[4]), _hex(r[5]))
             for r in rows(store, "SELECT hash, size, \"binary\", codec, data, base FROM blobs")}
    files = {r[0]: _hex(r[1]) for r in rows(store, "SELECT path, blob_hash FROM files")}
    intents = {_hex(r[0]) for r in rows(store, "SELECT new_hash FROM edit_intents")}
    return {"changes": changes, "symbols": symbols, "blobs": blobs, "files": files,
            "intents": intents}  # fmt: skip


def needed(snap: dict[str, Any], kept_ids: set[int]) -> set[str]:
    """The blobs kept records, file states and intents need, with their base closure."""
    roots = set(snap["files"].values()) | snap["intents"]
    for cid in kept_ids:
        row = snap["changes"][cid]
        roots |= {h for h in (row[10], row[11]) if h is not None}
    todo = [h for h in roots if h in snap["blobs"]]
    out: set[str] = set()
    while todo:
        h = todo.pop()
        if h in out or h not in snap["blobs"]:
            continue
        out.add(h)
        base = snap["blobs"][h][4]
        if base is not None:
            todo.append(base)
    return out


def check_consistent(store: Store) -> None:
    """No symbol row without its record, no record whose snapshot is gone, no file state whose
    snapshot is gone, no delta whose base is gone."""
    assert rows(store, "SELECT count(*) FROM symbol_changes s WHERE NOT EXISTS "
                       "(SELECT 1 FROM changes c WHERE c.id = s.change_id)")[0][0] == 0
    missing = rows(store, "SELECT c.id FROM changes c WHERE (c.new_hash IS NOT NULL AND NOT "
                          "EXISTS (SELECT 1 FROM blobs b WHERE b.hash = c.new_hash)) OR "
                          "(c.old_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM blobs b "
                          "WHERE b.hash = c.old_hash))")  # fmt: skip
    assert missing == []
    assert rows(store, "SELECT f.path FROM files f WHERE NOT EXISTS (SELECT 1 FROM blobs b "
                       "WHERE b.hash = f.blob_hash)") == []  # fmt: skip
    assert rows(store, "SELECT d.hash FROM blobs d WHERE d.base IS NOT NULL AND NOT EXISTS "
                       "(SELECT 1 FROM blobs b WHERE b.hash = d.base)") == []  # fmt: skip


def check_after_gc(before: dict[str, Any], after: dict[str, Any], cutoff_us: int) -> None:
    kept = {cid for cid, r in before["changes"].items() if r[2] >= cutoff_us}
    assert set(after["changes"]) == kept, "exactly the records inside the window stay"
    for cid in kept:
        assert after["changes"][cid] == before["changes"][cid]
    assert after["symbols"] == {k: v for k, v in before["symbols"].items() if k[0] in kept}
    want = needed(before, kept)
    assert set(after["blobs"]) == want, "exactly the needed snapshots stay"
    for h in want:
        assert after["blobs"][h] == before["blobs"][h], "byte for byte"


def test_gc_keeps_the_window_byte_for_byte_and_nothing_older(url: str, tmp_path: Path) -> None:
    with Store(url) as store:
        fill(store, files=12, versions=40)  # every 6 h for 10 days
        before = snapshot(store)
        report = collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
        after = snapshot(store)
        check_consistent(store)
    cutoff = int(NOW.timestamp() * 1e6) - KEEP_US
    assert report.cutoff_us == cutoff
    check_after_gc(before, after, cutoff)
    assert report.records == len(before["changes"]) - len(after["changes"]) > 0
    assert report.symbol_rows == len(before["symbols"]) - len(after["symbols"]) > 0
    assert report.blobs == len(before["blobs"]) - len(after["blobs"]) > 0
    # A second collection at the same instant finds nothing more.
    with Store(url) as store:
        again = collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
    assert (again.records, again.blobs) == (0, 0)


def _add_blob(store: Store, digest: str, data: bytes, base: str | None) -> None:
    """A row as the delta writer stores it (`zdelta` against `base`)."""
    with store.engine.begin() as conn:
        conn.execute(text("INSERT INTO blobs (hash, size, \"binary\", codec, data, base) VALUES "
                          "(:h, :s, false, :c, :d, :b)"),
                     {"h": bytes.fromhex(digest), "s": len(data), "d": data,
                      "c": "zdelta" if base else "raw",
                      "b": None if base is None else bytes.fromhex(base)})  # fmt: skip


def test_the_base_closure_of_kept_snapshots_stays(url: str, tmp_path: Path) -> None:
    """A kept snapshot stored as a delta keeps its whole chain; a garbage chain goes whole."""
    with Store(url) as store:
        ws = fill(store, files=2, versions=40)
        a, b, c, d, e = (f"{ch}" * 40 for ch in "abcde")
        _add_blob(store, a, b"base of the chain", None)
        _add_blob(store, b, b"delta on a", a)
        _add_blob(store, c, b"delta on b", b)
        _add_blob(store, d, b"garbage base", None)
        _add_blob(store, e, b"garbage delta on d", d)
        change = FileChange(path="kept.py", old_path=None, timestamp=NOW, lines_added=1,
                            change_type=ChangeType.ADD, lines_removed=0, scope=Scope.IMPL,
                            language="python", new_hash=c)  # fmt: skip
        store.apply(ws, [Mutation(change=change)])
        before = snapshot(store)
        collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
        after = snapshot(store)
        check_consistent(store)
    check_after_gc(before, after, int(NOW.timestamp() * 1e6) - KEEP_US)
    assert {a, b, c} <= set(after["blobs"])
    assert not {d, e} & set(after["blobs"])


def test_an_active_readers_unread_records_stay_an_idle_readers_do_not(url: str,
                                                                     tmp_path: Path) -> None:
    """A named reader that moved within the window pins what it has not read (up to twice the
    window); one idle longer than the window pins nothing."""
    s = settings_for(url, tmp_path)
    with Store(url) as store:
        fill(store, files=3, versions=40)
        ids = [r[0] for r in rows(store, "SELECT id FROM changes ORDER BY ts_us, id")]
        at = ids[9]  # read up to the 10th record (day 0)
        txid = rows(store, "SELECT txid FROM changes WHERE id = :i", i=at)[0][0]
        now_us = int(NOW.timestamp() * 1e6)
        with store.engine.begin() as conn:
            conn.execute(text("INSERT INTO readers (name, cursor, updated_us) VALUES (:n, :c, :u)"),
                         {"n": "agent", "c": encode_cursor(Position(txid, at)),
                          "u": now_us - 3600_000_000})  # fmt: skip
        before = snapshot(store)
        collect(s, now=NOW.timestamp(), store=store)
        after = snapshot(store)
        floor = now_us - 2 * KEEP_US
        pinned = {cid for cid, r in before["changes"].items()
                  if r[2] >= now_us - KEEP_US or (r[2] >= floor and cid > at)}
        assert set(after["changes"]) == pinned
        assert any(before["changes"][cid][2] < now_us - KEEP_US for cid in pinned)
        check_consistent(store)
        # The reader goes idle: three days later its records are past 2 x keep or unpinned.
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE readers SET updated_us = :u"), {"u": floor - 1})
        collect(s, now=NOW.timestamp(), store=store)
        assert min(r[0] for r in rows(store, "SELECT ts_us FROM changes")) >= now_us - KEEP_US
        check_consistent(store)


def test_an_edit_intent_keeps_its_snapshot(url: str, tmp_path: Path) -> None:
    with Store(url) as store:
        ws = fill(store, files=2, versions=40)
        old = blob_id(content("pkg/m0.py", 0))  # garbage after gc but for the intent
        store.add_intents(ws, [("pkg/m0.py", old)], {"client": "t"})
        collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
        assert store.get_blob(old) == content("pkg/m0.py", 0)
        gone = blob_id(content("pkg/m1.py", 0))
        assert rows(store, "SELECT count(*) FROM blobs WHERE hash = :h",
                    h=bytes.fromhex(gone))[0][0] == 0  # fmt: skip


def test_gc_races_writers_that_bring_old_content_back(url: str, tmp_path: Path) -> None:
    """Writers keep recording files whose content returns to old versions (garbage by then)
    while collections run back to back: no record ever points at a snapshot gc deleted, and
    nothing inside the window is lost."""
    s = settings_for(url, tmp_path)
    with Store(url) as store:
        ws = fill(store, files=8, versions=40)
    stop = threading.Event()
    written: list[int] = []
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with Store(url) as w:
                current = {f"pkg/m{f}.py": blob_id(content(f"pkg/m{f}.py", 39)) for f in range(8)}
                n = 0
                while not stop.is_set() and n < 5000:  # until the collections are done
                    path = f"pkg/m{n % 8}.py"
                    blob = pack(content(path, (n // 8) % 5))  # back to days 0-1: garbage
                    change = FileChange(
                        path=path, old_path=None, timestamp=NOW, change_type=ChangeType.MODIFY,
                        lines_added=1, lines_removed=1, scope=Scope.IMPL, language="python",
                        old_hash=current[path], new_hash=blob.hash)  # fmt: skip
                    w.apply(ws, [Mutation(upserts=(FileState(path, blob.hash, blob.size, 1, 1),),
                                          blobs=(blob,), change=change)])  # fmt: skip
                    current[path] = blob.hash
                    written.append(n)
                    n += 1
        except BaseException as exc:
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    overlapped = 0
    try:
        while len(written) < 3:  # the writer is under way before the first collection
            assert writer.is_alive(), errors
            time.sleep(0.01)
        # Six collections at least, and on until the writer has recorded more than 20 changes
        # beside them: on a loaded machine the collections' locks may hold it back longer.
        collections, deadline = 0, time.monotonic() + 60
        while writer.is_alive() and (collections < 6 or len(written) <= 20) \
                and time.monotonic() < deadline:  # fmt: skip
            with Store(url) as g:
                collect(s, now=NOW.timestamp(), store=g)
            collections += 1
            overlapped += writer.is_alive()  # this collection ran beside the writer throughout
    finally:
        stop.set()
        writer.join(60)
    assert not errors, errors
    assert overlapped >= 1 and len(written) > 20
    with Store(url) as store:
        check_consistent(store)
        now_us = int(NOW.timestamp() * 1e6)
        kept = rows(store, "SELECT count(*) FROM changes WHERE ts_us = :t", t=now_us)[0][0]
        assert kept == len(written), "every record the writer made is there"
        for path, digest in rows(store, "SELECT path, blob_hash FROM files"):
            assert blob_id(store.get_blob(_hex(digest)) or b"") == _hex(digest), path


def test_shared_rows_no_record_uses_any_more_go(url: str, tmp_path: Path) -> None:
    """Where records share rows (revision 0006: a batch's provenance, the symbol names), the
    rows only collected records used go; the ones a kept record uses stay."""
    with Store(url) as store:
        ws = store.ensure_workspace("/w", "h")
        for day in range(10):
            change = FileChange(
                path="a.py", old_path=None, timestamp=T0 + timedelta(days=day),
                change_type=ChangeType.MODIFY, lines_added=1, lines_removed=1, scope=Scope.IMPL,
                language="python", origin_info={"day": day},
                symbols=(SymbolChange(f"only_day_{day}", "function", SymbolChangeType.MODIFIED,
                                      1, 2),
                         SymbolChange("shared", "function", SymbolChangeType.MODIFIED, 3, 4)))
            store.apply(ws.id, [Mutation(change=change)])  # fmt: skip
        collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
        names = {r[0] for r in rows(store, "SELECT name FROM symbol_names")}
        days = {json.loads(r[0])["day"] for r in rows(store, "SELECT origin_info FROM provenance")
                if r[0]}  # fmt: skip
        check_consistent(store)
    assert names == {"shared", *(f"only_day_{d}" for d in range(6, 10))}
    assert days == {6, 7, 8, 9}


def _garbage_after_records(store: Store) -> gc.Garbage:
    gc.delete_records(store.engine, before_us=int(NOW.timestamp() * 1e6) - KEEP_US)
    return gc.find_garbage(store.engine)


def _modify(path: str, old: str, new: str) -> FileChange:
    return FileChange(path=path, old_path=None, timestamp=NOW, change_type=ChangeType.MODIFY,
                      lines_added=1, lines_removed=1, scope=Scope.IMPL, language="python",
                      old_hash=old, new_hash=new)  # fmt: skip


def test_snapshots_needed_again_between_the_read_and_the_delete_stay(url: str) -> None:
    """Garbage when gc read it, then needed again before its delete — by a new record, a file
    state (a baseline writes no record), a delta stored against it, an edit intent: each stays;
    the rest goes."""
    with Store(url) as store:
        ws = fill(store, files=5, versions=40)
        garbage = _garbage_after_records(store)
        old = [blob_id(content(f"pkg/m{f}.py", 0)) for f in range(5)]
        assert set(old) <= {h for level in garbage.levels for h in level}
        current = blob_id(content("pkg/m0.py", 39))
        blob = pack(content("pkg/m0.py", 0))
        store.apply(ws, [Mutation(upserts=(FileState("pkg/m0.py", old[0], 1, 1, 1),),
                                  blobs=(blob,), change=_modify("pkg/m0.py", current, old[0]))])
        store.apply(ws, [Mutation(upserts=(FileState("new.py", old[1], 1, 1, 1),),
                                  blobs=(pack(content("pkg/m1.py", 0)),))])
        _add_blob(store, "f" * 40, b"a new delta", old[2])
        store.apply(ws, [Mutation(upserts=(FileState("new2.py", "f" * 40, 1, 1, 1),))])
        store.add_intents(ws, [("pkg/m3.py", old[3])], None)
        deleted = gc.delete_blobs(store.engine, garbage)
        assert deleted == garbage.count - 4
        present = {_hex(r[0]) for r in rows(store, "SELECT hash FROM blobs")}
        assert set(old[:4]) <= present and old[4] not in present
        check_consistent(store)


def test_a_writer_in_flight_holds_the_delete_back(url: str) -> None:
    """A writer that has stored a snapshot gc found garbage, and not yet committed its record:
    gc's batch waits for it (SQLite: the writer lock; PostgreSQL: the lock on blobs), then sees
    the record and keeps the snapshot."""
    from symdiff.store import tables
    from symdiff.store.changes import insert_change
    from symdiff.store.engine import insert_ignore

    with Store(url) as store:
        ws = fill(store, files=3, versions=40)
        garbage = _garbage_after_records(store)
        revived = pack(content("pkg/m0.py", 0))
        with store.engine.connect().execution_options(symdiff_write=True) as conn:
            tx = conn.begin()
            insert_ignore(conn, tables.blobs, [{"hash": revived.hash, "size": revived.size,
                                                "binary": False, "codec": revived.codec,
                                                "data": revived.data}], ["hash"])  # fmt: skip
            insert_change(conn, ws, _modify("pkg/m0.py", blob_id(content("pkg/m0.py", 39)),
                                            revived.hash))  # fmt: skip
            done: list[int] = []
            deleter = threading.Thread(target=lambda: done.append(
                gc.delete_blobs(store.engine, garbage)))  # fmt: skip
            deleter.start()
            deleter.join(1.0)
            assert deleter.is_alive(), "gc waited for the writer"
            tx.commit()
        deleter.join(30)
        assert done == [garbage.count - 1]
        assert store.get_blob(revived.hash) == content("pkg/m0.py", 0)
        check_consistent(store)


_GC_CHILD = """
import sys
from dataclasses import replace
from symdiff.config import Settings
from symdiff.record.retention import collect
from symdiff.store import gc
gc.RECORD_BATCH = gc.BLOB_BATCH = 100
gc.VACUUM_STEP_PAGES = 16
from contextlib import contextmanager
plain_write = gc._write
@contextmanager
def announced_write(engine, held):  # each writer transaction says so as it begins
    print("batch", flush=True)
    with plain_write(engine, held) as conn:
        yield conn
gc._write = announced_write
from symdiff.store import Store
s = replace(Settings.resolve(sys.argv[1], db=sys.argv[2]), keep_us=int(sys.argv[3]))
store = Store(s.db_url)
print("started", flush=True)
collect(s, now=float(sys.argv[4]), store=store)
print("done", flush=True)
"""


@pytest.mark.scale
def test_gc_killed_with_sigkill_at_any_moment_loses_nothing(tmp_path: Path, url: str) -> None:
    """A real gc process on a sizable database, killed with SIGKILL at several moments; after
    each, the database is consistent and every record inside the window is there; a final
    collection then completes the job."""
    with Store(url) as store:
        fill(store, files=60 if url.startswith("sqlite") else 30, versions=40)  # 2,400 / 1,200
        before = snapshot(store)
    cutoff = int(NOW.timestamp() * 1e6) - KEEP_US
    args = [sys.executable, "-c", _GC_CHILD, str(tmp_path), url, str(KEEP_US),
            str(NOW.timestamp())]  # fmt: skip
    old_total = sum(1 for r in before["changes"].values() if r[2] < cutoff)
    keep_blobs = len(needed(before, {c for c, r in before["changes"].items() if r[2] >= cutoff}))
    kills = partial = 0
    # Each round kills the child as its n-th writer transaction begins (plus a few ms), so the
    # kill lands inside a batch however fast or loaded the machine is; the rounds before it
    # leave the later ones less to do.
    for n, delay in ((3, 0.0), (1, 0.0), (2, 0.004), (4, 0.001), (2, 0.01)):
        child = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        seen = 0
        while seen < n and (line := child.stdout.readline()) not in ("", "done\n"):
            seen += line == "batch\n"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        out = child.communicate(timeout=30)[0]
        kills += seen == n and "done" not in out
        with Store(url) as store:
            check_consistent(store)
            mid = snapshot(store)
        old_left = sum(1 for r in mid["changes"].values() if r[2] < cutoff)
        partial += 0 < old_left < old_total or (old_left == 0 and len(mid["blobs"]) > keep_blobs)
        for cid, row in before["changes"].items():
            if row[2] >= cutoff:
                assert mid["changes"].get(cid) == row
        for h in needed(before, {c for c, r in before["changes"].items() if r[2] >= cutoff}):
            assert mid["blobs"][h] == before["blobs"][h]
    assert kills >= 2 and partial >= 1, "kills landed mid-collection"
    with Store(url) as store:
        collect(settings_for(url, tmp_path), now=NOW.timestamp(), store=store)
        check_after_gc(before, snapshot(store), cutoff)


def test_sqlite_gives_the_room_back_in_small_steps(tmp_path: Path, sqlite_url: str) -> None:
    with Store(sqlite_url) as store:
        fill(store, files=40, versions=40)
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2  # incremental
            pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        report = collect(settings_for(sqlite_url, tmp_path), now=NOW.timestamp(), store=store)
        with store.engine.connect() as conn:
            after = conn.exec_driver_sql("PRAGMA page_count").scalar()
            assert conn.exec_driver_sql("PRAGMA freelist_count").scalar() == 0
    assert report.vacuum == "incremental" and report.pages_freed > 0
    assert pages is not None and after is not None and after < pages * 0.75


def test_a_database_made_before_incremental_vacuum_is_switched_by_the_cli(tmp_path: Path,
                                                                         sqlite_url: str) -> None:
    """`symdiff db gc` converts a database whose auto_vacuum is off with one
    VACUUM; the daemon's collection leaves freed pages for reuse instead."""
    with Store(sqlite_url) as store:
        fill(store, files=30, versions=40, start=datetime.now(UTC) - timedelta(days=10))
        raw = store.engine.raw_connection()
        db = raw.driver_connection
        assert db is not None
        db.execute("PRAGMA auto_vacuum=NONE")
        db.execute("VACUUM")
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
        raw.close()
        daemonish = collect(settings_for(sqlite_url, tmp_path, keep_us=8 * 86400_000_000),
                            store=store)  # fmt: skip
        assert daemonish.vacuum == "reused" and daemonish.records > 0
    done = symdiff_cli("db", "gc", "--db", sqlite_url, "--keep", "96h", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["vacuum"] == "converted" and report["records"] > 0
    assert report["size_after"] < report["size_before"]
    with Store(sqlite_url) as store:
        check_consistent(store)
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2
    again = symdiff_cli("db", "gc", "--db", sqlite_url, "--keep", "96h")
    assert again.returncode == 0 and again.stdout.startswith("collected 0 records")
    bad = symdiff_cli("db", "gc", "--db", sqlite_url, "--keep", "7d")
    assert bad.returncode == 2 and "keep: time: unknown unit" in bad.stderr


def test_keep_is_resolved_like_every_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYMDIFF_KEEP", raising=False)
    assert Settings.resolve().keep_us == 2160 * 3600 * 10**6
    monkeypatch.setenv("SYMDIFF_KEEP", "720h")
    assert Settings.resolve().keep_us == 720 * 3600 * 10**6
    assert Settings.resolve(keep="1000h").keep_us == 1000 * 3600 * 10**6
    with pytest.raises(InvalidArgs, match="at least 1h"):
        Settings.resolve(keep="30m")
    monkeypatch.setenv("SYMDIFF_KEEP", "-5h")
    with pytest.raises(InvalidArgs, match="SYMDIFF_KEEP"):
        Settings.resolve()


def test_overdue_is_the_oldest_record_past_the_window_and_a_day() -> None:
    keep, day = KEEP_US, int(DAY_S * 1e6)
    now = 100 * day
    assert not overdue(None, now, keep)
    assert not overdue(now - keep - day + 1, now, keep)
    assert overdue(now - keep - day - 1, now, keep)


def test_the_collector_runs_at_start_when_overdue_then_every_period(sqlite_url: str,
                                                                   tmp_path: Path) -> None:
    s = settings_for(sqlite_url, tmp_path)
    with Store(sqlite_url) as store:
        fill(store, files=2, versions=40)
    not_yet = T0 + timedelta(days=5)  # the oldest record is not overdue yet
    # Not overdue at start: it reads the clock, decides, and (stopped) its thread ends having
    # collected nothing. The stop joins the thread, so a collection at start would be in runs.
    read = threading.Event()

    def clock() -> datetime:
        read.set()
        return not_yet

    idle = Collector(s, clock=clock, period_s=3600)
    idle.start()
    assert read.wait(30), "the collector never read the clock"
    idle.stop(30)
    assert not idle._thread.is_alive() and idle.runs == []
    # Not overdue at start either, then the clock passes the window: the next period collects.
    now, first = [not_yet], threading.Event()

    def moving() -> datetime:
        value = now[0]
        first.set()
        return value

    periodic = Collector(s, clock=moving, period_s=0.2)
    periodic.start()
    assert first.wait(30), "the collector never read the clock"
    now[0] = NOW
    wait_until(lambda: periodic.runs, timeout=10, message="a periodic collection")
    periodic.stop(10)
    assert periodic.runs[0].records > 0
    overdue_one = Collector(s, clock=lambda: NOW + timedelta(days=30),
                            period_s=3600)  # fmt: skip
    overdue_one.start()
    wait_until(lambda: overdue_one.runs, timeout=10, message="the collection at start")
    overdue_one.stop(10)
    assert [r.records for r in overdue_one.runs] == [32]  # days 6-10 of 2 files, every 6 h


def test_the_daemon_collects_an_overdue_database_at_start(tmp_path: Path) -> None:
    from symdiff.record.daemon import Daemon

    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    s = replace(Settings.resolve(root), keep_us=KEEP_US)
    with Store(s.db_url) as store:
        fill(store, files=3, versions=4, start=datetime.now(UTC) - timedelta(days=30),
             root="/elsewhere")  # fmt: skip
        assert store.count_changes(1) == 12
    daemon = Daemon(s)
    thread = threading.Thread(target=daemon.run, daemon=True)
    thread.start()
    try:
        assert daemon.ready.wait(30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with Store(s.db_url) as store:
                if store.count_changes(1) == 0:
                    break
            time.sleep(0.05)
    finally:
        daemon.stop()
        thread.join(30)
    with Store(s.db_url) as store:
        assert store.count_changes(1) == 0
        check_consistent(store)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0004_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    """0005 adds the partial index on blobs.base in place: rows written at 0004 read back."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0004")
    with engine.begin() as conn:
        for digest, base in (("a" * 40, None), ("b" * 40, "a" * 40)):
            conn.execute(text("INSERT INTO blobs (hash, size, \"binary\", codec, data, base) "
                              "VALUES (:h, 3, false, 'raw', :d, :b)"),
                         {"h": digest, "d": b"abc", "b": base})  # fmt: skip
    engine.dispose()
    with Store(url) as store:
        assert store.revision() == HEAD
        assert rows(store, "SELECT hash FROM blobs WHERE base = :a",
                    a=bytes.fromhex("a" * 40)) == [(bytes.fromhex("b" * 40),)]  # 0007
        assert store.get_blob("a" * 40) == b"abc"
        from sqlalchemy import inspect

        names = {ix["name"] for ix in inspect(store.engine).get_indexes("blobs")}
        assert "ix_blobs_base" in names
    if backend == "sqlite":
        assert os.path.exists(url.removeprefix("sqlite:///"))
