"""Forget symdiff's in-memory caches, so a timed run parses (and reads, and scores renames) as a
first call does."""

from __future__ import annotations

import importlib

from symdiff.attribute.filechange import change_between
from symdiff.git import renames
from symdiff.parse import pool, reparse, testpaths
from symdiff.query import against

# Text no benchmark parses otherwise: what warms a restarted pool's workers (grammar and query
# loaded, as in a server that has parsed before) without putting a measured text in a cache.
_WARM = "".join(f"def warm_{i}(a, b):\n    return a * {i} + b\n\n\n" for i in range(6000))


def cold() -> None:
    """Empty the symbol caches (by content hash), the attribution memo, the held trees, the
    rename spans and scores, `against`'s blobs and the test-path memo."""
    extract = importlib.import_module("symdiff.parse.extract")  # the package re-exports a function
    attribute = importlib.import_module("symdiff.attribute.spans")
    reparse.forget()
    extract._cache.clear()
    extract._cache_held = 0
    attribute._memo.clear()
    attribute._memo_held = 0
    renames.forget()
    against.forget()
    testpaths.forget()
    _cold_workers()


def _cold_workers() -> None:
    """The process's parse pool, if it runs, with workers whose caches hold nothing measured:
    restarted, and warmed on text of their own (their start is not what a call in a running
    server pays), each job asking for its change as `against` and the import ask (so that
    the workers have loaded the attribution's code, as they have in a server that answered
    before: 70 ms of imports, pygit2 most of it, at a worker's first such job)."""
    shared = pool._shared
    if shared is None or not shared.pids():
        return
    shared.close()
    both = pool.OLD | pool.NEW | pool.CHANGE
    # Texts that share nothing, so that no two jobs make one chain: one job for each worker.
    jobs: list[pool.Job] = [("python", (_WARM + f"# {k}a\n").encode(),
                             (_WARM + f"# {k}b\n").encode(), both) for k in range(shared.size)]
    shared.changes_of(jobs, change_between)
