"""`symdiff status`: whether a daemon watches a workspace, what it last did, what is recorded."""

from __future__ import annotations

import contextlib
import json
import os

from symdiff.config import STATE_DIR, Settings
from symdiff.errors import StoreError
from symdiff.lock import running

STATUS_FILE = "daemon.json"  # written by the daemon after every batch


def status(settings: Settings) -> dict[str, object]:
    """Whether a daemon watches the workspace, since when, and how many changes it has."""
    holder = running(settings.root)
    out: dict[str, object] = {"root": str(settings.root), "running": holder is not None}
    if holder is not None:
        out.update({k: holder.get(k) for k in ("pid", "host", "started_at")})
    path = settings.root / STATE_DIR / STATUS_FILE
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            for key in _FROM_DAEMON:
                out[key] = data.get(key)
    try:
        out["changes"] = _count_changes(settings)
    except StoreError as err:
        out["changes"] = None
        out["error"] = err.render()
    return out


# What the daemon's status file adds: its last pass, and whether recording keeps failing.
_FROM_DAEMON = ("last_reconcile", "changes_recorded", "degraded", "overflows", "failing",
                "failing_since", "attempts", "last_error", "unrecorded")


def _count_changes(settings: Settings) -> int | None:
    """The workspace's change count; None when it has no database or no records yet.

    Raises StoreError when the database is there but cannot be read (corrupt, unreachable).
    """
    db_file = settings.db_url.removeprefix("sqlite:///")
    if settings.db_url.startswith("sqlite:///") and not os.path.exists(db_file):
        return None
    from symdiff.store import Store

    with Store(settings.db_url, read_only=True) as store:
        ws = store.find_workspace(str(settings.root), settings.host)
        return None if ws is None else store.count_changes(ws.id)
