"""watchdog wrapped as a stream of settled, coalesced batches of dirty paths.

Events are hints, not facts: the handler only marks paths dirty (a directory means "rescan that
subtree"), remembers observed moves, and notes query cookies. The reconciler decides what
changed by comparing with the last snapshot, which absorbs temporary files, editors' save
dances, duplicates and synthesized events.

One module because the dirty set, the event handler and the observer's health checks
(overflow alarm, watched inodes) are one contract between watchdog's threads and the daemon's
loop, easier to check side by side than apart.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.inotify import InotifyObserver

from symdiff.record.walk import ALWAYS_IGNORED, IgnoreRules
from symdiff.workspace.layout import COOKIE_DIR, StateDir, ensure_state_dir

log = logging.getLogger(__name__)

# Only events that can mean "content or presence changed". Leaving out opened, closed-no-write
# and accessed keeps the reconciler's own reads from feeding the queue.
EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]
# watchdog reports a kernel queue overflow only as this log record; no handler hears of it.
OVERFLOW_LOGGER = "watchdog.observers.inotify_c"
# Past this many dirty paths a full rescan is cheaper than one subtree query per path.
MAX_DIRTY = 2000


@dataclass(frozen=True, slots=True)
class Batch:
    """What to reconcile next: dirty paths (or everything), observed moves, cookies to ack."""

    paths: frozenset[str]
    moves: dict[str, str] = field(default_factory=dict)
    cookies: frozenset[str] = frozenset()
    full: bool = False
    events: int = 0

    def __bool__(self) -> bool:
        return bool(self.paths or self.cookies or self.full)


def collapse(paths: Iterable[str]) -> frozenset[str]:
    """Drop paths that lie under another dirty path: the subtree rescan covers them."""
    kept: list[str] = []
    for p in sorted(set(paths)):
        if kept and (kept[-1] == "" or p.startswith(kept[-1] + "/")):
            continue
        kept.append(p)
    return frozenset(kept)


class DirtySet:
    """Thread-safe accumulator of hints that hands out batches once events have settled."""

    def __init__(self, *, settle_s: float, max_delay_s: float = 1.0,
                 max_paths: int = MAX_DIRTY,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.settle_s = settle_s
        self.max_delay_s = max(max_delay_s, settle_s)
        self.max_paths = max_paths
        self._monotonic = monotonic
        # Reentrant so that a signal handler running on the waiting thread can wake it.
        self._cond = threading.Condition(threading.RLock())
        self._paths: set[str] = set()
        self._moves: dict[str, str] = {}
        self._cookies: set[str] = set()
        self._full = False
        self._events = 0
        self._first = 0.0
        self._last = 0.0
        self._woken = False

    def _touch(self) -> None:
        now = self._monotonic()
        if not self._pending():
            self._first = now
        self._last = now
        self._events += 1

    def _pending(self) -> bool:
        return bool(self._paths or self._cookies or self._full)

    def mark(self, *paths: str) -> None:
        """Mark paths (files or directories) dirty."""
        with self._cond:
            self._touch()
            if not self._full:
                self._paths.update(paths)
                if len(self._paths) > self.max_paths:
                    self._full, self._paths = True, set()
            self._cond.notify_all()

    def move(self, src: str, dest: str) -> None:
        """Record an observed rename and mark both ends dirty."""
        with self._cond:
            origin = self._moves.pop(src, src)  # a→b then b→c is one move a→c
            if origin != dest:
                self._moves[dest] = origin
            self.mark(src, dest)

    def cookie(self, name: str) -> None:
        """A query is waiting for everything seen so far to be recorded."""
        with self._cond:
            self._touch()
            self._cookies.add(name)
            self._cond.notify_all()

    def wait_cookie(self, name: str, timeout: float) -> bool:
        """Wait until the cookie `name` has been seen (so has every event before it)."""
        with self._cond:
            return self._cond.wait_for(lambda: name in self._cookies, timeout)

    def wait_marked(self, path: str, timeout: float) -> bool:
        """Wait until a hint for `path` is pending (or a full rescan, which covers it)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._full or path in self._paths, timeout)

    def overflow(self) -> None:
        """Events were lost: the next batch is a full rescan."""
        with self._cond:
            self._touch()
            self._full, self._paths = True, set()
            self._cond.notify_all()

    def wake(self) -> None:
        """Make a waiting `take` return now (to stop, or to poll)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def restore(self, batch: Batch) -> None:
        """Put a batch that could not be recorded back, so that nothing is lost."""
        with self._cond:
            if batch.full:
                self._full, self._paths = True, set()
            elif not self._full:
                self._paths.update(batch.paths)
            for dest, src in batch.moves.items():
                self._moves.setdefault(dest, src)
            self._cookies.update(batch.cookies)
            if not self._first:
                self._first = self._last = self._monotonic()

    def _ready_in(self) -> float | None:
        """Seconds until the pending hints may be handed out; None when there are none."""
        if not self._pending():
            return None
        if self._cookies:
            return 0.0  # the writer finished before it wrote the cookie: no need to settle
        now = self._monotonic()
        return max(0.0, min(self._last + self.settle_s, self._first + self.max_delay_s) - now)

    def idle(self) -> bool:
        """Whether no hint is pending (nothing has arrived since the last batch)."""
        with self._cond:
            return not self._pending()

    def take(self, timeout: float | None = None, *, settle: bool = True) -> Batch:
        """Wait until hints have settled and return them (empty after `timeout` or `wake`)."""
        deadline = None if timeout is None else self._monotonic() + timeout
        with self._cond:
            while True:
                wait = self._ready_in()
                if wait is not None and (wait <= 0 or not settle):
                    return self._drain()
                if self._woken:
                    self._woken = False
                    return Batch(frozenset())
                if deadline is not None:
                    left = deadline - self._monotonic()
                    if left <= 0:
                        return Batch(frozenset())
                    wait = left if wait is None else min(wait, left)
                self._cond.wait(wait)

    def _drain(self) -> Batch:
        batch = Batch(collapse(self._paths), dict(self._moves), frozenset(self._cookies),
                      self._full, self._events)
        self._paths, self._moves, self._cookies = set(), {}, set()
        self._full, self._events, self._first, self._woken = False, 0, 0.0, False
        return batch


def _relative(root: str, path: str | bytes) -> str | None:
    """POSIX path relative to the root; None outside it."""
    p = os.fsdecode(path)
    if p == root:
        return ""
    if not p.startswith(root + os.sep):
        return None
    return p[len(root) + 1:].replace(os.sep, "/")


def _internal(rel: str) -> bool:
    """Inside `.git/` or `.symdiff/` at any depth: never indexed, so never dirty."""
    return any(part in ALWAYS_IGNORED for part in rel.split("/"))


class _Handler(FileSystemEventHandler):
    """Translates watchdog events into hints; does nothing slow on watchdog's thread."""

    def __init__(self, root: str, dirty: DirtySet) -> None:
        self.root = root
        self.dirty = dirty

    def _hint(self, rel: str, *, arrived: bool = True) -> None:
        if rel.startswith(COOKIE_DIR + "/"):
            # Only a cookie's arrival asks us to catch up. Its later events (closed after
            # write, deleted by our ack or by a query giving up) can come after the batch that
            # answered it; taken as requests, they would hand out the next batch unsettled and
            # a save being written would be read half-written.
            if arrived:
                self.dirty.cookie(rel[len(COOKIE_DIR) + 1:])
        elif not _internal(rel):
            if rel.rsplit("/", 1)[-1] == ".gitignore":
                # What is tracked below this directory may have changed: rescan it.
                rel = rel.rpartition("/")[0]
            self.dirty.mark(rel)

    def on_any_event(self, event: FileSystemEvent) -> None:
        src = _relative(self.root, event.src_path)
        dest = _relative(self.root, event.dest_path) if event.dest_path else None
        if isinstance(event, DirDeletedEvent | DirCreatedEvent) and src == "":
            self.dirty.overflow()  # the root itself went or came back: rescan everything
            return
        if isinstance(event, FileMovedEvent | DirMovedEvent):
            if src is not None and dest is not None and not _internal(src) \
                    and not _internal(dest):
                self.dirty.move(src, dest)
                return
            if src is not None:
                self._hint(src, arrived=False)
            if dest is not None:
                self._hint(dest)
            return
        if src is not None:
            self._hint(src, arrived=isinstance(event, FileCreatedEvent))


class _OverflowAlarm(logging.Handler):
    """Hears watchdog's 'queue overflowed' log record and asks for a full rescan."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_overflow = on_overflow
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.count += 1
            self.on_overflow()


def watched_inodes(inotify_fd: int) -> set[int]:
    """Inode numbers the kernel watches for an inotify descriptor (from /proc fdinfo)."""
    found: set[int] = set()
    with open(f"/proc/self/fdinfo/{inotify_fd}", encoding="ascii") as f:
        for line in f:
            if line.startswith("inotify wd:"):
                for part in line.split():
                    if part.startswith("ino:"):
                        found.add(int(part[4:], 16))
    return found


def tracked_dirs(root: Path, rules: IgnoreRules, start: str = "") -> dict[str, int]:
    """Every readable, non-ignored directory at or under `start`: relative path -> inode."""
    out: dict[str, int] = {}
    stack = [start]
    while stack:
        rel = stack.pop()
        path = root / rel if rel else root
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode):
                continue  # a file or a link (not followed) where a directory was
            entries = list(os.scandir(path))
        except OSError:
            continue  # unreadable or gone: inotify cannot watch it and the walk cannot list it
        out[rel] = st.st_ino
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False) and \
                        not rules.is_ignored_entry(child, is_dir=True):
                    stack.append(child)
            except OSError:
                continue
    return out


class Watcher:
    """A running inotify observer over a workspace root that feeds a DirtySet."""

    def __init__(self, root: Path, dirty: DirtySet) -> None:
        self.root = root
        self.dirty = dirty
        self.handler = _Handler(str(root), dirty)
        self.alarm = _OverflowAlarm(dirty.overflow)
        self.observer = InotifyObserver()

    def start(self) -> None:
        """Attach the overflow alarm and start watching (raises OSError at the watch limit)."""
        state = StateDir(self.root)
        try:
            ensure_state_dir(state.path)
            state.cookies.mkdir(exist_ok=True)
        except OSError as exc:  # queries cannot ask us to catch up; recording goes on
            log.warning("cannot create %s: %s; queries will not wait for the daemon",
                        state.cookies, exc.strerror or exc)
        # A directory moved out keeps its inotify watch; moved back in, watchdog re-registers
        # the same callback and warns. Harmless, but under `-W error` that warning would kill
        # watchdog's reader thread and with it every later event.
        warnings.filterwarnings("ignore", message=r"Callback with id .* already exists",
                                category=RuntimeWarning)
        logger = logging.getLogger(OVERFLOW_LOGGER)
        if logger.getEffectiveLevel() > logging.WARNING:
            logger.setLevel(logging.WARNING)
        logger.addHandler(self.alarm)
        self.observer.schedule(self.handler, str(self.root), recursive=True,
                               event_filter=EVENT_TYPES)
        try:
            self.observer.start()
        except BaseException:
            logger.removeHandler(self.alarm)
            raise

    def stop(self) -> None:
        """Stop watching and detach the alarm."""
        logging.getLogger(OVERFLOW_LOGGER).removeHandler(self.alarm)
        if self.observer.is_alive():
            self.observer.stop()
            self.observer.join(timeout=5)

    def alive(self) -> bool:
        """Whether every watchdog thread that events pass through is still running."""
        threads = [self.observer, getattr(self.observer, "_inotify_fd", None),
                   *self.observer.emitters]
        return all(t is None or t.is_alive() for t in threads)

    def inotify_fd(self) -> int | None:
        """The observer's inotify descriptor (a watchdog internal; None if it moved)."""
        fd_obj = getattr(self.observer, "_inotify_fd", None)
        fd = getattr(fd_obj, "_inotify_fd", None)
        return fd if isinstance(fd, int) else None

    def unwatched(self, dirs: dict[str, int]) -> list[str]:
        """Those of `dirs` (relative path -> inode) the kernel does not watch."""
        fd = self.inotify_fd()
        if fd is None:
            return []
        try:
            inodes = watched_inodes(fd)
        except OSError:
            return []
        return sorted(rel for rel, ino in dirs.items() if ino not in inodes)
