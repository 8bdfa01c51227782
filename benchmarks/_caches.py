"""Forget symdiff's in-memory symbol caches, so a timed run parses as a first call does."""

from __future__ import annotations

import importlib

from symdiff.parse import reparse


def cold() -> None:
    """Empty the symbol caches (by content hash), the attribution memo and the held trees."""
    extract = importlib.import_module("symdiff.parse.extract")  # the package re-exports a function
    attribute = importlib.import_module("symdiff.attribute.spans")
    reparse.forget()
    extract._cache.clear()
    extract._cache_held = 0
    attribute._memo.clear()
    attribute._memo_held = 0
