"""Cursors, named readers and the origin/path filters of the diff query, on SQLite and
PostgreSQL, with real concurrent writers."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.model import ChangeType, FileChange, Origin, Scope
from symdiff.query.answer import DiffQuery, diff
from symdiff.store import Mutation, Store
from symdiff.store.kept import close_all

HOST = "host-c"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, sqlite_url: str) -> str:
    Path(sqlite_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return sqlite_url if request.param == "sqlite" else str(request.getfixturevalue("pg_head_url"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r.resolve()


def change(path: str, *, origin: Origin = Origin.WATCH, scope: Scope = Scope.IMPL,
           ago: timedelta = timedelta(0)) -> FileChange:  # fmt: skip
    return FileChange(path=path, old_path=None, timestamp=datetime.now(UTC) - ago,
                      change_type=ChangeType.MODIFY, lines_added=1, lines_removed=0,
                      scope=scope, language=None, origin=origin)  # fmt: skip


def write(store: Store, ws_id: int, changes: list[FileChange]) -> None:
    store.apply(ws_id, [Mutation(change=c) for c in changes])


def test_cursor_pages_read_every_record_once_while_writers_write(url: str, root: Path) -> None:
    """2,000 changes from three concurrent writers (three workspaces, so on PostgreSQL their
    transactions overlap and commit out of id order) while a reader pages with limit 50."""
    with Store(url) as setup:
        ids = [setup.ensure_workspace(str(root / f"w{k}"), HOST).id for k in range(3)]
    per_writer = [667, 667, 666]
    done = threading.Event()
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        rng = random.Random(k)
        try:
            with Store(url) as store:
                j = 0
                while j < per_writer[k]:
                    n = min(rng.randint(1, 9), per_writer[k] - j)
                    write(store, ids[k], [change(f"w{k}/f{j + i}.py") for i in range(n)])
                    j += n
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for th in threads:
        th.start()
    settings = Settings(root=root, db_url=url, host=HOST)
    seen: list[str] = []
    cursor: str | None = None
    end = float("inf")
    with Store(url, read_only=True) as store:
        first = diff(settings, DiffQuery(workspace="all", scope="all", limit=1), store=store)
        assert first.records == [] or len(first.records) == 1
        cursor = "c1.LTE6MA"  # the position before every record: (-1, 0)
        while True:
            finished = done.is_set()
            answer = diff(settings, DiffQuery(cursor=cursor, workspace="all", scope="all",
                                              limit=50), store=store)  # fmt: skip
            assert len(answer.records) <= 50
            seen.extend(r["path"] for r in answer.records)
            cursor = answer.cursor
            # On PostgreSQL a transaction open anywhere on the server (another test's) holds
            # the newest records back from a page (docs/query.md: late, never lost): once the
            # writers are done, page on until every record came, or the deadline.
            if finished and not answer.more and (len(seen) >= 2000 or time.monotonic() > end):
                break
            if not any(th.is_alive() for th in threads) and not done.is_set():
                done.set()
                end = time.monotonic() + 60
            if finished and not answer.records:
                time.sleep(0.05)
    for th in threads:
        th.join()
    assert errors == []
    expected = {f"w{k}/f{j}.py" for k in range(3) for j in range(per_writer[k])}
    assert len(seen) == len(expected) == 2000  # no record twice
    assert set(seen) == expected  # and none missed
    for k in range(3):  # each writer's records arrive in the order it wrote them
        mine = [int(p.split("/f")[1].removesuffix(".py")) for p in seen if p.startswith(f"w{k}/")]
        assert mine == sorted(mine)
    # Nothing new: the last cursor answers nothing and keeps its place.
    with Store(url, read_only=True) as store:
        again = diff(settings, DiffQuery(cursor=cursor, workspace="all", scope="all"),
                     store=store)  # fmt: skip
    assert again.records == [] and not again.more and again.cursor == cursor


def test_a_since_answer_gives_a_cursor_to_what_comes_next(url: str, root: Path) -> None:
    with Store(url) as store:
        ws = store.ensure_workspace(str(root), HOST).id
        write(store, ws, [change("a.py"), change("b.py")])
        settings = Settings(root=root, db_url=url, host=HOST)
        answer = diff(settings, DiffQuery(), store=store)
        assert [r["path"] for r in answer.records] == ["b.py", "a.py"]  # newest first
        assert not answer.more
        write(store, ws, [change("c.py"), change("d.py"), change("e.py")])
        # On PostgreSQL a cursor reads only rows below every open transaction's id, in any
        # database of the server (docs/query.md): another test's transaction may hold them back
        # for a moment. They come, in order, once it ends.
        deadline = time.monotonic() + 30
        while True:
            page1 = diff(settings, DiffQuery(cursor=answer.cursor, limit=2), store=store)
            if page1.records or time.monotonic() > deadline:
                break
            assert page1.cursor == answer.cursor and not page1.more
            time.sleep(0.05)
        assert [r["path"] for r in page1.records] == ["c.py", "d.py"]  # oldest first
        assert page1.more
        page2 = diff(settings, DiffQuery(cursor=page1.cursor, limit=2), store=store)
        assert [r["path"] for r in page2.records] == ["e.py"] and not page2.more
        more = diff(settings, DiffQuery(limit=3), store=store)
        assert more.more and len(more.records) == 3


def test_origin_and_path_filters_apply_before_the_limit(url: str, root: Path) -> None:
    with Store(url) as store:
        ws = store.ensure_workspace(str(root), HOST).id
        batch = [change(f"src/auth/m{i}.py", origin=Origin.WATCH) for i in range(3)]
        batch += [change(f"vendor/lib{i}.go", origin=Origin.GIT) for i in range(30)]
        batch += [change("src/main.go", origin=Origin.SCAN), change("cmd/x.go", origin=Origin.EDIT)]
        write(store, ws, batch)
        settings = Settings(root=root, db_url=url, host=HOST)

        def paths(**kw: object) -> list[str]:
            return [r["path"] for r in diff(settings, DiffQuery(**kw), store=store).records]  # type: ignore[arg-type]

        assert paths(origin="watch", limit=3) == [f"src/auth/m{i}.py" for i in (2, 1, 0)]
        assert paths(origin=["scan", "edit"], limit=2) == ["cmd/x.go", "src/main.go"]
        assert paths(path="src/auth/**", limit=5) == [f"src/auth/m{i}.py" for i in (2, 1, 0)]
        assert paths(path=["*.go", "!vendor/"], limit=2) == ["cmd/x.go", "src/main.go"]
        assert paths(path="!vendor/", limit=4) == ["cmd/x.go", "src/main.go", "src/auth/m2.py",
                                                   "src/auth/m1.py"]  # fmt: skip
        assert paths(path=["vendor/", "!vendor/lib1*"], origin="git", limit=50) == [
            f"vendor/lib{i}.go" for i in reversed(range(30)) if not str(i).startswith("1")]
        for bad, message in [({"origin": "robot"}, "origin must be one of"),
                             ({"origin": []}, "origin must be one of"),
                             ({"path": ""}, "path must be"), ({"path": 5}, "path must be"),
                             ({"cursor": "nope"}, "cursor must be a cursor string"),
                             ({"reader": "a b"}, "reader must be a name"),
                             ({"reader": "r", "cursor": "c1.LTE6MA"}, "not both")]:
            with pytest.raises(InvalidArgs, match=message):
                diff(settings, DiffQuery(**bad), store=store)  # type: ignore[arg-type]


def test_named_readers_advance_independently_and_outlive_the_process(url: str,
                                                                     root: Path) -> None:
    settings = Settings(root=root, db_url=url, host=HOST)
    with Store(url) as store:
        ws = store.ensure_workspace(str(root), HOST).id
        write(store, ws, [change("old.py", ago=timedelta(hours=30)), change("a.py")])

    def read(name: str, **kw: object) -> list[str]:
        answer = diff(settings, DiffQuery(reader=name, **kw))  # type: ignore[arg-type]
        return [r["path"] for r in answer.records]

    assert read("agent-1") == ["a.py"]  # a new reader starts within `since`, oldest first
    assert read("agent-1") == []  # and never sees a record twice
    with Store(url) as store:
        write(store, ws, [change("b.py"), change("c.py")])
    assert read("agent-1", limit=1) == ["b.py"]
    assert read("agent-2", since="48h") == ["old.py", "a.py", "b.py", "c.py"]
    close_all()  # the server restarts: the cursors are in the database
    assert read("agent-1") == ["c.py"]
    assert read("agent-2") == []


def test_a_query_before_anything_is_indexed_gives_a_cursor_from_the_start(root: Path) -> None:
    settings = Settings(root=root, db_url=f"sqlite:///{root}/.symdiff/index.db", host=HOST)
    answer = diff(settings)
    assert answer.records == [] and answer.cursor and not answer.more
    assert not (root / ".symdiff").exists()
