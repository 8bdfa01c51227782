"""Incremental parsing: the trees of the texts parsed last, and a new text parsed from one.

A change record parses both versions of a file, and they share most of their bytes; so does a
history import, where a commit's old version is the previous commit's new one. tree-sitter
re-parses an edited text from the tree of the text it was edited from, re-using every subtree
the edit leaves alone; for a typical commit that costs half of a fresh parse. The edit is the
one span between the texts' common prefix and common suffix.

Only a tree without syntax errors is re-used, and a re-parse that finds one is thrown away for
a fresh parse: error recovery can place ERROR nodes differently when it starts from an old
tree, and a parse must not depend on which text happened to come before. The trees are held
in memory only, per process, bounded by count and by the bytes of their texts.
"""

from __future__ import annotations

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
        old_tree, old_text = old
        edited = old_tree.copy()  # the held tree stays as it is, for other threads and calls
        for start, old_end, new_start, new_end in reversed(edit_spans(old_text, text)):
            # Back to front: an edit leaves the bytes and rows before it where they were.
            at = point(old_text, start)
            edited.edit(start, old_end, start + new_end - new_start, at,
                        point(old_text, old_end), _end_point(at, text, new_start, new_end))
        tree = parser.parse(text, edited)
        if tree.root_node.has_error:
            tree = None
    if tree is None:
        tree = parser.parse(text)
    if key is not None and not tree.root_node.has_error:
        _hold(language, key, tree, text)
    return tree


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
    `new`. One span from the common prefix to the common suffix; when that span is long (edits
    at both ends of a large file), the line diff's hunks instead, so that tree-sitter re-parses
    only around each edit."""
    start, old_end, new_end = edit_span(old, new)
    whole = [(start, old_end, start, new_end)]
    if max(old_end, new_end) - start < SPLIT_SPAN:
        return whole
    hunks = _hunks(old[start:old_end], new[start:new_end])
    if len(hunks) < 2:
        return whole
    old_lines, new_lines = _line_starts(old, start, old_end), _line_starts(new, start, new_end)
    out = []
    shift = 0  # new offset - old offset before the current hunk
    for old_first, old_count, new_first, new_count in hunks:
        if old_first + old_count >= len(old_lines) or new_first + new_count >= len(new_lines):
            return whole
        a, b = old_lines[old_first], old_lines[old_first + old_count]
        c, d = new_lines[new_first], new_lines[new_first + new_count]
        if c - a != shift:  # what lies between hunks must be the same in both texts
            return whole
        out.append((a, b, c, d))
        shift += (d - c) - (b - a)
    return out


SPLIT_SPAN = 16 << 10  # a span at least this long is split into the line diff's hunks


def _hunks(old: bytes, new: bytes) -> list[tuple[int, int, int, int]]:
    """(old first line, old count, new first line, new count) of each hunk, 0-based lines of
    the two texts as given; an insertion's first line is the line it goes before."""
    import pygit2  # the diffs layer's engine; loaded only for a long span

    patch = pygit2.Patch.create_from(old, new, context_lines=0)
    out = []
    for h in patch.hunks:
        old_first = h.old_start - 1 if h.old_lines else h.old_start
        new_first = h.new_start - 1 if h.new_lines else h.new_start
        out.append((old_first, h.old_lines, new_first, h.new_lines))
    return out


def _line_starts(text: bytes, start: int, end: int) -> list[int]:
    """Offsets in `text` of the lines of `text[start:end]` (which begins a line), and `end`."""
    out = [start]
    at = text.find(b"\n", start, end)
    while at != -1:
        out.append(at + 1)
        at = text.find(b"\n", at + 1, end)
    if out[-1] != end:
        out.append(end)
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
