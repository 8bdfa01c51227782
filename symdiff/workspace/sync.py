"""Read-your-writes: a query asks the running daemon to record every earlier save first.

The protocol, shared by the daemon (which answers) and the query (which asks): the asker
creates an empty *cookie* file in `<root>/.symdiff/cookies/` (`layout.StateDir.cookies`); the
daemon sees its creation event after every event that came before it, records them, then
deletes the cookie. The asker waits for the deletion.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from symdiff.workspace.layout import StateDir
from symdiff.workspace.lock import running

log = logging.getLogger(__name__)

SYNC_TIMEOUT_S = 1.0


def sync(root: Path, *, timeout: float = SYNC_TIMEOUT_S,
         monotonic: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> bool:  # fmt: skip
    """Wait until the daemon watching `root` (the workspace's root, as `Settings.root` carries
    it) has recorded every change made before this call.

    Returns True when it has (or no daemon runs, so there is nothing to wait for), False when
    `timeout` passed first: the answer that follows may then be stale. `monotonic` and `sleep`
    are the time seams (a test runs the timeout without waiting it out).
    """
    if running(root) is None:
        return True
    cookie_dir = StateDir(root).cookies
    cookie = cookie_dir / uuid.uuid4().hex
    try:
        cookie.touch(exist_ok=False)
    except OSError as exc:
        log.warning("cannot write a sync cookie in %s: %s", cookie_dir, exc)
        return False
    deadline = monotonic() + timeout
    delay = 0.001
    while monotonic() < deadline:
        if not cookie.exists():
            return True
        sleep(delay)
        delay = min(delay * 2, 0.01)
    try:
        cookie.unlink()
    except FileNotFoundError:
        return True  # acked between the last check and the unlink
    log.warning("the daemon did not catch up within %.1fs; the answer may be stale", timeout)
    return False
