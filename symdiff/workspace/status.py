"""The daemon's status file in `.symdiff/`: what it last did, read back (`symdiff status` is
`symdiff.query.status`)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from symdiff.config import STATE_DIR

STATUS_FILE = "daemon.json"  # written by the daemon after every batch


def daemon_report(root: Path) -> dict[str, object]:
    """What the daemon's status file says (empty when there is none or it cannot be read)."""
    with contextlib.suppress(OSError, ValueError):
        data = json.loads((root / STATE_DIR / STATUS_FILE).read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return data
    return {}


# What the daemon's status file adds: its last pass, its start pass's progress, and whether
# recording keeps failing.
FROM_DAEMON = ("last_reconcile", "changes_recorded", "progress", "degraded", "overflows",
               "failing", "failing_since", "attempts", "last_error", "unrecorded")
