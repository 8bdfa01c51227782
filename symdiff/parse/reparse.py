"""Incremental parsing: the trees of the texts parsed last, and a new text parsed from one.

A change record parses both versions of a file, and they share most of their bytes; so does a
history import, where a commit's old version is the previous commit's new one. tree-sitter
re-parses an edited text from the tree of the text it was edited from, re-using the subtrees
the edits leave alone. How much it re-uses depends on how the edits are described to it
(`edit_spans`: one per hunk of the line diff, each as tight as bytes allow): on
benchmarks/against_speed.py's Django tree, 0.14x a fresh parse's CPU where one span over all of
a file's edits cost 0.34x (`benchmarks/reparse_edits.py`). Grammars full of conflicts re-use
less whatever the edits: Elixir's costs 0.4x on elixir's own history, and a third of a fresh
parse even for a text re-parsed unchanged.

Only a tree without syntax errors is re-used, and a re-parse that finds one is thrown away for
a fresh parse: error recovery can place ERROR nodes differently when it starts from an old
tree, and a parse must not depend on which text happened to come before. The trees are held
in memory only, per process, bounded by count and by the bytes of their texts.
"""

from __future__ import annotations

import itertools
import operator
import threading
from collections import OrderedDict

from tree_sitter import Parser, Tree

# A tree takes about 17 times its text's bytes, so these hold at most ~70 MB of trees. 4 MB is
# the knee on elixir-lang/elixir's newest 300 commits: 413 of 803 parses re-used a held tree
# (1 MB: 342, 16 MB: 414); the rest are the first version met of a file.
HELD_TREES = 64
HELD_BYTES = 4 << 20

_held: OrderedDict[tuple[str, bytes], tuple[Tree, bytes]] = OrderedDict()
_held_bytes = 0
_lock = threading.Lock()
_CHUNK = 4096


def parse(parser: Parser, language: str, text: bytes, key: bytes | None,
          base: bytes | None) -> Tree:  # fmt: skip
    """The tree of `text` (as `parser.parse(text)` gives it), held under `key` for later calls.

    `base`: the key of a text that `text` was probably edited from; when its tree is still
    held, `text` is parsed incrementally from it.
    """
    old = None if base is None else _take(language, base)
    tree = None
    if old is not None:
        tree = parser.parse(text, edited(*old, text))
        if tree.root_node.has_error:
            tree = None
    if tree is None:
        tree = parser.parse(text)
    if key is not None and not tree.root_node.has_error:
        _hold(language, key, tree, text)
    return tree


def edited(tree: Tree, old: bytes, new: bytes) -> Tree:
    """A copy of `old`'s tree with the edits that make `new` of `old` (`edit_spans`), for
    tree-sitter to re-parse `new` from; `tree` itself is left as it is (for other threads and
    calls)."""
    out = tree.copy()
    for start, old_end, new_start, new_end in reversed(edit_spans(old, new)):
        # Back to front: an edit leaves the bytes and rows before it where they were.
        at = point(old, start)
        out.edit(start, old_end, start + new_end - new_start, at, point(old, old_end),
                 _end_point(at, new, new_start, new_end))
    return out


def _take(language: str, key: bytes) -> tuple[Tree, bytes] | None:
    with _lock:
        found = _held.get((language, key))
        if found is None:
            return None
        _held.move_to_end((language, key))
        return found


def _hold(language: str, key: bytes, tree: Tree, text: bytes) -> None:
    global _held_bytes
    if len(text) > HELD_BYTES // 4:
        return  # one huge file would evict everything else
    with _lock:
        previous = _held.pop((language, key), None)
        _held_bytes -= 0 if previous is None else len(previous[1])
        _held[(language, key)] = (tree, text)
        _held_bytes += len(text)
        while len(_held) > HELD_TREES or _held_bytes > HELD_BYTES:
            _held_bytes -= len(_held.popitem(last=False)[1][1])


def forget() -> None:
    """Drop every held tree (benchmarks measure a first parse with it)."""
    global _held_bytes
    with _lock:
        _held.clear()
        _held_bytes = 0


def edit_spans(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
    """The edits that make `new` of `old`, in order: (start, end) in `old` and (start, end) in
    `new`; each as tight as bytes allow.

    One span from the common prefix to the common suffix when that span is short or lies on
    one line. Otherwise the texts are cut at the first line of each of the line diff's hunks
    (after the first), and each piece's edit is the span between its own common prefix and
    suffix: tree-sitter then re-parses only around each edit. A span over several edits makes
    it re-parse all that lies between them; and an edit placed on a line's start (a hunk's
    lines as they are) can touch the zero-width token that ends the statement before it, which
    in a grammar with an external scanner (Python's indentation) stops tree-sitter re-using
    what follows (docs/performance.md, "Round 5" of issue 25). Within a piece the
    common prefix is taken first, so an insertion goes as late as its text allows, past a
    repeated `def ` or `end` into the line after.
    """
    start, old_end, new_end = edit_span(old, new)
    whole = [(start, old_end, start, new_end)]
    if max(old_end, new_end) - start < SPLIT_SPAN or (
            b"\n" not in old[start:old_end] and b"\n" not in new[start:new_end]):  # fmt: skip
        return whole
    first = old.rfind(b"\n", 0, start) + 1  # the line the span starts on, the same in both
    hunks = _hunks(old[first:old_end], new[first:new_end])
    if len(hunks) < 2:
        return whole
    old_lines, new_lines = _line_starts(old, first, old_end), _line_starts(new, first, new_end)
    cuts = []  # where each hunk after the first starts, in both texts
    for old_first, _, new_first, _ in hunks[1:]:
        if old_first >= len(old_lines) or new_first >= len(new_lines):
            return whole
        cuts.append((old_lines[old_first], new_lines[new_first]))
    cuts.append((len(old), len(new)))
    # The pieces cut both texts whole and in step, and each one's edit makes its new piece of
    # its old one: together the edits make `new` of `old` (the tests rebuild it to check).
    out = []
    a, c = start, start  # the piece from here to the next cut
    for b, d in cuts:
        if b < a or d < c:
            return whole
        prefix, piece_old_end, piece_new_end = edit_span(old[a:b], new[c:d])
        if prefix < max(b - a, d - c):  # the pieces differ
            out.append((a + prefix, a + piece_old_end, c + prefix, c + piece_new_end))
        a, c = b, d
    return out


SPLIT_SPAN = 64  # a shorter span is one edit: no line diff is worth making for it


def _hunks(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
    """(old first line, old count, new first line, new count) of each hunk, 0-based lines of
    the two texts as given; an insertion's first line is the line it goes before."""
    import pygit2  # the diffs layer's engine; loaded only for an edit over several lines

    patch = pygit2.Patch.create_from(old, new, context_lines=0)
    out = []
    for h in patch.hunks:
        old_first = h.old_start - 1 if h.old_lines else h.old_start
        new_first = h.new_start - 1 if h.new_lines else h.new_start
        out.append((old_first, h.old_lines, new_first, h.new_lines))
    return out


def _line_starts(text: bytes, start: int, end: int) -> list[int]:
    """Offsets in `text` of the lines of `text[start:end]` (which begins a line), and `end`."""
    lengths = map(len, text[start:end].split(b"\n"))  # every line but the last ends in \n
    out = list(itertools.accumulate(map(operator.add, lengths, itertools.repeat(1)),
                                    initial=start))  # fmt: skip
    out[-1] = end  # past the last line, which has no \n
    if len(out) > 1 and out[-2] == end:
        out.pop()  # the text ends with \n: its last line is empty
    return out


def _end_point(at: tuple[int, int], text: bytes, start: int, end: int) -> tuple[int, int]:
    """Where text[start:end], placed at point `at`, ends (row, byte column)."""
    rows = text.count(b"\n", start, end)
    if not rows:
        return at[0], at[1] + end - start
    return at[0] + rows, end - (text.rfind(b"\n", start, end) + 1)


def edit_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old end, new end): the bytes between the texts' common prefix and suffix."""
    start = _common_prefix(old, new)
    room = min(len(old), len(new)) - start
    tail = _common_suffix(old, new, room)
    return start, len(old) - tail, len(new) - tail


def point(text: bytes, offset: int) -> tuple[int, int]:
    """The (row, byte column) of a byte offset, as tree-sitter counts them."""
    row = text.count(b"\n", 0, offset)
    return row, offset - (text.rfind(b"\n", 0, offset) + 1)


def _common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix, comparing chunks (memcmp), then halving."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n and a[lo : lo + _CHUNK] == b[lo : lo + _CHUNK]:
        lo += _CHUNK
    if lo >= n:
        return n
    hi = min(lo + _CHUNK, n)  # the first difference lies in [lo, hi)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, room: int) -> int:
    """The length of the longest common suffix, at most `room` bytes."""
    la, lb = len(a), len(b)
    n = 0
    while n < room:
        step = min(_CHUNK, room - n)
        if a[la - n - step : la - n] != b[lb - n - step : lb - n]:
            break
        n += step
    else:
        return room
    lo, hi = n, min(n + _CHUNK, room)  # the common suffix is between lo and hi bytes long
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - n] == b[lb - mid : lb - n]:
            lo = mid
        else:
            hi = mid - 1
    return lo
