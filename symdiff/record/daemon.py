"""The watch daemon: one per workspace; a start reconcile, then batches of settled events.

What other processes need from it lives apart, so that they need not import it: the lock and
whether a daemon runs (`workspace.lock`), read-your-writes (`workspace.sync`), and the status
report (`query/status.py`).

One module because what is left is the loop and the ways it keeps a batch from being
lost — retries with backoff, splitting a failing batch down to the path, a git command's tail,
degraded polling past the watch limit, the flush at shutdown, the status file. Each is short;
they share the batch and the stats.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from types import FrameType

from symdiff.agents.reader import Journals
from symdiff.agents.recorder import flush
from symdiff.config import Settings
from symdiff.errors import StoreError
from symdiff.model import FileChange, Origin, Provenance
from symdiff.record.heap import settle_heap
from symdiff.record.indexer import Notices, Progress, Report, check_root, reconcile
from symdiff.record.origins import BatchOrigins
from symdiff.record.retention import Collector
from symdiff.record.walk import IgnoreRules
from symdiff.record.watcher import Batch, DirtySet, Watcher, collapse, tracked_dirs
from symdiff.store import Store
from symdiff.timestamps import Clock, format_us, to_us, utcnow
from symdiff.workspace.layout import DaemonStatus, StateDir, write_status
from symdiff.workspace.lock import now_text, workspace_lock

log = logging.getLogger(__name__)

OnChanges = Callable[[Sequence[FileChange]], None]
POLL_S = 5.0  # full rescan period when some directories cannot be watched
MAX_BACKOFF_S = 30.0
ISOLATE_AFTER = 3  # failed attempts of a batch (not database outages) before splitting it
LOG_EVERY_S = 60.0
HEALTH_S = 1.0  # how often the loop checks that watchdog's threads are alive
REFRESH_S = 0.25  # how often an idle loop in a git work tree refreshes the git state
FLUSH_WAIT_S = 2.0
GIT_TAIL_S = 30.0  # a git batch takes in what keeps arriving, each settle window, up to this
PROGRESS_EVERY_S = 0.5  # how often the start pass's progress is written to the status file


@dataclass(slots=True)
class Stats:
    """What the daemon has done since it started (written to the status file)."""

    started_at: str = field(default_factory=now_text)
    batches: int = 0
    events: int = 0
    changes: int = 0
    full_rescans: int = 0
    overflows: int = 0
    last_reconcile: str | None = None
    last_reconcile_ms: float | None = None
    restarts: int = 0
    degraded: bool = False
    unwatched: list[str] = field(default_factory=list)
    # While a batch keeps failing: since when, how many attempts, and the last error.
    failing_since: str | None = None
    attempts: int = 0
    last_error: str | None = None
    # Paths whose changes a split batch could not record (they wait for a later pass).
    unrecorded: list[str] = field(default_factory=list)
    # While the start pass runs: {"pass": "baseline" | "reconcile", "done", "total"}.
    progress: dict[str, object] | None = None
    # Idle refreshes that took the git state as the next batch's "before" (origins.py).
    git_refreshes: int = 0
    # The reference index's build after the start pass: {"state", "done", "total"}.
    refindex: dict[str, object] | None = None


class Daemon:
    """Watch one workspace and record its changes until `stop()` (or a signal)."""

    def __init__(self, settings: Settings, *, poll_s: float = POLL_S,
                 max_delay_s: float = 1.0, on_changes: OnChanges | None = None,
                 history: bool = False, retention: bool = True, refindex: bool = True,
                 clock: Clock = utcnow) -> None:
        """`on_changes` is called with the changes of every recorded batch (the foreground
        watcher prints them); an error in it stops the calls, never the recording. `history`:
        import the last 720h of git history in the background after the start pass.
        `retention`: collect records older than `settings.keep_us` daily, and at start when
        overdue (retention.py). `refindex`: build the reference index of the files that lack
        one in the background after the start pass (docs/impact.md). `clock`: the wall clock
        of the status file's times and of the git quiet window (origins.py)."""
        self.settings = settings
        self.clock = clock
        self.history = history
        self.retention = retention
        self.refindex = refindex
        self._status_lock = threading.Lock()
        self.on_changes = on_changes
        self.poll_s = poll_s
        self.dirty = DirtySet(settle_s=settings.settle_ms / 1000, max_delay_s=max_delay_s)
        self.stats = Stats()
        self.notices = Notices()
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._refindex: threading.Thread | None = None  # the reference index's build
        self._store: Store | None = None
        self._watcher: Watcher | None = None
        self._last_full = 0.0
        self._origins: BatchOrigins | None = None
        self._state = StateDir(settings.root)
        self._written = threading.Condition()  # notified at every status write: `wait_until`
        self._journals = Journals(str(settings.root))  # agent sessions to keep (docs/agents.md)

    def stop(self) -> None:
        """Ask the loop to flush pending events and return (safe from a signal handler)."""
        self._stop.set()
        self.dirty.wake()

    def wait_until(self, done: Callable[[Stats], bool], timeout: float) -> bool:
        """Wait until `done(self.stats)` holds, looked at after every status write (each
        batch, failed attempt, progress step) and idle git refresh; False after `timeout`.

        The seam tests wait on instead of sleeping or polling the database.
        """
        with self._written:
            return self._written.wait_for(lambda: done(self.stats), timeout)

    def _notify(self) -> None:
        with self._written:
            self._written.notify_all()

    @property
    def watcher(self) -> Watcher | None:
        """The running watcher (for diagnostics and tests)."""
        return self._watcher

    def run(self, *, show_progress: bool = False) -> Stats:
        """Lock, reconcile the whole tree, then follow events until stopped."""
        check_root(self.settings)
        with workspace_lock(self.settings.root, self.settings.host) as info:
            self.stats.started_at = str(info["started_at"])
            store = self._store = Store(self.settings.db_url)
            self._origins = BatchOrigins(
                self.settings.root, wall_ns=lambda: to_us(self.clock()) * 1000)
            collector: Collector | None = None
            try:
                self._start_watching()
                self._start_reconcile(show_progress)
                self._check_watches(None)
                self.ready.set()
                if self.history:
                    from symdiff.git.importer import import_in_background

                    import_in_background(self.settings)
                if self.refindex:
                    self._build_refindex()
                if self.retention:
                    collector = Collector(self.settings)  # daily, and now if overdue
                    collector.start()
                log.info("watching %s (%s)", self.settings.root,
                         "degraded: periodic rescans" if self.stats.degraded else "inotify")
                self._loop()
                self._flush()
            finally:
                # The reference index's build ends at its next step (a chunk), before the
                # workspace lock is let go: a build outliving its daemon wrote its status over
                # the next daemon's.
                self._stop.set()
                if self._refindex is not None:
                    self._refindex.join(FLUSH_WAIT_S)
                if collector is not None:
                    collector.stop(FLUSH_WAIT_S)
                if self._watcher is not None:
                    self._watcher.stop()
                store.close()
                self._write_status(running=False)
                self.ready.set()
        return self.stats

    def _start_reconcile(self, show_progress: bool) -> None:
        """The full pass every start makes (a baseline on the first), with a progress bar.

        Its progress is in the status file while it runs (`symdiff status`). Cookies already
        there were written before this pass began, so it answers them too.
        """
        assert self._store is not None
        ws = self._store.find_workspace(str(self.settings.root), self.settings.host)
        kind = "reconcile" if ws is not None and ws.baseline_done else "baseline"
        full = Batch(frozenset(), cookies=_cookies(self._state), full=True)
        written = time.monotonic()  # a pass that ends within PROGRESS_EVERY_S writes none

        def note(done: int, total: int) -> None:
            nonlocal written
            self.stats.progress = {"pass": kind, "done": done, "total": total}
            if time.monotonic() - written >= PROGRESS_EVERY_S:
                written = time.monotonic()
                self._write_status(running=True)

        note(0, 0)
        try:
            if not show_progress:
                self._reconcile(full, progress=note)
                return
            from symdiff.record.progress import progress_bar

            with progress_bar(kind) as bar:

                def both(done: int, total: int) -> None:
                    bar(done, total)
                    note(done, total)

                self._reconcile(full, progress=both)
        finally:
            self.stats.progress = None
            self._write_status(running=True)

    def _build_refindex(self) -> None:
        """The reference index's build, in the background (docs/impact.md); its progress is
        in the status file."""
        from symdiff.impact.index import build_in_background

        written = 0.0

        def note(done: int, total: int) -> None:
            nonlocal written
            self.stats.refindex = {"state": "building", "done": done, "total": total}
            if time.monotonic() - written >= PROGRESS_EVERY_S or done == total:
                written = time.monotonic()
                self._write_status(running=True)

        def finished() -> None:
            if self._stop.is_set():
                return  # the daemon has written its last status, or a new daemon writes its own
            found = self.stats.refindex or {"done": 0, "total": 0}
            self.stats.refindex = {**found, "state": "built"}
            self._write_status(running=True)

        self._refindex = build_in_background(self.settings, note, finished, self._stop)

    def _start_watching(self) -> None:
        watcher = Watcher(self.settings.root, self.dirty)
        try:
            watcher.start()
        except OSError as exc:
            # ENOSPC/EMFILE: the inotify watch or instance limit. Keep recording, by polling.
            self._degrade([f"(inotify unavailable: {exc.strerror or exc})"])
            return
        self._watcher = watcher

    def _loop(self) -> None:
        last_log, last_events = time.monotonic(), 0
        while not self._stop.is_set():
            timeout = min(self.poll_s, HEALTH_S) if self.stats.degraded else HEALTH_S
            if self._origins is not None and self._origins.in_git:
                timeout = min(timeout, REFRESH_S)
            batch = self.dirty.take(timeout)
            if self._stop.is_set():
                self.dirty.restore(batch)
                break
            if self._watcher is not None and not self._watcher.alive():
                self._restart_watcher()
            elif not batch and self.stats.degraded and \
                    time.monotonic() - self._last_full >= self.poll_s:
                batch = Batch(frozenset(), full=True)
            if batch:
                self._reconcile(batch)
                if batch.full or batch.paths:
                    self._check_watches(batch)
            elif self._origins is not None and self.dirty.idle() and self._origins.refresh():
                self.stats.git_refreshes += 1  # a ref-only git command claims no later edit
                self._notify()
            self._keep_sessions()
            elapsed = time.monotonic() - last_log
            if elapsed >= LOG_EVERY_S:
                rate = (self.stats.events - last_events) / elapsed
                last_log, last_events = time.monotonic(), self.stats.events
                log.info("%.1f events/s; %d batches, %d events, %d changes recorded, "
                         "last reconcile %s", rate, self.stats.batches, self.stats.events,
                         self.stats.changes, self.stats.last_reconcile)

    def _keep_sessions(self) -> None:
        """Copy new agent-session events (turns) into the database; never fails the loop."""
        if self._store is None:
            return
        try:
            flush(self._store, self.settings, self._journals)
        except Exception as exc:  # the journal stays on disk: the next look writes it
            log.warning("cannot keep the agent sessions in the database: %s", exc)

    def _restart_watcher(self) -> None:
        """A watchdog thread died (events from now on would be lost): watch anew, rescan all."""
        log.error("the watcher stopped unexpectedly; restarting it and rescanning everything")
        assert self._watcher is not None
        self._watcher.stop()
        self._watcher = None
        self.stats.restarts += 1
        self._start_watching()
        self.dirty.overflow()

    def _flush(self) -> None:
        """Record what is pending at shutdown, without waiting for it to settle.

        A cookie of our own first proves that every event from before the stop has travelled
        through watchdog's threads into the dirty set.
        """
        if self._watcher is not None:
            name = f"flush-{uuid.uuid4().hex}"
            with contextlib.suppress(OSError):
                (self._state.cookies / name).touch()
                if not self.dirty.wait_cookie(name, FLUSH_WAIT_S):
                    log.warning("events still in flight at shutdown; the next start records them")
        batch = self.dirty.take(0, settle=False)
        if batch:
            self._reconcile(batch, retries=3)

    def _reconcile(self, batch: Batch, *, progress: Progress | None = None,
                   retries: int | None = None) -> bool:
        """Record one batch; on failure keep it and retry with backoff.

        Retries until stopped (`retries` None) or that many times; a batch not recorded goes
        back into the dirty set, so that nothing is lost.
        """
        backoff = 0.1
        attempt = bugs = 0
        assert self._origins is not None
        provenance = self._origins.next(full=batch.full)  # once: retries keep it
        if provenance.origin is Origin.GIT and not batch.full:
            batch = self._git_tail(batch)
        while True:
            try:
                report = self._run_pass(batch, provenance, progress)
            except StoreError as exc:
                log.warning("database unavailable (%s); retrying in %.1fs", exc.reason, backoff)
                self._failed(exc.render())
            except Exception as exc:  # a bug must cost a retry, never the daemon or the batch
                log.exception("reconcile failed; retrying in %.1fs", backoff)
                self._failed(f"{exc.__class__.__name__}: {exc}")
                bugs += 1
                if bugs >= ISOLATE_AFTER and (batch.full or len(batch.paths) > 1):
                    self._done(batch, self._isolate(batch, provenance))
                    return True
            else:
                self._recorded(None if batch.full else batch.paths)
                self._done(batch, report)
                return True
            attempt += 1
            if retries is None:
                gave_up = self._stop.wait(backoff)
            else:
                gave_up = attempt > retries
                time.sleep(0 if gave_up else backoff)
            if gave_up:
                self.dirty.restore(batch)
                log.error("%s pending changes not recorded; the next start's reconcile will "
                          "record them", "all" if batch.full else len(batch.paths))
                return False
            backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _git_tail(self, batch: Batch) -> Batch:
        """A git command's writes can outlast one settle window (a large checkout): what
        arrives within the next windows is its tail, recorded with it as `git`."""
        deadline = time.monotonic() + GIT_TAIL_S
        while time.monotonic() < deadline:
            time.sleep(self.dirty.settle_s)
            rest = self.dirty.take(0, settle=False)
            if not rest:
                break
            # A full rescan asked for by any part (a queue overflow in the middle of a large
            # checkout) stays asked for: the events the kernel dropped are in no part's paths.
            batch = Batch(collapse(batch.paths | rest.paths), {**batch.moves, **rest.moves},
                          batch.cookies | rest.cookies, batch.full or rest.full,
                          batch.events + rest.events)
        return batch

    def _isolate(self, batch: Batch, provenance: Provenance) -> Report:
        """Reconcile a batch that keeps failing one path (and its move partner) at a time.

        One path that trips a bug must not hold back every other change in the tree: the
        others are recorded, the failing ones are logged and left for a later pass. A full
        pass is split into the root's entries; a directory that fails, into its entries.
        """
        assert self._store is not None
        partners: dict[str, set[str]] = {}
        for new, old in batch.moves.items():
            partners.setdefault(new, set()).add(old)
            partners.setdefault(old, set()).add(new)
        changes: list[FileChange] = []
        done: set[str] = set()
        failed: list[str] = []
        todo = deque(self._entries("") if batch.full else sorted(batch.paths))
        while todo:
            path = todo.popleft()
            if path in done:
                continue
            group = {path} | partners.get(path, set())
            done |= group
            moves = {n: o for n, o in batch.moves.items() if n in group and o in group}
            try:
                report = reconcile(self._store, self.settings, paths=sorted(group), moves=moves,
                                   notices=self.notices, provenance=provenance)
            except Exception:  # the bug again: this path waits, the rest goes on
                inside = self._entries(path) if len(group) == 1 else []
                if inside:
                    todo.extend(inside)
                    continue
                log.exception("cannot record changes at %s; it stays as it is in the index "
                              "until a later pass succeeds", ", ".join(sorted(group)))
                failed.extend(sorted(group))
            else:
                self._recorded(group)
                changes.extend(report.changes)
        self.stats.unrecorded = sorted(set(self.stats.unrecorded) | set(failed))
        return Report(baseline=False, scanned=0, read=0, changes=tuple(changes))

    def _recorded(self, paths: Collection[str] | None) -> None:
        """Forget unrecorded paths at or under `paths` (None: all), now recorded after all."""
        if paths is None:
            self.stats.unrecorded = []
            return
        self.stats.unrecorded = [u for u in self.stats.unrecorded
                                 if not any(p in ("", u) or u.startswith(p + "/") for p in paths)]

    def _entries(self, rel_dir: str) -> list[str]:
        """What lies directly in a directory, on disk or in the index (empty for a file)."""
        assert self._store is not None
        prefix = f"{rel_dir}/" if rel_dir else ""
        names: set[str] = set()
        with contextlib.suppress(OSError):
            names.update(e.name for e in os.scandir(self.settings.root / rel_dir))
        ws = self._store.find_workspace(str(self.settings.root), self.settings.host)
        if ws is not None:
            under = None if not rel_dir else [rel_dir]
            for stored in self._store.file_states(ws.id, under=under):
                if stored.startswith(prefix):
                    names.add(stored[len(prefix):].split("/", 1)[0])
        return [prefix + name for name in sorted(names)]

    def _run_pass(self, batch: Batch, provenance: Provenance,
                  progress: Progress | None) -> Report:  # fmt: skip
        assert self._store is not None
        if batch.full:
            return reconcile(self._store, self.settings, moves=batch.moves, progress=progress,
                             notices=self.notices, provenance=provenance)
        if not batch.paths:
            return Report(baseline=False, scanned=0, read=0, changes=())
        return reconcile(self._store, self.settings, paths=batch.paths, moves=batch.moves,
                         notices=self.notices, provenance=provenance)

    def _failed(self, error: str) -> None:
        """Note a failed attempt where `symdiff status` shows it."""
        s = self.stats
        s.failing_since = s.failing_since or self._now_text()
        s.attempts += 1
        s.last_error = error
        self._write_status(running=True)

    def _done(self, batch: Batch, report: Report) -> None:
        s = self.stats
        s.batches += 1
        s.events += batch.events
        s.changes += len(report.changes)
        s.full_rescans += int(batch.full)
        if batch.full:
            self._last_full = time.monotonic()
        s.last_reconcile = self._now_text()
        s.last_reconcile_ms = round(report.seconds * 1000, 1)
        s.failing_since, s.attempts, s.last_error = None, 0, None
        if self._watcher is not None:
            s.overflows = self._watcher.alarm.count
        for name in batch.cookies:
            # The ack: every event seen before the cookie is now recorded.
            with contextlib.suppress(OSError):
                (self._state.cookies / name).unlink()
        if batch.full:
            level = logging.DEBUG if self.stats.degraded and not report.changes else logging.INFO
            log.log(level, "%s of %d files: %d changes in %.2fs",
                     "baseline" if report.baseline else "full reconcile", report.scanned,
                     len(report.changes), report.seconds)
        elif report.changes:
            log.debug("%d paths: %d changes in %.0f ms", len(batch.paths), len(report.changes),
                      report.seconds * 1000)
        self._write_status(running=True)
        if report.changes:
            self._show(report.changes)

    def _show(self, changes: Sequence[FileChange]) -> None:
        if self.on_changes is None:
            return
        try:
            self.on_changes(changes)
        except Exception as exc:  # a closed pipe, say: recording goes on, unseen
            self.on_changes = None
            log.warning("cannot show changes any more (%s: %s); recording goes on",
                        exc.__class__.__name__, exc)

    def _check_watches(self, batch: Batch | None) -> None:
        """Compare the directories we mean to watch with what inotify watches."""
        if self._watcher is None or self.stats.degraded:
            return
        rules = IgnoreRules(self.settings.root, self.settings.ignore)
        starts = [""] if batch is None or batch.full else sorted(batch.paths)
        dirs: dict[str, int] = {}
        for start in starts:
            # tracked_dirs skips what it cannot stat (gone, or under a directory we may not
            # enter); a file yields nothing.
            dirs.update(tracked_dirs(self.settings.root, rules, start))
        missing = self._watcher.unwatched(dirs)
        if missing:
            time.sleep(0.25)  # watchdog may not have reached those creations yet
            again = tracked_dirs(self.settings.root, rules, "")
            missing = self._watcher.unwatched({d: again[d] for d in missing if d in again})
        if missing:
            self._degrade(missing)

    def _degrade(self, missing: list[str]) -> None:
        self.stats.degraded = True
        self.stats.unwatched = missing[:20]
        log.warning(
            "WATCH LIMIT: %d directories cannot be watched (e.g. %s); falling back to a full "
            "rescan every %.1fs. Raise fs.inotify.max_user_watches to restore instant updates.",
            len(missing), ", ".join(missing[:3]) or "?", self.poll_s)
        self.dirty.wake()

    def _now_text(self) -> str:
        return format_us(to_us(self.clock()))

    def _write_status(self, *, running: bool) -> None:
        # The reference index's build writes from its own thread: one writer at a time, or the
        # two would share the status file's temporary name.
        with self._status_lock:
            self._write_status_now(running=running)
        self._notify()

    def _write_status_now(self, *, running: bool) -> None:
        s = self.stats
        status = DaemonStatus(
            pid=os.getpid(), host=self.settings.host, root=str(self.settings.root),
            running=running, started_at=s.started_at, last_reconcile=s.last_reconcile,
            last_reconcile_ms=s.last_reconcile_ms, batches=s.batches, events=s.events,
            changes_recorded=s.changes, full_rescans=s.full_rescans, overflows=s.overflows,
            restarts=s.restarts, degraded=s.degraded, unwatched=list(s.unwatched),
            failing=s.failing_since is not None, failing_since=s.failing_since,
            attempts=s.attempts, last_error=s.last_error, unrecorded=s.unrecorded[:20],
            progress=None if s.progress is None else dict(s.progress),
            refindex=None if s.refindex is None else dict(s.refindex))
        try:
            write_status(self.settings.root, status)
        except OSError as exc:
            log.warning("cannot write %s: %s", self._state.status, exc)


def _cookies(state: StateDir) -> frozenset[str]:
    """The cookies waiting now (written before the watcher started, or left behind)."""
    try:
        return frozenset(e.name for e in os.scandir(state.cookies))
    except OSError:
        return frozenset()


def watch(settings: Settings, *, show_progress: bool = False, poll_s: float = POLL_S,
          on_changes: OnChanges | None = None, history: bool = False) -> Stats:
    """Run the daemon in the foreground until SIGINT/SIGTERM; pending events are flushed.

    `on_changes` sees the changes of every recorded batch; `history` imports the last 720h of
    git history in the background (see `Daemon`).
    """
    daemon = Daemon(settings, poll_s=poll_s, on_changes=on_changes, history=history)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log.info("%s: flushing and stopping", signal.Signals(signum).name)
        daemon.stop()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    settle_heap()
    try:
        return daemon.run(show_progress=show_progress)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
