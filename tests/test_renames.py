"""git's rename scoring: the lane-parallel span hash equals git's byte-at-a-time `hash_chars`,
and the pairs are git's (`git diff -M` as the oracle), asked once or again."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pygit2
import pytest
from conftest import git

from symdiff.git import renames
from symdiff.git.renames import Side, find_renames, span_hashes
from symdiff.git.treediff import tree_changes
from symdiff.model import ChangeType


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
         b"\xff" * 130 + b"\n\n\n", b"b" * 63 + b"\n", b"c" * 64 + b"\n" + b"c" * 64,
         b"d" * 127 + b"\r\n" + b"d" * 129, b"\n" * 70 + b"e" * 65]  # fmt: skip


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


def _text(rng: random.Random, words: list[str]) -> str:
    """Source-like lines from a shared vocabulary (files share lines, as code does), some past
    git's 64-byte chunk, some with CRLF. Each ends with a newline: before 2.44, git left a last
    line without one out of the score (diffcore-delta's "avoid ignoring final 'line' of file"),
    and symdiff follows the newer git."""
    lines = []
    for _ in range(rng.randint(10, 120)):
        width = rng.choice([1, 2, 4, 8, 8, 16, 30])
        lines.append(" " * rng.choice([0, 4, 8]) + " ".join(rng.choices(words, k=width)) + "\n")
    text = "".join(lines)
    return text.replace("\n", "\r\n") if rng.random() < 0.2 else text


def _rewrite(rng: random.Random, text: str, keep: float, words: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(ln if rng.random() < keep else " ".join(rng.choices(words, k=5)) + "\n"
                   for ln in lines)  # fmt: skip


def _git_renames(repo: Path, old: str, new: str) -> dict[str, str]:
    out = git(repo, "diff", "-M", "--name-status", "-z", old, new).split("\0")
    pairs, i = {}, 0
    while i < len(out) - 1:
        status = out[i]
        if status.startswith("R"):
            pairs[out[i + 2]] = out[i + 1]
            i += 3
        else:
            i += 2
    return pairs


def _our_renames(repo: Path, old: str, new: str) -> dict[str, str]:
    handle = pygit2.Repository(str(repo))
    diff = handle[old].peel(pygit2.Tree).diff_to_tree(handle[new].peel(pygit2.Tree))

    def read(file: pygit2.DiffFile) -> bytes:
        return handle.odb.read(file.id)[1]

    return {c.path: c.old_path for c in tree_changes(diff, read_old=read, read_new=read)
            if c.kind is ChangeType.RENAME and c.old_path is not None}  # fmt: skip


def test_pairs_as_git_pairs_them_asked_again(repo: Path) -> None:
    """Sixty files moved and rewritten by 20-90% (namesakes, copies, long lines, CRLF), then
    moved again: git's pairs, with the held spans and scores emptied and then warm."""
    rng = random.Random(25)
    words = [f"w{n}" for n in range(60)] + ["return", "def", "(self):", "=", "x" * 70]
    texts = {f"a/f{i}.txt": _text(rng, words) for i in range(60)}
    texts["a/copy.txt"] = texts["a/f0.txt"]
    for path, text in texts.items():
        (repo / path).parent.mkdir(exist_ok=True)
        (repo / path).write_bytes(text.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    shas = [git(repo, "rev-parse", "HEAD").strip()]
    for step in range(2):
        for path in sorted(p.relative_to(repo).as_posix() for p in repo.glob("[ab]/*.txt")):
            text = (repo / path).read_bytes().decode()
            (repo / path).unlink()
            if rng.random() < 0.1:
                continue
            name = path.split("/")[1] if rng.random() < 0.3 else f"g{step}_{rng.random():.5f}.txt"
            new = repo / ("b" if step == 0 else "a") / name
            new.parent.mkdir(exist_ok=True)
            new.write_bytes(_rewrite(rng, text, rng.uniform(0.2, 0.9), words).encode())
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"move {step}")
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    found = 0
    for old, new in ((shas[0], shas[1]), (shas[1], shas[2]), (shas[0], shas[2])):
        expected = _git_renames(repo, old, new)
        found += len(expected)
        renames.forget()
        assert _our_renames(repo, old, new) == expected
        assert _our_renames(repo, old, new) == expected  # the spans and scores held
    assert found >= 30
