"""`symdiff status`, `index` and `watch` when the workspace's state cannot be read or written:
a clear `symdiff: code: reason` and exit status 1, never a traceback or a false "all is well"."""

from __future__ import annotations

import json
import os
from pathlib import Path

from unprivileged import symdiff

ENV = {"SYMDIFF_HOST": "testhost"}


def _indexed(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("a = 1\n")
    assert symdiff("index", str(root), env=ENV).returncode == 0
    (root / "a.py").write_text("a = 2\n")
    assert symdiff("index", str(root), env=ENV).returncode == 0
    return root


def test_status_of_a_corrupt_database_says_so(tmp_path: Path) -> None:
    root = _indexed(tmp_path)
    db = root / ".symdiff" / "index.db"
    for leftover in (root / ".symdiff").glob("index.db-*"):
        leftover.unlink()
    db.write_bytes(b"this is not a database, just garbage " * 200)
    out = symdiff("status", str(root), env=ENV)
    assert out.returncode == 1
    assert out.stdout == f"no daemon watches {root}\n"
    assert out.stderr.startswith("symdiff: store_error: cannot open database sqlite:///")
    assert "file is not a database" in out.stderr and "not indexed yet" not in out.stdout
    out = symdiff("status", str(root), "--json", env=ENV)
    info = json.loads(out.stdout)
    assert out.returncode == 1 and info["changes"] is None
    assert info["error"].startswith("store_error: ") and "file is not a database" in info["error"]
    index = symdiff("index", str(root), env=ENV)  # the same words as every other command
    assert index.returncode == 1 and "file is not a database" in index.stderr


def test_status_before_any_index_is_not_an_error(tmp_path: Path) -> None:
    out = symdiff("status", str(tmp_path), env=ENV)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == f"no daemon watches {tmp_path}\nnot indexed yet\n"


def test_a_state_dir_that_is_not_writable(tmp_path: Path) -> None:
    """As root, for real: the commands run without the capabilities that ignore file modes."""
    root = _indexed(tmp_path)
    state = root / ".symdiff"
    state.chmod(0o555)
    try:
        watch = symdiff("watch", str(root), "-q", env=ENV)
        (root / "a.py").write_text("a = 3\n")
        index = symdiff("index", str(root), env=ENV)
        status = symdiff("status", str(root), env=ENV)
    finally:
        state.chmod(0o755)
    assert watch.returncode == 1
    assert watch.stderr == (f"symdiff: tool_failed: cannot write the workspace lock "
                            f"{state / 'daemon.lock'}: Permission denied\n")
    assert index.returncode == 1 and "Traceback" not in index.stderr
    assert index.stderr.startswith("symdiff: store_error: ")
    assert status.returncode in (0, 1) and "Traceback" not in status.stderr
    if status.returncode == 0:  # the database could be read: the count is right
        assert "baseline done; 1 change recorded, the newest at " in status.stdout
    else:  # it could not: the reason, not "not indexed yet"
        assert status.stderr.startswith("symdiff: store_error: ")
        assert "not indexed yet" not in status.stdout


def test_a_root_that_is_not_utf8_is_refused_clearly(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path) + b"/ws\xff"
    os.mkdir(root)
    with open(root + b"/a.py", "wb") as f:
        f.write(b"a = 1\n")
    for command in ("index", "watch"):
        out = symdiff(command, os.fsdecode(root), env=ENV)
        assert out.returncode == 1, out.stderr
        assert out.stderr == (f"symdiff: tool_failed: the workspace root {tmp_path}/ws\\xff is "
                              "not valid UTF-8; symdiff cannot index it\n")


def test_status_says_baseline_newest_record_and_database(tmp_path: Path) -> None:
    root = _indexed(tmp_path)
    info = json.loads(symdiff("status", str(root), "--json", env=ENV).stdout)
    assert info["baseline_done"] is True and info["changes"] == 1
    assert info["newest_record"].endswith("Z") and info["progress"] is None
    db = root / ".symdiff" / "index.db"
    assert info["database"] == str(db)
    assert info["database_bytes"] >= db.stat().st_size > 0
    from symdiff.cli.display import size, when

    out = symdiff("status", str(root), env=ENV)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == (f"no daemon watches {root}\n"
                          f"baseline done; 1 change recorded, the newest at "
                          f"{when(info['newest_record'])}\n"
                          f"database {db} ({size(info['database_bytes'])})\n")


def test_status_shows_the_start_pass_progress_of_a_live_daemon(tmp_path: Path) -> None:
    """What the daemon writes while its start pass runs; a dead daemon's is not shown."""
    from symdiff.workspace.lock import workspace_lock

    root = tmp_path / "ws"
    root.mkdir()
    (root / ".symdiff").mkdir()
    (root / ".symdiff" / "daemon.json").write_text(json.dumps({
        "pid": 1, "running": True, "last_reconcile": None,
        "progress": {"pass": "baseline", "done": 256, "total": 600}}))
    with workspace_lock(root, "testhost"):
        out = symdiff("status", str(root), env=ENV)
        info = json.loads(symdiff("status", str(root), "--json", env=ENV).stdout)
    assert "baseline in progress: 256/600 files read\nnot indexed yet\n" in out.stdout
    assert "last reconcile not yet" in out.stdout
    assert info["progress"] == {"pass": "baseline", "done": 256, "total": 600}
    out = symdiff("status", str(root), env=ENV)  # the daemon died mid-pass
    assert "in progress" not in out.stdout
    assert json.loads(symdiff("status", str(root), "--json", env=ENV).stdout)["progress"] is None
