"""`.symdiff/`: its names in one place, the daemon's status file read tolerantly, and the folder
never shown in the user's `git status` (its creator writes its `.gitignore`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git

from symdiff.config import default_db_url
from symdiff.workspace.layout import (
    GITIGNORE,
    DaemonStatus,
    StateDir,
    ensure_state_dir,
    read_status,
    write_status,
)
from symdiff.workspace.lock import workspace_lock


def _symdiff(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    subprocess.run([sys.executable, "-m", "symdiff", *args], cwd=root, env=env, check=True,
                   capture_output=True, timeout=120)


def test_index_leaves_git_status_clean(repo: Path) -> None:
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "a")
    _symdiff(repo, "index")
    assert (repo / ".symdiff" / ".gitignore").read_text() == GITIGNORE
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(repo, "check-ignore", ".symdiff/index.db", ".symdiff/.gitignore").split() == [
        ".symdiff/index.db", ".symdiff/.gitignore"]


def test_every_creator_writes_it(tmp_path: Path) -> None:
    """The lock (a daemon's start) and the database folder each make `.symdiff/` in one helper;
    a workspace an older symdiff made gains the file at the next start; another folder does
    not (a `--db` elsewhere)."""
    root = tmp_path / "ws"
    root.mkdir()
    with workspace_lock(root, "h"):
        pass
    assert (root / ".symdiff" / ".gitignore").read_text() == GITIGNORE
    (root / ".symdiff" / ".gitignore").unlink()
    with workspace_lock(root, "h"):
        pass
    assert (root / ".symdiff" / ".gitignore").exists()
    other = ensure_state_dir(tmp_path / "db" / "here")
    assert other.is_dir() and not (other / ".gitignore").exists()
    (tmp_path / "fresh").mkdir()
    _symdiff(tmp_path / "fresh", "db", "upgrade")
    assert (tmp_path / "fresh" / ".symdiff" / ".gitignore").read_text() == GITIGNORE


def test_a_user_edited_gitignore_is_left_alone(tmp_path: Path) -> None:
    state = tmp_path / ".symdiff"
    state.mkdir()
    (state / ".gitignore").write_text("index.db\n")
    ensure_state_dir(state)
    assert (state / ".gitignore").read_text() == "index.db\n"


def test_the_state_dir_names_every_file(tmp_path: Path) -> None:
    state = StateDir(tmp_path)
    assert state.path == tmp_path / ".symdiff"
    assert [p.name for p in (state.index_db, state.lock, state.history_lock, state.status,
                             state.cookies)] == ["index.db", "daemon.lock", "history.lock",
                                                 "daemon.json", "cookies"]  # fmt: skip
    assert default_db_url(tmp_path) == f"sqlite:///{tmp_path}/.symdiff/index.db"


def test_the_status_file_round_trips_and_reads_tolerantly(tmp_path: Path) -> None:
    """What the daemon writes, `symdiff status` reads back; a missing, partial or garbled file
    reads as "the daemon did not say" (None), never as an error."""
    assert read_status(tmp_path) == DaemonStatus()  # no folder, no file
    ensure_state_dir(StateDir(tmp_path).path)
    written = DaemonStatus(pid=7, host="h", running=True, batches=3, degraded=False,
                           unrecorded=["a.py"], progress={"pass": "baseline", "done": 1,
                                                          "total": 2})  # fmt: skip
    write_status(tmp_path, written)
    assert read_status(tmp_path) == written
    assert sorted(p.name for p in StateDir(tmp_path).path.iterdir()) == [".gitignore",
                                                                     "daemon.json"]  # no tmp
    StateDir(tmp_path).status.write_text('{"pid": 7, "batches": "three", "degraded": 1}')
    assert read_status(tmp_path) == DaemonStatus(pid=7)  # wrong types read as unsaid
    StateDir(tmp_path).status.write_text('{"pid": 7, "runn')  # half written (an old daemon)
    assert read_status(tmp_path) == DaemonStatus()
    StateDir(tmp_path).status.write_text("[1, 2]")
    assert read_status(tmp_path) == DaemonStatus()
