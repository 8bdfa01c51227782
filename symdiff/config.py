"""Settings resolved in one place: explicit argument > SYMDIFF_* environment > default."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from symdiff.duration import parse_duration_arg
from symdiff.errors import InvalidArgs
from symdiff.workspace.layout import STATE_DIR, StateDir

MAX_FILE_SIZE = 4 * 1024 * 1024
# How long a batch of events waits for quiet before it is recorded: Watchman's default. A git
# command is not cut short by it (record/origins.py waits for its lock and its refs).
SETTLE_MS = 20
# How long records are kept (docs/retention.md): 90 days, three times the diff query's 720h,
# so a definition's history (symdiff log / restore) reaches past the last month.
DEFAULT_KEEP = "2160h"


def _default_root(root: str | os.PathLike[str] | None) -> Path:
    return Path(root if root is not None else os.environ.get("SYMDIFF_ROOT", ".")).resolve()


def default_db_url(root: Path) -> str:
    """SQLite at `<root>/.symdiff/index.db`."""
    return f"sqlite:///{StateDir(root).index_db}"


def workspace_root(path: Path) -> Path:
    """The nearest directory at or above `path` with a `.symdiff/` (queries run in subdirs);
    `path` itself when there is none."""
    path = path.resolve()
    for candidate in (path, *path.parents):
        if (candidate / STATE_DIR).is_dir():
            return candidate
    return path


def _default_db(db: str | None, root: Path) -> str:
    return db or os.environ.get("SYMDIFF_DB") or default_db_url(root)


def _split_env(name: str) -> tuple[str, ...]:
    raw = os.environ.get(name, "")
    return tuple(p.strip() for p in raw.split(",") if p.strip())


def _default_host(host: str | None) -> str:
    return host or os.environ.get("SYMDIFF_HOST") or socket.gethostname()


def _default_settle_ms(settle_ms: int | None) -> int:
    if settle_ms is not None:
        return settle_ms
    raw = os.environ.get("SYMDIFF_SETTLE_MS", str(SETTLE_MS))
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidArgs(f"SYMDIFF_SETTLE_MS must be a number of milliseconds, got {raw!r}")
    return value


def _default_keep_us(keep: str | None) -> int:
    """The retention window in microseconds: a Go duration of at least 1h (`--keep`,
    SYMDIFF_KEEP)."""
    source = "keep" if keep is not None else "SYMDIFF_KEEP"
    raw = keep if keep is not None else os.environ.get("SYMDIFF_KEEP") or DEFAULT_KEEP
    ns = parse_duration_arg(raw, name=source, hint='; e.g. "2160h" for 90 days', floor="1h")
    return ns // 1000


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a symdiff operation needs to know about its workspace.

    `root` is the workspace's root, resolved once by `resolve`; its state folder (the index,
    the daemon's lock, status and cookies) is `state_dir`.
    """

    root: Path
    db_url: str
    host: str
    ignore: tuple[str, ...] = ()
    test_patterns: tuple[str, ...] = ()
    max_file_size: int = MAX_FILE_SIZE
    settle_ms: int = SETTLE_MS
    keep_us: int = 2160 * 3600 * 1_000_000  # records older than this are collected

    @classmethod
    def resolve(
        cls,
        root: str | os.PathLike[str] | None = None,
        *,
        db: str | None = None,
        host: str | None = None,
        ignore: tuple[str, ...] = (),
        test_patterns: tuple[str, ...] = (),
        settle_ms: int | None = None,
        nearest: bool = False,
        keep: str | None = None,
    ) -> Settings:
        """Build Settings; `None` means "ask the environment, then the default".

        `nearest`: the workspace is the nearest at or above `root` with a `.symdiff/` (a reader
        asking from a subdirectory), else `root` itself. `keep`: the retention window, a Go
        duration (default $SYMDIFF_KEEP, else 2160h).
        """
        r = _default_root(root)
        if nearest:
            r = workspace_root(r)
        return cls(
            root=r,
            db_url=_default_db(db, r),
            host=_default_host(host),
            ignore=ignore + _split_env("SYMDIFF_IGNORE"),
            test_patterns=test_patterns + _split_env("SYMDIFF_TEST_PATTERNS"),
            settle_ms=_default_settle_ms(settle_ms),
            keep_us=_default_keep_us(keep),
        )

    @property
    def state_dir(self) -> Path:
        """The workspace's `.symdiff/` folder."""
        return self.root / STATE_DIR
