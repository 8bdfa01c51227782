"""`symdiff status`: whether a daemon watches a workspace, what it last did, what is recorded."""

from __future__ import annotations

from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import StoreError
from symdiff.workspace.layout import read_status
from symdiff.workspace.lock import running

# What the daemon's status file adds: its last pass, its start pass's progress, and whether
# recording keeps failing.
FROM_DAEMON = ("last_reconcile", "changes_recorded", "progress", "degraded", "overflows",
               "failing", "failing_since", "attempts", "last_error", "unrecorded", "refindex")


def status(settings: Settings) -> dict[str, object]:
    """Whether a daemon watches the workspace, since when, what it is doing, what is recorded.

    The workspace is `settings.root` (`Settings.resolve(nearest=True)` finds it from a
    subdirectory). Keys beside the daemon's own:
    `changes` (None: not indexed yet), `baseline_done` (None: not indexed yet), `progress`
    (`{"pass", "done", "total"}` while the daemon's start pass runs, else None), `refindex`
    (`{"state": "building" | "built", "done", "total"}`: the reference index's build),
    `newest_record` (RFC 3339, None without records), `database` and `database_bytes`; and
    `error` when the database exists but cannot be read.
    """
    root = settings.root
    holder = running(root)
    out: dict[str, object] = {"root": str(root), "running": holder is not None}
    if holder is not None:
        out.update({k: holder.get(k) for k in ("pid", "host", "started_at")})
    report = read_status(root).to_json()
    for key in FROM_DAEMON:
        out[key] = report[key]
    if holder is None:
        out["progress"] = None  # a pass that a dead daemon left unfinished is not running
    out.update({"changes": None, "baseline_done": None, "newest_record": None,
                "database": _safe_url(settings.db_url), "database_bytes": None})  # fmt: skip
    try:
        out.update(_recorded(settings, root))
    except StoreError as err:
        out["error"] = err.render()
    return out


def _safe_url(url: str) -> str:
    """The database as a person names it: the SQLite file, or the URL without a password."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///").split("?", 1)[0]
    from symdiff.store.store import without_password

    return without_password(url)


def _recorded(settings: Settings, root: Path) -> dict[str, object]:
    """What the database holds for the workspace; nothing when it has no database yet.

    Raises StoreError when the database is there but cannot be read (corrupt, unreachable).
    """
    db_file = settings.db_url.removeprefix("sqlite:///")
    if settings.db_url.startswith("sqlite:///") and not Path(db_file).exists():
        return {}
    from symdiff.store import Store
    from symdiff.timestamps import format_us

    with Store(settings.db_url, read_only=True) as store:
        out: dict[str, object] = {"database_bytes": store.size_bytes()}
        ws = store.find_workspace(str(root), settings.host)
        if ws is not None:
            newest = store.newest_us([ws.id])
            out.update({"changes": store.count_changes(ws.id), "baseline_done": ws.baseline_done,
                        "newest_record": None if newest is None else format_us(newest)})
        return out
