"""The workspace lock: one daemon per workspace, and whether one is running.

An `flock` on `<root>/.symdiff/daemon.lock`: the kernel releases it when the holder dies, so a
stale lock file never blocks a new daemon. The file's text says who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from symdiff.errors import LockedError, ToolFailed
from symdiff.workspace.layout import StateDir, ensure_state_dir


def now_text() -> str:
    """The current UTC time as RFC 3339 with microseconds and `Z` (for status files)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@contextlib.contextmanager
def workspace_lock(root: Path, host: str, *, wait_s: float = 0.5) -> Iterator[dict[str, object]]:
    """Hold the workspace's daemon lock for the duration; yields what the lock file says.

    Raises LockedError when another live daemon holds it, ToolFailed when the lock file
    cannot be written (`.symdiff/` not writable). `wait_s` rides out the instant a `status`
    or `sync` probe holds it shared.
    """
    path = StateDir(root).lock
    try:
        ensure_state_dir(path.parent)
        f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole daemon's life
    except OSError as exc:
        raise ToolFailed(f"cannot write the workspace lock {path}: "
                         f"{exc.strerror or exc}") from exc
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(path)
                    raise LockedError(
                        f"a daemon already watches {root} "
                        f"(pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
                        f"since {holder.get('started_at', '?')})") from None
                time.sleep(0.02)
        info: dict[str, object] = {"pid": os.getpid(), "host": host,
                                   "started_at": now_text(), "root": str(root)}
        f.seek(0)
        f.truncate()
        f.write(json.dumps(info))
        f.flush()
        yield info
    finally:
        f.close()  # releases the flock


def _read_holder(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def running(root: Path) -> dict[str, object] | None:
    """The live daemon's pid/host/start time for a workspace root, or None when none runs."""
    path = StateDir(root).lock
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(path) or {"pid": None}
        except OSError:
            return None
        fcntl.flock(f, fcntl.LOCK_UN)
        return None


@contextlib.contextmanager
def history_lock(root: Path) -> Iterator[bool]:
    """Hold the workspace's history-import lock, waiting while another import holds it.

    Two imports of one workspace at once (two `symdiff history import`, or one beside the
    watcher's) would each read which commits are already stored before the other wrote them,
    and record them twice; held for a whole import, the lock makes the second read what the
    first wrote. Yields False, unlocked, when `.symdiff/` cannot be written (a read-only tree
    whose index lives elsewhere): an import alone is still right.
    """
    path = StateDir(root).history_lock
    try:
        ensure_state_dir(path.parent)
        f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the whole import
    except OSError:
        yield False
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)  # the kernel releases it when the holder exits or dies
        yield True
