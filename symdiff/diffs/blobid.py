"""Content identity: git's blob object id, shared by the store, the reader and patches."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

# Threads that hash a pair of texts beside a diff (see blob_ids_aside); started on first use.
_hashers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="symdiff-blob-ids")


def blob_id(data: bytes) -> str:
    """Git's blob object id (SHA-1 of `blob <size>\\0` + bytes), as `git hash-object` prints it."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)  # no concatenation: a 4 MiB input is not copied to be hashed
    return h.hexdigest()


def blob_ids_aside(a: bytes, b: bytes) -> Callable[[], tuple[str, str]]:
    """Start hashing `a` and `b`, each on a thread of its own; call the result for their ids.

    hashlib lets go of the GIL while it hashes a large input, so the two ids (5 ms for two
    4 MiB texts) take no wall time when the caller meanwhile runs libgit2's diff. The catch:
    libgit2's diff holds the GIL throughout, and a thread that wants the GIL then waits until
    the diff ends. So this returns only once both threads hold their hash objects and are on
    their way into hashlib's update, which lets go of the GIL for the rest of the work.
    """
    started = threading.Event(), threading.Event()
    jobs = zip((a, b), started, strict=True)
    pending = [_hashers.submit(_blob_id_signalled, data, event) for data, event in jobs]
    for event in started:
        event.wait()
    return lambda: (pending[0].result(), pending[1].result())


def _blob_id_signalled(data: bytes, started: threading.Event) -> str:
    try:
        h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    finally:
        started.set()
    h.update(data)
    return h.hexdigest()
