"""The read side: the `diff` query (seed 003) and its argument rules."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from symdiff.config import Settings
from symdiff.duration import parse_go_duration
from symdiff.errors import DurationError, InvalidArgs
from symdiff.model import Scope
from symdiff.records import ChangeRecord
from symdiff.store import ChangeFilter, Store, StoredChange, Workspace
from symdiff.store.readers import reader
from symdiff.sync import sync
from symdiff.timestamps import to_us

DEFAULT_SINCE = "24h"
MAX_SINCE_NS = 720 * 3600 * 1_000_000_000
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
DEFAULT_SCOPE = "impl"
SCOPES = ("impl", "test", "all")
ALL_WORKSPACES = "all"

_DECIMAL = re.compile(r"[0-9]+")
_DURATION_HINT = (
    'since is a Go duration: a number and a unit (ns, us, ms, s, m, h), e.g. "90m", "24h"; '
    'there is no day unit, write 168h for 7 days'
)
_OPERATIONS = {"add": "add", "modify": "modify", "delete": "delete", "rename": "move"}
STALE_WARNING = (
    "the symdiff daemon watching this tree did not confirm within 1 s that it had recorded "
    "the latest saves; the answer may miss the most recent changes"
)


@dataclass(frozen=True, slots=True)
class DiffQuery:
    """The diff query's arguments as a caller gives them (any JSON values); the rules below
    turn them into a `ChangeFilter` or an `InvalidArgs` before any database work."""

    since: object = DEFAULT_SINCE
    limit: object = DEFAULT_LIMIT
    scope: object = DEFAULT_SCOPE
    include_patch: bool = False
    workspace: str | None = None  # None: the caller's workspace; "all"; or another root


@dataclass(frozen=True, slots=True)
class Window:
    """A query's arguments after the rules: how far back, how many, which scope."""

    since_ns: int
    limit: int
    scope: Scope | None  # None: both


def parse(query: DiffQuery) -> Window:
    """Apply seed 003's rules (and the workspace argument's); errors before any database work."""
    check_workspace(query.workspace)
    return Window(
        normalize_since(query.since), normalize_limit(query.limit), normalize_scope(query.scope)
    )


@dataclass(frozen=True, slots=True)
class Answer:
    """The records of a diff query, newest first, and whether they may miss the latest saves
    (a running daemon did not confirm in time that it had recorded them)."""

    records: list[ChangeRecord]
    stale: bool = False


def normalize_since(value: object) -> int:
    """Nanoseconds of a `since` argument: Go syntax, never negative, clamped to 720h.

    None stands for an absent argument (the default, 24h).
    """
    if value is None:
        value = DEFAULT_SINCE
    if not isinstance(value, str):
        raise InvalidArgs(f"since must be a string, got {json.dumps(value, default=repr)}; "
                          f"{_DURATION_HINT}")
    try:
        ns = parse_go_duration(value)
    except DurationError as err:
        raise DurationError(f"since: {err.reason}; {_DURATION_HINT}") from err
    if ns < 0:
        raise InvalidArgs(f"since must not be negative, got {json.dumps(value)}")
    return min(ns, MAX_SINCE_NS)


def normalize_limit(value: object) -> int:
    """An integer in 1..500, else 50 — silently, whatever the value (seed 003).

    Integral floats (10.0) and decimal strings ("10") count as the integer they spell, because
    JSON clients and language models send numbers in those forms too.
    """
    if isinstance(value, bool):
        return DEFAULT_LIMIT
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and _DECIMAL.fullmatch(value)
    ):
        number = int(value)
    if number is None or not 1 <= number <= MAX_LIMIT:
        return DEFAULT_LIMIT
    return number


def normalize_scope(value: object) -> Scope | None:
    """`impl`, `test` or `all` (None: both); None stands for an absent argument (impl)."""
    if value is None:
        value = DEFAULT_SCOPE
    if value == "all":
        return None
    if isinstance(value, str) and value in (Scope.IMPL.value, Scope.TEST.value):
        return Scope(value)
    raise InvalidArgs(
        f'scope must be "impl", "test" or "all", got {json.dumps(value, default=repr)}'
    )


def check_workspace(value: object) -> None:
    """The workspace argument: absent, "all", or a path (a string without NUL bytes)."""
    if value is None:
        return
    if not isinstance(value, str) or not value or "\0" in value:
        raise InvalidArgs(
            'workspace must be "all" or the root path of an indexed workspace, got '
            f"{json.dumps(value, default=repr)}"
        )


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
    `settings.db_url` (opened at the first query, kept open: store/readers.py); `store` is the
    seam for a caller that holds one already. `now` is the clock seam.
    """
    query = query or DiffQuery()
    window = parse(query)
    stale = not sync(settings.root)
    store = store or reader(settings.db_url)
    if store is None:  # nothing indexed yet
        return Answer([], stale=stale)
    return Answer(_records(store, settings, query, window, now), stale=stale)


def _records(
    store: Store, settings: Settings, query: DiffQuery, window: Window, now: datetime | None
) -> list[ChangeRecord]:
    root = settings.root.resolve()
    ids = select_workspaces(
        store.workspaces(), root=root, host=settings.host, workspace=query.workspace
    )
    if ids == []:
        return []
    start = to_us(now or datetime.now(UTC)) - window.since_ns // 1000
    found = store.stored_changes(ChangeFilter(ids, start, window.scope, window.limit))
    records = []
    for change in found:
        record = change.record
        if query.workspace is not None:
            # An answer that may span workspaces says where each change happened.
            record["workspace"] = change.workspace
        if query.include_patch:
            record["acp"] = change_patch(store, change)
        records.append(record)
    return records
