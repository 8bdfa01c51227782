"""Retention: what a collection keeps (the window, readers' unread records), one collection
(`collect`, behind `symdiff db gc`), and the daemon's schedule (daily, and at start when
overdue). The SQL is store/gc.py; docs/retention.md says why each rule is what it is.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError
from symdiff.parse.version import extractor_version
from symdiff.store import Position, Store, gc
from symdiff.timestamps import Clock, to_us, utcnow

log = logging.getLogger(__name__)

DAILY_S = 24 * 3600.0
SLACK_US = 24 * 3600 * 1_000_000  # a record this much older than the window: gc is overdue


@dataclass(frozen=True, slots=True)
class GcReport:
    """What one collection did."""

    cutoff_us: int  # records observed before this went (unless a reader pinned them)
    records: int
    symbol_rows: int
    blobs: int
    vacuum: str  # incremental | converted | reused | vacuum | server (see gc.Reclaimed)
    pages_freed: int
    size_before: int | None
    size_after: int | None
    seconds: float
    longest_write_s: float  # the longest of its transactions (SQLite: the writer lock held)
    facts: int = 0  # rows of facts by content (a blob's stored symbols) collected

    def as_json(self) -> dict[str, object]:
        """The report as `symdiff db gc --json` prints it."""
        return {"cutoff_us": self.cutoff_us, "records": self.records,
                "symbol_rows": self.symbol_rows, "blobs": self.blobs, "vacuum": self.vacuum,
                "pages_freed": self.pages_freed, "size_before": self.size_before,
                "size_after": self.size_after, "facts": self.facts,
                "seconds": round(self.seconds, 3),
                "longest_write_ms": round(self.longest_write_s * 1000, 1)}  # fmt: skip


def reader_pin(cursors: list[str]) -> Position | None:
    """The earliest position among readers' cursors: records after it are unread by someone.
    A cursor that does not decode pins nothing."""
    from symdiff.query.args import decode_cursor

    pins = []
    for cursor in cursors:
        try:
            pins.append(decode_cursor(cursor))
        except InvalidArgs:
            continue
    return min(pins, key=lambda p: (p.txid, p.id), default=None)


def collect(settings: Settings, *, now: float | None = None, convert: bool = False,
            store: Store | None = None) -> GcReport:  # fmt: skip
    """One collection of `settings.db_url` with the window `settings.keep_us`.

    Records observed before now - keep go with their symbol rows, except those a named reader
    that moved within the window has not read yet (kept up to 2 x keep); then the snapshots
    nothing needs, and the stored symbols of blobs nothing names that were written before the
    cutoff (and every other extractor version's); then SQLite gives the room back.
    `convert`: switch a database made before incremental vacuum (one VACUUM; the CLI asks for
    it, the daemon never does).
    """
    started = time.monotonic()
    now_us = int((time.time() if now is None else now) * 1e6)
    cutoff = now_us - settings.keep_us
    own = store is None
    db = Store(settings.db_url) if store is None else store
    try:
        before = db.size_bytes()
        pin = reader_pin(gc.reader_cursors(db.engine, active_since_us=cutoff))
        held: list[float] = []
        records, symbols = gc.delete_records(db.engine, before_us=cutoff, pin=pin,
                                             pin_floor_us=cutoff - settings.keep_us, held=held)
        gc.delete_orphans(db.engine, held=held)
        blobs = gc.delete_blobs(db.engine, gc.find_garbage(db.engine), held=held)
        dropped_facts = gc.delete_facts(db.engine, extractor=extractor_version(),
                                        before_us=cutoff, held=held)
        reclaimed = gc.reclaim(db.engine, convert=convert, held=held)
        after = db.size_bytes()
    finally:
        if own:
            db.close()
    return GcReport(cutoff, records, symbols, blobs, reclaimed.mode, reclaimed.pages, before,
                    after, time.monotonic() - started, max(held, default=0.0),
                    dropped_facts)  # fmt: skip


def overdue(oldest_us: int | None, now_us: int, keep_us: int) -> bool:
    """Stateless: a collection is overdue when the oldest record is older than the window by
    more than a day (a daemon that was down past its daily run)."""
    return oldest_us is not None and oldest_us < now_us - keep_us - SLACK_US


class Collector:
    """The daemon's collections, on a thread of their own with their own Store: at start when
    overdue, then every `period_s`. A failed collection is logged and retried next period."""

    def __init__(self, settings: Settings, *, clock: Clock = utcnow,
                 period_s: float = DAILY_S) -> None:  # fmt: skip
        self.settings = settings
        self.clock = clock
        self.period_s = period_s
        self.runs: list[GcReport] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="symdiff-gc", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the running batch (each is its own transaction) and wait for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            with Store(self.settings.db_url) as store:
                oldest = gc.oldest_us(store.engine)
                if overdue(oldest, to_us(self.clock()), self.settings.keep_us):
                    self._collect(store)
                while not self._stop.wait(self.period_s):
                    self._collect(store)
        except SymdiffError as exc:
            log.warning("retention stopped: %s", exc.render())

    def _collect(self, store: Store) -> None:
        try:
            report = collect(self.settings, now=self.clock().timestamp(), store=store)
        except SymdiffError as exc:
            log.warning("gc failed (retried in %.0f s): %s", self.period_s, exc.render())
            return
        self.runs.append(report)
        log.info("gc: %d records, %d snapshots collected; %d pages given back (%.1f s)",
                 report.records, report.blobs, report.pages_freed, report.seconds)
