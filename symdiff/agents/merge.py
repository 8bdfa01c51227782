"""A three-way line merge (pure): both sides' changes to a common base, or the conflicts.

Changes that touch different lines of the base — even adjacent ones — are both kept, byte for
byte; changes to the same lines conflict (unless identical), as do two different insertions at
one place. Line hunks come from `linediff.diff_lines` (git's own diff).
"""

from __future__ import annotations

from dataclasses import dataclass

from symdiff.diffs.linediff import diff_lines

Change = tuple[int, int, tuple[bytes, ...]]  # base lines [start, end) → these lines


@dataclass(frozen=True, slots=True)
class Conflict:
    """Both sides changed the same base lines (1-based, inclusive; an insertion has end <
    start): what each side has there instead."""

    start: int
    end: int
    ours: str
    theirs: str


def changes(base: bytes, other: bytes) -> list[Change]:
    """The hunks that turn `base` into `other`, as base line ranges and their new lines."""
    lines = other.splitlines(keepends=True)
    out: list[Change] = []
    for h in diff_lines(base, other).hunks:
        start = h.old_start if h.old_count == 0 else h.old_start - 1
        new = tuple(lines[h.new_start - 1 : h.new_start - 1 + h.new_count]) if h.new_count else ()
        out.append((start, start + h.old_count, new))
    return out


def _clash(a: Change, b: Change) -> bool:
    (s1, e1, _), (s2, e2, _) = a, b
    if s1 == e1 and s2 == e2:
        return s1 == s2  # two insertions at one place
    if s1 == e1:
        return s2 < s1 < e2  # an insertion strictly inside the other's lines
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def merge3(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes | None, list[Conflict]]:
    """`base` with `ours`' and `theirs`' changes both applied; None and the conflicts when they
    touch the same lines."""
    base_lines = base.splitlines(keepends=True)
    mine, other = changes(base, ours), changes(base, theirs)
    chosen = list(mine)
    conflicts = []
    for t in other:
        clashing = [c for c in mine if _clash(c, t)]
        if not clashing:
            chosen.append(t)
        elif clashing != [t]:  # the same change on both sides is taken once
            start = min(c[0] for c in (*clashing, t))
            end = max(c[1] for c in (*clashing, t))
            conflicts.append(Conflict(start + 1, end,
                                      b"".join(b"".join(c[2]) for c in clashing).decode(
                                          "utf-8", "replace"),
                                      b"".join(t[2]).decode("utf-8", "replace")))  # fmt: skip
    if conflicts:
        return None, conflicts
    out: list[bytes] = []
    pos = 0
    for start, end, new in sorted(chosen, key=lambda c: (c[0], c[1])):
        out.extend(base_lines[pos:start])
        out.extend(new)
        pos = end
    out.extend(base_lines[pos:])
    return b"".join(out), []
