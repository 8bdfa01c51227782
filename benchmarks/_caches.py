"""Forget symdiff's in-memory caches, so a timed run parses (and reads, and scores renames) as a
first call does."""

from __future__ import annotations

import importlib

from symdiff.git import renames
from symdiff.parse import reparse, testpaths
from symdiff.query import against


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
