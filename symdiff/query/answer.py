"""The read side: the `diff` query (seed 003, with round 2's filters, cursors and readers).

The argument rules live in `queryargs.py`; this module runs a parsed query against a store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from symdiff.config import Settings, workspace_root
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.model import Scope
from symdiff.query.args import (
    ALL_WORKSPACES,
    DiffQuery,
    Window,
    decode_cursor,
    encode_cursor,
    parse,
)
from symdiff.query.sessions import turn_filter, with_turn_bounds
from symdiff.records import ChangeRecord
from symdiff.store import ChangeFilter, Page, Position, Store, StoredChange, Workspace
from symdiff.store.changes import START
from symdiff.store.kept import reader, writer
from symdiff.timestamps import format_us, to_us
from symdiff.workspace.lock import running
from symdiff.workspace.status import daemon_report
from symdiff.workspace.sync import sync

if TYPE_CHECKING:
    from symdiff.diffs.acp import FilePatch

__all__ = ["STALE_WARNING", "Answer", "DiffQuery", "diff", "select_workspaces"]

_OPERATIONS = {"add": "add", "modify": "modify", "delete": "delete", "rename": "move"}
STALE_WARNING = (
    "the symdiff daemon watching this tree did not confirm within 1 s that it had recorded "
    "the latest saves; the answer may miss the most recent changes"
)


@dataclass(frozen=True, slots=True)
class Answer:
    """What a diff query answers.

    `records`: newest first, or oldest first after a cursor or for a reader. `stale`: a running
    daemon did not confirm in time that it had recorded the latest saves. `cursor`: pass it
    back to get what was recorded after this answer. `more`: records beyond the limit match.
    `indexed`: False when nothing is indexed where the query looks (no database, or no
    workspace at or above the root). `watched`: a daemon watches the caller's workspace.
    With `diff(..., explain=True)` only: `hidden`, how many records the scope filter left out
    of an answer short of its limit; `recorded_until`, when no daemon watches, the time up to
    which the index is known to be current (the newest record, or the last reconcile).
    With `diff(..., git_patches=True)`: `patches`, each record's patch as `git diff` writes it
    (see `change_git_patch`), in the records' order.
    """

    records: list[ChangeRecord]
    stale: bool = False
    cursor: str = ""
    more: bool = False
    indexed: bool = True
    watched: bool = False
    hidden: int = 0
    recorded_until: str | None = None
    patches: tuple[str, ...] = ()


def _within(root: Path, ws_root: str) -> bool:
    ws = Path(ws_root)
    return root == ws or ws in root.parents


def select_workspaces(
    workspaces: Sequence[Workspace], *, root: Path, host: str, workspace: str | None
) -> list[int] | None:
    """Workspace ids the query covers; None means every workspace.

    Default: the workspace on this host whose root is `root` or its nearest ancestor (none
    indexed yet: no workspace, so no records). "all": every workspace in the database.
    A path: the workspaces rooted there, on any host.
    """
    if workspace == ALL_WORKSPACES:
        return None
    if workspace is not None:
        wanted = Path(workspace).expanduser().resolve()
        ids = [w.id for w in workspaces if Path(w.root) == wanted]
        if not ids:
            raise InvalidArgs(f'no workspace is rooted at {json.dumps(str(wanted))}; '
                              'pass "all" or the root of an indexed tree')
        return ids
    mine = [w for w in workspaces if w.host == host and _within(root, w.root)]
    if not mine:
        return []
    nearest = max(mine, key=lambda w: len(Path(w.root).parts))
    return [nearest.id]


def _file_patch(store: Store, change: StoredChange) -> FilePatch:
    """One stored change with its bytes before and after, from the snapshots."""
    from symdiff.diffs.acp import FilePatch  # pygit2 loads only when a patch is asked for

    r = change.record
    op = _OPERATIONS[r["change_type"]]
    old = None if op == "add" or change.old_hash is None else store.get_blob(change.old_hash)
    new = None if op == "delete" or change.new_hash is None else store.get_blob(change.new_hash)
    return FilePatch(op, r["path"], old_path=r["old_path"] if op == "move" else None,
                     old_bytes=old, new_bytes=new)  # fmt: skip


def change_patch(store: Store, change: StoredChange) -> dict[str, object]:
    """The ACP v2 Diff of one stored change, its git patch rebuilt from the snapshots."""
    from symdiff.diffs.acp import build_diff

    return build_diff([_file_patch(store, change)], root=change.workspace)


def change_git_patch(store: Store, change: StoredChange) -> str:
    """One stored change as `git diff` writes it: paths relative to the workspace root behind
    `a/` and `b/`, so that plain `git apply` takes it there; "" without text to show."""
    from symdiff.diffs.acp import file_section

    return file_section(_file_patch(store, change), root=None)


def diff(
    settings: Settings,
    query: DiffQuery | None = None,
    *,
    store: Store | None = None,
    now: datetime | None = None,
    explain: bool = False,
    count_hidden: bool = True,
    git_patches: bool = False,
) -> Answer:
    """Recent changes with their symbols, newest first (the `diff` query of seed 003).

    The arguments are checked before any database work. A running daemon first records the
    saves made before this call (read-your-writes); `stale` says it did not confirm in time.
    The query covers `settings.root`'s workspace on `settings.host` unless `query.workspace`
    says otherwise. The database is read through the process's read-only Store for
    `settings.db_url` (opened at the first query, kept open: store/kept.py); `store` is the
    seam for a caller that holds one already. `now` is the clock seam. `explain` adds what a
    person needs to read the answer right (`hidden`, `recorded_until`: two small reads);
    `count_hidden=False` leaves `hidden` 0: its count scans the other scope's records in the
    window, which with a path filter over a month of a large history takes a second.
    `git_patches` the patches a person applies with `git apply` (`patches`).
    """
    query = query or DiffQuery()
    if query.against is not None:  # the work tree against a revision: git, not the index
        from symdiff.query.against import answer

        return answer(settings, query, now=now)
    window = parse(query)
    root = workspace_root(settings.root)
    watched = running(root) is not None
    stale = watched and not sync(root)
    store = store or reader(settings.db_url)
    if store is None:  # nothing indexed yet: a cursor stays where it was
        start = window.cursor or START
        return Answer([], stale=stale, cursor=encode_cursor(start), indexed=False,
                      watched=watched)  # fmt: skip
    ids = select_workspaces(
        store.workspaces(), root=settings.root.resolve(), host=settings.host,
        workspace=query.workspace,
    )  # fmt: skip
    start_us = to_us(now or datetime.now(UTC)) - window.since_ns // 1000
    if window.turns is not None:  # a turn is its own window (query/sessions.py)
        window = with_turn_bounds(window, store, ids, root)
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
    return Answer(_records(store, query, page), stale=stale, cursor=encode_cursor(page.position),
                  more=page.more, indexed=ids != [], watched=watched, hidden=hidden,
                  recorded_until=until, patches=patches)  # fmt: skip


def _recorded_until(store: Store, ids: list[int] | None, root: Path) -> str | None:
    """The newest record's time or the daemon's last reconcile, whichever is later."""
    newest = store.newest_us(ids)
    times = [format_us(newest)] if newest is not None else []
    last = daemon_report(root).get("last_reconcile")
    if isinstance(last, str):
        times.append(last)
    return max(times, default=None)


def _filter(ids: list[int] | None, window: Window, after: Position | None, start_us: int, *,
            scope: Scope | None) -> ChangeFilter:  # fmt: skip
    # After a cursor every later record counts, however old its timestamp.
    since_us = 0 if after is not None and after != START else start_us
    f = ChangeFilter(ids, since_us, scope, window.limit, origins=window.origins,
                     paths=window.paths, after=after)  # fmt: skip
    return f if window.turns is None else turn_filter(f, window.turns, window.turn_end_us)


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
