"""The watcher: events become settled, coalesced batches of dirty paths; overflow is heard."""

from __future__ import annotations

import logging
import os
import time
import uuid
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
)

from symdiff.record.walk import IgnoreRules
from symdiff.record.watcher import (
    OVERFLOW_LOGGER,
    Batch,
    DirtySet,
    Watcher,
    _Handler,
    collapse,
    tracked_dirs,
    watched_inodes,
)
from symdiff.workspace.layout import COOKIE_DIR


class FakeClock:
    """A monotonic timer the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_collapse_drops_paths_under_a_dirty_directory() -> None:
    assert collapse(["a/b/c.py", "a/b", "a/bc.py", "x.py", "a/b/d/e.py"]) == \
        {"a/b", "a/bc.py", "x.py"}
    assert collapse(["", "a/b.py"]) == {""}


def test_hints_are_handed_out_only_after_the_settle_window() -> None:
    clock = FakeClock()
    dirty = DirtySet(settle_s=0.04, max_delay_s=1.0, monotonic=clock)
    dirty.mark("a.py")
    assert not dirty.take(0)  # not settled yet: nothing
    clock.now += 0.03
    dirty.mark("b.py")
    clock.now += 0.03  # 60 ms after the first, 30 ms after the last: still busy
    assert not dirty.take(0)
    clock.now += 0.02
    batch = dirty.take(0)
    assert batch.paths == {"a.py", "b.py"} and batch.events == 2
    assert not dirty.take(0)  # drained


def test_a_continuous_stream_is_flushed_after_max_delay() -> None:
    clock = FakeClock()
    dirty = DirtySet(settle_s=0.04, max_delay_s=0.2, monotonic=clock)
    for _ in range(10):  # an event every 30 ms never lets the window settle
        dirty.mark("log.txt")
        clock.now += 0.03
    assert dirty.take(0).paths == {"log.txt"}


def test_a_cookie_needs_no_settling_and_moves_chain() -> None:
    clock = FakeClock()
    dirty = DirtySet(settle_s=10, monotonic=clock)
    dirty.move("a.py", "b.py")
    dirty.move("b.py", "c.py")
    dirty.move("x.py", "y.py")
    dirty.move("y.py", "x.py")  # moved back: no hint
    dirty.cookie("abc")
    batch = dirty.take(0)
    assert batch.moves == {"c.py": "a.py"}
    assert batch.cookies == {"abc"}
    assert batch.paths == {"a.py", "b.py", "c.py", "x.py", "y.py"}


def test_too_many_paths_or_an_overflow_become_a_full_rescan() -> None:
    clock = FakeClock()
    dirty = DirtySet(settle_s=0, max_paths=3, monotonic=clock)
    dirty.mark("a", "b", "c", "d")
    batch = dirty.take(0)
    assert batch.full and not batch.paths
    dirty.mark("a")
    dirty.overflow()
    dirty.mark("b")
    assert dirty.take(0).full


def test_restore_puts_a_failed_batch_back() -> None:
    dirty = DirtySet(settle_s=0, monotonic=FakeClock())
    dirty.restore(Batch(frozenset({"a.py"}), {"a.py": "z.py"}, frozenset({"k"})))
    batch = dirty.take(0)
    assert batch.paths == {"a.py"} and batch.moves == {"a.py": "z.py"} and batch.cookies == {"k"}


def test_wake_interrupts_a_waiting_take() -> None:
    dirty = DirtySet(settle_s=0.04)
    dirty.wake()
    started = time.monotonic()
    assert not dirty.take(5)
    assert time.monotonic() - started < 1


def test_handler_marks_paths_filters_internals_and_sees_cookies(tmp_path: Path) -> None:
    root = str(tmp_path)
    dirty = DirtySet(settle_s=0, monotonic=FakeClock())
    h = _Handler(root, dirty)
    h.dispatch(FileModifiedEvent(f"{root}/src/a.py"))
    h.dispatch(FileModifiedEvent(f"{root}/.git/index"))
    h.dispatch(FileModifiedEvent(f"{root}/.symdiff/index.db-wal"))
    h.dispatch(FileModifiedEvent(f"{root}/sub/.git/HEAD"))
    h.dispatch(FileModifiedEvent(f"{root}/pkg/.gitignore"))
    h.dispatch(FileMovedEvent(f"{root}/old.py", f"{root}/new.py"))
    h.dispatch(DirMovedEvent(f"{root}/d1", f"{root}/d2"))
    h.dispatch(DirDeletedEvent(f"{root}/gone"))
    h.dispatch(FileModifiedEvent("/elsewhere/x.py"))
    h.dispatch(FileCreatedEvent(f"{root}/{COOKIE_DIR}/c1"))
    # A cookie's later events ask for nothing: closed after its write, deleted (an ack).
    h.dispatch(FileClosedEvent(f"{root}/{COOKIE_DIR}/c2"))
    h.dispatch(FileModifiedEvent(f"{root}/{COOKIE_DIR}/c2"))
    h.dispatch(FileDeletedEvent(f"{root}/{COOKIE_DIR}/c2"))
    h.dispatch(FileMovedEvent(f"{root}/{COOKIE_DIR}/c3", f"{root}/c3"))
    batch = dirty.take(0)
    assert batch.paths == {"src/a.py", "pkg", "old.py", "new.py", "d1", "d2", "gone", "c3"}
    assert batch.moves == {"new.py": "old.py", "d2": "d1"}
    assert batch.cookies == {"c1"}
    h.dispatch(DirCreatedEvent(root))  # the root itself replaced: rescan all
    assert dirty.take(0).full


def test_overflow_log_record_triggers_a_full_rescan(tmp_path: Path) -> None:
    dirty = DirtySet(settle_s=0)
    w = Watcher(tmp_path, dirty)
    w.start()
    try:
        # watchdog's own words, through its own logger: the only signal an overflow gives.
        logging.getLogger(OVERFLOW_LOGGER).warning(
            "Inotify queue overflowed; filesystem events were lost")
        batch = dirty.take(2)
        assert batch.full and w.alarm.count == 1
    finally:
        w.stop()
    logging.getLogger(OVERFLOW_LOGGER).warning("Inotify queue overflowed; after stop")
    assert w.alarm.count == 1  # detached


def _barrier(root: Path, dirty: DirtySet) -> Batch:
    """Everything the watcher heard before now: a cookie written now arrives after every
    earlier event (one inotify queue, handled in order), so once it is seen they all were."""
    name = uuid.uuid4().hex
    (root / COOKIE_DIR / name).touch()
    assert dirty.wait_cookie(name, 10)
    batch = dirty.take(0, settle=False)
    assert name in batch.cookies
    return batch


def test_real_observer_marks_writes_and_ignores_reads(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    dirty = DirtySet(settle_s=0.02)
    w = Watcher(tmp_path, dirty)
    w.start()
    try:
        (tmp_path / "src" / "a.py").write_text("x = 2\n")
        os.makedirs(tmp_path / "n" / "m")
        (tmp_path / "n" / "m" / "b.py").write_text("y = 1\n")
        assert {"src/a.py", "n"} <= _barrier(tmp_path, dirty).paths
        seen: list[str] = []
        handle = w.handler.on_any_event
        w.handler.on_any_event = lambda e: (seen.append(os.fsdecode(e.src_path)),  # type: ignore[method-assign]
                                            handle(e))
        for _ in range(50):  # reads (the reconciler's own) must not even reach the handler
            (tmp_path / "src" / "a.py").read_bytes()
        after = _barrier(tmp_path, dirty)  # the watcher has handled every read's events
        assert not after.paths and not after.full
        assert seen and all(f"/{COOKIE_DIR}/" in path for path in seen)  # the cookie's only
    finally:
        w.stop()


def test_every_tracked_directory_is_watched(tmp_path: Path) -> None:
    for d in ("a/b/c", "d", "node_modules/x"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    dirty = DirtySet(settle_s=0.02)
    w = Watcher(tmp_path, dirty)
    w.start()
    try:
        dirs = tracked_dirs(tmp_path, IgnoreRules(tmp_path))
        assert set(dirs) == {"", "a", "a/b", "a/b/c", "d"}
        assert w.unwatched(dirs) == []
        fd = w.inotify_fd()
        assert fd is not None
        assert os.stat(tmp_path / "a" / "b").st_ino in watched_inodes(fd)
        # A directory outside the tree is not watched: the comparison can fail.
        other = tmp_path.parent / f"{tmp_path.name}-other"
        other.mkdir()
        assert w.unwatched({"x": other.stat().st_ino}) == ["x"]
    finally:
        w.stop()


def test_real_observer_hands_over_a_file_replaced_by_a_directory(tmp_path: Path) -> None:
    """`rm f; mkdir f; touch f/x` marks `f` itself, so the subtree pass over it finds the
    file's stored state gone (a delete) and `f/x` new; a name that is not UTF-8 arrives as
    Python decodes file names, for the indexer to skip."""
    (tmp_path / "f").write_text("a file\n")
    dirty = DirtySet(settle_s=0.02)
    w = Watcher(tmp_path, dirty)
    w.start()
    try:
        (tmp_path / "f").unlink()
        (tmp_path / "f").mkdir()
        (tmp_path / "f" / "x").write_text("inside\n")
        with open(os.fsencode(tmp_path) + b"/bad\xff.py", "wb") as f:
            f.write(b"x")
        bad = os.fsdecode(b"bad\xff.py")
        assert {"f", bad} <= _barrier(tmp_path, dirty).paths
    finally:
        w.stop()


def test_only_a_cookies_arrival_asks_for_a_batch(tmp_path: Path) -> None:
    """A cookie's close-after-write event (often heard after the batch that answered it) and
    its deletion (the daemon's ack) used to count as new cookies, which hand out whatever is
    pending at once, unsettled: the next save, caught between its truncate and its write, was
    recorded as an `add`/`modify` to empty content and a second `modify` (test_daemon's
    save-then-query tests failed so, now and then)."""
    dirty = DirtySet(settle_s=5, max_delay_s=5)
    w = Watcher(tmp_path, dirty)
    w.start()
    try:
        cookie = tmp_path / COOKIE_DIR / "c1"
        fd = os.open(cookie, os.O_CREAT | os.O_WRONLY)
        assert dirty.take(2).cookies == {"c1"}  # answered on its creation...
        os.close(fd)  # ...before it was closed
        cookie.unlink()  # the ack
        (tmp_path / "a.py").write_text("x = 1\n")  # a save...
        assert dirty.wait_marked("a.py", 10)  # (heard after the cookie's close and delete)
        assert not dirty.take(0)  # ...waits for its settle window
        batch = dirty.take(0, settle=False)
        assert batch.paths == {"a.py"} and not batch.cookies
    finally:
        w.stop()
