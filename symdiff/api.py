"""The door: everything the adapters (cli/, mcp/, ui/) and `symdiff`'s public names use of the
library, as plain functions over Settings that return plain data.

Nothing heavy loads with this module: each function imports what it runs when it runs, and the
names in `_LAZY` (re-exported as they are) load on first use (PEP 562), so that `symdiff
changes` pays for the read side only, not for tree-sitter, watchdog, pygit2 or Alembic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names of _LAZY, for type checkers; nothing here loads at run time,
    # so that `symdiff hook` (on every tool call of an agent) pays only for the hook
    from collections.abc import Mapping, Sequence
    from datetime import datetime
    from pathlib import Path

    from symdiff.attribute.spans import symbol_changes
    from symdiff.config import Settings
    from symdiff.diffs.acp import FilePatch, build_diff
    from symdiff.diffs.linediff import Hunk, LineDiff, diff_lines, git_patch, unified_diff
    from symdiff.diffs.textdiff import text_diff
    from symdiff.duration import parse_go_duration
    from symdiff.git.importer import ImportReport
    from symdiff.parse.extract import extract
    from symdiff.query.args import DiffQuery, decode_cursor
    from symdiff.query.follow import Follower, Step, View, change_view
    from symdiff.query.result import (
        STALE_WARNING,
        Answer,
        BaselineTaken,
        Hidden,
        LimitReplaced,
        Note,
        NothingIndexed,
        SinceCut,
        Stale,
        StartPass,
        Unwatched,
    )
    from symdiff.query.status import status
    from symdiff.record.daemon import watch
    from symdiff.record.heap import settle_heap
    from symdiff.record.indexer import Progress, Report
    from symdiff.record.retention import GcReport, collect
    from symdiff.records import ChangeRecord
    from symdiff.store import Store
    from symdiff.symbols.history import History, symbol_history, symbol_source, symbol_view
    from symdiff.symbols.restore import restore_symbol

__all__ = [
    "STALE_WARNING", "Answer", "BaselineTaken", "DiffQuery", "FilePatch", "Follower",
    "GcReport", "Hidden", "History", "Hunk", "ImportReport", "LimitReplaced", "LineDiff",
    "Note", "NothingIndexed", "Report", "SinceCut", "Stale", "StartPass", "Step", "Unwatched",
    "View", "apply_edits", "build_diff", "change_view", "check_query", "collect",
    "decode_cursor", "diff", "diff_lines", "extract", "git_patch", "import_history", "index",
    "is_own", "open_store", "parse_go_duration", "refresh", "restore_symbol", "settle_heap",
    "status", "symbol_changes", "symbol_history", "symbol_source", "symbol_view", "text_diff",
    "unified_diff", "upgrade_database", "watch", "watched",
]  # fmt: skip

# Names re-exported as their modules define them, and those modules.
_LAZY = {
    "STALE_WARNING": "symdiff.query.result",
    "Answer": "symdiff.query.result",
    "BaselineTaken": "symdiff.query.result",
    "Hidden": "symdiff.query.result",
    "LimitReplaced": "symdiff.query.result",
    "Note": "symdiff.query.result",
    "NothingIndexed": "symdiff.query.result",
    "SinceCut": "symdiff.query.result",
    "Stale": "symdiff.query.result",
    "StartPass": "symdiff.query.result",
    "Unwatched": "symdiff.query.result",
    "DiffQuery": "symdiff.query.args",
    "decode_cursor": "symdiff.query.args",
    "Follower": "symdiff.query.follow",  # following new records, for the live page
    "Step": "symdiff.query.follow",
    "View": "symdiff.query.follow",
    "change_view": "symdiff.query.follow",
    "status": "symdiff.query.status",
    "History": "symdiff.symbols.history",
    "symbol_history": "symdiff.symbols.history",
    "symbol_source": "symdiff.symbols.history",
    "symbol_view": "symdiff.symbols.history",
    "restore_symbol": "symdiff.symbols.restore",
    "text_diff": "symdiff.diffs.textdiff",
    "watch": "symdiff.record.daemon",
    "settle_heap": "symdiff.record.heap",
    "Report": "symdiff.record.indexer",
    "GcReport": "symdiff.record.retention",
    "collect": "symdiff.record.retention",
    "ImportReport": "symdiff.git.importer",
    # The pure core, for `from symdiff import ...`: extraction, attribution, line diffs, ACP.
    "extract": "symdiff.parse.extract",
    "symbol_changes": "symdiff.attribute.spans",
    "Hunk": "symdiff.diffs.linediff",
    "LineDiff": "symdiff.diffs.linediff",
    "diff_lines": "symdiff.diffs.linediff",
    "git_patch": "symdiff.diffs.linediff",
    "unified_diff": "symdiff.diffs.linediff",
    "FilePatch": "symdiff.diffs.acp",
    "build_diff": "symdiff.diffs.acp",
    "parse_go_duration": "symdiff.duration",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'symdiff.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def open_store(settings: Settings) -> Store:
    """Open (and migrate) the workspace's database."""
    from symdiff.store import Store

    return Store(settings.db_url)


def upgrade_database(settings: Settings) -> str | None:
    """Run pending migrations; returns the revision the database is now at."""
    with open_store(settings) as store:
        return store.revision()


def index(
    settings: Settings, *, show_progress: bool = False, progress: Progress | None = None
) -> Report:
    """One reconcile pass over the workspace (a baseline on the first run)."""
    from symdiff.record.indexer import check_root, reconcile
    from symdiff.record.origins import scan_provenance

    check_root(settings)  # before the store: a root no record can name fails as ToolFailed
    provenance = scan_provenance(settings.root)
    with open_store(settings) as store:
        if not show_progress:
            return reconcile(store, settings, progress=progress, provenance=provenance)
        from symdiff.record.progress import progress_bar

        with progress_bar("indexing") as bar:
            return reconcile(store, settings, progress=bar, provenance=provenance)


def watched(settings: Settings) -> bool:
    """Whether a daemon watches the workspace now."""
    from symdiff.workspace.lock import running

    return running(settings.root) is not None


def refresh(settings: Settings, *, show_progress: bool = False) -> Report | None:
    """One reconcile pass over the workspace, unless a daemon watches it (None: a query then
    waits for the daemon's own records instead)."""
    if watched(settings):
        return None
    return index(settings, show_progress=show_progress)


def check_query(query: DiffQuery) -> None:
    """Apply the diff query's rules to its arguments; InvalidArgs before any other work."""
    from symdiff.query.args import parse

    parse(query)


def is_own(workspace: object, root: Path) -> bool:
    """Whether a diff query's `workspace` argument names the workspace at `root` (or none)."""
    from symdiff.query.workspaces import is_own as own

    return own(workspace, root)


def diff(
    settings: Settings,
    query: DiffQuery | None = None,
    *,
    refresh_first: bool = False,
    show_progress: bool = False,
    store: Store | None = None,
    now: datetime | None = None,
    explain: bool = False,
    count_hidden: bool = True,
    git_patches: bool = False,
) -> Answer:
    """The diff query (`symdiff.query.answer.diff`, which documents it).

    `refresh_first`: check the arguments, then record what changed since the workspace was
    last indexed unless a daemon watches it (`refresh`), then answer; the answer's notes say
    what that pass did.
    """
    from symdiff.query.answer import diff as answer
    from symdiff.query.args import DiffQuery
    from symdiff.query.result import Refreshed

    query = query or DiffQuery()
    refreshed = None
    if refresh_first and query.against is None:
        check_query(query)  # bad arguments stop before a refresh writes anything
        report = refresh(settings, show_progress=show_progress)
        refreshed = None if report is None else Refreshed(report.baseline, report.scanned)
    return answer(settings, query, store=store, now=now, explain=explain,
                  count_hidden=count_hidden, git_patches=git_patches,
                  refreshed=refreshed)  # fmt: skip


def impact(settings: Settings, *, since: object = None, against: object = None,
           session: object = None, turn: object = None, symbols: object = (),
           depth: object = 2, store: Store | None = None,
           refresh_first: bool = False) -> dict[str, object]:  # fmt: skip
    """The callers and the tests that changed symbols reach (`symdiff.impact.query`, which
    documents it): changed symbols from a `since` window, the work tree `against` a revision,
    an agent `session` (and `turn`), or the given `symbols` names; callers to `depth`.
    Returns `{"changed", "callers", "tests", "run"}` (docs/impact.md). `refresh_first`: check
    the arguments, then record what changed since the workspace was last indexed unless a
    daemon watches it (`refresh`), so that the index and the changes are the tree's now."""
    from symdiff.impact.query import ImpactQuery, check
    from symdiff.impact.query import impact as run

    query = ImpactQuery(since=since, against=against, session=session, turn=turn,
                        symbols=symbols, depth=depth)  # fmt: skip
    if refresh_first:
        check(query)  # bad arguments stop before a refresh writes anything
        refresh(settings)
    return run(settings, query, store=store)


def keep_impact_graphs_numbered() -> None:
    """Number this process's held reference graphs in the background once built or changed,
    so that a question meets every node's edges worked out (`symdiff.impact.index.
    keep_numbered`): for a process that answers many questions, as the MCP server."""
    from symdiff.impact.index import keep_numbered

    keep_numbered()


def impact_of(settings: Settings, records: Sequence[ChangeRecord], *, depth: int = 2
              ) -> dict[str, object]:  # fmt: skip
    """The impact of the symbols that these diff records changed (`diff(include_impact=true)`;
    see `impact`)."""
    from symdiff.impact.query import impact_of as run

    return run(settings, records, depth=depth)


def apply_edits(
    edits: object,
    *,
    settings: Settings,
    allow_write: Sequence[Path] = (),
    dry_run: bool = True,
    backup: bool = False,
    record: bool = True,
    client: Mapping[str, object] | str = "cli",
) -> dict[str, object]:
    """Validate search/replace `edits` (text or JSON form) and preview or apply them in the
    workspace; a real apply is recorded in its index at once.

    Returns `dry_run`, `applied`, `files`, totals, `acp` and, after a real apply, `recorded`
    (the change records) or `record_error` (the edit applied, the index could not record it).
    Raises InvalidArgs, FsDenied, EditError or ToolFailed; on any error nothing was written.

    Args:
        allow_write: directories besides the root that the edits may write in.
        client: who asks, for the record's `origin_info.client`: the MCP client's
            {"name", "version"}, or "cli".
        record: False leaves the index alone (a running daemon records the write anyway).
    """
    from symdiff.record.applied import apply_recorded

    return apply_recorded(edits, settings=settings, allow_write=allow_write, dry_run=dry_run,
                          backup=backup, record=record, client=client)  # fmt: skip


def import_history(
    settings: Settings, *, since: str | None = None, max_commits: int | None = None
) -> ImportReport:
    """Import the first-parent git history of the root's branch (docs/history.md).

    `since` is a Go duration (no clamp); `max_commits` bounds the walk. Idempotent.
    """
    from datetime import timedelta

    from symdiff.duration import parse_duration_arg
    from symdiff.git.importer import import_history as run

    window = None
    if since is not None:
        window = timedelta(microseconds=parse_duration_arg(since, name="since") // 1000)
    with open_store(settings) as store:
        return run(settings, store, since=window, max_commits=max_commits)


def blame(
    settings: Settings, path: str | Path, *, start_line: int | None = None,
    end_line: int | None = None,
) -> dict[str, Any]:
    """For each line of `path` as it is now, the record that last wrote it, in ranges:
    `{path, lines, indexed, ranges: [{start_line, end_line, version, timestamp, origin,
    origin_info, path, contributor, note}]}` (docs/agents.md, "Blame")."""
    from symdiff.agents.blame import blame_file

    return blame_file(settings, path, start_line=start_line, end_line=end_line)


def trace(settings: Settings, rev: str | None = None, *, worktree: bool = False
          ) -> dict[str, Any]:  # fmt: skip
    """The Agent Trace record of commit `rev` (default HEAD), or of the uncommitted work
    (`worktree`) (docs/agents.md, "Agent Trace")."""
    from symdiff.agents.trace import trace as run

    return run(settings, rev, worktree=worktree)


def sessions(settings: Settings) -> list[dict[str, Any]]:
    """The workspace's agent sessions, oldest first, with their turns (`symdiff sessions`)."""
    from symdiff.agents.listing import list_sessions

    return list_sessions(settings)


def undo_turn(settings: Settings, *, session: object, turn: object = None, write: bool = False,
              client: object = "cli") -> dict[str, object]:  # fmt: skip
    """Undo what an agent did in a turn (or a whole session), keeping everyone else's work: the
    dry run (patch, summary, conflicts), and with `write` the undo itself (docs/agents.md)."""
    from symdiff.agents.undo import undo_turn as run

    return run(settings, session=session, turn=turn, write=write, client=client)


def undo_preview(settings: Settings, *, session: object, turn: object = None
                 ) -> dict[str, Any]:  # fmt: skip
    """The dry run of undoing an agent's turn (or whole session): `{session, turn, records,
    files, patch, conflicts}`; nothing is written (docs/agents.md)."""
    return dict(undo_turn(settings, session=session, turn=turn, write=False))


def agent_setup(agent: str, root: Path) -> list[tuple[Path, str, bool]]:
    """What `symdiff init AGENT` writes under `root`: (path, text, whether it differs from what
    is there) per file, merged into what is there (docs/agents.md)."""
    from symdiff.agents.setup import plan_claude_code

    if agent != "claude-code":
        from symdiff.errors import InvalidArgs

        raise InvalidArgs(f"agent must be claude-code, got {agent!r}")
    return plan_claude_code(root)


def hook(argv: list[str]) -> int:
    """Run one agent hook (`symdiff hook claude-code|event …`): record the event, answer on
    stdout when there is something to say; always 0 (docs/agents.md)."""
    from symdiff.agents.hook import main

    return main(argv)
