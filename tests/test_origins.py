"""The daemon's per-batch provenance (origins.py) on real repositories."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import git

from symdiff.model import Origin
from symdiff.record import origins


class FakeTime:
    """The origins' time seams, moved by hand: a sleep passes at once and advances the timer;
    the wall clock runs `skew_s` ahead of the real one (git's ref files carry real mtimes)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0
        self.skew_s = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds

    def wall_ns(self) -> int:
        return time.time_ns() + int(self.skew_s * 1e9)

    def batches(self, repo: Path) -> origins.BatchOrigins:
        return origins.BatchOrigins(repo, monotonic=self.monotonic, sleep=self.sleep,
                                    wall_ns=self.wall_ns)


def _repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def test_a_lock_left_by_a_dead_git_is_waited_for_once(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale index.lock (git killed mid-command) must not stall every later batch."""
    monkeypatch.setattr(origins, "LOCK_WAIT_S", 1.5)  # 75 looks at the repository, not 1500
    clock = FakeTime()
    repo = _repo(tmp_path / "repo")
    batches = clock.batches(repo)
    assert batches.next(full=True).origin is Origin.SCAN  # the start pass
    (repo / ".git" / "index.lock").write_text("")
    started = clock.now
    first = batches.next(full=False)
    assert clock.now - started >= 1.5  # the first batch gives git its chance
    assert first.origin is Origin.GIT  # caught holding the lock: unknown-git
    started = clock.now
    second = batches.next(full=False)
    assert clock.now == started  # not again for the same lock: no wait at all
    assert second.git is not None and second.git["branch"] == "main"
    (repo / ".git" / "index.lock").unlink()
    (repo / ".git" / "index.lock").write_text("")  # a new lock is a new command: waited for
    started = clock.now
    batches.next(full=False)
    assert clock.now - started >= 1.5


def test_a_lock_released_ends_the_wait_then_git_gets_its_grace(tmp_path: Path) -> None:
    """A git command still writing holds its lock: the batch waits until it is gone (not the
    whole LOCK_WAIT_S), then a moment more for HEAD and the reflog."""
    clock = FakeTime()
    repo = _repo(tmp_path / "repo")
    lock = repo / ".git" / "index.lock"
    real_sleep = clock.sleep

    def git_finishing(seconds: float) -> None:
        real_sleep(seconds)
        if clock.slept >= 0.1 and lock.exists():
            lock.unlink()  # the command finishes 0.1 s into the wait

    clock.sleep = git_finishing  # type: ignore[method-assign]
    batches = clock.batches(repo)
    batches.next(full=True)
    lock.write_text("")
    assert batches.next(full=False).origin is Origin.WATCH  # HEAD did not move
    assert 0.1 + origins.GRACE_S <= clock.slept < 1.0


def test_an_editor_write_is_watch_and_a_checkout_is_git(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    git(repo, "branch", "other")
    batches = origins.BatchOrigins(repo)
    batches.next(full=True)
    (repo / "a.py").write_text("x = 2\n")
    assert batches.next(full=False).origin is Origin.WATCH
    git(repo, "checkout", "-q", "other")
    moved = batches.next(full=False)
    assert moved.origin is Origin.GIT
    assert moved.origin_info is not None and moved.origin_info["operation"] == "checkout"
    assert batches.next(full=True).origin is Origin.SCAN  # a rescan with git unmoved


def test_a_git_command_that_writes_no_file_does_not_claim_the_next_edit(tmp_path: Path) -> None:
    """`git checkout -b` and `git commit` close no batch; the idle refresh makes their state
    the next batch's "before", so a person's edit a moment later is `watch`."""
    clock = FakeTime()
    repo = _repo(tmp_path / "repo")
    batches = clock.batches(repo)
    batches.next(full=True)
    git(repo, "checkout", "-qb", "feature")
    batches.refresh()  # the ref was written just now: git may still be about to write files
    (repo / "a.py").write_text("x = 2\n")
    assert batches.next(full=False).origin is Origin.GIT  # within the quiet window: git's
    git(repo, "commit", "-qam", "two")
    clock.skew_s += origins.QUIET_S  # as if git's last ref write were a quiet window ago
    batches.refresh()  # idle and quiet: the commit's state becomes "before"
    (repo / "a.py").write_text("x = 3\n")
    edit = batches.next(full=False)
    assert edit.origin is Origin.WATCH
    assert edit.git is not None and edit.git["branch"] == "feature"
    (repo / ".git" / "index.lock").write_text("")
    git_head = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")  # as if a checkout ran
    clock.skew_s += origins.QUIET_S
    batches.refresh()  # a command holds the lock: the refresh must not take its state
    (repo / ".git" / "index.lock").unlink()
    moved = batches.next(full=False)
    assert moved.origin is Origin.GIT and git_head != ""
