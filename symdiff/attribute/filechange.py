"""The one builder of a `FileChange`: two versions of a file → change type, line counts,
scope, language and symbol changes.

The indexer (a stored snapshot against a fresh read), `against` (a revision's blob against the
work tree) and the history import (a commit's blobs against its parent's) all build their
records here, so the counts and the symbols follow one rule whichever way a change was found.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from symdiff.attribute.spans import attribute, symbol_changes
from symdiff.diffs.linediff import LineDiff, count_lines, diff_lines
from symdiff.model import ChangeType, FileChange, Origin, Symbol, SymbolChange
from symdiff.parse.languages import language_for
from symdiff.parse.testpaths import classify

if TYPE_CHECKING:
    from symdiff.parse.shelf import SymbolShelf

log = logging.getLogger(__name__)


class _Failed(tuple[SymbolChange, ...]):
    """No symbol changes because extraction failed: not to be remembered as the answer."""


FAILED: tuple[SymbolChange, ...] = _Failed()


def line_diff(
    kind: ChangeType, old: bytes | None, new: bytes | None
) -> tuple[int, int, LineDiff | None]:
    """(added, removed) as `git diff --numstat` counts them, and the diff when both sides are text.

    A change where one side is binary or kept by hash only counts 0/0, as git prints `-`.
    """
    if old is not None and new is not None:
        d = diff_lines(old, new)
        return d.lines_added, d.lines_removed, d
    if kind is ChangeType.ADD and new is not None:
        return count_lines(new), 0, None
    if kind is ChangeType.DELETE and old is not None:
        return 0, count_lines(old), None
    return 0, 0, None


def file_symbols(
    language: str | None, old: bytes | None, new: bytes | None, path: str, diff: LineDiff | None,
    shelf: SymbolShelf | None = None, old_blob: str | None = None, new_blob: str | None = None,
) -> tuple[SymbolChange, ...]:
    """The symbol changes between two texts (None: absent or binary); () on a parser failure.

    `shelf`: the batch's symbols by blob, with the sides' blob ids (spans.symbol_changes)."""
    if language is None or (old is None and new is None):
        return ()
    try:
        return tuple(symbol_changes(language, old, new, diff=diff, shelf=shelf,
                                    old_blob=old_blob, new_blob=new_blob))
    except Exception:  # a parser bug must cost one file's symbols, never the caller
        log.exception("symbol extraction failed for %s", path)
        return FAILED


def change_between(old: bytes, new: bytes, old_symbols: list[Symbol], new_symbols: list[Symbol]
                   ) -> tuple[int, int, tuple[SymbolChange, ...]]:  # fmt: skip
    """The line counts and symbol changes from `old` to `new` (both text), given both sides'
    symbols: what `build_change` works out for such a change. The parse pool's workers call it
    beside the parse (`SymbolShelf.fill`), so that a batch's records are only assembled."""
    diff = diff_lines(old, new)
    changes = () if old == new else tuple(attribute(old_symbols, new_symbols, old, new, diff))
    return diff.lines_added, diff.lines_removed, changes


def build_change(
    kind: ChangeType,
    path: str,
    *,
    old_path: str | None,
    old: bytes | None,
    new: bytes | None,
    timestamp: datetime,
    test_patterns: Sequence[str] = (),
    old_hash: str | None = None,
    new_hash: str | None = None,
    origin: Origin = Origin.SCAN,
    origin_info: Mapping[str, object] | None = None,
    git: Mapping[str, object] | None = None,
    shelf: SymbolShelf | None = None,
) -> FileChange:
    """One change record; `old`/`new` are the texts (None when absent, binary or unknown).

    `shelf`: the batch's symbols by blob id (parse/shelf.py): a side whose symbols it holds
    (keyed by `old_hash`/`new_hash`) is not extracted again, and one extracted is shelved."""
    language = language_for(path)
    pair = None
    if (shelf is not None and language is not None and old is not None and new is not None
            and old_hash is not None and new_hash is not None):
        pair = (language, old_hash, new_hash)
    known = None if pair is None or shelf is None else shelf.pair(pair)
    if known is not None:  # asked before, by this process or another: nothing to work out
        added, removed, symbols = known
    else:
        added, removed, diff = line_diff(kind, old, new)
        symbols = file_symbols(language, old, new, path, diff, shelf, old_hash, new_hash)
        if pair is not None and shelf is not None and symbols is not FAILED:
            shelf.add_pair(pair, (added, removed, symbols))
    return FileChange(
        path=path,
        old_path=old_path,
        timestamp=timestamp,
        change_type=kind,
        lines_added=added,
        lines_removed=removed,
        scope=classify(path, test_patterns),
        language=language,
        symbols=symbols,
        old_hash=old_hash,
        new_hash=new_hash,
        origin=origin,
        origin_info=origin_info,
        git=git,
    )
