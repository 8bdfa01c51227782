"""Patches of in-memory blobs against libgit2's own patches of the same two buffers."""

from __future__ import annotations

import gc
import random
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import ConfigLevel, DiffOption, ObjectType

from symdiff.diffs import blobpatch, linediff
from symdiff.diffs.blobid import blob_id, blob_ids_aside
from symdiff.diffs.blobpatch import blob_patch

FLAGS = DiffOption.FORCE_TEXT | DiffOption.INDENT_HEURISTIC
WORDS = [b"def", b"x", b"return", b"{", b"}", b"caf\xc3\xa9", b"$v", b"_p", b"// c", b"\t"]


def _hunks(patch: pygit2.Patch) -> bytes:
    data: bytes = patch.data
    return data[data.find(b"\n@@ ") + 1 :]


def _by_buffers(old: bytes, new: bytes, context: int) -> pygit2.Patch:
    return pygit2.Patch.create_from(old, new, context_lines=context, flag=FLAGS)


def _by_blobs(old: bytes, new: bytes, context: int) -> pygit2.Patch:
    return blob_patch(old, new, context=context, flags=FLAGS)


def _line(rng: random.Random) -> bytes:
    indent = rng.choice([b"", b"", b"  ", b"    ", b"\t", b"        "])
    words = b" ".join(rng.choices(WORDS, k=rng.randint(0, 5)))
    end = rng.choice([b"\n"] * 8 + [b"\r\n", b" \n"])
    return indent + words + end


def _pair(rng: random.Random, size: int) -> tuple[bytes, bytes]:
    """Lines with repeats, blank lines, indents, CRLF and function-like lines; scattered edits."""
    old = [_line(rng) for _ in range(size)]
    new = list(old)
    for _ in range(rng.randint(1, max(1, size // 8))):
        i = rng.randrange(len(new) + 1)
        kind = rng.random()
        if kind < 0.3 and i < len(new):
            del new[i]
        elif kind < 0.6:
            new[i:i] = [_line(rng) for _ in range(rng.randint(1, 4))]
        elif i < len(new):
            new[i] = _line(rng)
    a, b = b"".join(old), b"".join(new)
    if rng.random() < 0.2:
        a = a.rstrip(b"\n")
    if rng.random() < 0.2:
        b = b.rstrip(b"\n")
    return a, b


def test_random_pairs_give_the_same_hunks_and_ids() -> None:
    """The blobs' hunks are libgit2's own; the ids hashed beside them are libgit2's own too."""
    rng = random.Random(25)
    for round_ in range(150):
        old, new = _pair(rng, rng.choice([0, 1, 5, 40, 300, 3000]))
        if old == new:
            continue
        context = rng.choice([0, 1, 3, 20])
        ids = blob_ids_aside(old, new)
        by_buffers, by_blobs = _by_buffers(old, new, context), _by_blobs(old, new, context)
        assert _hunks(by_blobs) == _hunks(by_buffers), (round_, old, new, context)
        expected = (str(by_buffers.delta.old_file.id), str(by_buffers.delta.new_file.id))
        assert ids() == expected


def test_large_pairs_take_the_blob_path_and_keep_their_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []

    def counted(old: bytes, new: bytes, **kwargs: Any) -> pygit2.Patch:
        calls.append(len(old) + len(new))
        return blob_patch(old, new, **kwargs)

    monkeypatch.setattr(linediff, "blob_patch", counted)
    rng = random.Random(7)
    for _ in range(3):
        old, new = _pair(rng, 8000)
        linediff.forget_patches()
        expected = _by_buffers(old, new, 3)
        assert linediff.unified_diff(old, new) == "--- a\n+++ b\n" + _hunks(expected).decode()
        section = linediff.git_patch(old, new, old_name="f", new_name="f")
        ids = (str(expected.delta.old_file.id)[:7], str(expected.delta.new_file.id)[:7])
        assert f"\nindex {ids[0]}..{ids[1]} 100644\n--- a/f\n+++ b/f\n" in section
        assert section.endswith(_hunks(expected).decode())
    assert len(calls) == 3 and min(calls) >= linediff._BLOB_PATCH_MIN


def test_a_patch_leaves_no_text_behind() -> None:
    """The one-call repository outlives the call in a reference cycle, until the garbage
    collector's next pass: its backend must not hold both texts meanwhile."""
    gc.collect()
    gc.disable()
    try:
        made = _by_blobs(b"a\n" * 40_000, b"b\n" * 40_000, 3)
        del made
        backends = [o for o in gc.get_objects() if isinstance(o, blobpatch._Texts)]
        assert backends
        assert all(not backend._blobs for backend in backends)
    finally:
        gc.enable()


def test_hash_verification_is_back_on_after_a_patch() -> None:
    """A repository object whose bytes do not match its id is still refused afterwards."""

    class Lying(pygit2.OdbBackend):
        def read_cb(self, oid: pygit2.Oid) -> tuple[int, bytes]:
            return ObjectType.BLOB, b"not what the id says\n"

    _by_blobs(b"a\n" * 40_000, b"b\n" * 40_000, 3)
    odb = pygit2.Odb()
    odb.add_backend(Lying(), 1)
    repo = pygit2.Repository()
    repo.set_odb(odb)
    with pytest.raises(pygit2.GitError, match="hash"):
        repo[pygit2.Oid(hex=blob_id(b"the real content\n"))]


def test_the_users_attributes_do_not_pick_a_diff_driver(tmp_path: Path) -> None:
    """`* diff=tex` in ~/.config/git/attributes would make a `\\section` line the hunk header."""
    (tmp_path / "attributes").write_text("* diff=tex\n")
    old = b"\\section{One}\n" + b"  x\n" * 12 + b"zeta\n" + b"  y\n" * 12
    new = old.replace(b"  y\n" * 8, b"  y\n" * 7 + b"  Y\n", 1)
    saved = pygit2.settings.search_path[ConfigLevel.XDG]
    pygit2.settings.search_path[ConfigLevel.XDG] = str(tmp_path)
    try:
        headers = [h.header for h in _by_blobs(old, new, 3).hunks]
    finally:
        pygit2.settings.search_path[ConfigLevel.XDG] = saved
    assert headers == [h.header for h in _by_buffers(old, new, 3).hunks]
    assert headers == ["@@ -19,7 +19,7 @@ zeta\n"]


def test_ids_hashed_aside_are_the_ids_one_by_one() -> None:
    rng = random.Random(11)
    big = rng.randbytes((1 << 20) + 7)
    other = big[::-1]
    waits = [blob_ids_aside(a, b) for a, b in ((big, other), (b"small", other), (big, b""))]
    assert [wait() for wait in waits] == [
        (blob_id(big), blob_id(other)),
        (blob_id(b"small"), blob_id(other)),
        (blob_id(big), blob_id(b"")),
    ]
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git hash-object
