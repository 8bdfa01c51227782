"""The read side: the `diff` query (seed 003, with round 2's filters, cursors and readers).

The argument rules live in `queryargs.py`; this module runs a parsed query against a store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.queryargs import (
    ALL_WORKSPACES,
    DiffQuery,
    Window,
    decode_cursor,
    encode_cursor,
    parse,
)
from symdiff.records import ChangeRecord
from symdiff.store import ChangeFilter, Page, Position, Store, StoredChange, Workspace
from symdiff.store.kept import reader, writer
from symdiff.sync import sync
from symdiff.timestamps import to_us

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
    """

    records: list[ChangeRecord]
    stale: bool = False
    cursor: str = ""
    more: bool = False



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


def change_patch(store: Store, change: StoredChange) -> dict[str, object]:
    """The ACP v2 Diff of one stored change, its git patch rebuilt from the snapshots."""
    from symdiff.acp import FilePatch, build_diff  # pygit2 loads only when a patch is asked for

    r = change.record
    op = _OPERATIONS[r["change_type"]]
    old = None if op == "add" or change.old_hash is None else store.get_blob(change.old_hash)
    new = None if op == "delete" or change.new_hash is None else store.get_blob(change.new_hash)
    fp = FilePatch(
        op,
        r["path"],
        old_path=r["old_path"] if op == "move" else None,
        old_bytes=old,
        new_bytes=new,
    )
    return build_diff([fp], root=change.workspace)


def diff(
    settings: Settings,
    query: DiffQuery | None = None,
    *,
    store: Store | None = None,
    now: datetime | None = None,
) -> Answer:
    """Recent changes with their symbols, newest first (the `diff` query of seed 003).

    The arguments are checked before any database work. A running daemon first records the
    saves made before this call (read-your-writes); `stale` says it did not confirm in time.
    The query covers `settings.root`'s workspace on `settings.host` unless `query.workspace`
    says otherwise. The database is read through the process's read-only Store for
    `settings.db_url` (opened at the first query, kept open: store/kept.py); `store` is the
    seam for a caller that holds one already. `now` is the clock seam.
    """
    query = query or DiffQuery()
    if query.against is not None:  # the work tree against a revision: git, not the index
        from symdiff.against import answer

        return answer(settings, query, now=now)
    window = parse(query)
    stale = not sync(settings.root)
    store = store or reader(settings.db_url)
    if store is None:  # nothing indexed yet: a cursor stays where it was
        start = window.cursor or Position(-1, 0)
        return Answer([], stale=stale, cursor=encode_cursor(start))
    ids = select_workspaces(
        store.workspaces(), root=settings.root.resolve(), host=settings.host,
        workspace=query.workspace,
    )  # fmt: skip
    start_us = to_us(now or datetime.now(UTC)) - window.since_ns // 1000
    if window.reader is not None:
        page = _read_as(window.reader, settings, store, ids, window, start_us)
    else:
        page = _page(store, ids, window, window.cursor, start_us)
    return Answer(_records(store, query, page), stale=stale, cursor=encode_cursor(page.position),
                  more=page.more)  # fmt: skip


def _page(store: Store, ids: list[int] | None, window: Window, after: Position | None,
          start_us: int) -> Page:  # fmt: skip
    if ids == []:  # no workspace here yet: nothing to read, the position stays
        return Page([], False, after or Position(-1, 0))
    # After a cursor every later record counts, however old its timestamp.
    since_us = 0 if after is not None and after != Position(-1, 0) else start_us
    return store.page(ChangeFilter(ids, since_us, window.scope, window.limit,
                                   origins=window.origins, paths=window.paths, after=after))


def _read_as(name: str, settings: Settings, store: Store, ids: list[int] | None,
             window: Window, start_us: int) -> Page:  # fmt: skip
    """A named reader's next page: from where it stopped (a new reader: from the oldest record
    within `since`), its cursor moved on only if no other answer moved it meanwhile."""
    keeper = writer(settings.db_url)
    for _ in range(8):
        saved = keeper.reader_cursor(name)
        after = Position(-1, 0) if saved is None else decode_cursor(saved)
        page = _page(store, ids, window, after, start_us)
        if keeper.move_reader(name, saved, encode_cursor(page.position)):
            return page
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
