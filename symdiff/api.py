"""The Python API behind the adapters: plain functions over Settings that return plain data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symdiff.config import Settings
from symdiff.record.indexer import Progress, Report, check_root, reconcile
from symdiff.record.origins import scan_provenance
from symdiff.store import Store

if TYPE_CHECKING:
    from symdiff.git.importer import ImportReport


def open_store(settings: Settings) -> Store:
    """Open (and migrate) the workspace's database."""
    return Store(settings.db_url)


def upgrade_database(settings: Settings) -> str | None:
    """Run pending migrations; returns the revision the database is now at."""
    with open_store(settings) as store:
        return store.revision()


def index(
    settings: Settings, *, show_progress: bool = False, progress: Progress | None = None
) -> Report:
    """One reconcile pass over the workspace (a baseline on the first run)."""
    check_root(settings)  # before the store: a root no record can name fails as ToolFailed
    provenance = scan_provenance(settings.root)
    with open_store(settings) as store:
        if not show_progress:
            return reconcile(store, settings, progress=progress, provenance=provenance)
        from symdiff.record.progress import progress_bar

        with progress_bar("indexing") as bar:
            return reconcile(store, settings, progress=bar, provenance=provenance)


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
    from symdiff.edits import Recorder
    from symdiff.edits import apply_edits as apply_core
    from symdiff.errors import SymdiffError
    from symdiff.record.applied import IndexRecorder, UnavailableRecorder

    def run(recorder: Recorder | None) -> dict[str, object]:
        return apply_core(edits, root=settings.root, write_roots=allow_write, dry_run=dry_run,
                          backup=backup, recorder=recorder)  # fmt: skip

    if dry_run or not record:
        return run(None)
    try:
        store = open_store(settings)
    except SymdiffError as err:
        return run(UnavailableRecorder(err))
    with store:
        return run(IndexRecorder(store, settings, {"client": client}))


def import_history(
    settings: Settings, *, since: str | None = None, max_commits: int | None = None
) -> ImportReport:
    """Import the first-parent git history of the root's branch (docs/history.md).

    `since` is a Go duration (no clamp); `max_commits` bounds the walk. Idempotent.
    """
    from datetime import timedelta

    from symdiff.duration import parse_go_duration
    from symdiff.errors import DurationError, InvalidArgs
    from symdiff.git.importer import import_history as run

    window = None
    if since is not None:
        try:
            ns = parse_go_duration(since)
        except DurationError as err:
            raise DurationError(f"since: {err.reason}") from err
        if ns < 0:
            raise InvalidArgs(f"since must not be negative, got {since!r}")
        window = timedelta(microseconds=ns // 1000)
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


def undo_preview(settings: Settings, *, session: object, turn: object = None
                 ) -> dict[str, Any]:  # fmt: skip
    """The dry run of undoing an agent's turn (or whole session): `{session, turn, records,
    files, patch, conflicts}`; nothing is written (docs/agents.md)."""
    from symdiff.agents.undo import undo_turn

    return undo_turn(settings, session=session, turn=turn, write=False)
