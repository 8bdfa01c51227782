"""The daemon end to end: real inotify, real SQLite; every change seen, none invented, none lost."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import daemon_settings, daemon_thread, stored, wait_until

from symdiff.cli.main import cli
from symdiff.config import Settings
from symdiff.errors import LockedError
from symdiff.query.status import status
from symdiff.record.daemon import Daemon
from symdiff.record.watcher import Batch
from symdiff.store import Store
from symdiff.workspace.lock import running, workspace_lock
from symdiff.workspace.sync import sync

Rec = tuple[str, str, str | None]


def make_settings(root: Path) -> Settings:
    return daemon_settings(root, host="testhost")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A small tree: two source files and a package."""
    r = tmp_path / "ws"
    (r / "pkg").mkdir(parents=True)
    (r / "main.py").write_text("def main():\n    return 1\n")
    (r / "pkg" / "util.py").write_text("def helper(x):\n    return x\n")
    (r / ".gitignore").write_text("*.log\n")
    return r


def records(settings: Settings) -> Counter[Rec]:
    """Every stored change of the workspace, as a multiset of (type, path, old_path)."""
    with Store(settings.db_url) as store:
        ws = store.find_workspace(str(settings.root), settings.host)
        if ws is None:
            return Counter()
        rows = stored(store, workspace_ids=[ws.id])
    return Counter((c.change_type.value, c.path, c.old_path) for c in rows)


def settled(settings: Settings) -> Counter[Rec]:
    """The records once the daemon has recorded every event made so far."""
    assert sync(settings.root, timeout=20)
    return records(settings)


def test_plain_writes_are_add_modify_delete(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s):
        assert settled(s) == Counter()  # the baseline records nothing
        (root / "new.py").write_text("def new():\n    pass\n")
        assert settled(s) == Counter({("add", "new.py", None): 1})
        with open(root / "main.py", "a") as f:
            f.write("\ndef more():\n    return 2\n")
        (root / "pkg" / "util.py").unlink()
        (root / "debug.log").write_text("ignored\n")
        (root / ".symdiff" / "scratch").write_text("internal\n")
        assert settled(s) == Counter({("add", "new.py", None): 1, ("modify", "main.py", None): 1,
                                      ("delete", "pkg/util.py", None): 1})


def test_editor_saves_are_one_modify_each(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s):
        # Atomic save: temporary file beside the target, fsync, rename over it.
        tmp = root / ".main.py.tmp1234"
        tmp.write_text("def main():\n    return 2\n")
        os.replace(tmp, root / "main.py")
        assert settled(s) == Counter({("modify", "main.py", None): 1})
        # vim: f -> f~ (backup), write a new f, delete f~.
        target = root / "pkg" / "util.py"
        os.rename(target, root / "pkg" / "util.py~")
        target.write_text("def helper(x, y):\n    return x\n")
        (root / "pkg" / "util.py~").unlink()
        assert settled(s) == Counter({("modify", "main.py", None): 1,
                                      ("modify", "pkg/util.py", None): 1})


def test_renames_of_files_and_directories(root: Path) -> None:
    s = make_settings(root)
    lib = root / "lib"
    lib.mkdir()
    for i in range(10):
        (lib / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    with daemon_thread(s):
        os.rename(root / "main.py", root / "app.py")
        assert settled(s) == Counter({("rename", "app.py", "main.py"): 1})
        # Renamed and edited within one settle window: still one rename (the move was seen).
        os.rename(root / "pkg" / "util.py", root / "pkg" / "tools.py")
        (root / "pkg" / "tools.py").write_text("def helper(x):\n    return x + 1\n")
        os.rename(lib, root / "library")
        want = Counter({("rename", "app.py", "main.py"): 1,
                        ("rename", "pkg/tools.py", "pkg/util.py"): 1})
        want.update({("rename", f"library/m{i}.py", f"lib/m{i}.py"): 1 for i in range(10)})
        assert settled(s) == want


def test_deleted_trees_and_directories_moved_out(root: Path, tmp_path: Path) -> None:
    s = make_settings(root)
    for d in ("a/b", "c/d"):
        (root / d).mkdir(parents=True)
        for i in range(5):
            (root / d / f"f{i}.txt").write_text(f"{d} {i}\n")
    with daemon_thread(s):
        shutil.rmtree(root / "a")
        # Moved out of the tree: inotify says only "directory deleted", no per-file deletes.
        os.rename(root / "c", tmp_path / "outside")
        want = Counter({("delete", f"{d}/f{i}.txt", None): 1 for d in ("a/b", "c/d")
                        for i in range(5)})
        assert settled(s) == want
        # And moved back in: every file is added again.
        os.rename(tmp_path / "outside", root / "c")
        want.update({("add", f"c/d/f{i}.txt", None): 1 for i in range(5)})
        assert settled(s) == want


def _burst(base: Path, dirs: int, per_dir: int) -> set[str]:
    made = set()
    for d in range(dirs):
        (base / f"d{d:03}").mkdir(parents=True)
        for i in range(per_dir):
            rel = f"d{d:03}/f{i:04}.txt"
            (base / rel).write_text(f"file {d} {i}\n")
            made.add(rel)
    return made


@pytest.mark.scale
def test_a_5000_file_burst_loses_nothing(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s) as d:
        made = _burst(root / "burst", 50, 100)
        want = Counter({("add", f"burst/{rel}", None): 1 for rel in made})
        assert d.wait_until(lambda st: st.changes >= 5000, 60)
        assert settled(s) == want


def _fill(base: Path, dirs: int, per_dir: int) -> set[str]:
    made = set()
    for d in range(dirs):
        for i in range(per_dir):
            rel = f"d{d:03}/f{i:04}.txt"
            (base / rel).write_text(f"file {d} {i}\n")
            made.add(rel)
    return made


@pytest.mark.scale
@pytest.mark.slow
def test_a_real_queue_overflow_triggers_a_full_rescan(root: Path) -> None:
    s = make_settings(root)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    per_dir = 1000
    dirs = (limit // 3 + 2048) // per_dir + 2  # create + modify + close-write per file
    for d in range(dirs):
        (root / "flood" / f"d{d:03}").mkdir(parents=True)
    with daemon_thread(s) as d:
        assert d.watcher is not None
        # Pause watchdog's reader (it takes this lock around every read of the inotify fd) so
        # that the kernel queue (max_queued_events) overflows for real in watched directories.
        inotify = d.watcher.observer._inotify_fd  # type: ignore[attr-defined]
        with inotify._lock:
            made = _fill(root / "flood", dirs, per_dir)
        want = Counter({("add", f"flood/{rel}", None): 1 for rel in made})
        assert d.wait_until(lambda st: st.overflows > 0 and st.changes >= len(made), 60)
        assert settled(s) == want
        assert d.stats.full_rescans >= 2  # the start and the overflow


def test_edits_while_down_are_recorded_at_the_next_start(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s):
        pass
    (root / "main.py").write_text("def main():\n    return 3\n")
    (root / "added.py").write_text("x = 1\n")
    os.rename(root / "pkg" / "util.py", root / "pkg" / "moved.py")
    with daemon_thread(s):
        assert settled(s) == Counter({("modify", "main.py", None): 1, ("add", "added.py", None): 1,
                                      ("rename", "pkg/moved.py", "pkg/util.py"): 1})


def test_one_daemon_per_workspace_and_status(root: Path) -> None:
    s = make_settings(root)
    assert running(root) is None
    then = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    with daemon_thread(s, clock=lambda: then):
        holder = running(root)
        assert holder is not None and holder["pid"] == os.getpid()
        with pytest.raises(LockedError, match=f"pid {os.getpid()}"):
            Daemon(s).run()
        (root / "x.py").write_text("x = 1\n")
        settled(s)
        info = status(s)
        assert info["running"] is True and info["changes"] == 1
        assert info["started_at"] == holder["started_at"]
        state = json.loads((root / ".symdiff" / "daemon.json").read_text())
        assert state["changes_recorded"] == 1 and state["running"] is True
        assert state["last_reconcile"] == "2030-01-02T03:04:05.678901Z"  # the daemon's clock
        out = CliRunner().invoke(cli, ["status", str(root), "--db", s.db_url],
                                 env={"SYMDIFF_HOST": "testhost"})
        assert out.exit_code == 0 and f"pid {os.getpid()}" in out.output
        assert "1 change recorded" in out.output
    assert running(root) is None
    assert status(s)["running"] is False
    out = CliRunner().invoke(cli, ["status", str(root), "--json"], env={"SYMDIFF_HOST": "testhost"})
    assert json.loads(out.output)["running"] is False and json.loads(out.output)["changes"] == 1


def test_the_start_pass_writes_its_progress_to_the_status_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import symdiff.record.daemon as daemon_module

    for i in range(600):
        (root / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    monkeypatch.setattr(daemon_module, "PROGRESS_EVERY_S", 0.0)
    seen: list[object] = []
    real = Daemon._write_status

    def spy(self: Daemon, *, running: bool) -> None:
        real(self, running=running)
        seen.append(json.loads((root / ".symdiff" / "daemon.json").read_text())["progress"])

    monkeypatch.setattr(Daemon, "_write_status", spy)
    s = make_settings(root)
    with daemon_thread(s) as d:
        assert d.ready.wait(30)
        passes = [p for p in seen if p is not None]
        assert passes[0] == {"pass": "baseline", "done": 0, "total": 0}
        assert {"pass": "baseline", "done": 256, "total": 603} in passes
        assert passes[-1] == {"pass": "baseline", "done": 603, "total": 603}
        assert seen[-1] is None  # written again once the pass is over
    seen.clear()
    with daemon_thread(s) as d:  # every later start: a reconcile, not a baseline
        assert d.ready.wait(30)
        assert {"pass": "reconcile", "done": 0, "total": 0} in seen and seen[-1] is None


def test_the_reference_index_build_ends_with_its_daemon(root: Path) -> None:
    """A daemon stopped while its reference index is being built ends the build first: a
    build outliving it wrote its status over the next daemon's."""
    import threading

    for i in range(1500):
        (root / "pkg" / f"m{i}.py").write_text(f"def f{i}(x):\n    return g(x) + {i}\n")
    s = make_settings(root)
    with daemon_thread(s, refindex=True) as d:
        assert d.ready.wait(30)
    assert not [t for t in threading.enumerate() if t.name == "symdiff-refindex"]
    status = (root / ".symdiff" / "daemon.json").read_text()
    assert json.loads(status)["running"] is False
    time.sleep(0.5)
    assert (root / ".symdiff" / "daemon.json").read_text() == status  # nothing wrote after


def test_the_changes_are_shown_and_a_failing_display_never_stops_recording(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[list[str]] = []

    def show(changes: Any) -> None:
        shown.append([c.path for c in changes])
        raise BrokenPipeError(32, "Broken pipe")  # `symdiff watch | head -1`, say

    s = make_settings(root)
    with daemon_thread(s, on_changes=show):
        (root / "main.py").write_text("def main():\n    return 2\n")
        assert settled(s) == Counter({("modify", "main.py", None): 1})
        (root / "pkg" / "util.py").write_text("def helper(x):\n    return 2\n")
        assert settled(s) == Counter({("modify", "main.py", None): 1,
                                      ("modify", "pkg/util.py", None): 1})
    assert shown == [["main.py"]]  # once: then no more calls
    assert "cannot show changes any more (BrokenPipeError: [Errno 32] Broken pipe); " \
           "recording goes on" in caplog.text


def test_a_save_followed_at_once_by_a_query_is_in_the_answer(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s, max_delay_s=5):
        for i in range(20):
            (root / "main.py").write_text(f"def main():\n    return {i + 10}\n")
            # asked from a subdirectory: the settings find the workspace
            assert sync(Settings.resolve(root / "pkg", nearest=True).root, timeout=5)
            assert records(s)[("modify", "main.py", None)] == i + 1
    assert sync(root, timeout=0.1)  # no daemon: nothing to wait for


def test_the_diff_query_waits_for_the_daemon(root: Path) -> None:
    from symdiff.query.answer import DiffQuery, diff

    s = make_settings(root)
    with daemon_thread(s, max_delay_s=5):
        for i in range(10):
            (root / f"n{i}.py").write_text(f"def n{i}():\n    return {i}\n")
            got = diff(s, DiffQuery(since="1h", scope="all", limit=500))
            assert not got.stale
            assert [r["path"] for r in got.records] == [f"n{j}.py" for j in reversed(range(i + 1))]


def test_sync_times_out_when_the_daemon_cannot_keep_up(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s) as d:
        assert d.watcher is not None
        with d.watcher.observer._inotify_fd._lock:  # type: ignore[attr-defined]
            started = time.monotonic()
            assert sync(root, timeout=0.2) is False
            assert time.monotonic() - started < 1
        assert list((root / ".symdiff" / "cookies").iterdir()) == []


def test_sync_gives_up_at_its_deadline_and_takes_its_cookie_back(root: Path) -> None:
    """sync's time seams: its timeout runs on a fake timer, so nothing is waited out. A lock
    held here stands for a daemon that never answers, then for one that answers at once."""
    now = [0.0]
    cookies = root / ".symdiff" / "cookies"

    def sleep(seconds: float) -> None:
        now[0] += seconds

    def answered(seconds: float) -> None:
        sleep(seconds)
        for cookie in cookies.iterdir():
            cookie.unlink()  # the daemon's ack

    with workspace_lock(root, "testhost"):
        cookies.mkdir()
        assert sync(root, timeout=30, monotonic=lambda: now[0], sleep=sleep) is False
        assert now[0] >= 30 and list(cookies.iterdir()) == []  # gave up, took its cookie back
        now[0] = 0.0
        assert sync(root, timeout=30, monotonic=lambda: now[0], sleep=answered) is True
        assert now[0] < 0.1 and list(cookies.iterdir()) == []


# -- as a real process: signals and kill -9 ---------------------------------------------------


def _start_pass_done(root: Path) -> bool:
    """The status file says the start pass is over (while it runs, `progress` is set)."""
    try:
        return json.loads((root / ".symdiff" / "daemon.json").read_text()).get("progress") is None
    except (OSError, ValueError):
        return False


def _spawn(root: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SYMDIFF_SETTLE_MS": "20", "SYMDIFF_HOST": "testhost"}
    p = subprocess.Popen([sys.executable, "-m", "symdiff", "watch", str(root), "-q"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until(lambda: (running(root) is not None and _start_pass_done(root))
             or p.poll() is not None, timeout=30)
    assert p.poll() is None, p.communicate()
    return p


def test_sigterm_flushes_pending_events_and_exits_cleanly(root: Path) -> None:
    s = make_settings(root)
    p = _spawn(root)
    (root / "late.py").write_text("def late():\n    pass\n")
    p.send_signal(signal.SIGTERM)  # at once: the event is still in flight
    _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert records(s) == Counter({("add", "late.py", None): 1})
    assert running(root) is None
    state = json.loads((root / ".symdiff" / "daemon.json").read_text())
    assert state["running"] is False


@pytest.mark.scale
def test_kill_9_during_a_burst_then_restart_recovers_everything(root: Path) -> None:
    s = make_settings(root)
    p = _spawn(root)
    made = {f"b1/{r}" for r in _burst(root / "b1", 10, 100)}
    p.kill()
    p.communicate(timeout=10)
    made |= {f"b2/{r}" for r in _burst(root / "b2", 5, 100)}  # written while down
    assert running(root) is None  # the kernel released the lock
    p = _spawn(root)
    try:
        assert settled(s) == Counter({("add", rel, None): 1 for rel in made})
    finally:
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
    assert p.returncode == 0


def test_watch_limit_falls_back_to_periodic_rescans(root: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1)")
    for i in range(12):
        (root / f"dir{i}").mkdir()
    # A user namespace of our own has its own inotify watch limit, which we may lower.
    cmd = (f"echo 4 > /proc/sys/user/max_inotify_watches && exec {sys.executable} -m symdiff "
           f"watch {root} --rescan-s 0.3")
    probe = subprocess.run(["unshare", "-Ur", "sh", "-c", "echo 4 > "
                            "/proc/sys/user/max_inotify_watches"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot lower the watch limit here: {probe.stderr.decode()}")
    env = {**os.environ, "SYMDIFF_SETTLE_MS": "20", "SYMDIFF_HOST": "testhost"}
    p = subprocess.Popen(["unshare", "-Ur", "sh", "-c", cmd], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    s = make_settings(root)
    try:
        status_file = root / ".symdiff" / "daemon.json"
        wait_until(lambda: p.poll() is not None or (status_file.exists() and
                 json.loads(status_file.read_text())["degraded"]))
        assert p.poll() is None
        for i in range(12):
            (root / f"dir{i}" / "new.py").write_text(f"n = {i}\n")
        want = Counter({("add", f"dir{i}/new.py", None): 1 for i in range(12)})
        wait_until(lambda: records(s) == want)
    finally:
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
    assert b"WATCH LIMIT" in err
    assert p.returncode == 0


def test_a_path_that_keeps_failing_does_not_hold_back_the_others(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug that fires on one path (injected at the daemon's reconcile seam) costs that path,
    not the batch: the other changes of the same batch are recorded."""
    import symdiff.record.daemon as daemon_module

    real = daemon_module.reconcile

    def buggy(store: Store, settings: Settings, **kw: Any) -> Any:
        if any("poison" in p for p in kw.get("paths") or ()):
            raise RuntimeError("injected extraction bug")
        return real(store, settings, **kw)

    s = make_settings(root)
    with daemon_thread(s) as d:
        assert settled(s) == Counter()
        monkeypatch.setattr(daemon_module, "reconcile", buggy)
        (root / "poison.py").write_text("x = 1\n")
        (root / "fine.py").write_text("y = 1\n")
        (root / "main.py").write_text("def main():\n    return 2\n")
        assert d.wait_until(lambda st: st.changes >= 2, 30)
        assert records(s) == Counter({("add", "fine.py", None): 1, ("modify", "main.py", None): 1})
        monkeypatch.setattr(daemon_module, "reconcile", real)
        (root / "poison.py").write_text("x = 2\n")  # once the bug is gone, it is recorded
        assert settled(s)[("add", "poison.py", None)] == 1


# -- trees the daemon cannot fully see, and failures it must not hide --------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, root: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{root}/.symdiff/index.db"
    return str(request.getfixturevalue("pg_url"))


def _with_db(root: Path, url: str) -> Settings:
    return Settings.resolve(root, db=url, host="testhost", settle_ms=20)


def _write_bytes_name(root: Path, name: bytes, data: bytes) -> None:
    with open(os.fsencode(root) + b"/" + name, "wb") as f:
        f.write(data)


def test_a_name_that_is_not_utf8_does_not_stop_recording(
    root: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """It used to fail every pass (`surrogates not allowed`), for ever, while status said all
    was well. Now the name is skipped with one warning and everything else is recorded."""
    s = _with_db(root, db_url)
    _write_bytes_name(root, b"early\xff.py", b"x = 1\n")  # there at the start pass
    with caplog.at_level(logging.WARNING, logger="symdiff.record.indexer"), daemon_thread(s) as d:
        assert settled(s) == Counter()
        _write_bytes_name(root, b"bad\xff.py", b"x")  # seen as an event
        os.mkdir(os.fsencode(root) + b"/dir\xfe")
        _write_bytes_name(root, b"dir\xfe/inside.py", b"y = 1\n")
        (root / "main.py").write_text("def main():\n    return 2\n")
        assert settled(s) == Counter({("modify", "main.py", None): 1})
        for _ in range(3):  # full passes meet the names again: no more warnings
            d.dirty.overflow()
            assert sync(root, timeout=20)
        (root / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
        assert settled(s) == Counter({("modify", "main.py", None): 1,
                                      ("modify", "pkg/util.py", None): 1})
        env = {"SYMDIFF_HOST": "testhost"}
        index = subprocess.run([sys.executable, "-m", "symdiff", "index", str(root), "--db",
                                db_url, "--json"], env={**os.environ, **env},
                               capture_output=True, text=True, timeout=60)
        assert index.returncode == 0, index.stderr
        assert json.loads(index.stdout)["skipped"] == ["bad\\xff.py", "dir\\xfe", "early\\xff.py"]
        state = json.loads((root / ".symdiff" / "daemon.json").read_text())
        assert state["failing"] is False and state["attempts"] == 0
        assert state["last_error"] is None and state["unrecorded"] == []
        out = CliRunner().invoke(cli, ["status", str(root), "--db", db_url], env=env)
        assert out.exit_code == 0, out.output
        assert "warning" not in out.output and "2 changes recorded" in out.output
    # symdiff's own warnings: watchdog may log a shutdown race of its inotify thread
    # ("queue_events() called when the thread is inactive") that is not ours to count
    warned = Counter(r.getMessage() for r in caplog.records if r.name.startswith("symdiff"))
    assert warned == Counter({f"skipping {n}: the name is not valid UTF-8": 1
                              for n in ("early\\xff.py", "bad\\xff.py", "dir\\xfe")})


@contextmanager
def _postgres_refusing(url: str) -> Iterator[None]:
    """The database refuses every connection (as in an outage) for the duration."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0].replace("postgresql+psycopg", "postgresql") + "/test"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
        try:
            yield
        finally:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')


def test_a_reconcile_that_keeps_failing_shows_in_status(root: Path, pg_url: str) -> None:
    s = _with_db(root, pg_url)
    env = {"SYMDIFF_HOST": "testhost"}
    state_file = root / ".symdiff" / "daemon.json"

    def state() -> dict[str, Any]:
        data: dict[str, Any] = json.loads(state_file.read_text())
        return data

    with daemon_thread(s) as d:
        assert settled(s) == Counter()
        with _postgres_refusing(pg_url):
            (root / "main.py").write_text("def main():\n    return 2\n")
            assert d.wait_until(lambda st: st.attempts >= 2, 20)
            now = state()
            assert now["failing"] is True and now["failing_since"]
            assert now["last_error"].startswith("store_error: ")
            out = CliRunner().invoke(cli, ["status", str(root), "--db", pg_url], env=env)
            assert f"warning: recording has failed since {now['failing_since']}" in out.output
            assert "store_error" in out.output and out.exit_code == 1
            out = CliRunner().invoke(cli, ["status", str(root), "--db", pg_url, "--json"],
                                     env=env)
            info = json.loads(out.stdout)
            assert info["failing"] is True and info["attempts"] >= 2
            assert info["error"].startswith("store_error: ")
        assert d.wait_until(lambda st: st.failing_since is None, 60)  # backoff is up to 30 s
        assert state()["attempts"] == 0 and state()["last_error"] is None
        assert settled(s) == Counter({("modify", "main.py", None): 1})
        out = CliRunner().invoke(cli, ["status", str(root), "--db", pg_url], env=env)
        assert out.exit_code == 0 and "warning" not in out.output
        assert "1 change recorded" in out.output


def test_a_full_pass_that_keeps_failing_is_split_not_retried_for_ever(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug that one file triggers (injected where the indexer builds a file's change) in a full
    pass costs that file: the pass is split by directory, the rest is recorded, and status
    names the file until a later pass records it."""
    import symdiff.record.indexer as indexer_module

    real = indexer_module._file_change

    def buggy(p: Any, kind: Any, path: str, **kw: Any) -> Any:
        if "poison" in path:
            raise RuntimeError("injected bug")
        return real(p, kind, path, **kw)

    (root / "pkg" / "deep").mkdir()
    s = make_settings(root)
    with daemon_thread(s) as d:
        assert settled(s) == Counter()
        monkeypatch.setattr(indexer_module, "_file_change", buggy)
        assert d.watcher is not None
        with d.watcher.observer._inotify_fd._lock:  # type: ignore[attr-defined]
            # Held back from the watcher, so that the full pass below meets them all at once.
            (root / "pkg" / "deep" / "poison.py").write_text("x = 1\n")
            (root / "pkg" / "deep" / "fine.py").write_text("y = 1\n")
            (root / "main.py").write_text("def main():\n    return 2\n")
            d.dirty.overflow()
            assert d.wait_until(lambda st: st.unrecorded == ["pkg/deep/poison.py"], 30)
            assert records(s) == Counter({("add", "pkg/deep/fine.py", None): 1,
                                          ("modify", "main.py", None): 1})

        def state() -> dict[str, Any]:
            data: dict[str, Any] = json.loads((root / ".symdiff" / "daemon.json").read_text())
            return data

        # Once the split pass is written down (the events released above may fail a while).
        assert d.wait_until(lambda st: st.unrecorded == ["pkg/deep/poison.py"] and
                            st.failing_since is None, 30)
        assert state()["unrecorded"] == ["pkg/deep/poison.py"] and state()["failing"] is False
        out = CliRunner().invoke(cli, ["status", str(root), "--db", s.db_url],
                                 env={"SYMDIFF_HOST": "testhost"})
        assert "changes at pkg/deep/poison.py could not be recorded" in out.output
        monkeypatch.setattr(indexer_module, "_file_change", real)
        (root / "pkg" / "deep" / "poison.py").write_text("x = 2\n")
        assert settled(s)[("add", "pkg/deep/poison.py", None)] == 1
        assert d.stats.unrecorded == []


def test_a_file_replaced_by_a_directory_is_a_delete(root: Path) -> None:
    s = make_settings(root)
    with daemon_thread(s) as d:
        os.unlink(root / "main.py")
        os.mkdir(root / "main.py")
        (root / "main.py" / "x").write_text("inside\n")
        assert settled(s) == Counter({("delete", "main.py", None): 1,
                                      ("add", "main.py/x", None): 1})
        d.dirty.overflow()  # and a full pass finds nothing more
        assert settled(s) == Counter({("delete", "main.py", None): 1,
                                      ("add", "main.py/x", None): 1})
    (root / "pkg" / "util.py").unlink()  # while no daemon runs: the start pass
    (root / "pkg" / "util.py").mkdir()
    (root / "pkg" / "util.py" / "y").write_text("inside too\n")
    with daemon_thread(s):
        assert settled(s) == Counter({("delete", "main.py", None): 1,
                                      ("add", "main.py/x", None): 1,
                                      ("delete", "pkg/util.py", None): 1,
                                      ("add", "pkg/util.py/y", None): 1})


def _spawn_bound(s: Settings) -> subprocess.Popen[bytes]:
    """The daemon as a process that file modes bind (root drops its override capabilities),
    once its start pass is done."""
    from unprivileged import popen_symdiff

    p = popen_symdiff("watch", str(s.root), "--db", s.db_url, "-q",
                      env={"SYMDIFF_SETTLE_MS": "20", "SYMDIFF_HOST": s.host})
    wait_until(lambda: p.poll() is not None or _started(s, p.pid), timeout=30)
    assert p.poll() is None, p.communicate()
    return p


def _started(s: Settings, pid: int) -> bool:
    """Whether the daemon `pid` holds the lock and has made its start pass."""
    holder = running(s.root)
    if holder is None or holder.get("pid") != pid:
        return False
    with contextlib.suppress(OSError, ValueError):  # `progress` is null after the start pass
        state = json.loads((s.root / ".symdiff" / "daemon.json").read_text())
        return bool(state["pid"] == pid and state.get("progress") is None)
    if not s.db_url.startswith("postgresql"):
        return False  # (opening SQLite while the daemon creates it could fail either side)
    with Store(s.db_url) as store:  # no status file where `.symdiff/` is read-only
        ws = store.find_workspace(str(s.root), s.host)
    return ws is not None and ws.baseline_done


def _stop(p: subprocess.Popen[bytes]) -> str:
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    return err.decode()


def test_an_unlistable_directory_is_neither_deleted_nor_added_again(root: Path) -> None:
    s = make_settings(root)
    (root / "pkg" / "deep").mkdir()
    (root / "pkg" / "deep" / "more.py").write_text("m = 1\n")
    p = _spawn_bound(s)
    try:
        (root / "pkg").chmod(0)
        (root / "pkg" / "new.py").write_text("n = 1\n")  # an event the daemon cannot follow
        (root / "main.py").write_text("def main():\n    return 2\n")
        assert settled(s) == Counter({("modify", "main.py", None): 1})
    finally:
        err = _stop(p)
    assert "cannot stat pkg/new.py: Permission denied" in err
    p = _spawn_bound(s)  # the start pass walks the whole tree
    try:
        assert settled(s) == Counter({("modify", "main.py", None): 1})
    finally:
        (root / "pkg").chmod(0o755)
        err = _stop(p)
    assert f"cannot list {root / 'pkg'}: Permission denied" in err
    p = _spawn_bound(s)  # readable again: only what is really new is an add
    try:
        assert settled(s) == Counter({("modify", "main.py", None): 1,
                                      ("add", "pkg/new.py", None): 1})
    finally:
        _stop(p)


def test_watch_fails_cleanly_when_the_state_dir_is_not_writable(root: Path) -> None:
    from unprivileged import symdiff

    (root / ".symdiff").mkdir()
    (root / ".symdiff").chmod(0o555)
    try:
        out = symdiff("watch", str(root), "-q", env={"SYMDIFF_HOST": "testhost"})
    finally:
        (root / ".symdiff").chmod(0o755)
    assert out.returncode == 1
    assert out.stderr == (f"symdiff: tool_failed: cannot write the workspace lock "
                          f"{root / '.symdiff' / 'daemon.lock'}: Permission denied\n")


def test_watch_on_postgresql_records_with_a_read_only_state_dir(root: Path, pg_url: str) -> None:
    """The database lives elsewhere; the lock file is there and writable, the folder is not:
    the daemon records (queries just cannot ask it to catch up), and says what it cannot do."""
    s = _with_db(root, pg_url)
    (root / ".symdiff").mkdir()
    (root / ".symdiff" / "daemon.lock").touch()
    (root / ".symdiff").chmod(0o555)
    try:
        p = _spawn_bound(s)
        try:
            (root / "main.py").write_text("def main():\n    return 2\n")
            wait_until(lambda: records(s) == Counter({("modify", "main.py", None): 1}))
        finally:
            err = _stop(p)
    finally:
        (root / ".symdiff").chmod(0o755)
    assert "queries will not wait for the daemon" in err
    assert "inotify unavailable" not in err and "WATCH LIMIT" not in err


class _Parts:
    """A dirty set that hands out the given batches one per take (the unit seam of `_git_tail`)."""

    settle_s = 0.0

    def __init__(self, *parts: Batch) -> None:
        self.parts = list(parts)

    def take(self, timeout: float, *, settle: bool = True) -> Batch | None:
        return self.parts.pop(0) if self.parts else None


def test_a_git_tail_keeps_a_full_rescan_asked_for_by_any_part(root: Path) -> None:
    """An overflow in the middle of a large checkout asks for a full rescan; a later part of the
    command's tail (a few more paths) must not take that back, or the dropped events are lost
    (5,000 files checked out, 2,639 recorded, before this)."""
    d = Daemon(make_settings(root))
    d.dirty = _Parts(Batch(frozenset({"a.py"}), full=True, events=3),  # type: ignore[assignment]
                     Batch(frozenset({"b.py"}), events=1))
    tail = d._git_tail(Batch(frozenset({"c.py"}), events=1))
    assert tail.full and tail.paths == {"a.py", "b.py", "c.py"} and tail.events == 5
    d.dirty = _Parts(Batch(frozenset({"b.py"})))  # type: ignore[assignment]
    assert d._git_tail(Batch(frozenset(), full=True)).full  # nor a later part the first's
