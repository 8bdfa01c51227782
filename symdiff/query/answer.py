"""The read side: the `diff` query (docs/spec.md, after docs/seeds/003-diff-query-tool.txt),
with the filters, cursors and readers of docs/query.md.

The argument rules live in `query/args.py`, the answer's shape and notes in
`query/result.py`; this module runs a parsed query against a store and decides which notes
the answer gets.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import ToolFailed
from symdiff.model import Scope
from symdiff.query.args import (
    LONGEST_SINCE,
    MAX_LIMIT,
    DiffQuery,
    Window,
    beyond_max_since,
    decode_cursor,
    encode_cursor,
    limit_replaced,
    parse,
)
from symdiff.query.patches import change_git_patch, change_patch
from symdiff.query.result import (
    STALE_WARNING,
    Answer,
    BaselineTaken,
    Hidden,
    LimitReplaced,
    Note,
    NothingIndexed,
    Refreshed,
    SinceCut,
    Stale,
    StartPass,
    Unwatched,
)
from symdiff.query.workspaces import is_own, select_workspaces
from symdiff.records import ChangeRecord
from symdiff.store import ChangeFilter, Page, Position, Store
from symdiff.store.changes import START
from symdiff.store.kept import reader, writer
from symdiff.timestamps import format_us, to_us
from symdiff.workspace.layout import read_status
from symdiff.workspace.lock import running
from symdiff.workspace.sync import sync

__all__ = ["STALE_WARNING", "Answer", "DiffQuery", "diff"]


def diff(
    settings: Settings,
    query: DiffQuery | None = None,
    *,
    store: Store | None = None,
    now: datetime | None = None,
    explain: bool = False,
    count_hidden: bool = True,
    git_patches: bool = False,
    refreshed: Refreshed | None = None,
) -> Answer:
    """Recent changes with their symbols, newest first (the `diff` query of docs/spec.md).

    The arguments are checked before any database work. A running daemon first records the
    saves made before this call (read-your-writes); `stale` says it did not confirm in time.
    The query covers the workspace `settings.root` on `settings.host` unless `query.workspace`
    says otherwise. The database is read through the process's read-only Store for
    `settings.db_url` (opened at the first query, kept open: store/kept.py); `store` is the
    seam for a caller that holds one already. `now` is the clock seam. `explain` adds what a
    person needs to read the answer right (`notes`, `hidden`, `recorded_until`: two small
    reads); `count_hidden=False` leaves `hidden` 0: its count scans the other scope's records
    in the window, which with a path filter over a month of a large history takes a second.
    `git_patches` the patches a person applies with `git apply` (`patches`). `refreshed`: the
    reconcile pass the caller made just before (its notes replace "no daemon watches").
    """
    query = query or DiffQuery()
    if query.against is not None:  # the work tree against a revision: git, not the index
        from symdiff.query.against import answer

        return answer(settings, query, now=now)
    window = parse(query)
    root = settings.root
    watched = running(root) is not None
    stale = watched and not sync(root)
    store = store or reader(settings.db_url)
    if store is None:  # nothing indexed yet: a cursor stays where it was
        start = window.cursor or START
        found = Answer([], stale=stale, cursor=encode_cursor(start), indexed=False,
                       watched=watched)  # fmt: skip
        return _explained(found, settings, query, window, refreshed) if explain else found
    ids = select_workspaces(
        store.workspaces(), root=root.resolve(), host=settings.host, workspace=query.workspace,
    )  # fmt: skip
    start_us = to_us(now or datetime.now(UTC)) - window.since_ns // 1000
    after: Position | None = window.cursor
    if window.reader is not None:
        page, after = _read_as(window.reader, settings, store, ids, window, start_us)
    else:
        page = _page(store, ids, window, after, start_us)
    hidden, until = 0, None
    if explain and ids != []:
        if count_hidden and window.scope is not None and len(page.changes) < window.limit:
            other = Scope.TEST if window.scope is Scope.IMPL else Scope.IMPL
            hidden = store.count(_filter(ids, window, after, start_us, scope=other))
        if not watched:
            until = _recorded_until(store, ids, root)
    patches = tuple(change_git_patch(store, c) for c in page.changes) if git_patches else ()
    found = Answer(_records(store, query, page), stale=stale,
                   cursor=encode_cursor(page.position), more=page.more, indexed=ids != [],
                   watched=watched, hidden=hidden, recorded_until=until,
                   patches=patches)  # fmt: skip
    return _explained(found, settings, query, window, refreshed) if explain else found


def _explained(found: Answer, settings: Settings, query: DiffQuery, window: Window,
               refreshed: Refreshed | None) -> Answer:  # fmt: skip
    """The answer with its notes, in the order a person reads them."""
    root = str(settings.root)
    own = is_own(query.workspace, settings.root)
    notes: list[Note] = []
    if limit_replaced(query.limit):
        notes.append(LimitReplaced(query.limit, window.limit, MAX_LIMIT))
    # The window bounds the answer unless it continues from a cursor or a reader's place.
    if window.cursor is None and window.reader is None and beyond_max_since(query.since):
        notes.append(SinceCut(str(query.since), LONGEST_SINCE))
    if found.stale:
        notes.append(Stale(root, _start_pass(settings.root)))
    if own and not found.indexed:
        notes.append(NothingIndexed(root))
    elif refreshed is not None and refreshed.baseline:
        notes.append(BaselineTaken(root, refreshed.scanned))
    elif own and refreshed is None and not found.watched:
        notes.append(Unwatched(root, found.recorded_until))
    if found.hidden and window.scope is not None:
        other = Scope.TEST if window.scope is Scope.IMPL else Scope.IMPL
        notes.append(Hidden(found.hidden, other.value))
    return replace(found, notes=tuple(notes))


def _start_pass(root: Path) -> StartPass | None:
    """The start pass the daemon watching `root` is still making, if it is."""
    progress = read_status(root).progress
    if not isinstance(progress, dict):
        return None
    name = "baseline" if progress.get("pass") == "baseline" else "reconcile"
    return StartPass(name, progress.get("done"), progress.get("total"))


def _recorded_until(store: Store, ids: list[int] | None, root: Path) -> str | None:
    """The newest record's time or the daemon's last reconcile, whichever is later."""
    newest = store.newest_us(ids)
    times = [format_us(newest)] if newest is not None else []
    last = read_status(root).last_reconcile
    if isinstance(last, str):
        times.append(last)
    return max(times, default=None)


def _filter(ids: list[int] | None, window: Window, after: Position | None, start_us: int, *,
            scope: Scope | None) -> ChangeFilter:  # fmt: skip
    # After a cursor every later record counts, however old its timestamp.
    since_us = 0 if after is not None and after != START else start_us
    return ChangeFilter(ids, since_us, scope, window.limit, origins=window.origins,
                        paths=window.paths, after=after)  # fmt: skip


def _page(store: Store, ids: list[int] | None, window: Window, after: Position | None,
          start_us: int) -> Page:  # fmt: skip
    if ids == []:  # no workspace here yet: nothing to read, the position stays
        return Page([], False, after or START)
    return store.page(_filter(ids, window, after, start_us, scope=window.scope))


def _read_as(name: str, settings: Settings, store: Store, ids: list[int] | None,
             window: Window, start_us: int) -> tuple[Page, Position]:  # fmt: skip
    """A named reader's next page and where it started: from where it stopped (a new reader:
    from the oldest record within `since`), its cursor moved on only if no other answer moved
    it meanwhile."""
    keeper = writer(settings.db_url)
    for _ in range(8):
        saved = keeper.reader_cursor(name)
        after = START if saved is None else decode_cursor(saved)
        page = _page(store, ids, window, after, start_us)
        if keeper.move_reader(name, saved, encode_cursor(page.position)):
            return page, after
    raise ToolFailed(f"reader {name!r} is being advanced by other calls at the same time; "
                     "call again, or give each caller its own reader name")


def _records(store: Store, query: DiffQuery, page: Page) -> list[ChangeRecord]:
    records = []
    for change in page.changes:
        record = change.record
        if query.workspace is not None:
            # An answer that may span workspaces says where each change happened.
            record["workspace"] = change.workspace
        if query.include_patch:
            record["acp"] = change_patch(store, change)
        records.append(record)
    return records
