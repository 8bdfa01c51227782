"""Following new records: the records of a view (the diff query's filters) from the start of
its window, then every record written after them, in the cursor order of the query
(docs/query.md: each record exactly once); and one record found again with its patch. The live
page (symdiff/ui) reads through these.

No SQL here: the reads are the Store's (`Store.page` with the query's `ChangeFilter`) and the
query's patch builder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.query.args import DiffQuery, Window, encode_cursor, parse
from symdiff.query.patches import change_git_patch
from symdiff.query.workspaces import select_workspaces
from symdiff.store import ChangeFilter, PathFilter, Position, Store, StoredChange
from symdiff.store.changes import START
from symdiff.store.kept import reader
from symdiff.timestamps import to_us

__all__ = ["PAGE", "Follower", "Step", "View", "change_view"]

PAGE = 500  # records per read, and per event the page receives
PATCH_CAP = 1024 * 1024  # characters of a patch sent to the page; the rest is cut
_FIND_PAGES = 40  # pages read at most to find a record again by its id


@dataclass(frozen=True, slots=True)
class View:
    """The page's filters, as the diff query takes them (any JSON values; its rules apply)."""

    scope: object = "all"
    origin: object = None  # one origin or a list; None: all
    path: object = None  # gitignore-style patterns; None: all
    since: object = "24h"


@dataclass(frozen=True, slots=True)
class Step:
    """One read of a follower: records oldest first (each with its `version`, the change
    id), whether more are waiting, and the cursor after them."""

    records: list[dict[str, Any]]
    more: bool
    cursor: str


@dataclass(slots=True)
class Follower:
    """One page's stream: the view's records within its window, then every later one.

    `after` (a cursor from an earlier step) resumes where a page that lost its connection
    stopped. The window starts when the follower is made (`now`, the clock seam) and does not
    move: a record older than its start that is written later (an imported commit) is left out.
    """

    settings: Settings
    view: View
    after: str | None = None
    now: datetime | None = None
    window: Window = field(init=False)
    start_us: int = field(init=False)
    position: Position = field(init=False)
    _ids: list[int] | None = field(init=False, default=None)
    _found: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        v = self.view
        # The query's own rules: a bad filter is InvalidArgs before anything is read.
        self.window = parse(DiffQuery(since=v.since, scope=v.scope, origin=v.origin,
                                      path=v.path, limit=PAGE, cursor=self.after))  # fmt: skip
        self.start_us = to_us(self.now or datetime.now(UTC)) - self.window.since_ns // 1000
        self.position = self.window.cursor or START

    def step(self) -> Step:
        """The next records (at most PAGE); none while nothing is indexed here yet."""
        store = reader(self.settings.db_url)
        if store is None or not self._workspace(store):
            return Step([], False, encode_cursor(self.position))
        w = self.window
        page = store.page(ChangeFilter(self._ids, self.start_us, w.scope, PAGE,
                                       origins=w.origins, paths=w.paths, after=self.position))
        self.position = page.position
        return Step([_record(c) for c in page.changes], page.more, encode_cursor(page.position))

    def _workspace(self, store: Store) -> bool:
        """Whether the caller's workspace is indexed (looked up until it is)."""
        if not self._found:
            s = self.settings
            self._ids = select_workspaces(store.workspaces(), root=s.root.resolve(),
                                          host=s.host, workspace=None)  # fmt: skip
            self._found = self._ids != []
        return self._found


def _record(change: StoredChange) -> dict[str, Any]:
    return {**change.record, "version": change.id}


def _find(settings: Settings, store: Store, version: int, path: str,
          ts_us: int) -> StoredChange | None:  # fmt: skip
    """The stored change `version` of `path`, recorded at `ts_us`: read in the cursor order
    among the changes of that path from that instant on (the store has no read by id)."""
    ids = select_workspaces(store.workspaces(), root=settings.root.resolve(),
                            host=settings.host, workspace=None)  # fmt: skip
    if not ids:
        return None
    exact = PathFilter(((f"^{re.escape(path)}$", True),))
    after = START
    for _ in range(_FIND_PAGES):
        page = store.page(ChangeFilter(ids, ts_us, None, PAGE, paths=exact, after=after))
        for change in page.changes:
            if change.id == version:
                return change
        if not page.more:
            return None
        after = page.position
    return None


def change_view(settings: Settings, *, version: int, path: str,
                timestamp: str) -> dict[str, Any]:  # fmt: skip
    """One record and its patch as `git diff` writes it (cut at PATCH_CAP characters)."""
    try:
        when = datetime.fromisoformat(timestamp)
    except ValueError:
        raise InvalidArgs(f"timestamp must be a record's RFC 3339 time, got {timestamp!r}") \
            from None
    store = reader(settings.db_url)
    change = None if store is None else _find(settings, store, version, path, to_us(when))
    if store is None or change is None:
        raise InvalidArgs(f"no record {version} of {path!r} at {timestamp}")
    patch = change_git_patch(store, change)
    return {"record": _record(change), "patch": patch[:PATCH_CAP],
            "truncated": len(patch) > PATCH_CAP}  # fmt: skip
