"""Rename detection as git does it (`diff -M`, diffcore-rename.c and diffcore-delta.c); pure.

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
import re
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

MAX_SCORE = 60_000
MIN_SCORE = 30_000  # -M's default 50%
RENAME_LIMIT = 1000
_HASHBASE = 107_927
_CHUNK = re.compile(rb"[^\n]{0,63}\n|[^\n]{64}|[^\n]+")  # git's chunks: to a newline, or 64 bytes
_BASENAME_SCORE = MIN_SCORE + (MAX_SCORE - MIN_SCORE) // 2  # 75%
_REGULAR = (0o100644, 0o100755)


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
    spans: dict[tuple[str, bool], Counter[int]] = {}

    def span(path: str, is_old: bool) -> Counter[int]:
        key = (path, is_old)
        if key not in spans:
            spans[key] = span_hashes((deleted if is_old else added)[path].data or b"")
        return spans[key]

    # git 2.33+: a file whose basename is unique among the remaining sources and among the
    # destinations pairs with its namesake first, when at least 75% similar.
    for d, s in _namesakes(srcs, dsts).items():
        score = _estimate(deleted[s].size, added[d].size, partial(span, s, True),
                          partial(span, d, False), minimum=_BASENAME_SCORE)  # fmt: skip
        if score >= _BASENAME_SCORE:
            pairs[d] = s
    taken = {pairs[d] for d in dsts if d in pairs}
    srcs = [s for s in srcs if s not in taken]
    dsts = [d for d in dsts if d not in pairs]
    scored: list[tuple[int, bool, str, str]] = []
    for d in dsts:
        candidates = []
        for s in srcs:
            score = _estimate(deleted[s].size, added[d].size, partial(span, s, True),
                              partial(span, d, False))  # fmt: skip
            if score >= MIN_SCORE:
                same_name = posixpath.basename(s) == posixpath.basename(d)
                candidates.append((score, same_name, s))
        candidates.sort(key=lambda c: (-c[0], not c[1]))
        scored.extend((score, same, s, d) for score, same, s in candidates[:4])
    scored.sort(key=lambda c: (-c[0], not c[1]))
    for _, _, s, d in scored:
        if d in pairs or s in taken:
            continue
        pairs[d] = s
        taken.add(s)
    return pairs


def _namesakes(srcs: list[str], dsts: list[str]) -> dict[str, str]:
    """dst -> src for basenames that occur once among the sources and once among the dsts."""
    def unique(paths: list[str]) -> dict[str, str]:
        names = Counter(posixpath.basename(p) for p in paths)
        return {posixpath.basename(p): p for p in paths if names[posixpath.basename(p)] == 1}

    sources = unique(srcs)
    return {d: sources[name] for name, d in unique(dsts).items() if name in sources}


def _estimate(src_size: int, dst_size: int, src: Callable[[], Counter[int]],
              dst: Callable[[], Counter[int]], *, minimum: int = MIN_SCORE) -> int:  # fmt: skip
    """git's `estimate_similarity`: 0 when the sizes alone rule the pair out."""
    big, small = max(src_size, dst_size), min(src_size, dst_size)
    if big == 0 or big * (MAX_SCORE - minimum) < (big - small) * MAX_SCORE:
        return 0
    s, d = src(), dst()
    copied = sum(min(s[h], d[h]) for h in s.keys() & d.keys())
    return copied * MAX_SCORE // big


def span_hashes(data: bytes) -> Counter[int]:
    """git's `hash_chars`: bytes per chunk hash, a chunk ending at a newline or 64 bytes; in
    text (no NUL in the first 8000 bytes) the CR of a CRLF is skipped.

    git rolls a hash over each byte; in Python that costs 0.2 µs a byte. The same arithmetic
    runs here on every distinct chunk at once, one 64-bit lane per chunk of one big integer
    (no lane ever carries into the next), 64 steps for any number of chunks. A chunk is padded
    with NUL bytes in front: git's state stays 0 over leading NULs, so the hash is the same.
    """
    if b"\0" not in data[:8000]:
        data = data.replace(b"\r\n", b"\n")
    sizes: Counter[bytes] = Counter()
    for chunk in _CHUNK.findall(data):
        sizes[chunk] += len(chunk)
    if not sizes:
        return Counter()
    chunks = list(sizes)
    lanes = len(chunks)
    padded = b"".join(chunk.rjust(64, b"\0") for chunk in chunks)
    m32 = int.from_bytes(b"\xff\xff\xff\xff\0\0\0\0" * lanes, "little")
    m7 = int.from_bytes(b"\x7f\0\0\0\0\0\0\0" * lanes, "little")
    column = bytearray(8 * lanes)
    a1 = a2 = 0
    for k in range(64):
        column[::8] = padded[k::64]
        old1 = a1
        a1 = (((a1 << 7) & m32) ^ ((a2 >> 25) & m7)) + int.from_bytes(column, "little") & m32
        a2 = ((a2 << 7) & m32) ^ ((old1 >> 25) & m7)
    mixed = (a1 + a2 * 0x61) & m32
    values = array("Q", mixed.to_bytes(8 * lanes, "little"))
    if sys.byteorder == "big":
        values.byteswap()
    counts: Counter[int] = Counter()
    for chunk, value in zip(chunks, values, strict=True):
        counts[value % _HASHBASE] += sizes[chunk]
    return counts
