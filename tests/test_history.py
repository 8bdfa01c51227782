"""The history import, checked against `git log --first-parent -M --numstat` as the oracle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Templates, git, head_starts, make_settings, symdiff_cli, wait_until

from symdiff.api import import_history
from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.query.answer import DiffQuery, diff
from symdiff.store import ChangeFilter, Store

NOW = datetime.now(UTC).replace(microsecond=0)
Key = tuple[str, str]  # (sha, path)
Counts = tuple[int, int, str | None]  # added, removed, old path


def commit(repo: Path, message: str, days_ago: float) -> str:
    when = (NOW - timedelta(days=days_ago)).isoformat()
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x",
           "GIT_COMMITTER_NAME": "Bob", "GIT_COMMITTER_EMAIL": "bob@x",
           "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}  # fmt: skip
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-qm", message, env=env)
    return git(repo, "rev-parse", "HEAD").strip()


def oracle(repo: Path, *extra: str) -> dict[Key, Counts]:
    out = git(repo, "log", "--first-parent", "--diff-merges=first-parent", "-M", "--numstat",
              "--format=%x00%H", *extra)  # fmt: skip
    found: dict[Key, Counts] = {}
    sha = ""
    for line in out.splitlines():
        if line.startswith("\0"):
            sha = line[1:]
        elif line:
            added, removed, name = line.split("\t")
            old = None
            if " => " in name:
                old, name = _rename(name)
            found[(sha, name)] = (0 if added == "-" else int(added),
                                  0 if removed == "-" else int(removed), old)  # fmt: skip
    return found


def _rename(name: str) -> tuple[str, str]:
    if "{" in name:
        head, rest = name.split("{", 1)
        middle, tail = rest.split("}", 1)
        old_mid, new_mid = middle.split(" => ")
        return ((head + old_mid + tail).replace("//", "/"),
                (head + new_mid + tail).replace("//", "/"))  # fmt: skip
    old, new = name.split(" => ")
    return old, new


def stored(settings: Settings) -> dict[Key, Counts]:
    with Store(settings.db_url) as store:
        changes = store.changes(ChangeFilter(None, 0, None, 1_000_000))
    return {(str(c.origin_info["sha"]), c.path): (c.lines_added, c.lines_removed, c.old_path)
            for c in changes if c.origin_info is not None}  # fmt: skip


BIG = "".join(f"def h{i}(a):\n    return a + {i}\n\n\n" for i in range(30))


def _build_history(repo: Path) -> None:
    """Five commits on main (a root commit, a rename with an edit, a delete, a binary) and a
    merged side branch, dated 20, 10, 5, 3, 2 and 1 days ago."""
    git(repo, "init", "-q")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "big.py").write_text(BIG)
    (repo / "notes.txt").write_text("one\ntwo\n")
    (repo / "img.bin").write_bytes(b"\0\1" * 50)
    commit(repo, "root commit", 20)
    (repo / "src" / "big.py").rename(repo / "src" / "moved.py")
    (repo / "src" / "moved.py").write_text(BIG.replace("a + 7\n", "a * 7\n"))
    (repo / "img.bin").write_bytes(b"\0\2" * 50)
    commit(repo, "move big.py\n\nwith a body", 10)
    (repo / "notes.txt").unlink()
    (repo / "tests").mkdir()
    (repo / "tests" / "test_m.py").write_text("def test_m():\n    assert True\n")
    commit(repo, "drop notes", 5)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.py").write_text("def s():\n    return 1\n")
    commit(repo, "side work", 3)
    git(repo, "checkout", "-q", "main")
    (repo / "src" / "moved.py").write_text(BIG + "\n\ndef extra():\n    return 0\n")
    commit(repo, "extra", 2)
    when = (NOW - timedelta(days=1)).isoformat()
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side",
        env={"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "A",
             "GIT_COMMITTER_EMAIL": "a@x", "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


@pytest.fixture
def history(templates: Templates, tmp_path: Path) -> Path:
    """The history of _build_history, built once per session; each test gets its own copy."""
    return templates.copy("history", _build_history, tmp_path / "repo")


def test_every_imported_record_agrees_with_git_log(history: Path) -> None:
    settings = make_settings(history)
    report = import_history(settings)
    expected = oracle(history)
    assert stored(settings) == expected
    assert (report.commits, report.recorded, report.already) == (5, len(expected), 0)
    side = git(history, "rev-parse", "side").strip()
    assert all(sha != side for sha, _ in expected)  # first parent only: side's own commit is out


def test_the_records_say_when_who_and_what(history: Path) -> None:
    settings = make_settings(history)
    import_history(settings)
    sha = git(history, "rev-parse", "HEAD~3").strip()  # "move big.py"
    with Store(settings.db_url) as store:
        changes = store.changes(ChangeFilter(None, 0, None, 1000))
    moved = next(c for c in changes if c.path == "src/moved.py" and c.origin_info
                 and c.origin_info["sha"] == sha)  # fmt: skip
    assert moved.origin.value == "commit"
    assert moved.origin_info == {"sha": sha, "author": "Ada <ada@x>", "summary": "move big.py"}
    assert moved.timestamp == NOW - timedelta(days=10)
    assert moved.change_type.value == "rename" and moved.old_path == "src/big.py"
    assert [(s.name, s.change_type.value) for s in moved.symbols] == [("h7", "modified")]
    assert moved.git == {"branch": "main", "head": sha}
    root_add = next(c for c in changes if c.path == "src/big.py")
    assert root_add.change_type.value == "add" and len(root_add.symbols) == 30
    test_file = next(c for c in changes if c.path == "tests/test_m.py")
    assert test_file.scope.value == "test"


def test_importing_twice_records_nothing_twice(history: Path) -> None:
    settings = make_settings(history)
    first = import_history(settings, max_commits=2)
    assert first.commits == 2
    assert stored(settings) == oracle(history, "-2")
    again = import_history(settings, max_commits=2)
    assert (again.recorded, again.already) == (0, first.recorded)
    wider = import_history(settings, since="168h")  # 7 days: the newest three commits
    assert wider.commits == 3 and wider.already == first.recorded
    week_ago = (NOW - timedelta(hours=168)).isoformat()
    assert stored(settings) == oracle(history, f"--since={week_ago}")
    full = import_history(settings)
    assert stored(settings) == oracle(history)
    assert full.recorded + wider.recorded + first.recorded == len(oracle(history))


def test_imported_and_live_records_interleave_by_time(history: Path) -> None:
    settings = make_settings(history)
    import_history(settings)
    records = diff(settings, DiffQuery(since="720h", scope="all", limit=500)).records
    times = [r["timestamp"] for r in records]
    assert times == sorted(times, reverse=True)
    assert len(records) == len(oracle(history))
    assert {r["origin"] for r in records} == {"commit"}
    week = diff(settings, DiffQuery(since="96h", scope="all", origin="commit")).records
    assert {r["origin_info"]["summary"] for r in week} == {"extra", "merge side"}


def test_a_subdirectory_workspace_imports_its_own_files(history: Path) -> None:
    settings = make_settings(history / "src")
    import_history(settings)
    assert {path for _, path in stored(settings)} == {"big.py", "moved.py"}


def test_errors(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidArgs, match="needs a git work tree"):
        import_history(make_settings(plain))
    with pytest.raises(InvalidArgs, match="no commit yet"):
        import_history(make_settings(repo))
    with pytest.raises(InvalidArgs, match="unknown unit"):
        import_history(make_settings(repo), since="7d")


def test_a_shallow_clone_imports_what_it_has(history: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{history}", str(clone))
    settings = make_settings(clone)
    report = import_history(settings)
    assert report.commits == 2
    assert stored(settings) == oracle(clone)


def test_the_cli(history: Path) -> None:
    db = f"sqlite:///{history.parent / 'cli.db'}"
    args = ["history", "import", str(history), "--db", db, "--json"]
    run = symdiff_cli(*args)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"commits": 5, "recorded": len(oracle(history)),
                                      "already": 0}  # fmt: skip
    again = symdiff_cli("history", "import", str(history), "--db", db)
    assert again.returncode == 0 and "recorded 0 changes" in again.stdout
    bad = symdiff_cli("history", "import", str(history), "--db", db, "--since", "7d")
    assert bad.returncode == 2 and "invalid_args: since:" in bad.stderr


def test_two_imports_at_once_record_each_commit_once(repo: Path) -> None:
    """Two `symdiff history import` processes started together: the second waits for the first
    (lock.history_lock), then finds everything already there."""
    git(repo, "checkout", "-q", "-b", "main")
    body = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(300))
    for n in range(24):  # long enough that, unlocked, both would read the index before writing
        (repo / "mod.py").write_text(body.replace(f"a + {n}\n", f"a - {n}\n"))
        (repo / f"m{n}.py").write_text(f"def g{n}():\n    return {n}\n")
        commit(repo, f"c{n}", 24 - n)
    db = f"sqlite:///{repo.parent / 'db' / 'index.db'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    cmd = [sys.executable, "-m", "symdiff", "history", "import", str(repo), "--db", db, "--json"]
    procs = [subprocess.Popen(cmd, env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]  # fmt: skip
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        reports.append(json.loads(out))
    expected = oracle(repo)
    assert sorted((r["recorded"], r["already"]) for r in reports) == [
        (0, len(expected)), (len(expected), 0)]  # fmt: skip
    settings = Settings.resolve(str(repo), db=db)
    with Store(settings.db_url) as store:
        changes = store.changes(ChangeFilter(None, 0, None, 1_000_000))
    keys = [(str(c.origin_info["sha"]), c.path) for c in changes if c.origin_info is not None]
    assert len(keys) == len(set(keys)) == len(expected)


def test_renames_near_the_threshold_are_paired_as_git_pairs_them(repo: Path) -> None:
    """Forty files rewritten by 30-70%, moved, some to a shared basename: git's pairs exactly
    (libgit2's own similarity disagreed with git on such pairs)."""
    import random

    rng = random.Random(14)
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "a").mkdir()
    bodies = {}
    for i in range(40):
        lines = [f"line {i} {j} {rng.random():.6f}\n" for j in range(rng.randint(20, 80))]
        bodies[i] = lines
        (repo / "a" / f"f{i}.txt").write_text("".join(lines))
    (repo / "a" / "same.txt").write_text("".join(bodies[0]))
    commit(repo, "files", 3)
    (repo / "b").mkdir()
    for i, lines in bodies.items():
        (repo / "a" / f"f{i}.txt").unlink()
        keep = 0.3 + 0.4 * (i / 39)
        new = [ln if rng.random() < keep else f"new {rng.random():.6f}\n" for ln in lines]
        name = f"g{i}.txt" if i % 3 else f"f{i}.txt"
        (repo / "b" / name).write_text("".join(new))
    commit(repo, "move and rewrite", 2)
    settings = make_settings(repo)
    import_history(settings)
    expected = oracle(repo)
    assert stored(settings) == expected
    assert sum(1 for v in expected.values() if v[2] is not None) >= 5  # renames were found
    assert sum(1 for (sha, p), v in expected.items() if p.startswith("b/") and v[2] is None) >= 5


def _large_history(repo: Path) -> None:
    """Six 100 KB Python files, then four commits that each edit every one of them: the newest
    commit's texts alone pass a head start's worth (parse/pool.py's HEAD_BYTES)."""
    git(repo, "checkout", "-q", "-b", "main")
    for k in range(6):
        (repo / f"m{k}.py").write_text("".join(f"def f{k}_{i}(a, b):\n    return a * {i} + b\n\n\n"
                                               for i in range(2500)))  # fmt: skip
    commit(repo, "files", 6)
    for day in range(4):
        for k in range(6):
            path = repo / f"m{k}.py"
            path.write_text(path.read_text().replace(f"a * {100 * day + 7} + b",
                                                     f"a * {100 * day + 7} - b")
                            .replace(f"def f{k}_{500 * day + 9}(a, b)",
                                     f"def f{k}_{500 * day + 9}(a, b, c=0)"))  # fmt: skip
        commit(repo, f"edit {day}", 5 - day)


def _symbols_of(settings: Settings) -> dict[Key, list[tuple[str, str]]]:
    with Store(settings.db_url) as store:
        changes = store.changes(ChangeFilter(None, 0, None, 1_000_000))
    return {(str(c.origin_info["sha"]), c.path): sorted((s.name, s.change_type.value)
                                                         for s in c.symbols)
            for c in changes if c.origin_info is not None}  # fmt: skip


def test_a_batch_parses_its_first_commits_while_git_is_read(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Once a batch holds a head start's worth of texts, one worker parses them while git is
    read for the rest (`ParsePool.head_start`); the records are git's, and the same as without
    the head start."""
    from symdiff.parse import extract, reparse
    from symdiff.parse.pool import ParsePool

    _large_history(repo)
    started = head_starts(monkeypatch)
    settings = make_settings(repo)
    import_history(settings)
    assert started == [True]
    assert stored(settings) == oracle(repo)
    ours = _symbols_of(settings)
    assert ours[(git(repo, "rev-parse", "HEAD").strip(), "m2.py")] == [
        ("f2_1509", "signature_changed"), ("f2_307", "modified")]
    monkeypatch.setattr(ParsePool, "head_start", lambda *_: None)
    extract._cache.clear()
    reparse.forget()
    alone = make_settings(repo, db=f"sqlite:///{tmp_path / 'alone.db'}")
    import_history(alone)
    assert _symbols_of(alone) == ours


def test_an_import_that_fails_after_its_head_start_lets_the_pool_go(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Git failing mid-walk, after a head start was sent: the pool is let go, its worker's
    answer read (the next import's answers pair with its own chunks)."""
    from symdiff.git import importer
    from symdiff.parse import pool as parse_pool

    _large_history(repo)
    real = importer._commit_changes
    walked: list[int] = []

    def failing(*args: Any) -> Any:
        walked.append(1)
        if len(walked) == 3:
            raise RuntimeError("git failed")
        return real(*args)

    monkeypatch.setattr(importer, "_commit_changes", failing)
    settings = make_settings(repo)
    with pytest.raises(RuntimeError, match="git failed"):
        import_history(settings)
    shared = parse_pool.shared()
    assert shared.pids(), "the head start ran on the shared pool's worker"
    let_go = shared._lock.acquire(blocking=False)
    shared._lock.release()
    assert let_go, "the pool is still held by the failed import's head start"
    monkeypatch.setattr(importer, "_commit_changes", real)
    before = shared.worker_jobs
    import_history(settings)
    assert stored(settings) == oracle(repo)
    assert shared.worker_jobs > before  # the workers answered, in step


def _watch(repo: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    return subprocess.Popen([sys.executable, "-m", "symdiff", "watch", str(repo), *extra],
                            env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def _imported(repo: Path) -> list[dict[str, object]]:
    settings = Settings.resolve(str(repo))
    query = DiffQuery(since="720h", scope="all", limit=500, origin="commit")
    records: list[dict[str, object]] = diff(settings, query).records  # type: ignore[assignment]
    return records


def _started(p: subprocess.Popen[str], repo: Path) -> None:
    from symdiff.query.status import status

    def reconciled() -> object:
        assert p.poll() is None, "the daemon exited"
        return status(Settings.resolve(str(repo))).get("last_reconcile")

    wait_until(reconciled, timeout=60, interval=0.05, message="the start pass")


def _live_record(p: subprocess.Popen[str], repo: Path) -> None:
    """Write a file and wait until the daemon records it: it is past its start (where the
    history import begins, or not) and in its loop."""
    (repo / "live.py").write_text("def live():\n    return 1\n")

    def recorded() -> bool:
        assert p.poll() is None, "the daemon exited"
        return any(r["path"] == "live.py" for r in
                   diff(Settings.resolve(str(repo)), DiffQuery(scope="all")).records)

    wait_until(recorded, timeout=60, interval=0.05, message="live.py's record")


def _stop(p: subprocess.Popen[str]) -> str:
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    return err


def test_watch_imports_the_last_720h_in_the_background(history: Path) -> None:
    p = _watch(history, "-q")
    try:
        _started(p, history)

        def all_imported() -> bool:
            assert p.poll() is None, "the daemon exited"
            return len(_imported(history)) >= len(oracle(history))

        wait_until(all_imported, timeout=60, interval=0.1, message="the import")
        _live_record(p, history)
    finally:
        _stop(p)
    assert {(str(dict(r["origin_info"])["sha"]), r["path"])  # type: ignore[call-overload]
            for r in _imported(history)} == set(oracle(history))  # fmt: skip
    # one answer: the live record first, then the imported ones by their commit times
    both = diff(Settings.resolve(str(history)), DiffQuery(since="720h", scope="all",
                                                            limit=500)).records  # fmt: skip
    assert both[0]["path"] == "live.py" and both[0]["origin"] == "watch"
    assert [r["timestamp"] for r in both] == sorted((r["timestamp"] for r in both), reverse=True)


def test_watch_no_history_imports_nothing(history: Path) -> None:
    """Not quiet, so its log shows how far it got: past the point where the import starts (it
    says it is watching, and records a live change) without importing or saying it did."""
    p = _watch(history, "--no-history")
    try:
        _started(p, history)
        _live_record(p, history)
    finally:
        err = _stop(p)
    assert f"watching {history}" in err
    assert "git history" not in err
    assert _imported(history) == []
