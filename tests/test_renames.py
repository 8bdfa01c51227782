"""git's rename scoring: the lane-parallel span hash equals git's byte-at-a-time `hash_chars`."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from symdiff.git.renames import Side, find_renames, span_hashes


def git_hash_chars(data: bytes) -> Counter[int]:
    """diffcore-delta.c's hash_chars, transcribed byte for byte (the reference)."""
    text = b"\0" not in data[:8000]
    counts: Counter[int] = Counter()
    accum1 = accum2 = n = 0
    for i, c in enumerate(data):
        if text and c == 13 and i + 1 < len(data) and data[i + 1] == 10:
            continue
        old1 = accum1
        accum1 = ((((accum1 << 7) & 0xFFFFFFFF) ^ (accum2 >> 25)) + c) & 0xFFFFFFFF
        accum2 = ((accum2 << 7) & 0xFFFFFFFF) ^ (old1 >> 25)
        n += 1
        if n < 64 and c != 10:
            continue
        counts[((accum1 + accum2 * 0x61) & 0xFFFFFFFF) % 107927] += n
        accum1 = accum2 = n = 0
    if n:
        counts[((accum1 + accum2 * 0x61) & 0xFFFFFFFF) % 107927] += n
    return counts


EDGES = [b"", b"\n", b"x", b"\0\0\0abc\n", b"a" * 64, b"a" * 65 + b"\n", b"a" * 200,
         b"a\r\r\nb", b"\r\n\r\n", b"end\r", b"abc\0\r\n" * 3, bytes(range(256)) * 3,
         b"\xff" * 130 + b"\n\n\n"]  # fmt: skip


@pytest.mark.parametrize("data", EDGES)
def test_edges(data: bytes) -> None:
    assert span_hashes(data) == git_hash_chars(data)


def test_random_texts_and_binaries() -> None:
    rng = random.Random(7)
    for _ in range(200):
        alphabet = rng.choice([b"ab\n", b"abc \r\n\t", bytes(range(256)), b"x\n\0"])
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 3000)))
        assert span_hashes(data) == git_hash_chars(data)


def side(data: bytes, mode: int = 0o100644) -> Side:
    return Side(str(hash(data)), mode, data)


def test_pairs() -> None:
    body = b"".join(b"line %d\n" % i for i in range(100))
    half = b"".join(b"line %d\n" % i if i % 2 else b"other %d\n" % i for i in range(100))
    deleted = {"a/x.txt": side(body), "a/same.txt": side(b"same\n" * 10),
               "a/link": side(body, 0o120000)}
    added = {"b/y.txt": side(body + b"more\n"), "b/copy.txt": side(b"same\n" * 10),
             "b/half.txt": side(half)}
    assert find_renames(deleted, added) == {"b/y.txt": "a/x.txt", "b/copy.txt": "a/same.txt"}
