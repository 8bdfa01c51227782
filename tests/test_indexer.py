"""The reconcile indexer against real repositories, real SQLite and real PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest
from conftest import git, make_settings, stored
from sqlalchemy import func, select

from symdiff.config import Settings
from symdiff.model import ChangeType, FileChange, Scope
from symdiff.record.indexer import reconcile
from symdiff.records import of_change
from symdiff.store import Store
from symdiff.store import tables as t

REAL_SOURCE = Path(click.__file__).parent  # a real, installed Python package


HOST = "test-host"


def _all(store: Store) -> list[FileChange]:
    return stored(store)


def _key(c: FileChange) -> tuple[str, str, str | None, int, int]:
    return c.change_type.value, c.path, c.old_path, c.lines_added, c.lines_removed


def _git_numstat(repo: Path) -> set[tuple[str, str, str | None, int, int]]:
    """What git says changed between the last commit and the index, renames exact only."""
    git(repo, "add", "-A")
    out = git(repo, "diff", "--cached", "--numstat", "-z", "-M100%")
    status = git(repo, "diff", "--cached", "--name-status", "-z", "-M100%").split("\0")
    kinds: dict[str, tuple[str, str | None]] = {}
    i = 0
    while i < len(status) - 1:
        code = status[i]
        if code.startswith("R"):
            kinds[status[i + 2]] = ("rename", status[i + 1])
            i += 3
        else:
            kinds[status[i + 1]] = ({"A": "add", "M": "modify", "D": "delete"}[code[0]], None)
            i += 2
    result = set()
    fields = out.split("\0")
    i = 0
    while i < len(fields) - 1:
        head = fields[i]
        if not head:
            i += 1
            continue
        added, removed, path = head.split("\t")
        if path == "":  # a rename: the two paths follow
            path = fields[i + 2]
            i += 3
        else:
            i += 1
        kind, old = kinds[path]
        a = 0 if added == "-" else int(added)
        r = 0 if removed == "-" else int(removed)
        result.add((kind, path, old, a, r))
    return result


def _populate(root: Path) -> None:
    shutil.copytree(
        REAL_SOURCE, root / "src" / "click", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text("def test_one():\n    assert 1\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "debug.log").write_text("ignored\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("ignored = True\n")


def _edit_session(root: Path) -> None:
    """Edits, adds, deletes and a rename, as a developer would make them."""
    core = root / "src" / "click" / "core.py"
    text = core.read_text()
    text = (
        text.replace("def ", "def  ", 1).replace("    ", "\t", 3)
        + "\n\ndef added_at_end():\n    pass\n"
    )
    core.write_text(text)
    utils = root / "src" / "click" / "utils.py"
    utils.write_text(utils.read_text().replace("return", "return  ", 5))
    (root / "src" / "click" / "new_module.py").write_text("def brand_new():\n    return 42\n")
    (root / "tests" / "test_new.py").write_text("def test_two():\n    assert 2\n")
    (root / "src" / "click" / "globals.py").unlink()
    os.rename(root / "src" / "click" / "termui.py", root / "src" / "click" / "terminal_ui.py")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0other binary")
    (root / "debug.log").write_text("still ignored\n")
    (root / "notes.txt").write_text("no final newline")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_session_matches_git_numstat(
    repo: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    _populate(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    settings = make_settings(repo, url, host=HOST)
    with Store(url) as store:
        first = reconcile(store, settings)
        assert first.baseline and first.changes == ()
        assert first.scanned == len(git(repo, "ls-files").splitlines())
        _edit_session(repo)
        second = reconcile(store, settings)
        assert not second.baseline
        expected = _git_numstat(repo)
        assert {_key(c) for c in _all(store)} == expected
        assert {_key(c) for c in second.changes} == expected
        third = reconcile(store, settings)
        assert third.changes == ()
        by_path = {c.path: c for c in _all(store)}
    assert by_path["tests/test_new.py"].scope is Scope.TEST
    assert by_path["src/click/new_module.py"].scope is Scope.IMPL
    assert by_path["src/click/core.py"].language == "python"
    assert by_path["src/click/terminal_ui.py"].change_type is ChangeType.RENAME
    assert by_path["src/click/terminal_ui.py"].old_path == "src/click/termui.py"
    new_mod = by_path["src/click/new_module.py"]
    assert [(s.name, s.change_type.value) for s in new_mod.symbols] == [("brand_new", "added")]
    deleted = by_path["src/click/globals.py"]
    assert deleted.change_type is ChangeType.DELETE and deleted.symbols
    assert all(s.change_type.value == "removed" for s in deleted.symbols)
    core = by_path["src/click/core.py"]
    assert ("added_at_end", "added") in {(s.name, s.change_type.value) for s in core.symbols}


def test_sqlite_and_postgresql_give_the_same_records(tmp_path: Path, pg_head_url: str) -> None:
    records = []
    for i, url in enumerate([f"sqlite:///{tmp_path / 'a.db'}", pg_head_url]):
        root = tmp_path / f"tree{i}"
        root.mkdir()
        _populate(root)
        with Store(url) as store:
            reconcile(store, make_settings(root, url, host=HOST))
            _edit_session(root)
            reconcile(store, make_settings(root, url, host=HOST))
            records.append(
                sorted(
                    (dict(of_change(c)) | {"timestamp": None, "origin_info": None}
                     for c in _all(store)),
                    key=lambda d: str(d),
                )
            )
    assert records[0] == records[1]


def test_deleting_a_file_keeps_its_history(repo: Path, sqlite_url: str) -> None:
    settings = make_settings(repo, sqlite_url, host=HOST)
    f = repo / "a.py"
    f.write_text("def a():\n    return 1\n")
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        f.write_text("def a():\n    return 2\n")
        reconcile(store, settings)
        f.unlink()
        reconcile(store, settings)
        kinds = [c.change_type for c in _all(store)]
        modify = next(c for c in _all(store) if c.change_type is ChangeType.MODIFY)
        assert store.get_blob(modify.old_hash or "") == b"def a():\n    return 1\n"
        assert store.get_blob(modify.new_hash or "") == b"def a():\n    return 2\n"
    assert kinds == [ChangeType.DELETE, ChangeType.MODIFY]


def test_identical_content_is_stored_once_and_binary_by_hash(repo: Path, sqlite_url: str) -> None:
    for i in range(5):
        (repo / f"copy{i}.txt").write_text("same content\n")
    (repo / "big.txt").write_bytes(b"x" * (4 * 1024 * 1024 + 1))
    (repo / "blob.bin").write_bytes(b"\0\1\2")
    with Store(sqlite_url) as store:
        reconcile(store, make_settings(repo, sqlite_url, host=HOST))
        with store.engine.connect() as conn:
            rows = {r.size: r for r in conn.execute(select(t.blobs))}
            files = conn.execute(select(func.count()).select_from(t.files)).scalar_one()
    assert files == 7
    assert len(rows) == 3
    assert rows[4 * 1024 * 1024 + 1].data is None
    assert rows[3].data is None and rows[3].binary
    assert rows[len("same content\n")].data is not None
    hash_object = subprocess.run(
        ["git", "hash-object", str(repo / "copy0.txt")], capture_output=True, text=True, check=True
    ).stdout.strip()
    with Store(sqlite_url) as store:
        assert store.get_blob(hash_object) == b"same content\n"


def test_strange_files_are_skipped_not_fatal(repo: Path, sqlite_url: str) -> None:
    (repo / "ok.py").write_text("x = 1\n")
    os.mkfifo(repo / "pipe")
    (repo / "dangling").symlink_to(repo / "nowhere")
    (repo / "loop").symlink_to(repo)
    (repo / "linked.py").symlink_to(repo / "ok.py")
    settings = make_settings(repo, sqlite_url, host=HOST)
    with Store(sqlite_url) as store:
        report = reconcile(store, settings)
        assert report.scanned == 1
        (repo / "ok.py").write_text("x = 2\n")
        report = reconcile(store, settings, paths=["ok.py", "pipe", "vanished.py", "loop"])
    assert [(c.path, c.change_type) for c in report.changes] == [("ok.py", ChangeType.MODIFY)]


def test_unreadable_file_is_skipped_and_not_deleted(repo: Path, sqlite_url: str) -> None:
    # Each pass runs without root's power to read whatever the mode says (as CI runs as root).
    from unprivileged import symdiff

    f = repo / "secret.py"
    f.write_text("a = 1\n")
    env = {"SYMDIFF_HOST": "test-host"}
    args = ["index", str(repo), "--db", sqlite_url, "--json"]
    assert symdiff(*args, env=env).returncode == 0
    f.write_text("a = 2\n")
    f.chmod(0)
    try:
        report = json.loads(symdiff(*args, env=env).stdout)
    finally:
        f.chmod(0o644)
    assert report["skipped"] == ["secret.py"] and report["changes"] == []
    changes = json.loads(symdiff(*args, env=env).stdout)["changes"]
    assert [c["change_type"] for c in changes] == ["modify"]


def test_nested_gitignore_matches_git_check_ignore(repo: Path, sqlite_url: str) -> None:
    (repo / ".gitignore").write_text("*.log\n/top_only.txt\ncache/\n")
    sub = repo / "pkg" / "sub"
    sub.mkdir(parents=True)
    (repo / "pkg" / ".gitignore").write_text("!keep.log\n*.tmp\n")
    (sub / ".gitignore").write_text("generated/\n")
    paths = [
        "a.log",
        "pkg/keep.log",
        "pkg/other.log",
        "pkg/sub/keep.log",
        "top_only.txt",
        "pkg/top_only.txt",
        "pkg/x.tmp",
        "x.tmp",
        "cache/f.py",
        "pkg/cache/f.py",
        "pkg/sub/generated/g.py",
        "generated/g.py",
        "pkg/sub/main.py",
        "cache.py",
    ]
    for p in paths:
        (repo / p).parent.mkdir(parents=True, exist_ok=True)
        (repo / p).write_text("x\n")
    ignored_by_git = set(
        subprocess.run(
            ["git", "check-ignore", "--no-index", *paths], cwd=repo, capture_output=True, text=True
        ).stdout.split()
    )
    with Store(sqlite_url) as store:
        reconcile(store, make_settings(repo, sqlite_url, host=HOST))
        tracked = set(store.file_states(store.workspaces()[0].id))
    tracked_expected = {p for p in paths if p not in ignored_by_git} | {
        ".gitignore",
        "pkg/.gitignore",
        "pkg/sub/.gitignore",
    }
    assert tracked == tracked_expected


def test_configured_ignore_and_state_dir(repo: Path) -> None:
    (repo / "a.py").write_text("a = 1\n")
    (repo / "vendor").mkdir()
    (repo / "vendor" / "lib.py").write_text("v = 1\n")
    settings = Settings.resolve(repo, host="h", ignore=("vendor/",))
    from symdiff.api import index

    index(settings)
    (repo / "vendor" / "lib.py").write_text("v = 2\n")
    report = index(settings)
    assert report.scanned == 1 and report.changes == ()
    assert (repo / ".symdiff" / "index.db").exists()


def test_racy_file_is_rehashed_not_trusted(repo: Path, sqlite_url: str) -> None:
    f = repo / "a.txt"
    f.write_text("one\n")
    settings = make_settings(repo, sqlite_url, host=HOST)
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        st = f.stat()
        f.write_text("two\n")  # same size
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # and same mtime
        assert [c.change_type for c in reconcile(store, settings).changes] == [ChangeType.MODIFY]


def test_rename_with_observed_move_keeps_content_change(repo: Path, sqlite_url: str) -> None:
    (repo / "old.py").write_text("def f():\n    return 1\n")
    settings = make_settings(repo, sqlite_url, host=HOST)
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        os.rename(repo / "old.py", repo / "new.py")
        (repo / "new.py").write_text("def f():\n    return 2\n")
        report = reconcile(store, settings, paths=["old.py", "new.py"], moves={"new.py": "old.py"})
    [c] = report.changes
    assert (c.change_type, c.path, c.old_path, c.lines_added, c.lines_removed) == (
        ChangeType.RENAME,
        "new.py",
        "old.py",
        1,
        1,
    )
    assert [(s.name, s.change_type.value) for s in c.symbols] == [("f", "modified")]


def test_two_indexers_never_record_a_change_twice(repo: Path, sqlite_url: str) -> None:
    for i in range(300):
        (repo / f"f{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    settings = make_settings(repo, sqlite_url, host=HOST)
    with Store(sqlite_url) as store:
        reconcile(store, settings)
    for i in range(300):
        (repo / f"f{i}.py").write_text(f"def f{i}():\n    return {i + 1}\n")
    env = {**os.environ, "SYMDIFF_HOST": "test-host"}
    cmd = [sys.executable, "-m", "symdiff", "index", str(repo), "--db", sqlite_url, "--json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL) for _ in range(3)]
    assert all(p.wait(120) == 0 for p in procs)
    with Store(sqlite_url) as store:
        changes = _all(store)
    assert sorted(c.path for c in changes) == sorted(f"f{i}.py" for i in range(300))


@pytest.mark.scale
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_killed_pass_loses_and_duplicates_nothing(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    root = tmp_path / "tree"
    root.mkdir()
    n = 2000
    for i in range(n):
        (root / f"m{i:04}.py").write_text(f"def f{i}(a):\n    return a\n")
    env = {**os.environ, "SYMDIFF_HOST": "test-host"}
    cmd = [sys.executable, "-m", "symdiff", "index", str(root), "--db", url, "--json"]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    for i in range(n):
        (root / f"m{i:04}.py").write_text(f"def f{i}(a, b):\n    return a + b\n")
    (root / "m0000.py").unlink()
    (root / "extra.py").write_text("def extra():\n    pass\n")
    kills = 0
    with Store(url) as store:
        ws = store.workspaces()[0].id
        for _ in range(4):
            proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            before = store.count_changes(ws)
            while time.monotonic() < deadline and proc.poll() is None:
                if store.count_changes(ws) > before:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
                    break
                time.sleep(0.005)
            proc.wait()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        changes = _all(store)
    assert kills >= 1
    got = sorted((c.change_type.value, c.path) for c in changes)
    want = sorted(
        [("modify", f"m{i:04}.py") for i in range(1, n)]
        + [("delete", "m0000.py"), ("add", "extra.py")]
    )
    assert got == want
    for c in changes:
        if c.change_type is ChangeType.MODIFY:
            assert (c.lines_added, c.lines_removed) == (2, 2)
            assert [s.change_type.value for s in c.symbols] == ["signature_changed"]


def test_records_carry_rfc3339_utc_timestamps(repo: Path, sqlite_url: str) -> None:
    (repo / "a.txt").write_text("a\n")
    fixed = datetime(2026, 11, 22, 1, 38, 13, 123456, tzinfo=UTC)
    settings = make_settings(repo, sqlite_url, host=HOST)
    with Store(sqlite_url) as store:
        reconcile(store, settings)
        (repo / "a.txt").write_text("b\n")
        reconcile(store, settings, clock=lambda: fixed)
        [c] = stored(store, since=fixed - timedelta(seconds=1), limit=5)
    assert of_change(c)["timestamp"] == "2026-11-22T01:38:13.123456Z"
