"""The read side: the `diff` query (seed 003) and its argument rules."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from symdiff.acp import FilePatch, build_diff
from symdiff.config import Settings
from symdiff.duration import parse_go_duration
from symdiff.errors import DurationError, InvalidArgs
from symdiff.model import ChangeType, FileChange, Scope
from symdiff.store import Store, Workspace

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
_OPERATIONS = {
    ChangeType.ADD: "add",
    ChangeType.MODIFY: "modify",
    ChangeType.DELETE: "delete",
    ChangeType.RENAME: "move",
}


@dataclass(frozen=True, slots=True)
class DiffArgs:
    """The diff query's arguments after its rules have been applied."""

    since_ns: int
    limit: int
    scope: Scope | None


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


def parse_args(*, since: object, limit: object, scope: object) -> DiffArgs:
    """Apply seed 003's rules; errors before any database work."""
    return DiffArgs(normalize_since(since), normalize_limit(limit), normalize_scope(scope))


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


def change_patch(store: Store, change: FileChange, *, root: str) -> dict[str, object]:
    """The ACP v2 Diff of one stored change, its git patch rebuilt from the snapshots."""
    op = _OPERATIONS[change.change_type]
    old = None if op == "add" or change.old_hash is None else store.get_blob(change.old_hash)
    new = None if op == "delete" or change.new_hash is None else store.get_blob(change.new_hash)
    fp = FilePatch(
        op,
        change.path,
        old_path=change.old_path if op == "move" else None,
        old_bytes=old,
        new_bytes=new,
    )
    return build_diff([fp], root=root)


def record(
    store: Store, change: FileChange, *, include_patch: bool, root: Path
) -> dict[str, object]:
    """One change as SPEC.md's JSON record, with `acp` when a patch is asked for."""
    out = change.to_dict()
    if include_patch:
        out["acp"] = change_patch(store, change, root=change.workspace or str(root))
    return out


def open_existing(settings: Settings) -> Store | None:
    """The workspace's Store, or None while its SQLite file does not exist (nothing indexed).

    A query never creates a database: asking in a tree nobody indexed answers "no changes".
    """
    url = settings.db_url
    on_file = url.startswith("sqlite:///") and url != "sqlite:///:memory:"
    if on_file and not Path(url.removeprefix("sqlite:///")).is_file():
        return None
    return Store(url)


STALE_WARNING = (
    "the symdiff daemon watching this tree did not confirm within 1 s that it had recorded "
    "the latest saves; the answer may miss the most recent changes"
)


@dataclass(frozen=True, slots=True)
class Answer:
    """The records of a diff query, and whether a running daemon confirmed they are current."""

    records: list[dict[str, object]]
    fresh: bool = True


def diff(
    source: Store | Settings | None,
    *,
    since: object = DEFAULT_SINCE,
    limit: object = DEFAULT_LIMIT,
    scope: object = DEFAULT_SCOPE,
    include_patch: bool = False,
    workspace: str | None = None,
    root: Path | None = None,
    host: str | None = None,
    now: datetime | None = None,
) -> list[dict[str, object]]:
    """Recent changes with their symbols, newest first (the `diff` query of seed 003).

    `source` is an open Store, or Settings whose database is opened for this one query
    (`root` and `host` then default to the settings'), or None for "no database yet" (the
    arguments are still checked). `now` is the clock seam. `answer` also says whether the
    records are known to be current.
    """
    return answer(
        source, since=since, limit=limit, scope=scope, include_patch=include_patch,
        workspace=workspace, root=root, host=host, now=now,
    ).records  # fmt: skip


def answer(
    source: Store | Settings | None,
    *,
    since: object = DEFAULT_SINCE,
    limit: object = DEFAULT_LIMIT,
    scope: object = DEFAULT_SCOPE,
    include_patch: bool = False,
    workspace: str | None = None,
    root: Path | None = None,
    host: str | None = None,
    now: datetime | None = None,
) -> Answer:
    """The diff query, with read-your-writes: a running daemon first records pending saves.

    `fresh` is False when the daemon did not confirm that within its timeout (1 s).
    """
    args = parse_args(since=since, limit=limit, scope=scope)
    if source is None:
        return Answer([])
    settings = source if isinstance(source, Settings) else None
    if root is None or host is None:
        settings = settings or Settings.resolve()
        root, host = root or settings.root, host or settings.host
    from symdiff.sync import sync  # read-your-writes: a running daemon records saves first

    fresh = sync(root)
    if isinstance(source, Settings):
        store = open_existing(source)
        if store is None:
            return Answer([], fresh)
        with store:
            return Answer(_run(store, args, include_patch=include_patch, workspace=workspace,
                               root=root, host=host, now=now), fresh)  # fmt: skip
    return Answer(_run(source, args, include_patch=include_patch, workspace=workspace,
                       root=root, host=host, now=now), fresh)  # fmt: skip


def _run(
    store: Store,
    args: DiffArgs,
    *,
    include_patch: bool,
    workspace: str | None,
    root: Path,
    host: str,
    now: datetime | None,
) -> list[dict[str, object]]:
    root = root.resolve()
    ids = select_workspaces(store.workspaces(), root=root, host=host, workspace=workspace)
    if ids == []:
        return []
    start = (now or datetime.now(UTC)) - timedelta(microseconds=args.since_ns // 1000)
    if not include_patch:
        # The fast path: rows straight into records, no domain objects in between.
        return store.query_records(
            workspace_ids=ids, since=start, scope=args.scope, limit=args.limit
        )
    changes = store.query_changes(
        workspace_ids=ids, since=start, scope=args.scope, limit=args.limit
    )
    return [record(store, c, include_patch=True, root=root) for c in changes]
