"""The diff query's rules on a real store with a known history (SQLite, and PostgreSQL)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from symdiff.config import Settings
from symdiff.errors import DurationError, InvalidArgs
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.query.answer import DiffQuery, diff
from symdiff.query.args import normalize_limit, normalize_scope, normalize_since
from symdiff.records import ChangeRecord
from symdiff.store import Mutation, Store
from symdiff.store.blobs import pack

NOW = datetime(2026, 11, 22, 12, 0, 0, 123456, tzinfo=UTC)
HOST = "host-a"


def add_change(
    store: Store,
    ws_id: int,
    path: str,
    *,
    ago: timedelta,
    scope: Scope = Scope.IMPL,
    kind: ChangeType = ChangeType.MODIFY,
    old: bytes | None = None,
    new: bytes | None = None,
    old_path: str | None = None,
    symbols: tuple[SymbolChange, ...] = (),
) -> None:
    """Record one change, with its snapshots when given."""
    blobs = tuple(pack(b) for b in (old, new) if b is not None)
    change = FileChange(
        path=path, old_path=old_path, timestamp=NOW - ago, change_type=kind,
        lines_added=1, lines_removed=0, scope=scope, language="python", symbols=symbols,
        old_hash=None if old is None else blobs[0].hash,
        new_hash=None if new is None else blobs[-1].hash,
    )
    store.apply(ws_id, [Mutation(blobs=blobs, change=change)])


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, sqlite_url: str) -> Iterator[Store]:
    """An empty, migrated store on SQLite and on PostgreSQL."""
    Path(sqlite_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    url = sqlite_url if request.param == "sqlite" else request.getfixturevalue("pg_head_url")
    with Store(url) as s:
        yield s


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r.resolve()


def run(store: Store, root: Path, **kwargs: object) -> list[ChangeRecord]:
    settings = Settings(root=root, db_url="sqlite://", host=HOST)
    return diff(settings, DiffQuery(**kwargs), store=store, now=NOW).records  # type: ignore[arg-type]


def paths(records: list[ChangeRecord]) -> list[object]:
    return [r["path"] for r in records]


def test_newest_first_within_the_window(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    for path, hours in [("b.py", 5), ("a.py", 1), ("old.py", 25), ("c.py", 23.9)]:
        add_change(store, ws.id, path, ago=timedelta(hours=hours))
    assert paths(run(store, root)) == ["a.py", "b.py", "c.py"]
    assert paths(run(store, root, since="2h")) == ["a.py"]
    assert paths(run(store, root, since="30h")) == ["a.py", "b.py", "c.py", "old.py"]


def test_since_is_clamped_to_720h(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    add_change(store, ws.id, "month.py", ago=timedelta(hours=719))
    add_change(store, ws.id, "ancient.py", ago=timedelta(hours=721))
    assert paths(run(store, root, since="720h")) == ["month.py"]
    assert paths(run(store, root, since="100000h")) == ["month.py"]
    assert paths(run(store, root, since="2562047h")) == ["month.py"]


def test_scope_filters_before_the_limit(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    for i in range(3):  # older test changes
        add_change(store, ws.id, f"tests/test_{i}.py", ago=timedelta(hours=10 + i),
                   scope=Scope.TEST)
    for i in range(10):  # newer impl changes
        add_change(store, ws.id, f"src/m{i}.py", ago=timedelta(minutes=10 + i))
    tests = run(store, root, scope="test", limit=2)
    assert paths(tests) == ["tests/test_0.py", "tests/test_1.py"]
    assert len(run(store, root, scope="test", limit=5)) == 3
    assert {r["scope"] for r in run(store, root, scope="all", limit=500)} == {"impl", "test"}
    assert len(run(store, root, scope="all", limit=500)) == 13
    assert len(run(store, root)) == 10  # default scope impl
    assert paths(run(store, root, scope="all", limit=1)) == ["src/m0.py"]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(10, 10), (1, 1), (500, 60), (0, 50), (501, 50), (-3, 50), (2.5, 50), ("ten", 50),
     (None, 50), (True, 50), ([], 50), ("10", 10), (10.0, 10), (" 10", 50), ("1e1", 50)],
)
def test_limit_rules(store: Store, root: Path, limit: object, expected: int) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    store.apply(ws.id, [Mutation(change=FileChange(
        path=f"f{i}.py", old_path=None, timestamp=NOW - timedelta(seconds=i),
        change_type=ChangeType.MODIFY, lines_added=1, lines_removed=1, scope=Scope.IMPL,
        language="python")) for i in range(60)])
    records = run(store, root, limit=limit)
    assert len(records) == expected
    assert records[0]["path"] == "f0.py"


def test_record_shape_and_symbols_as_objects(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    symbols = (
        SymbolChange("Session", "class", SymbolChangeType.MODIFIED, 3, 60),
        SymbolChange("Session.refresh", "method", SymbolChangeType.SIGNATURE_CHANGED, 40, 58),
        SymbolChange("new_name", "function", SymbolChangeType.ADDED, 70, 75,
                     renamed_from="old_name"),
    )
    add_change(store, ws.id, "src/auth/session.py", ago=timedelta(minutes=1), symbols=symbols)
    [record] = run(store, root)
    assert record == {
        "path": "src/auth/session.py",
        "old_path": None,
        "timestamp": "2026-11-22T11:59:00.123456Z",
        "change_type": "modify",
        "lines_added": 1,
        "lines_removed": 0,
        "scope": "impl",
        "language": "python",
        "symbols": [
            {"name": "Session", "kind": "class", "change_type": "modified",
             "start_line": 3, "end_line": 60},
            {"name": "Session.refresh", "kind": "method", "change_type": "signature_changed",
             "start_line": 40, "end_line": 58},
            {"name": "new_name", "kind": "function", "change_type": "added",
             "start_line": 70, "end_line": 75, "renamed_from": "old_name"},
        ],
        "origin": "scan",
        "origin_info": None,
        "git": None,
    }


@pytest.mark.parametrize(
    ("since", "message"),
    [
        ("1 day", 'since: time: unknown unit " day" in duration "1 day"'),
        ("7d", 'since: time: unknown unit "d" in duration "7d"'),
        ("24", 'since: time: missing unit in duration "24"'),
        ("", 'since: time: invalid duration ""'),
        ("-1h", 'since must not be negative, got "-1h"'),
        (24, "since must be a string, got 24"),
    ],
)
def test_since_errors(store: Store, root: Path, since: object, message: str) -> None:
    with pytest.raises(InvalidArgs) as info:
        run(store, root, since=since)
    assert info.value.render().startswith(f"invalid_args: {message}")


def test_since_zero_and_none() -> None:
    assert normalize_since("0") == 0
    assert normalize_since("-0s") == 0
    assert normalize_since(None) == 24 * 3600 * 10**9
    assert normalize_since("1.5h") == 90 * 60 * 10**9
    with pytest.raises(DurationError):
        normalize_since("1w")


def test_scope_rules() -> None:
    assert normalize_scope("impl") is Scope.IMPL
    assert normalize_scope("test") is Scope.TEST
    assert normalize_scope("all") is None
    assert normalize_scope(None) is Scope.IMPL
    for bad in ("IMPL", "tests", "", 1, ["impl"]):
        with pytest.raises(InvalidArgs, match='scope must be "impl", "test" or "all"'):
            normalize_scope(bad)


def test_limit_helper_is_total() -> None:
    assert normalize_limit(float("nan")) == 50
    assert normalize_limit(float("inf")) == 50
    assert normalize_limit(10**30) == 50
    assert normalize_limit({"n": 3}) == 50


def test_errors_come_before_database_work(root: Path) -> None:
    nowhere = Settings(root=root, db_url=f"sqlite:///{root}/missing/index.db", host=HOST)
    with pytest.raises(InvalidArgs, match="scope"):
        diff(nowhere, DiffQuery(scope="docs"))
    for bad in (5, "", "a\0b"):
        with pytest.raises(InvalidArgs, match="workspace must be"):
            diff(nowhere, DiffQuery(workspace=bad))  # type: ignore[arg-type]
    assert diff(nowhere).records == []
    assert not (root / "missing").exists()


def test_workspaces(store: Store, root: Path, tmp_path: Path) -> None:
    other_root = (tmp_path / "other").resolve()
    mine = store.ensure_workspace(str(root), HOST)
    theirs = store.ensure_workspace(str(other_root), HOST)
    remote = store.ensure_workspace(str(root), "host-b")
    add_change(store, mine.id, "mine.py", ago=timedelta(minutes=1))
    add_change(store, theirs.id, "theirs.py", ago=timedelta(minutes=2))
    add_change(store, remote.id, "remote.py", ago=timedelta(minutes=3))
    assert paths(run(store, root)) == ["mine.py"]
    sub = root / "src" / "deep"
    assert paths(run(store, sub)) == ["mine.py"]  # the workspace whose root you are in
    assert paths(run(store, root, workspace="all")) == ["mine.py", "theirs.py", "remote.py"]
    # An answer that may span workspaces says where each change happened; one that cannot
    # keeps docs/spec.md's record shape.
    assert [r.get("workspace") for r in run(store, root, workspace="all")] == [
        str(root), str(other_root), str(root)]
    assert "workspace" not in run(store, root)[0]
    assert paths(run(store, root, workspace=str(other_root))) == ["theirs.py"]
    assert paths(run(store, root, workspace=str(root))) == ["mine.py", "remote.py"]
    assert run(store, tmp_path / "nowhere") == []
    with pytest.raises(InvalidArgs, match="no workspace is rooted at"):
        run(store, root, workspace=str(tmp_path / "nowhere"))


def _git_apply(root: Path, patch: str) -> None:
    # The ACP patch carries absolute paths (the schema's rule): -p0 with --unsafe-paths.
    subprocess.run(["git", "apply", "--unsafe-paths", "-p0", "-"], cwd=root,
                   input=patch.encode(), check=True, capture_output=True)


def test_include_patch_rebuilds_an_applicable_git_patch(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    old = b"def f():\n    return 1\n\n\ndef g():\n    pass\n"
    new = b"def f():\n    return 2\n\n\ndef g():\n    pass\n"
    add_change(store, ws.id, "pkg/mod.py", ago=timedelta(minutes=3), old=old, new=new)
    add_change(store, ws.id, "pkg/new.py", ago=timedelta(minutes=2), kind=ChangeType.ADD,
               new=b"x = 1\n")
    add_change(store, ws.id, "pkg/gone.py", ago=timedelta(minutes=1), kind=ChangeType.DELETE,
               old=b"y = 2\n")
    records = run(store, root, include_patch=True)
    assert [r["acp"]["changes"][0]["operation"] for r in records] == [  # type: ignore[index]
        "delete", "add", "modify"]
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_bytes(old)
    (root / "pkg" / "gone.py").write_bytes(b"y = 2\n")
    for r in reversed(records):
        acp = r["acp"]
        assert isinstance(acp, dict)
        assert acp["changes"][0]["path"] == str(root / str(r["path"]))
        _git_apply(root, acp["patch"]["text"])
    assert (root / "pkg" / "mod.py").read_bytes() == new
    assert (root / "pkg" / "new.py").read_bytes() == b"x = 1\n"
    assert not (root / "pkg" / "gone.py").exists()
    assert "acp" not in run(store, root)[0]


def test_include_patch_for_a_rename(store: Store, root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    body = b"a = 1\n"
    add_change(store, ws.id, "new.py", ago=timedelta(minutes=1), kind=ChangeType.RENAME,
               old=body, new=body + b"b = 2\n", old_path="old.py")
    [record] = run(store, root, include_patch=True)
    acp = record["acp"]
    assert isinstance(acp, dict)
    assert acp["changes"] == [{"operation": "move", "path": str(root / "new.py"),
                               "oldPath": str(root / "old.py"), "fileType": "text",
                               "mimeType": "text/x-python"}]
    (root / "old.py").write_bytes(body)
    _git_apply(root, acp["patch"]["text"])
    assert (root / "new.py").read_bytes() == body + b"b = 2\n"
    assert not (root / "old.py").exists()


def test_git_patches_are_relative_and_plain_git_apply_takes_them(store: Store,
                                                                root: Path) -> None:
    """A person's patches: `a/` `b/` and paths relative to the root, as `git diff` writes them,
    beside ACP objects that keep their absolute paths."""
    ws = store.ensure_workspace(str(root), HOST)
    old = b"def f():\n    return 1\n"
    new = b"def f():\n    return 2\n"
    add_change(store, ws.id, "pkg/mod.py", ago=timedelta(minutes=4), old=old, new=new)
    add_change(store, ws.id, "pkg/new.py", ago=timedelta(minutes=3), kind=ChangeType.ADD,
               new=b"x = 1\n")
    add_change(store, ws.id, "pkg/gone.py", ago=timedelta(minutes=2), kind=ChangeType.DELETE,
               old=b"y = 2\n")
    add_change(store, ws.id, "b.py", ago=timedelta(minutes=1), kind=ChangeType.RENAME,
               old=b"a = 1\n", new=b"a = 1\nb = 2\n", old_path="a.py")
    settings = Settings(root=root, db_url="sqlite://", host=HOST)
    answer = diff(settings, DiffQuery(include_patch=True), store=store, now=NOW,
                  git_patches=True)
    assert len(answer.patches) == len(answer.records) == 4
    assert answer.patches[0].startswith("diff --git a/a.py b/b.py\n")
    assert "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n" in answer.patches[3]
    assert all(str(root) not in p for p in answer.patches)
    assert answer.records[3]["acp"]["patch"]["text"].startswith(  # type: ignore[index]
        f"diff --git {root}/pkg/mod.py ")
    assert diff(settings, DiffQuery(), store=store, now=NOW).patches == ()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_bytes(old)
    (root / "pkg" / "gone.py").write_bytes(b"y = 2\n")
    (root / "a.py").write_bytes(b"a = 1\n")
    subprocess.run(["git", "apply", "-"], cwd=root, check=True, capture_output=True,
                   input="".join(reversed(answer.patches)).encode())  # oldest first
    assert (root / "pkg" / "mod.py").read_bytes() == new
    assert (root / "pkg" / "new.py").read_bytes() == b"x = 1\n"
    assert not (root / "pkg" / "gone.py").exists() and not (root / "a.py").exists()
    assert (root / "b.py").read_bytes() == b"a = 1\nb = 2\n"


def test_explain_counts_what_the_scope_hid_with_the_other_filters(store: Store,
                                                                 root: Path) -> None:
    ws = store.ensure_workspace(str(root), HOST)
    for path, minutes, scope in [("a.py", 1, Scope.IMPL), ("tests/t1.py", 2, Scope.TEST),
                                 ("tests/t2.py", 3, Scope.TEST), ("tests/old.py", 3000,
                                                                  Scope.TEST)]:
        add_change(store, ws.id, path, ago=timedelta(minutes=minutes), scope=scope)
    settings = Settings(root=root, db_url="sqlite://", host=HOST)

    def ask(**kwargs: object) -> int:
        answer = diff(settings, DiffQuery(**kwargs), store=store, now=NOW,  # type: ignore[arg-type]
                      explain=True)
        return answer.hidden

    assert ask() == 2  # the old one is outside the window
    assert ask(since="72h") == 3
    assert ask(path="tests/t1.py") == 1
    assert ask(scope="test") == 1
    assert ask(scope="all") == 0
    assert ask(limit=1) == 0  # a full answer: not counted
    assert diff(settings, DiffQuery(), store=store, now=NOW).hidden == 0  # only when asked
    # On PostgreSQL a cursor sees only what lies below the oldest transaction running anywhere
    # on the server (other tests' too): wait until all four are, then until the fifth is.
    everything = DiffQuery(scope="all", cursor="c1.LTE6MA", limit=500, since="720h")
    _eventually(lambda: len(diff(settings, everything, store=store, now=NOW).records) == 4)
    first = diff(settings, DiffQuery(scope="all", limit=2), store=store, now=NOW)
    assert ask(cursor=first.cursor) == 0  # nothing after it
    add_change(store, ws.id, "tests/t3.py", ago=timedelta(seconds=1), scope=Scope.TEST)
    _eventually(lambda: ask(cursor=first.cursor) == 1)


def _eventually(cond: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_explain_says_up_to_when_an_unwatched_index_is_current(store: Store, root: Path) -> None:
    settings = Settings(root=root, db_url="sqlite://", host=HOST)
    answer = diff(settings, DiffQuery(), store=store, now=NOW, explain=True)
    assert not answer.indexed and not answer.watched and answer.recorded_until is None
    ws = store.ensure_workspace(str(root), HOST)
    answer = diff(settings, DiffQuery(), store=store, now=NOW, explain=True)
    assert answer.indexed and answer.recorded_until is None  # indexed, nothing recorded yet
    add_change(store, ws.id, "tests/t.py", ago=timedelta(hours=30), scope=Scope.TEST)
    answer = diff(settings, DiffQuery(), store=store, now=NOW, explain=True)
    assert answer.recorded_until == "2026-11-21T06:00:00.123456Z"  # any scope, any age
    (root / ".symdiff").mkdir()
    (root / ".symdiff" / "daemon.json").write_text(
        '{"last_reconcile": "2026-11-22T11:00:00.000000Z"}')  # a daemon that ran since
    answer = diff(settings, DiffQuery(), store=store, now=NOW, explain=True)
    assert answer.recorded_until == "2026-11-22T11:00:00.000000Z"


def test_settings_source_never_creates_a_database(tmp_path: Path, root: Path) -> None:
    settings = Settings.resolve(root, host=HOST)
    assert diff(settings).records == []
    assert not (root / ".symdiff").exists()


def test_settings_source_reads_the_workspace_database(sqlite_url: str, root: Path) -> None:
    Path(sqlite_url.removeprefix("sqlite:///")).parent.mkdir(parents=True)
    with Store(sqlite_url) as s:
        ws = s.ensure_workspace(str(root), HOST)
        add_change(s, ws.id, "x.py", ago=timedelta(minutes=5))
    settings = Settings.resolve(root, db=sqlite_url, host=HOST)
    assert paths(diff(settings, now=NOW).records) == ["x.py"]
    assert paths(diff(settings, now=NOW + timedelta(hours=25)).records) == []


def test_the_query_keeps_its_reader_open_and_reopens_a_replaced_file(sqlite_url: str,
                                                                     root: Path) -> None:
    from symdiff.store.kept import reader

    db = Path(sqlite_url.removeprefix("sqlite:///"))
    db.parent.mkdir(parents=True)
    with Store(sqlite_url) as s:
        add_change(s, s.ensure_workspace(str(root), HOST).id, "x.py", ago=timedelta(minutes=5))
    settings = Settings.resolve(root, db=sqlite_url, host=HOST)
    assert paths(diff(settings, now=NOW).records) == ["x.py"]
    kept = reader(sqlite_url)
    assert kept is not None and reader(sqlite_url) is kept
    for suffix in ("", "-wal", "-shm"):  # another database now lives at that path
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with Store(sqlite_url) as s:
        add_change(s, s.ensure_workspace(str(root), HOST).id, "y.py", ago=timedelta(minutes=5))
    assert paths(diff(settings, now=NOW).records) == ["y.py"]
    assert reader(sqlite_url) is not kept


def test_the_kept_writer_is_reopened_on_a_replaced_file(sqlite_url: str, root: Path) -> None:
    """The process's writable store (`kept.writer`: `impact`, a cursor, an answer's symbols)
    writes into the database now at its path, not into a file removed since."""
    from symdiff.store.kept import writer

    db = Path(sqlite_url.removeprefix("sqlite:///"))
    db.parent.mkdir(parents=True)
    kept = writer(sqlite_url)
    assert writer(sqlite_url) is kept
    kept.ensure_workspace(str(root), HOST)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    again = writer(sqlite_url)
    assert again is not kept and again.find_workspace(str(root), HOST) is None
    again.ensure_workspace(str(root), HOST)
    with Store(sqlite_url) as s:
        assert s.find_workspace(str(root), HOST) is not None
