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
import threading
from collections import OrderedDict, defaultdict
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


class _Side:
    """One version of a file: its symbols and, on demand, the text used to compare them."""

    def __init__(self, symbols: Sequence[Symbol], source: bytes) -> None:
        self.symbols = tuple(symbols)
        self.lines = source.split(b"\n")
        self._split = _split_shared_lines(self.symbols, source, self.lines)
        self.own_lines: list[list[int]] = [[] for _ in self.symbols]
        line_no = 1
        for idx, run in itertools.groupby(_owners(self.symbols, len(self.lines))):
            count = len(list(run))  # runs of one owner: a Python step per run, not per line
            if idx >= 0:
                self.own_lines[idx].extend(range(line_no, line_no + count))
            line_no += count
        if self._split.shared:
            self.own_lines = [[n for n in own if n not in self._split.shared]
                              for own in self.own_lines]  # fmt: skip
        self.pieces = self._split.pieces
        self._own: dict[int, tuple[bytes, ...]] = {}
        self._body: dict[int, tuple[bytes, ...]] = {}

    def own(self, i: int) -> tuple[bytes, ...]:
        """Symbol i's own text: its span minus nested definitions', normalised.

        Whole lines, except on a line shared with a sibling definition, where it owns only its
        bytes (see `_split_shared_lines`).
        """
        if i not in self._own:
            lines = _numbered(self.lines, self.own_lines[i])
            self._own[i] = _normalise(lines, self._split.pieces.get(i, ()))
        return self._own[i]

    def body(self, i: int) -> tuple[bytes, ...]:
        """Symbol i's lines after its header, nested definitions included, normalised."""
        if i not in self._body:
            s = self.symbols[i]
            last = s.end_line
            lines = _numbered(self.lines, range(s.header_end_line + 1, last + 1))
            if last > s.header_end_line and last in self._split.shared and s.end_byte is not None:
                # A sibling starts on the last line: that line counts only up to our end.
                start = self._split.line_starts[last - 1]
                lines[-1] = (last, self._split.source[start : s.end_byte])
            self._body[i] = _normalise(lines)
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
    pairs = _match(old, new, to_new_line)
    renames = _renames(old, new, pairs)
    kept = _kept_lines(diff, len(old.lines))

    changes: list[SymbolChange] = []
    matched_old = set(pairs)
    matched_new = set(pairs.values())
    for i, j in pairs.items():
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
    old: _Side, new: _Side, i: int, j: int, kept: Sequence[int]
) -> SymbolChangeType | None:
    """The change type of a matched pair, or None when it is unchanged (or merely moved)."""
    if old.symbols[i].signature != new.symbols[j].signature:
        return SymbolChangeType.SIGNATURE_CHANGED
    if _same_own_lines(old, new, i, j, kept):
        return None  # the very same lines: their texts are equal without building them
    if old.own(i) != new.own(j):
        return SymbolChangeType.MODIFIED
    return None


def _kept_lines(diff: LineDiff, old_count: int) -> list[int]:
    """For every old line number, its line number in the new version when the diff leaves it
    untouched, else 0 (index 0 unused)."""
    kept = [0] * (old_count + 1)
    shift = 0
    pos = 1  # the first old line not yet mapped
    for h in diff.hunks:
        first_changed = h.old_start if h.old_count else h.old_start + 1
        stop = min(first_changed, old_count + 1)
        kept[pos:stop] = range(pos + shift, stop + shift)
        pos = max(pos, first_changed + h.old_count)
        shift += h.new_count - h.old_count
    if pos <= old_count:
        kept[pos:] = range(pos + shift, old_count + 1 + shift)
    return kept


def _same_own_lines(old: _Side, new: _Side, i: int, j: int, kept: Sequence[int]) -> bool:
    """Whether symbol j owns exactly the lines, untouched by the diff, that symbol i owns (and
    neither owns pieces of shared lines): then `own` would build the same text on both sides."""
    if i in old.pieces or j in new.pieces:
        return False
    mine, theirs = old.own_lines[i], new.own_lines[j]
    return len(mine) == len(theirs) and [kept[n] for n in mine] == theirs


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


def _numbered(lines: Sequence[bytes], numbers: Iterable[int]) -> list[tuple[int, bytes]]:
    """The lines at 1-based `numbers` (those the file has), each with its number."""
    return [(n, lines[n - 1]) for n in numbers if 0 < n <= len(lines)]


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


def _split_shared_lines(symbols: Sequence[Symbol], source: bytes, lines: Sequence[bytes]) -> _Split:
    """Split the lines that hold definitions side by side (minified code) between them by bytes.

    A line is shared when two definitions that start or end on it do not nest. Each byte of a
    shared line goes to the innermost definition whose byte span holds it (bytes between
    top-level definitions go to nobody), so an edit inside one of them modifies that one only.
    Other lines keep whole-line ownership. Without byte spans nothing is split.
    """
    at: dict[int, list[int]] = defaultdict(list)
    spans: list[tuple[int, int]] = []
    for k, sym in enumerate(symbols):
        if sym.start_byte is None or sym.end_byte is None:
            return _Split(source)
        spans.append((sym.start_byte, sym.end_byte))
        at[sym.start_line].append(k)
        if sym.end_line != sym.start_line:
            at[sym.end_line].append(k)
    shared = [n for n, ks in at.items() if len(ks) > 1 and not _nested(spans, ks)]
    if not shared:
        return _Split(source)
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


def _nested(spans: Sequence[tuple[int, int]], ks: Sequence[int]) -> bool:
    """Whether the byte spans of `ks` form one chain, each inside the one before."""
    chain = sorted((spans[k][0], -spans[k][1]) for k in ks)
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


def _match(old: _Side, new: _Side, to_new_line: Callable[[int], int]) -> dict[int, int]:
    """Pair old symbols with new ones: first by (name, kind, signature), then by (name, kind)."""
    pairs: dict[int, int] = {}
    for key in (_exact_key, _name_key):
        olds = _group((i for i in range(len(old.symbols)) if i not in pairs), old.symbols, key)
        taken = set(pairs.values())
        news = _group((j for j in range(len(new.symbols)) if j not in taken), new.symbols, key)
        for k, old_ids in olds.items():
            new_ids = news.get(k)
            if new_ids:
                pairs.update(_align(old_ids, new_ids, old, new, to_new_line))
    return pairs


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
    removed = _group(
        (i for i in range(len(old.symbols)) if i not in pairs and old.body(i)),
        old.symbols,
        lambda s: s.kind,
    )
    added = _group(
        (j for j in range(len(new.symbols)) if j not in matched_new and new.body(j)),
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


def _group_by_body(ids: Iterable[int], side: _Side) -> dict[tuple[bytes, ...], list[int]]:
    groups: dict[tuple[bytes, ...], list[int]] = defaultdict(list)
    for i in ids:
        groups[side.body(i)].append(i)
    return groups
