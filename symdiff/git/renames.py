"""Rename detection as git does it (`diff -M`, diffcore-rename.c and diffcore-delta.c); pure
(what it holds between calls is by content, so it answers the same).

libgit2's `find_similar` scores similarity with its own signature, so near git's 50% line it
pairs files git leaves apart and the reverse (2 of 2,355 records over elixir's newest 1,000
commits). `against` and the history import answer with git's pairs, so they follow git:

1. exact renames: a deleted and an added file with the same blob id (a same-named source
   preferred), each source used once;
2. a file whose basename is unique among the remaining deleted and added files pairs with
   its namesake when at least 75% similar (git 2.33's basename step);
3. then every remaining (deleted, added) pair of regular files whose sizes are close enough is
   scored by git's estimate — the bytes of the destination made of 64-byte-or-line chunks also
   found in the source, over the larger size — and the pairs scoring at least 50% are taken best
   first (same basename first on a tie), each file used once;
4. past git's default rename limit (1,000 by 1,000 candidate pairs) only exact renames count.
"""

from __future__ import annotations

import posixpath
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from operator import add, mul

from symdiff.diffs.blobid import blob_id
from symdiff.git.lru import Lru

MAX_SCORE = 60_000
MIN_SCORE = 30_000  # -M's default 50%
RENAME_LIMIT = 1000
_HASHBASE = 107_927
_BASENAME_SCORE = MIN_SCORE + (MAX_SCORE - MIN_SCORE) // 2  # 75%
_REGULAR = (0o100644, 0o100755)

# By the blob id of the bytes, so asking again (`against` twice, a file edited in between)
# hashes only the new blobs and scores only the new pairs. A held span costs ~120 bytes: at
# most ~16 MB of spans (some 280 source files of Django's sizes) and ~7 MB of scores.
_held_spans: Lru[str, dict[int, int]] = Lru(entries=4096, weight=1 << 17, weigh=len)
_held_scores: Lru[tuple[str, str], int] = Lru(entries=1 << 14)


@dataclass(frozen=True, slots=True)
class Side:
    """One deleted or added file: its blob id, mode and content (None: unreadable, missing)."""

    oid: str
    mode: int
    data: bytes | None

    @property
    def size(self) -> int:
        return 0 if self.data is None else len(self.data)


def find_renames(deleted: Mapping[str, Side], added: Mapping[str, Side]) -> dict[str, str]:
    """new path -> old path of each rename among deleted and added files."""
    pairs: dict[str, str] = {}
    by_oid: dict[str, list[str]] = {}
    for path in sorted(deleted):
        by_oid.setdefault(deleted[path].oid, []).append(path)
    for path in sorted(added):
        sources = by_oid.get(added[path].oid)
        if sources:
            same = [s for s in sources if posixpath.basename(s) == posixpath.basename(path)]
            source = (same or sources)[0]
            sources.remove(source)
            pairs[path] = source
    used = set(pairs.values())
    srcs = [p for p in sorted(deleted) if p not in used and deleted[p].mode in _REGULAR]
    dsts = [p for p in sorted(added) if p not in pairs and added[p].mode in _REGULAR]
    if not srcs or not dsts or len(srcs) * len(dsts) > RENAME_LIMIT * RENAME_LIMIT:
        return pairs
    # git 2.33+: a file whose basename is unique among the remaining sources and among the
    # destinations pairs with its namesake first, when at least 75% similar.
    namesakes = list(_namesakes(srcs, dsts).items())
    scores = _scores([(deleted[s], added[d]) for d, s in namesakes], minimum=_BASENAME_SCORE)
    for (d, s), score in zip(namesakes, scores, strict=True):
        if score >= _BASENAME_SCORE:
            pairs[d] = s
    taken = {pairs[d] for d in dsts if d in pairs}
    srcs = [s for s in srcs if s not in taken]
    dsts = [d for d in dsts if d not in pairs]
    sized = [(s, d) for d in dsts for s in srcs
             if _sizes_allow(deleted[s].size, added[d].size, MIN_SCORE)]  # fmt: skip
    scores = _scores([(deleted[s], added[d]) for s, d in sized], minimum=MIN_SCORE)
    by_dst: dict[str, list[tuple[int, bool, str]]] = {}
    for (s, d), score in zip(sized, scores, strict=True):
        if score >= MIN_SCORE:
            same_name = posixpath.basename(s) == posixpath.basename(d)
            by_dst.setdefault(d, []).append((score, same_name, s))
    scored: list[tuple[int, bool, str, str]] = []
    for d in dsts:
        candidates = by_dst.get(d, [])
        candidates.sort(key=lambda c: (-c[0], not c[1]))
        scored.extend((score, same, s, d) for score, same, s in candidates[:4])
    scored.sort(key=lambda c: (-c[0], not c[1]))
    for _, _, s, d in scored:
        if d in pairs or s in taken:
            continue
        pairs[d] = s
        taken.add(s)
    return pairs


def forget() -> None:
    """Drop the span hashes and scores held (for benchmarks: a run as the first one)."""
    _held_spans.clear()
    _held_scores.clear()


def _namesakes(srcs: list[str], dsts: list[str]) -> dict[str, str]:
    """dst -> src for basenames that occur once among the sources and once among the dsts."""
    def unique(paths: list[str]) -> dict[str, str]:
        names = Counter(posixpath.basename(p) for p in paths)
        return {posixpath.basename(p): p for p in paths if names[posixpath.basename(p)] == 1}

    sources = unique(srcs)
    return {d: sources[name] for name, d in unique(dsts).items() if name in sources}


def _sizes_allow(src_size: int, dst_size: int, minimum: int) -> bool:
    """git's first test in `estimate_similarity`: whether the sizes alone leave the pair a
    chance of scoring `minimum`."""
    big, small = max(src_size, dst_size), min(src_size, dst_size)
    return big > 0 and big * (MAX_SCORE - minimum) >= (big - small) * MAX_SCORE


def _scores(pairs: list[tuple[Side, Side]], *, minimum: int) -> list[int]:
    """git's `estimate_similarity` of each (source, destination): 0 when the sizes alone rule
    the pair out; the span hashes of the files that need them computed together.

    Held by the blob ids of the bytes scored, not by the sides' ids: a file read while it
    changes may not hold what its id names, and must not leave a wrong score for that id.
    """
    ids: dict[int, str] = {}  # id(side) -> the blob id of its bytes, each hashed once a call

    def key(side: Side) -> str:
        found = ids.get(id(side))
        if found is None:
            found = ids[id(side)] = blob_id(side.data or b"")
        return found

    out = [0] * len(pairs)
    todo: list[tuple[int, tuple[str, str]]] = []
    for i, (src, dst) in enumerate(pairs):
        if _sizes_allow(src.size, dst.size, minimum):
            both = key(src), key(dst)
            held = _held_scores.get(both)
            if held is None:
                todo.append((i, both))
            else:
                out[i] = held
    spans = _spans_by_id({k: side.data or b"" for i, both in todo
                          for k, side in zip(both, pairs[i], strict=True)})  # fmt: skip
    for i, both in todo:
        s, d = spans[both[0]], spans[both[1]]
        common = list(s.keys() & d.keys())
        copied = sum(map(min, map(s.__getitem__, common), map(d.__getitem__, common)))
        out[i] = copied * MAX_SCORE // max(pairs[i][0].size, pairs[i][1].size)
        _held_scores.put(both, out[i])
    return out


def _spans_by_id(texts: dict[str, bytes]) -> dict[str, dict[int, int]]:
    """blob id -> span hashes of each text; the texts not held yet hashed together."""
    found: dict[str, dict[int, int]] = {}
    todo: dict[str, bytes] = {}
    for oid, data in texts.items():
        held = _held_spans.get(oid)
        if held is None:
            todo[oid] = data
        else:
            found[oid] = held
    for oid, spans in zip(todo, _span_hashes(list(todo.values())), strict=True):
        _held_spans.put(oid, spans)
        found[oid] = spans
    return found


def span_hashes(data: bytes) -> Counter[int]:
    """git's `hash_chars`: bytes per chunk hash, a chunk ending at a newline or 64 bytes; in
    text (no NUL in the first 8000 bytes) the CR of a CRLF is skipped."""
    return Counter(_span_hashes([data])[0])


def _span_hashes(texts: list[bytes]) -> list[dict[int, int]]:
    """`span_hashes` of each text, every distinct chunk among them hashed once: the old and new
    versions of an edited file share most of their lines."""
    split = [_chunks(text) for text in texts]
    line_hashes = _hash_chunks(set().union(*(lines for lines, _ in split)), newline=True)
    other_hashes = _hash_chunks(set().union(*(others for _, others in split)), newline=False)
    out = []
    for lines, others in split:
        keys = list(lines)
        hashes = list(map(line_hashes.__getitem__, keys))
        counts = list(lines.values())
        sizes = list(map(add, map(mul, counts, map(len, keys)), counts))  # count * (len + 1)
        spans = dict(zip(hashes, sizes, strict=True))
        if len(spans) < len(hashes):  # two lines share a hash: add them up
            spans = {}
            for h, size in zip(hashes, sizes, strict=True):
                spans[h] = spans.get(h, 0) + size
        for chunk, size in others.items():
            h = other_hashes[chunk]
            spans[h] = spans.get(h, 0) + size
        out.append(spans)
    return out


def _chunks(data: bytes) -> tuple[Counter[bytes], dict[bytes, int]]:
    """`data`'s chunks: each distinct line of up to 63 bytes (its chunk: it and its newline) ->
    its count, and each other distinct chunk -> the bytes it covers."""
    if b"\0" not in data[:8000]:
        data = data.replace(b"\r\n", b"\n")
    parts = data.split(b"\n")
    tail = parts.pop()  # after the last newline: chunks without one
    lines = Counter(parts)
    others: dict[bytes, int] = {}
    long = [line for line in lines if len(line) > 63] if lines and max(map(len, lines)) > 63 else []
    for line in long:
        count, chunk = lines.pop(line), line + b"\n"
        for start in range(0, len(chunk), 64):  # 64 bytes at a time, the newline in the last
            piece = chunk[start : start + 64]
            others[piece] = others.get(piece, 0) + count * len(piece)
    for start in range(0, len(tail), 64):
        piece = tail[start : start + 64]
        others[piece] = others.get(piece, 0) + len(piece)
    return lines, others


def _hash_chunks(chunks: set[bytes], *, newline: bool) -> dict[bytes, int]:
    """git's hash of each chunk (with a newline added when `newline`), modulo its table size.

    git rolls a hash over each byte; in Python that costs 0.2 µs a byte. The same arithmetic
    runs here on all the chunks of one length at once, one 40-bit lane per chunk of one big
    integer (each 32-bit value shifted by 7 still fits its lane, and so does a sum), one step
    per byte.
    """
    by_length: dict[int, list[bytes]] = {}
    for chunk in chunks:
        by_length.setdefault(len(chunk), []).append(chunk)
    out: dict[bytes, int] = {}
    for length, group in by_length.items():
        lanes, steps = len(group), length + newline
        data = b"\n".join(group) + b"\n" if newline else b"".join(group)
        m32 = int.from_bytes(b"\xff\xff\xff\xff\0" * lanes, "little")
        m7 = int.from_bytes(b"\x7f\0\0\0\0" * lanes, "little")
        column = bytearray(5 * lanes)
        a1 = a2 = 0
        for k in range(steps):
            column[::5] = data[k::steps]
            # a1 << 7 needs no mask of its own: the sum is cut to 32 bits, and its low 32 bits
            # do not depend on the bits above.
            a1, a2 = (((a1 << 7) ^ ((a2 >> 25) & m7)) + int.from_bytes(column, "little") & m32,
                      ((a2 << 7) & m32) ^ ((a1 >> 25) & m7))  # fmt: skip
        mixed = (a1 + a2 * 0x61) & m32
        values = struct.iter_unpack("<Ix", mixed.to_bytes(5 * lanes, "little"))
        out.update(zip(group, [value % _HASHBASE for (value,) in values], strict=True))
    return out
