"""The workspace's `.symdiff/` folder: every name in it, and the schema of the daemon's status file.

The folder holds the index, the daemon's lock, its status file and the read-your-writes
cookies; none of it belongs in the user's repository, so `git status` must not list it
(`?? .symdiff/`). The `.gitignore` inside it ignores the folder's whole content, itself
included, as `python -m venv` does for a venv.

Both sides of each protocol import their names from here: the daemon (which writes the status
file and answers cookies) and the readers (`symdiff status`, the query's `sync`). The names
themselves are spelled in `names.py`, which imports nothing at all (the agents' hook reads
them on every tool call); this module imports nothing of symdiff's but that.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from symdiff.workspace.names import (
    AGENTS_DIR,
    COOKIE_DIR,
    COOKIES,
    HISTORY_LOCK,
    INDEX_DB,
    LOCK_FILE,
    STATE_DIR,
    STATUS_FILE,
)

__all__ = ["AGENTS_DIR", "COOKIES", "COOKIE_DIR", "GITIGNORE", "HISTORY_LOCK", "INDEX_DB",
           "LOCK_FILE", "STATE_DIR", "STATUS_FILE", "DaemonStatus", "StateDir",
           "ensure_state_dir", "read_status", "write_status"]

GITIGNORE = "# symdiff's index and daemon state: nothing here belongs in version control\n*\n"


@dataclass(frozen=True, slots=True)
class StateDir:
    """The paths of one workspace's `.symdiff/` (a value: nothing is created or read)."""

    root: Path

    @property
    def path(self) -> Path:
        """`<root>/.symdiff`."""
        return self.root / STATE_DIR

    @property
    def index_db(self) -> Path:
        """The default SQLite database."""
        return self.path / INDEX_DB

    @property
    def lock(self) -> Path:
        """The daemon's lock file."""
        return self.path / LOCK_FILE

    @property
    def history_lock(self) -> Path:
        """The history import's lock file."""
        return self.path / HISTORY_LOCK

    @property
    def status(self) -> Path:
        """The daemon's status file."""
        return self.path / STATUS_FILE

    @property
    def cookies(self) -> Path:
        """The folder of read-your-writes cookies."""
        return self.path / COOKIES


def ensure_state_dir(folder: Path) -> Path:
    """Create `folder` (and its parents) if missing; a `.symdiff` folder gets its `.gitignore`.

    Raises OSError when the folder cannot be created. The `.gitignore` is written whenever it
    is missing, so a workspace made by an older symdiff gains it too; a folder where it
    cannot be written (read-only) is left as it is.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name == STATE_DIR:
        ignore = folder / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError), open(ignore, "x", encoding="utf-8") as f:
                f.write(GITIGNORE)
    return folder


@dataclass(frozen=True, slots=True)
class DaemonStatus:
    """The daemon's status file: what it has done since it started, and what it is doing.

    Every field is None when the file does not say (no file, an older daemon's, or garbled):
    a reader shows "not yet" rather than fail. `progress` is set while the start pass runs
    (`{"pass": "baseline" | "reconcile", "done", "total"}`).
    """

    pid: int | None = None
    host: str | None = None
    root: str | None = None
    running: bool | None = None
    started_at: str | None = None
    last_reconcile: str | None = None
    last_reconcile_ms: float | None = None
    batches: int | None = None
    events: int | None = None
    changes_recorded: int | None = None
    full_rescans: int | None = None
    overflows: int | None = None
    restarts: int | None = None
    degraded: bool | None = None
    unwatched: list[str] | None = field(default=None, hash=False)
    failing: bool | None = None
    failing_since: str | None = None
    attempts: int | None = None
    last_error: str | None = None
    unrecorded: list[str] | None = field(default=None, hash=False)
    progress: dict[str, object] | None = field(default=None, hash=False)
    # The reference index's build after the start pass (docs/impact.md):
    # {"state": "building" | "built", "done", "total"} (files extracted of those lacking).
    refindex: dict[str, object] | None = field(default=None, hash=False)

    def to_json(self) -> dict[str, object]:
        """The file's content, every field present (None as null)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> DaemonStatus:
        """Tolerant: what is missing or of the wrong type reads as None."""
        if not isinstance(data, dict):
            return cls()
        known: dict[str, Any] = {f.name: _typed(data.get(f.name), _TYPES[f.name])
                                 for f in fields(cls)}
        return cls(**known)


_TYPES: dict[str, tuple[type, ...]] = {
    "pid": (int,), "host": (str,), "root": (str,), "running": (bool,), "started_at": (str,),
    "last_reconcile": (str,), "last_reconcile_ms": (int, float), "batches": (int,),
    "events": (int,), "changes_recorded": (int,), "full_rescans": (int,), "overflows": (int,),
    "restarts": (int,), "degraded": (bool,), "unwatched": (list,), "failing": (bool,),
    "failing_since": (str,), "attempts": (int,), "last_error": (str,), "unrecorded": (list,),
    "progress": (dict,), "refindex": (dict,),
}  # fmt: skip


def _typed(value: object, types: tuple[type, ...]) -> object:
    if isinstance(value, bool) and bool not in types:
        return None  # JSON true is not a count
    return value if isinstance(value, types) else None


def read_status(root: Path) -> DaemonStatus:
    """What the daemon's status file of the workspace at `root` says (all None without one)."""
    try:
        text = StateDir(root).status.read_text(encoding="utf-8")
        return DaemonStatus.from_json(json.loads(text))
    except (OSError, ValueError):
        return DaemonStatus()


def write_status(root: Path, status: DaemonStatus) -> None:
    """Replace the status file atomically (a reader never sees half of it); raises OSError."""
    path = StateDir(root).status
    tmp = path.with_name(f".{STATUS_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(status.to_json(), indent=2), encoding="utf-8")
    os.replace(tmp, path)
