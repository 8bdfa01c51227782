"""Read-only stores kept open for the life of the process, so that a long-running reader (the
MCP server answering `diff` calls) does not pay a connection per query — ~3 ms on SQLite,
~15 ms on PostgreSQL — while its adapters open, cache and close nothing themselves.

A reader never creates a database: a SQLite file that does not exist means nothing is indexed
yet. A SQLite file replaced since it was opened (another inode at that path) is reopened.

A reader's write of a cache it filled (the symbols an `against` answer extracted) may go
behind the answer (`write_behind`): in a thread of its own, one at a time per database; the
process waits for it at exit, and `settle` and `close_all` wait for it before they go on.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from symdiff.store.store import Store

KEEP = 4  # databases one process reads at once; the least recently used is closed beyond it

_lock = threading.Lock()
_open: OrderedDict[str, tuple[Store, tuple[int, int] | None]] = OrderedDict()


def _sqlite_file(url: str) -> str | None:
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        return url.removeprefix("sqlite:///").split("?", 1)[0]
    return None


def reader(url: str) -> Store | None:
    """The process's read-only Store for `url`; None while its SQLite file does not exist."""
    path = _sqlite_file(url)
    identity: tuple[int, int] | None = None
    if path is not None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        identity = (st.st_dev, st.st_ino)
    with _lock:
        held = _open.get(url)
        if held is not None and held[1] == identity:
            _open.move_to_end(url)
            return held[0]
        if held is not None:
            held[0].close()
        store = Store(url, read_only=True)
        _open[url] = (store, identity)
        while len(_open) > KEEP:
            _open.popitem(last=False)[1][0].close()
        return store


def close_all() -> None:
    """Close every kept store (tests, and processes that fork), once writes behind are done."""
    settle()
    with _lock:
        while _open:
            _open.popitem()[1][0].close()
        while _writers:
            _writers.popitem()[1][0].close()


_writers: dict[str, tuple[Store, tuple[int, int] | None]] = {}
_behind: dict[str, threading.Thread] = {}
log = logging.getLogger(__name__)


def writer(url: str) -> Store:
    """The process's writable Store for `url`, for the writes a reader makes (a named reader's
    cursor, the symbols an answer extracted, the references `impact` extracts); opened at
    first use (which creates the database) and kept, reopened when its SQLite file was
    replaced or removed since."""
    path = _sqlite_file(url)
    with _lock:
        held = _writers.get(url)
        if held is not None and (path is None or held[1] == _identity(path)):
            return held[0]
        if held is not None:
            held[0].close()
        store = Store(url)
        _writers[url] = (store, None if path is None else _identity(path))
        return store


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def write_behind(url: str, write: Callable[[Store], None]) -> None:
    """`write(writer(url))` in a thread of its own, after the one before it for `url`; the
    caller goes on at once. A failure is logged: what goes behind is a cache's fill."""
    settle(url)

    def run() -> None:
        try:
            write(writer(url))
        except Exception:
            log.exception("a write behind an answer failed (%s)", url)

    thread = threading.Thread(target=run, name="symdiff-write-behind")  # joined at exit
    with _lock:
        _behind[url] = thread
    thread.start()


def settle(url: str | None = None) -> None:
    """Wait for the writes behind (to `url`, or to every database) that are under way."""
    with _lock:
        threads = [t for u, t in _behind.items() if url is None or u == url]
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join()
    with _lock:
        for u, t in list(_behind.items()):
            if not t.is_alive():
                del _behind[u]
