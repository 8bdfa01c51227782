"""Attribution: old/new symbols and a line diff -> the symbol changes of one file change.

The rules are docs/spec.md's "Change records"; the decisions the spec leaves open are written down
in docs/attribution.md. Everything here is pure: bytes and Symbols in, SymbolChanges out.

One module because ownership of lines (and of bytes on lines that several definitions share),
matching old to new, and rename pairing are one algorithm whose steps share the `_Side` view of
a file; split apart, each piece would only make sense by reading the others.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import re
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from symdiff.diffs.linediff import LineDiff, diff_lines
from symdiff.model import Symbol, SymbolChange, SymbolChangeType

if TYPE_CHECKING:
    from symdiff.parse.shelf import SymbolShelf

__all__ = ["attribute", "symbol_changes"]

# Pairing prefers identical content over nearness; nearness is counted in lines, so any
# content match outweighs any distance a real file can have.
_CONTENT_MISMATCH_COST = 1 << 40
# Above this many candidate pairs in one group (thousands of same-named definitions, e.g.
# generated code), the quadratic alignment gives way to pairing in source order.
_ALIGN_LIMIT = 250_000
# The end of the last span of kept lines: past any line a file can have.
_NO_END = 1 << 62


class _Side:
    """One version of a file: its symbols and, on demand, the lines each owns and the text used
    to compare them.

    Nothing is computed for every line, nor for every symbol beyond one sort: a symbol's own
    lines are worked out when its pair is compared (from the spans painted over its own), and its
    text only when those lines are not plainly the same on both sides (usually for the one or
    two definitions an edit touched).
    """

    def __init__(self, symbols: Sequence[Symbol], source: bytes) -> None:
        self.symbols = tuple(symbols)
        self.source = source
        self._lines: list[bytes] | None = None
        self._line_count = 0
        shared = _shared_lines(self.symbols)
        self._split = (_split_shared_lines(self.symbols, source, self.lines(), shared)
                       if shared else _Split(source))  # fmt: skip
        self._cuts = sorted(self._split.shared)
        self.pieces = self._split.pieces
        self._by_start: tuple[list[int], Sequence[int]] | None = None
        self._rank: list[int] = []
        self._painted: list[int] = []
        self._runs: dict[int, list[tuple[int, int]]] = {}
        self._own: dict[int, bytes] = {}
        self._body: dict[int, bytes] = {}

    @property
    def line_count(self) -> int:
        """As many lines as `source.split(b"\\n")` gives (counted, not split, when first asked)."""
        if not self._line_count:
            split = self._lines
            self._line_count = len(split) if split is not None else self.source.count(b"\n") + 1
        return self._line_count

    def own_runs(self, i: int) -> list[tuple[int, int]]:
        """Symbol i's own lines as runs (first, last): the lines of its span that no span painted
        after it (in `_owners`' order) covers, less the shared lines."""
        runs = self._runs.get(i)
        if runs is None:
            starts, ids = self.by_start()
            me = self.symbols[i]
            at = bisect.bisect_left(starts, me.start_line)
            later: Iterable[int]
            if at + 1 < len(starts) and starts[at + 1] == me.start_line:
                # Another span starts on its line (minified code): _owners' order decides.
                if not self._painted:
                    self._painted = _paint_order(self.symbols)
                    self._rank = [0] * len(self._painted)
                    for r, k in enumerate(self._painted):
                        self._rank[k] = r
                r = self._rank[i] + 1
                later = (self._painted[x] for x in range(r, len(self._painted)))
            else:  # the spans starting within it are all painted after it
                later = ids[at + 1 : bisect.bisect_right(starts, me.end_line)]
            runs = _unpainted(self.symbols, me, later, self.line_count)
            if self._cuts:
                runs = _cut(runs, self._cuts)
            self._runs[i] = runs
        return runs

    def lines(self) -> list[bytes]:
        """The version's lines (split on `\\n` only), split when first asked for."""
        if self._lines is None:
            self._lines = self.source.split(b"\n")
        return self._lines

    def by_start(self) -> tuple[list[int], Sequence[int]]:
        """The symbols' start lines in order, and their indices in that order (ties by index)."""
        if self._by_start is None:
            starts = [sym.start_line for sym in self.symbols]
            if starts == sorted(starts):
                self._by_start = starts, range(len(starts))  # as extractors list them
            else:
                ids = sorted(range(len(starts)), key=starts.__getitem__)
                self._by_start = [starts[k] for k in ids], ids
        return self._by_start

    def own(self, i: int) -> bytes:
        """Symbol i's own text: its span minus nested definitions', normalised (`_normalised`).

        Whole lines, except on a line shared with a sibling definition, where it owns only its
        bytes (see `_split_shared_lines`).
        """
        if i not in self._own:
            lines = self.lines()
            pieces = self._split.pieces.get(i)
            if pieces:
                numbered: list[tuple[int, bytes]] = []
                for first, last in self.own_runs(i):
                    numbered.extend(zip(range(first, last + 1), lines[first - 1 : last],
                                        strict=True))  # fmt: skip
                self._own[i] = b"".join(ln + b"\n" for ln in _normalise(numbered, pieces))
            else:
                picked: list[bytes] = []
                for first, last in self.own_runs(i):
                    picked += lines[first - 1 : last]
                self._own[i] = _normalised(picked)
        return self._own[i]

    def body(self, i: int) -> bytes:
        """Symbol i's lines after its header, nested definitions included, normalised."""
        if i not in self._body:
            s = self.symbols[i]
            last = s.end_line
            first, stop = max(s.header_end_line + 1, 1), min(last, self.line_count)
            lines = self.lines()[first - 1 : stop]
            if last > s.header_end_line and last in self._split.shared and s.end_byte is not None:
                # A sibling starts on the last line: that line counts only up to our end.
                start = self._split.line_starts[last - 1]
                lines[-1] = self._split.source[start : s.end_byte]
            self._body[i] = _normalised(lines)
        return self._body[i]


def symbol_changes(
    language: str | None,
    old: bytes | None,
    new: bytes | None,
    *,
    diff: LineDiff | None = None,
    shelf: SymbolShelf | None = None,
    old_blob: str | None = None,
    new_blob: str | None = None,
) -> list[SymbolChange]:
    """Extract both versions of a file, diff them and attribute the changes to symbols.

    `None` for a side means the file is absent there: every symbol of the other side is then
    added (or removed). A language symdiff does not parse yields no symbol changes. `diff` is
    the line diff of the two sides when the caller already has it. `shelf`: a batch's symbols
    by blob (parse/shelf.py), with `old_blob`/`new_blob` the sides' git blob ids: a side it
    knows is not extracted, and a side extracted here is handed to it to be stored.
    """
    if language is None or old == new:
        return []
    key = (language, _digest(old), _digest(new))
    with _memo_lock:
        hit = _memo.get(key)
        if hit is not None:
            _memo.move_to_end(key)
    if hit is not None and (shelf is None or _shelved(shelf, language, old_blob, new_blob)):
        return list(hit)
    # Each side may be parsed incrementally from the other's tree (extract's `base`).
    old_symbols = _side(language, old, old_blob, new, shelf)
    new_symbols = _side(language, new, new_blob, old, shelf, old_blob)
    if hit is not None:
        return list(hit)
    old_source = old if old is not None else b""
    new_source = new if new is not None else b""
    if diff is None:
        diff = diff_lines(old_source, new_source)
    changes = attribute(old_symbols, new_symbols, old_source, new_source, diff)
    _remember(key, changes)
    return changes


def _side(language: str, source: bytes | None, blob: str | None, base: bytes | None,
          shelf: SymbolShelf | None, base_blob: str | None = None) -> Sequence[Symbol]:  # fmt: skip
    """One side's symbols: from the shelf, else extracted (and then shelved, to be stored
    against `base_blob`'s: the new side of a change names the old)."""
    if source is None:
        return []
    if shelf is not None:
        return shelf.symbols(language, source, blob, base, base_blob)
    from symdiff.parse.extract import (
        extract,  # the extractor imports tree-sitter; keep this module light
    )

    return extract(language, source, base=base)


def _shelved(shelf: SymbolShelf, language: str, *blobs: str | None) -> bool:
    """Whether the shelf holds every named side (a memo hit still hands new symbols over)."""
    return all(blob is None or shelf.has((language, blob)) for blob in blobs)


# The same pair of contents is attributed more than once: an edit's preview and its record in
# the index (the file as it was, and as the edit leaves it), a dry run and the real apply after
# it. Extraction caches symbols by content, but not a huge file's (extract.CACHE_SYMBOLS); the
# answer, though, is small however large the file is: only what changed. So the last answers
# are kept, keyed by the digests of both sides, which keeps this function pure to its callers.
_MEMO_SIZE = 64
_MEMO_CHANGES = 20_000
_memo: OrderedDict[tuple[str, bytes | None, bytes | None], tuple[SymbolChange, ...]] = (
    OrderedDict()
)
_memo_lock = threading.Lock()
_memo_held = 0


def _digest(data: bytes | None) -> bytes | None:
    return None if data is None else hashlib.blake2b(data, digest_size=16).digest()


def _remember(key: tuple[str, bytes | None, bytes | None], changes: list[SymbolChange]) -> None:
    global _memo_held
    if len(changes) > _MEMO_CHANGES // 4:
        return  # a whole huge file added or removed would evict everything else
    with _memo_lock:
        previous = _memo.pop(key, None)
        _memo_held -= len(previous) if previous is not None else 0
        _memo[key] = tuple(changes)
        _memo_held += len(changes)
        while len(_memo) > _MEMO_SIZE or _memo_held > _MEMO_CHANGES:
            _memo_held -= len(_memo.popitem(last=False)[1])


def attribute(
    old_symbols: Sequence[Symbol],
    new_symbols: Sequence[Symbol],
    old_source: bytes,
    new_source: bytes,
    diff: LineDiff,
) -> list[SymbolChange]:
    """Attribute the change from `old_source` to `new_source` to the symbols of both versions."""
    old = _Side(old_symbols, old_source)
    new = _Side(new_symbols, new_source)
    to_new_line = _line_mapper(diff)
    unique = _unique_exact_pairs(old.symbols, new.symbols)
    pairs = _match(old, new, to_new_line, unique)
    renames = _renames(old, new, pairs)
    kept = _kept_spans(diff)
    untouched = _untouched(old, new, kept, pairs)

    changes: list[SymbolChange] = []
    matched_old = set(pairs)
    matched_new = set(pairs.values())
    for i, j in pairs.items():
        if i in untouched:
            continue
        kind = _pair_change(old, new, i, j, kept)
        if kind is not None:
            changes.append(_symbol_change(new.symbols[j], kind))
    for j, sym in enumerate(new.symbols):
        if j not in matched_new:
            source = renames.get(("new", j))
            changes.append(_symbol_change(sym, SymbolChangeType.ADDED, renamed_from=source))
    for i, sym in enumerate(old.symbols):
        if i not in matched_old:
            target = renames.get(("old", i))
            changes.append(_symbol_change(sym, SymbolChangeType.REMOVED, renamed_to=target))
    changes.sort(key=_order)
    return changes


def _order(change: SymbolChange) -> tuple[int, int, int, str]:
    """By start line; at one line the outer definition first, and a removal before the rest."""
    removed_first = 0 if change.change_type is SymbolChangeType.REMOVED else 1
    return (change.start_line, -change.end_line, removed_first, change.name)


def _symbol_change(
    sym: Symbol,
    change_type: SymbolChangeType,
    *,
    renamed_from: str | None = None,
    renamed_to: str | None = None,
) -> SymbolChange:
    return SymbolChange(
        name=sym.name,
        kind=sym.kind,
        change_type=change_type,
        start_line=sym.start_line,
        end_line=sym.end_line,
        renamed_from=renamed_from,
        renamed_to=renamed_to,
    )


def _pair_change(
    old: _Side, new: _Side, i: int, j: int, kept: _KeptSpans
) -> SymbolChangeType | None:
    """The change type of a matched pair, or None when it is unchanged (or merely moved)."""
    if old.symbols[i].signature != new.symbols[j].signature:
        return SymbolChangeType.SIGNATURE_CHANGED
    if _same_own_lines(old, new, i, j, kept):
        return None  # the very same lines: their texts are equal without building them
    if old.own(i) != new.own(j):
        return SymbolChangeType.MODIFIED
    return None


@dataclass(frozen=True, slots=True)
class _KeptSpans:
    """The old lines a diff leaves untouched, as spans: old lines `starts[k]`..`stops[k] - 1`
    are new lines `shift[k]` further on (the last span has no end)."""

    starts: list[int]
    stops: list[int]
    shifts: list[int]

    def carry(self, runs: Sequence[tuple[int, int]]) -> list[tuple[int, int]] | None:
        """Runs of old lines as runs of new lines (adjacent ones joined), or None when a line
        is not kept."""
        if len(runs) == 1:  # most definitions: one run, within one span of kept lines
            first, last = runs[0]
            k = bisect.bisect_right(self.starts, first) - 1
            if k >= 0 and last < self.stops[k]:
                shift = self.shifts[k]
                return [(first + shift, last + shift)]
        out: list[tuple[int, int]] = []
        for first, last in runs:
            while first <= last:
                k = bisect.bisect_right(self.starts, first) - 1
                if k < 0 or first >= self.stops[k]:
                    return None
                end = min(last, self.stops[k] - 1)
                shift = self.shifts[k]
                if out and out[-1][1] + 1 == first + shift:
                    out[-1] = (out[-1][0], end + shift)
                else:
                    out.append((first + shift, end + shift))
                first = end + 1
        return out


def _kept_spans(diff: LineDiff) -> _KeptSpans:
    """Where each old line the diff leaves untouched sits in the new version."""
    spans = _KeptSpans([], [], [])
    shift = 0
    pos = 1  # the first old line not yet mapped
    for h in diff.hunks:
        first_changed = h.old_start if h.old_count else h.old_start + 1
        if pos < first_changed:
            spans.starts.append(pos)
            spans.stops.append(first_changed)
            spans.shifts.append(shift)
        pos = max(pos, first_changed + h.old_count)
        shift += h.new_count - h.old_count
    spans.starts.append(pos)
    spans.stops.append(_NO_END)
    spans.shifts.append(shift)
    return spans


def _kept_lines(diff: LineDiff, old_count: int) -> list[int]:
    """For every old line number, its line number in the new version when the diff leaves it
    untouched, else 0 (index 0 unused): `_kept_spans` spelled out line by line."""
    kept = [0] * (old_count + 1)
    spans = _kept_spans(diff)
    for start, stop, shift in zip(spans.starts, spans.stops, spans.shifts, strict=True):
        end = min(stop, old_count + 1)
        kept[start:end] = range(start + shift, end + shift)
    return kept


def _untouched(old: _Side, new: _Side, kept: _KeptSpans, pairs: dict[int, int]) -> set[int]:
    """Old symbols inside a span of kept lines whose pairs are plainly unchanged, found a span at
    a time rather than a pair at a time: `_pair_change` would find nothing for them.

    Take a span of old lines a..b-1 that the diff keeps as new lines a+d..b-1+d, and the symbols
    starting in it on each side, by start line. When they are alike one for one (name, kind,
    signature, and start and end, an end past the span counting as b-1), take one that `pairs`
    paired with its like and that ends before b-1 (and within both files): it ends where its like
    does and is painted over by the same spans on both sides, as the spans painted after it start
    within it. So it owns the same lines, moved by d, which is what `_same_own_lines` checks.
    Lines shared by definitions (pieces) are left to the full comparison.
    """
    if old.pieces or new.pieces:
        return set()
    out: set[int] = set()
    olds, news = old.symbols, new.symbols
    old_starts, old_ids = old.by_start()
    new_starts, new_ids = new.by_start()
    old_count, new_count = old.line_count, new.line_count
    for a, b, d in zip(kept.starts, kept.stops, kept.shifts, strict=True):
        mine = old_ids[bisect.bisect_left(old_starts, a) : bisect.bisect_left(old_starts, b)]
        theirs = new_ids[bisect.bisect_left(new_starts, a + d) :
                         bisect.bisect_left(new_starts, b + d)]  # fmt: skip
        if not mine or len(mine) != len(theirs):
            continue
        last = b - 1
        if [(olds[i].start_line + d, min(olds[i].end_line, last) + d, olds[i].name, olds[i].kind,
             olds[i].signature) for i in mine] != [
            (news[j].start_line, min(news[j].end_line, last + d), news[j].name, news[j].kind,
             news[j].signature) for j in theirs]:  # fmt: skip
            continue
        # Ending before the span's last line, a symbol ends where its like does (its end is
        # not clipped), and so does any span starting where it does and ending before it.
        bound = min(last, old_count + 1, new_count + 1 - d)
        out.update([i for i, j in zip(mine, theirs, strict=True)
                    if olds[i].end_line < bound and pairs.get(i) == j])  # fmt: skip
    return out


def _same_own_lines(old: _Side, new: _Side, i: int, j: int, kept: _KeptSpans) -> bool:
    """Whether symbol j owns exactly the lines, untouched by the diff, that symbol i owns (and
    neither owns pieces of shared lines): then `own` would build the same text on both sides."""
    if i in old.pieces or j in new.pieces:
        return False
    return kept.carry(old.own_runs(i)) == new.own_runs(j)


# --- the text of a symbol ---------------------------------------------------------------------


def _depth(sym: Symbol) -> int:
    return sym.name.count(".") + sym.name.count("::")


def _owners(symbols: Sequence[Symbol], line_count: int, *, interior: bool = False) -> list[int]:
    """For every line (index 0 = line 1), the index of the innermost symbol holding it, or -1.

    Innermost = the latest-starting enclosing span; among equal spans, the deeper-named one.
    With `interior`, a symbol holds only the lines strictly between its first and last.
    """
    owner = [-1] * line_count
    trim = 1 if interior else 0
    order = sorted(
        (k for k, sym in enumerate(symbols) if sym.end_line - sym.start_line >= 2 * trim),
        key=lambda k: (symbols[k].start_line, -symbols[k].end_line, _depth(symbols[k])),
    )
    # Painting outer spans first and inner spans after leaves every line to its innermost symbol.
    for k in order:
        sym = symbols[k]
        lo = max(sym.start_line + trim, 1) - 1
        hi = min(sym.end_line - trim, line_count)
        owner[lo:hi] = [k] * max(hi - lo, 0)
    return owner


def _unpainted(
    symbols: Sequence[Symbol], me: Symbol, later: Iterable[int], line_count: int
) -> list[tuple[int, int]]:
    """The runs (first, last) of the lines that `me`'s span paints in `_owners` and that no span
    painted after it paints over. Those start within it: `later`, the symbols painted after it,
    in order of start line (those past its end may follow)."""
    lo = me.start_line - 1 if me.start_line > 0 else 0
    hi = me.end_line if me.end_line < line_count else line_count
    runs: list[tuple[int, int]] = []
    pos = lo  # 0-based: lines lo..pos-1 are settled
    for k in later:
        sym = symbols[k]
        later_lo = sym.start_line - 1 if sym.start_line > 0 else 0
        if later_lo >= hi or pos >= hi:
            break  # starts past the span, or the span is all painted over already
        later_hi = sym.end_line if sym.end_line < line_count else line_count
        if later_lo >= later_hi:
            continue  # an empty span paints nothing
        if later_lo > pos:
            runs.append((pos + 1, later_lo))
        if later_hi > pos:
            pos = later_hi
    if pos < hi:
        runs.append((pos + 1, hi))
    return runs


def _paint_order(symbols: Sequence[Symbol]) -> list[int]:
    """The symbols' indices in `_owners`' painting order."""
    spans = [(sym.start_line, -sym.end_line) for sym in symbols]
    if len(set(spans)) == len(spans):  # no two equal spans: depth never decides
        return [k for _, k in sorted(zip(spans, itertools.count()))]
    return [k for _, _, k in sorted((span, _depth(symbols[k]), k) for k, span in enumerate(spans))]


def _cut(runs: list[tuple[int, int]], cuts: Sequence[int]) -> list[tuple[int, int]]:
    """`runs` without the line numbers in `cuts` (sorted)."""
    out = []
    for first, last in runs:
        k = bisect.bisect_left(cuts, first)
        while k < len(cuts) and cuts[k] <= last:
            if first < cuts[k]:
                out.append((first, cuts[k] - 1))
            first = cuts[k] + 1
            k += 1
        if first <= last:
            out.append((first, last))
    return out


# `_normalised`'s steps, each one pass of the regex engine over the whole text.
_BLANK_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*\n", re.MULTILINE)  # as `bytes.strip` sees blank
_LINE_END_CR = re.compile(rb"\r+\n")
_UNINDENTED_LINE = re.compile(rb"^[^ \t]", re.MULTILINE)
_INDENT = re.compile(rb"^[ \t]*", re.MULTILINE)


def _normalised(lines: list[bytes]) -> bytes:
    """`_normalise` of these lines (no pieces), each line of its answer followed by `\\n`: the
    same text, built by a few passes over the lines joined (the lines of a definition that
    spans a whole file are many, and were each a step of Python)."""
    text = _BLANK_LINE.sub(b"", b"\n".join(lines) + b"\n")
    if b"\r" in text:
        text = _LINE_END_CR.sub(b"\n", text)
    if not text or text[:1] not in b" \t" or _UNINDENTED_LINE.search(text, 0, len(text) - 1):
        return text  # a line starts at its first column: no indentation is common
    count = text.count(b"\n")
    indent = min(map(len, _INDENT.findall(text, 0, len(text) - 1)))
    # Only a prefix that all lines share is removed, so tabs and spaces never get confused.
    prefix = text[:indent]
    while prefix and text.count(b"\n" + prefix) != count - 1:
        prefix = prefix[:-1]
    return text[len(prefix) :].replace(b"\n" + prefix, b"\n") if prefix else text


def _normalise(
    lines: Iterable[tuple[int, bytes]], pieces: Sequence[tuple[int, bytes]] = ()
) -> tuple[bytes, ...]:
    """The non-blank lines, without line ends and common indentation, with `pieces` (stripped
    parts of shared lines) merged in by line number."""
    picked = [(n, ln.rstrip(b"\r")) for n, ln in lines if ln.strip()]
    if not picked:
        return tuple(piece for _, piece in pieces)
    texts = [ln for _, ln in picked]
    indent = min(len(ln) - len(ln.lstrip(b" \t")) for ln in texts)
    # Only a prefix that all lines share is removed, so tabs and spaces never get confused.
    prefix = texts[0][:indent]
    while prefix and not all(ln.startswith(prefix) for ln in texts):
        prefix = prefix[:-1]
    if not pieces:
        return tuple(ln[len(prefix) :] for ln in texts)
    trimmed = [(n, ln[len(prefix) :]) for n, ln in picked]
    return tuple(ln for _, ln in heapq.merge(trimmed, pieces, key=lambda p: p[0]))


# --- lines shared by several definitions ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Split:
    """The shared lines of one version and each symbol's stripped pieces of them."""

    source: bytes
    shared: frozenset[int] = frozenset()
    pieces: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)
    line_starts: Sequence[int] = ()


def _shared_lines(symbols: Sequence[Symbol]) -> list[int]:
    """The lines where two definitions start or end without nesting (minified code), or none
    when a symbol lacks its byte span."""
    lines = [sym.start_line for sym in symbols]
    longer = [k for k, sym in enumerate(symbols) if sym.end_line != sym.start_line]
    lines += [symbols[k].end_line for k in longer]
    if len(set(lines)) == len(lines):
        return []  # no line holds two ends: nothing to look at closer
    if None in [sym.start_byte for sym in symbols] or None in [sym.end_byte for sym in symbols]:
        return []
    # Only the lines holding two ends: in most files, a class's and its last method's.
    holder = [*range(len(symbols)), *longer]
    shared = []
    for n, times in Counter(lines).most_common():  # the lines held twice or more come first
        if times < 2:
            break
        at = [lines.index(n)]
        while len(at) < times:
            at.append(lines.index(n, at[-1] + 1))
        if not _nested([symbols[holder[p]] for p in at]):
            shared.append(n)
    return shared


def _byte_spans(symbols: Sequence[Symbol]) -> list[tuple[int, int]]:
    return [(sym.start_byte or 0, sym.end_byte or 0) for sym in symbols]


def _split_shared_lines(
    symbols: Sequence[Symbol], source: bytes, lines: Sequence[bytes], shared: Sequence[int]
) -> _Split:
    """Split the `shared` lines (`_shared_lines`) between their definitions by bytes.

    A line is shared when two definitions that start or end on it do not nest. Each byte of a
    shared line goes to the innermost definition whose byte span holds it (bytes between
    top-level definitions go to nobody), so an edit inside one of them modifies that one only.
    Other lines keep whole-line ownership. Without byte spans nothing is split.
    """
    at: dict[int, list[int]] = {n: [] for n in shared}
    for k, sym in enumerate(symbols):
        if sym.start_line in at:
            at[sym.start_line].append(k)
        if sym.end_line != sym.start_line and sym.end_line in at:
            at[sym.end_line].append(k)
    spans = _byte_spans(symbols)
    line_starts = [0, *itertools.accumulate(len(ln) + 1 for ln in lines)]
    container = _owners(symbols, len(lines), interior=True)
    pieces: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    for n in sorted(shared):
        holders = at[n] if container[n - 1] < 0 else [container[n - 1], *at[n]]
        lo, hi = line_starts[n - 1], line_starts[n - 1] + len(lines[n - 1])
        for k, start, stop in _partition(symbols, spans, holders, lo, hi):
            piece = source[start:stop].strip()
            if piece:
                pieces[k].append((n, piece))
    return _Split(source, frozenset(shared), dict(pieces), line_starts)


def _nested(symbols: Sequence[Symbol]) -> bool:
    """Whether the byte spans of `symbols` form one chain, each inside the one before."""
    if len(symbols) == 2:  # two spans form a chain when one holds the other
        a, b = symbols
        a_start, a_end, b_start, b_end = (a.start_byte or 0, a.end_byte or 0, b.start_byte or 0,
                                          b.end_byte or 0)  # fmt: skip
        return (a_start <= b_start and b_end <= a_end) or (b_start <= a_start and a_end <= b_end)
    chain = sorted((sym.start_byte or 0, -(sym.end_byte or 0)) for sym in symbols)
    return all(-inner[1] <= -outer[1] for outer, inner in itertools.pairwise(chain))


def _partition(
    symbols: Sequence[Symbol],
    spans: Sequence[tuple[int, int]],
    holders: Sequence[int],
    lo: int,
    hi: int,
) -> Iterator[tuple[int, int, int]]:
    """(symbol, start, stop): the bytes of [lo, hi) that each of `holders` holds innermost.

    Among equal spans the deeper-named symbol is innermost, as in `_owners`.
    """
    events = []
    for k in holders:
        start, stop = spans[k]
        events.append((max(start, lo), -min(stop, hi), _depth(symbols[k]), k))
    events.sort()
    open_: list[tuple[int, int]] = []  # (end, symbol), innermost last
    pos = lo
    for start, neg_stop, _, k in events:
        while open_ and open_[-1][0] <= start:
            stop, top = open_.pop()
            if pos < stop:
                yield top, pos, stop
                pos = stop
        if pos < start:
            if open_:
                yield open_[-1][1], pos, start
            pos = start
        # A span reaching past its parent's end is cut there, so spans always nest.
        stop = -neg_stop
        if open_ and open_[-1][0] < stop:
            stop = open_[-1][0]
        open_.append((stop, k))
    while open_:
        stop, top = open_.pop()
        if pos < stop:
            yield top, pos, stop
            pos = stop


# --- matching old symbols to new ones ---------------------------------------------------------


def _line_mapper(diff: LineDiff) -> Callable[[int], int]:
    """Map an old line number to where it sits in the new version (by the diff's alignment)."""
    starts = [h.old_start if h.old_count else h.old_start + 1 for h in diff.hunks]
    hunks = diff.hunks

    def to_new(line: int) -> int:
        k = bisect.bisect_right(starts, line) - 1
        if k < 0:
            return line
        h = hunks[k]
        if h.old_count and line < h.old_start + h.old_count:
            return h.new_start  # a removed line sits where its replacement begins
        old_end = h.old_start + h.old_count if h.old_count else h.old_start + 1
        new_end = h.new_start + h.new_count if h.new_count else h.new_start + 1
        return line - old_end + new_end

    return to_new


def _match(
    old: _Side,
    new: _Side,
    to_new_line: Callable[[int], int],
    unique: dict[int, int] | None,
) -> dict[int, int]:
    """Pair old symbols with new ones: first by (name, kind, signature), then by (name, kind).

    `unique`: the first pass already made, when each key is unique on each side.
    """
    pairs = dict(unique) if unique is not None else {}
    for key in (_exact_key, _name_key) if unique is None else (_name_key,):
        if len(pairs) == min(len(old.symbols), len(new.symbols)):
            break  # one side is all paired: nothing is left to pair
        olds = _group((i for i in range(len(old.symbols)) if i not in pairs), old.symbols, key)
        taken = set(pairs.values())
        news = _group((j for j in range(len(new.symbols)) if j not in taken), new.symbols, key)
        for k, old_ids in olds.items():
            new_ids = news.get(k)
            if not new_ids:
                continue
            if len(old_ids) == 1 == len(new_ids):  # a unique name: nothing to align
                pairs[old_ids[0]] = new_ids[0]
            else:
                pairs.update(_align(old_ids, new_ids, old, new, to_new_line))
    return pairs


def _unique_exact_pairs(olds: Sequence[Symbol], news: Sequence[Symbol]) -> dict[int, int] | None:
    """The first pass of `_match` when no (name, kind, signature) occurs twice on a side (most
    files): each key pairs its one old and one new symbol. None when a key repeats."""
    new_keys = [(sym.name, sym.kind, sym.signature) for sym in news]
    new_index = dict(zip(new_keys, itertools.count()))
    old_keys = [(sym.name, sym.kind, sym.signature) for sym in olds]
    if len(new_index) < len(new_keys) or len(set(old_keys)) < len(old_keys):
        return None
    return {i: new_index[key] for i, key in enumerate(old_keys) if key in new_index}


def _exact_key(sym: Symbol) -> Hashable:
    return (sym.name, sym.kind, sym.signature)


def _name_key(sym: Symbol) -> Hashable:
    return (sym.name, sym.kind)


def _group(
    ids: Iterable[int], symbols: Sequence[Symbol], key: Callable[[Symbol], Hashable]
) -> dict[Hashable, list[int]]:
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i in ids:
        groups[key(symbols[i])].append(i)
    return groups


def _align(
    old_ids: Sequence[int],
    new_ids: Sequence[int],
    old: _Side,
    new: _Side,
    to_new_line: Callable[[int], int],
) -> dict[int, int]:
    """Order-preserving pairing of same-keyed symbols: as many pairs as possible, then the
    cheapest (identical text first, then nearest once old lines are mapped to new ones)."""
    old_ids = sorted(old_ids, key=lambda i: old.symbols[i].start_line)
    new_ids = sorted(new_ids, key=lambda j: new.symbols[j].start_line)
    if len(old_ids) == len(new_ids) or len(old_ids) * len(new_ids) > _ALIGN_LIMIT:
        return dict(zip(old_ids, new_ids, strict=False))

    def cost(i: int, j: int) -> int:
        mismatch = 0 if old.body(i) == new.body(j) else _CONTENT_MISMATCH_COST
        return mismatch + abs(to_new_line(old.symbols[i].start_line) - new.symbols[j].start_line)

    # best[a][b]: (-pairs, cost) for the first a old and first b new symbols.
    n, m = len(old_ids), len(new_ids)
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for a in range(1, n + 1):
        for b in range(1, m + 1):
            pairs_, cost_ = best[a - 1][b - 1]
            take = (pairs_ - 1, cost_ + cost(old_ids[a - 1], new_ids[b - 1]))
            best[a][b] = min(take, best[a - 1][b], best[a][b - 1])
    out: dict[int, int] = {}
    a, b = n, m
    while a and b:
        if best[a][b] == best[a - 1][b]:
            a -= 1
        elif best[a][b] == best[a][b - 1]:
            b -= 1
        else:
            out[old_ids[a - 1]] = new_ids[b - 1]
            a, b = a - 1, b - 1
    return out


def _renames(old: _Side, new: _Side, pairs: dict[int, int]) -> dict[tuple[str, int], str]:
    """Unmatched old/new symbols of one kind whose bodies are the same non-empty text.

    Only an unambiguous body (one removed and one added symbol carry it) counts, so trivial
    bodies such as `pass` never pair up by chance.
    """
    matched_new = set(pairs.values())
    gone = [i for i in range(len(old.symbols)) if i not in pairs]
    came = [j for j in range(len(new.symbols)) if j not in matched_new]
    # Only a kind both sides have unmatched can link; the bodies of the others are not needed.
    kinds = {old.symbols[i].kind for i in gone} & {new.symbols[j].kind for j in came}
    if not kinds:
        return {}
    removed = _group(
        (i for i in gone if old.symbols[i].kind in kinds and old.body(i)),
        old.symbols,
        lambda s: s.kind,
    )
    added = _group(
        (j for j in came if new.symbols[j].kind in kinds and new.body(j)),
        new.symbols,
        lambda s: s.kind,
    )
    out: dict[tuple[str, int], str] = {}
    for kind, old_ids in removed.items():
        by_body_old = _group_by_body(old_ids, old)
        by_body_new = _group_by_body(added.get(kind, []), new)
        for body, olds in by_body_old.items():
            news = by_body_new.get(body, [])
            if len(olds) == 1 and len(news) == 1:
                i, j = olds[0], news[0]
                out[("old", i)] = new.symbols[j].name
                out[("new", j)] = old.symbols[i].name
    return out


def _group_by_body(ids: Iterable[int], side: _Side) -> dict[bytes, list[int]]:
    groups: dict[bytes, list[int]] = defaultdict(list)
    for i in ids:
        groups[side.body(i)].append(i)
    return groups
