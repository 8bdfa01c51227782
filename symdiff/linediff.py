"""The line diff engine: hunks and numstat counts from two byte strings (libgit2's xdiff)."""

from __future__ import annotations

from dataclasses import dataclass

import pygit2


@dataclass(frozen=True, slots=True)
class Hunk:
    """One region of change; line numbers are 1-based, lists hold the changed line numbers."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    removed: tuple[int, ...]
    added: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LineDiff:
    """The line-level difference of two texts."""

    hunks: tuple[Hunk, ...]
    lines_added: int
    lines_removed: int


def diff_lines(old: bytes, new: bytes) -> LineDiff:
    """Diff two texts line by line, as `git diff` does (Myers, no context)."""
    if old == new:
        return LineDiff((), 0, 0)
    patch = pygit2.Patch.create_from(old, new, context_lines=0)
    hunks = []
    added_total = removed_total = 0
    for h in patch.hunks:
        removed = tuple(ln.old_lineno for ln in h.lines if ln.origin == "-")
        added = tuple(ln.new_lineno for ln in h.lines if ln.origin == "+")
        added_total += len(added)
        removed_total += len(removed)
        hunks.append(Hunk(h.old_start, h.old_lines, h.new_start, h.new_lines, removed, added))
    return LineDiff(tuple(hunks), added_total, removed_total)
