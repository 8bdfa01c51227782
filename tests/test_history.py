"""The history import, checked against `git log --first-parent -M --numstat` as the oracle."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from symdiff.api import import_history
from symdiff.cli.main import cli
from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.query.answer import DiffQuery, diff
from symdiff.store import ChangeFilter, Store

NOW = datetime.now(UTC).replace(microsecond=0)
Key = tuple[str, str]  # (sha, path)
Counts = tuple[int, int, str | None]  # added, removed, old path


def commit(repo: Path, message: str, days_ago: float) -> str:
    when = (NOW - timedelta(days=days_ago)).isoformat()
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x",
           "GIT_COMMITTER_NAME": "Bob", "GIT_COMMITTER_EMAIL": "bob@x",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_DATE": when}  # fmt: skip
    run = {"cwd": repo, "env": env, "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "commit", "-qm", message], **run)  # type: ignore[call-overload]
    return git(repo, "rev-parse", "HEAD").strip()


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


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


@pytest.fixture
def history(repo: Path) -> Path:
    """Five commits on main (a root commit, a rename with an edit, a delete, a binary) and a
    merged side branch, dated 20, 10, 5, 3, 2 and 1 days ago."""
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
    subprocess.run(["git", "merge", "-q", "--no-ff", "-m", "merge side", "side"], cwd=repo,
                   check=True, env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null",
                                    "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x",
                                    "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x",
                                    "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    return repo


def settings_for(repo: Path) -> Settings:
    return Settings.resolve(str(repo), db=f"sqlite:///{repo.parent / 'db' / 'index.db'}")


def test_every_imported_record_agrees_with_git_log(history: Path) -> None:
    settings = settings_for(history)
    report = import_history(settings)
    expected = oracle(history)
    assert stored(settings) == expected
    assert (report.commits, report.recorded, report.already) == (5, len(expected), 0)
    side = git(history, "rev-parse", "side").strip()
    assert all(sha != side for sha, _ in expected)  # first parent only: side's own commit is out


def test_the_records_say_when_who_and_what(history: Path) -> None:
    settings = settings_for(history)
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
    settings = settings_for(history)
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
    settings = settings_for(history)
    import_history(settings)
    records = diff(settings, DiffQuery(since="720h", scope="all", limit=500)).records
    times = [r["timestamp"] for r in records]
    assert times == sorted(times, reverse=True)
    assert len(records) == len(oracle(history))
    assert {r["origin"] for r in records} == {"commit"}
    week = diff(settings, DiffQuery(since="96h", scope="all", origin="commit")).records
    assert {r["origin_info"]["summary"] for r in week} == {"extra", "merge side"}


def test_a_subdirectory_workspace_imports_its_own_files(history: Path) -> None:
    settings = settings_for(history / "src")
    import_history(settings)
    assert {path for _, path in stored(settings)} == {"big.py", "moved.py"}


def test_errors(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidArgs, match="needs a git work tree"):
        import_history(settings_for(plain))
    with pytest.raises(InvalidArgs, match="no commit yet"):
        import_history(settings_for(repo))
    with pytest.raises(InvalidArgs, match="unknown unit"):
        import_history(settings_for(repo), since="7d")


def test_a_shallow_clone_imports_what_it_has(history: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{history}", str(clone))
    settings = settings_for(clone)
    report = import_history(settings)
    assert report.commits == 2
    assert stored(settings) == oracle(clone)


def test_the_cli(history: Path) -> None:
    db = f"sqlite:///{history.parent / 'cli.db'}"
    args = ["history", "import", str(history), "--db", db, "--json"]
    run = CliRunner().invoke(cli, args)
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout) == {"commits": 5, "recorded": len(oracle(history)),
                                      "already": 0}  # fmt: skip
    again = CliRunner().invoke(cli, ["history", "import", str(history), "--db", db])
    assert again.exit_code == 0 and "recorded 0 changes" in again.stdout
    bad = CliRunner().invoke(cli, ["history", "import", str(history), "--db", db,
                                   "--since", "7d"])  # fmt: skip
    assert bad.exit_code == 2 and "invalid_args: since:" in bad.stderr


def test_two_imports_at_once_record_each_commit_once(repo: Path) -> None:
    """Two `symdiff history import` processes started together: the second waits for the first
    (lock.history_lock), then finds everything already there."""
    import sys

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
    settings = settings_for(repo)
    import_history(settings)
    expected = oracle(repo)
    assert stored(settings) == expected
    assert sum(1 for v in expected.values() if v[2] is not None) >= 5  # renames were found
    assert sum(1 for (sha, p), v in expected.items() if p.startswith("b/") and v[2] is None) >= 5


def _watch(repo: Path, *extra: str) -> subprocess.Popen[str]:
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    return subprocess.Popen([sys.executable, "-m", "symdiff", "watch", str(repo), "-q", *extra],
                            env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def _imported(repo: Path) -> list[dict[str, object]]:
    settings = Settings.resolve(str(repo))
    query = DiffQuery(since="720h", scope="all", limit=500, origin="commit")
    records: list[dict[str, object]] = diff(settings, query).records  # type: ignore[assignment]
    return records


def _started(p: subprocess.Popen[str], repo: Path) -> None:
    import time

    from symdiff.query.status import status

    deadline = time.monotonic() + 60
    while not (info := status(Settings.resolve(str(repo)))).get("last_reconcile"):
        assert p.poll() is None and time.monotonic() < deadline, info
        time.sleep(0.1)


def test_watch_imports_the_last_720h_in_the_background(history: Path) -> None:
    import time

    p = _watch(history)
    try:
        _started(p, history)
        deadline = time.monotonic() + 60
        while len(_imported(history)) < len(oracle(history)):
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        (history / "live.py").write_text("def live():\n    return 1\n")
        while not any(r["path"] == "live.py" for r in
                      diff(Settings.resolve(str(history)), DiffQuery(scope="all")).records):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        p.send_signal(2)
        _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert {(str(dict(r["origin_info"])["sha"]), r["path"])  # type: ignore[call-overload]
            for r in _imported(history)} == set(oracle(history))  # fmt: skip
    # one answer: the live record first, then the imported ones by their commit times
    both = diff(Settings.resolve(str(history)), DiffQuery(since="720h", scope="all",
                                                            limit=500)).records  # fmt: skip
    assert both[0]["path"] == "live.py" and both[0]["origin"] == "watch"
    assert [r["timestamp"] for r in both] == sorted((r["timestamp"] for r in both), reverse=True)


def test_watch_no_history_imports_nothing(history: Path) -> None:
    import time

    p = _watch(history, "--no-history")
    try:
        _started(p, history)
        time.sleep(1.0)
        assert _imported(history) == []
    finally:
        p.send_signal(2)
        _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
