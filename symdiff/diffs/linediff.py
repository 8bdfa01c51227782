"""The line diff engine: hunks, numstat counts and unified/git patch text (libgit2's xdiff).

One engine serves every consumer, so the counts of `diff_lines`, the unified diff of the
`text_diff` tool and the git patches of ACP diffs always agree with each other and with
`git diff`. Lines are split on `\\n` only, as git and GNU diff split them: a `\\r` (CRLF or lone
CR) stays part of its line, so patches round-trip byte for byte.
"""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass

import pygit2
from pygit2.enums import DiffOption

from symdiff.diffs.blobid import blob_id, blob_ids_aside
from symdiff.diffs.blobpatch import blob_patch
from symdiff.errors import InvalidArgs

REGULAR_MODE = 0o100644
EXECUTABLE_MODE = 0o100755
SYMLINK_MODE = 0o120000

# FORCE_TEXT: callers decide what is binary (NUL byte or not UTF-8), not libgit2's 8000-byte
# sniff, so text output never silently turns into "Binary files differ". INDENT_HEURISTIC is
# git's default since 2.14: hunks slide to where a reader expects them.
_TEXT_FLAGS = DiffOption.FORCE_TEXT | DiffOption.INDENT_HEURISTIC
_NULL_ID = "0" * 40
_BINARY_LINE_BYTES = 52


@dataclass(frozen=True, slots=True)
class Hunk:
    """One region of change; line numbers are 1-based, lists hold the changed line numbers."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    removed: tuple[int, ...]
    added: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LineDiff:
    """The line-level difference of two texts."""

    hunks: tuple[Hunk, ...]
    lines_added: int
    lines_removed: int


def diff_lines(old: bytes, new: bytes) -> LineDiff:
    """Diff two texts line by line, as `git diff` does (Myers, no context)."""
    if old == new:
        return LineDiff((), 0, 0)
    patch = pygit2.Patch.create_from(old, new, context_lines=0, flag=DiffOption.INDENT_HEURISTIC)
    hunks = []
    added_total = removed_total = 0
    for h in patch.hunks:
        removed = tuple(ln.old_lineno for ln in h.lines if ln.origin == "-")
        added = tuple(ln.new_lineno for ln in h.lines if ln.origin == "+")
        added_total += len(added)
        removed_total += len(removed)
        hunks.append(Hunk(h.old_start, h.old_lines, h.new_start, h.new_lines, removed, added))
    return LineDiff(tuple(hunks), added_total, removed_total)


# text_diff asks about the same two large buffers from several places (the diff, the line
# counts, the ACP file types, the git patch); remember the last few answers by identity.
_MEMO_MIN = 1 << 16
_memo: list[tuple[bytes, bool]] = []


def is_binary(data: bytes) -> bool:
    """True when `data` holds a NUL byte or is not valid UTF-8 (symdiff's one binary rule)."""
    for seen, verdict in _memo:
        if seen is data:
            return verdict
    verdict = _detect_binary(data)
    if len(data) >= _MEMO_MIN:
        _memo.insert(0, (data, verdict))
        del _memo[4:]
    return verdict


# Stretch of bytes checked at a time when validating UTF-8; see _is_utf8.
_STRETCH = 1 << 14


def _detect_binary(data: bytes) -> bool:
    if b"\0" in data:
        return True
    return not (data.isascii() or _is_utf8(data))


def _is_utf8(data: bytes) -> bool:
    """True when `data` is valid UTF-8, decoded a stretch at a time.

    A UTF-8 sequence never holds an ASCII byte, so cutting just after a newline never splits
    one. Decoding a whole 4 MiB text costs up to 9 ms when one character in it needs 4 bytes
    (the decoder builds a UCS-4 string of every character); a stretch's string is small and
    short-lived, and most stretches of source are ASCII, which the decoder copies at memory
    speed. The stretches are views, not copies: slicing then checking `isascii` first cost a
    quarter more on mostly-ASCII texts and saved nothing on others.
    """
    view = memoryview(data)
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start + _STRETCH) + 1 or size
        try:
            str(view[start:end], "utf-8")
        except UnicodeDecodeError:
            return False
        start = end
    return True


def count_lines(data: bytes) -> int:
    """Number of lines; a last line without a final newline still counts."""
    n = data.count(b"\n")
    return n + 1 if data and not data.endswith(b"\n") else n


def line_counts(old: bytes, new: bytes, *, context: int = 3) -> tuple[int, int]:
    """The `count_lines` of each side, 0 for binary content.

    For two texts that differ, both counts are read off their patch (see `_TextPatch`): right
    after `unified_diff` made that patch (same `context`), that spares counting two texts of
    up to 4 MiB each.
    """
    old_binary, new_binary = is_binary(old), is_binary(new)
    if old == new:
        lines = 0 if old_binary else count_lines(old)
        return lines, lines
    if old_binary or new_binary:
        return 0 if old_binary else count_lines(old), 0 if new_binary else count_lines(new)
    patch = _text_patch(old, new, context)
    return patch.old_lines, patch.new_lines


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of a string, its binary verdict remembered without decoding it again."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # surrogatepass keeps a lone surrogate encodable; the result is then not UTF-8: binary.
        data = text.encode("utf-8", "surrogatepass")
        verdict = True
    else:
        verdict = "\0" in text
    if len(data) >= _MEMO_MIN:
        _memo.insert(0, (data, verdict))
        del _memo[4:]
    return data


def _as_bytes(text: bytes | str) -> bytes:
    return text if isinstance(text, bytes) else encode_text(text)


@dataclass(frozen=True, slots=True)
class _TextPatch:
    """What one libgit2 diff of a changed text pair gives: its hunks, both blob ids and both
    sides' `count_lines`."""

    hunks: str
    old_id: str
    new_id: str
    old_lines: int
    new_lines: int


# text_diff renders one pair twice (its unified diff, then the ACP git patch): diff it once.
# Remembered by identity (bytes are immutable and the memo holds them), never by value:
# hashing two 4 MiB keys costs more than a third of the diff itself.
_patches: list[tuple[bytes, bytes, int, _TextPatch]] = []
# Below this many bytes in all, hashing in libgit2 costs less than setting up blobs (~30 us).
_BLOB_PATCH_MIN = 1 << 16


def _text_patch(old: bytes, new: bytes, context: int) -> _TextPatch:
    """The `@@` hunks (and their `\\ No newline` markers) of a pair that differs, and its ids.

    The ids serve the `index` line of a git patch. A large pair goes to libgit2 as two blobs
    (see blobpatch.py) while hashlib computes their ids on other threads, a small one as two
    buffers, which libgit2 hashes itself: the hunks are the same either way.
    """
    for seen_old, seen_new, seen_context, patch in list(_patches):
        if seen_old is old and seen_new is new and seen_context == context:
            return patch
    if len(old) + len(new) >= _BLOB_PATCH_MIN:
        ids = blob_ids_aside(old, new)
        made = blob_patch(old, new, context=context, flags=_TEXT_FLAGS)
        old_lines, new_lines = _counts_by_patch(made, old, new)
        old_id, new_id = ids()
    else:
        made = pygit2.Patch.create_from(old, new, context_lines=context, flag=_TEXT_FLAGS)
        old_lines, new_lines = _counts_by_patch(made, old, new)
        old_id, new_id = str(made.delta.old_file.id), str(made.delta.new_file.id)
    data: bytes = made.data
    # The header libgit2 writes names no file or "file", so "\n@@ " first occurs at hunk 1.
    start = data.find(b"\n@@ ") + 1
    patch = _TextPatch(data[start:].decode("utf-8"), old_id, new_id, old_lines, new_lines)
    _patches.insert(0, (old, new, context, patch))
    del _patches[2:]
    return patch


def _counts_by_patch(made: pygit2.Patch, old: bytes, new: bytes) -> tuple[int, int]:
    """Both sides' `count_lines`, counting only the lines after the patch's last change.

    A changed line knows its number and its byte offset on its own side (libgit2's
    `content_offset`: in `old` for a removed line, in `new` for an added one), so that side
    has that many lines plus those after it; the other side differs by the lines the patch
    adds and removes. With edits all over a text, that counts a few lines, not 4 MiB.
    """
    hunks = made.hunks
    if not hunks:  # never for two texts that differ; counted the long way all the same
        return count_lines(old), count_lines(new)
    last = next(line for line in reversed(hunks[-1].lines) if line.origin in "+-")
    added = last.origin == "+"
    data, number = (new, last.new_lineno) if added else (old, last.old_lineno)
    end = last.content_offset + len(last.raw_content)
    lines = number + data.count(b"\n", end) + (end < len(data) and not data.endswith(b"\n"))
    _, plus, minus = made.line_stats
    return (lines - plus + minus, lines) if added else (lines, lines + plus - minus)


def forget_patches() -> None:
    """Drop the remembered patches (benchmarks time a first diff with this)."""
    _patches.clear()


def unified_diff(
    a: bytes | str,
    b: bytes | str,
    *,
    label_a: str = "a",
    label_b: str = "b",
    context: int = 3,
) -> str:
    """A unified diff that GNU `patch` applies to `a` to give `b`; "" when equal.

    Binary input (see `is_binary`) gives GNU diff's one line `Binary files A and B differ`.
    """
    old, new = _as_bytes(a), _as_bytes(b)
    if old == new:
        return ""
    if is_binary(old) or is_binary(new):
        return f"Binary files {label_a} and {label_b} differ\n"
    return f"--- {label_a}\n+++ {label_b}\n" + _text_patch(old, new, context).hunks


_C_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def quote_path(name: str) -> str:
    """A path as git writes it in patch headers: C-quoted only when it must be."""
    if not any(c in _C_ESCAPES or ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return name
    out = []
    for c in name:
        if c in _C_ESCAPES:
            out.append(_C_ESCAPES[c])
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\{ord(c):03o}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _file_line(marker: str, name: str | None) -> str:
    if name is None:
        return f"{marker} /dev/null\n"
    quoted = quote_path(name)
    # git appends a tab to names with spaces so that trailing timestamps cannot be confused.
    tab = "\t" if quoted == name and " " in name else ""
    return f"{marker} {quoted}{tab}\n"


def _binary_literal(data: bytes) -> str:
    """Git's `GIT binary patch` literal block: zlib, then base85 lines of up to 52 bytes."""
    packed = zlib.compress(data, 9)
    lines = [f"literal {len(data)}\n"]
    for i in range(0, len(packed), _BINARY_LINE_BYTES):
        chunk = packed[i : i + _BINARY_LINE_BYTES]
        n = len(chunk)
        size = chr(ord("A") + n - 1) if n <= 26 else chr(ord("a") + n - 27)
        lines.append(size + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return "GIT binary patch\n" + "".join(lines) + "\n"


def git_patch(
    old: bytes | str | None,
    new: bytes | str | None,
    *,
    old_name: str | None = None,
    new_name: str | None = None,
    old_mode: int = REGULAR_MODE,
    new_mode: int | None = None,
    copy: bool = False,
    context: int = 3,
    src_prefix: str = "a/",
    dst_prefix: str = "b/",
    name_lines: bool = False,
) -> str:
    """One file's section of a git patch (`diff --git` …) that `git apply` accepts; "" if unchanged.

    `old=None` is an added file, `new=None` a deleted one. Different names make a rename
    (`copy=True`: a copy). Text content gives `@@` hunks; binary content (see `is_binary`)
    gives a `GIT binary patch` literal with full index ids, which git applies anywhere.
    Names are written after the prefixes as given. `name_lines=True` writes `---`/`+++` lines
    even where git omits them (binary, empty or mode-only sections): with prefixes "" and
    absolute names, that is what lets `git apply --unsafe-paths -p0` find every file.
    """
    if old is None and new is None:
        raise InvalidArgs("git_patch needs at least one side")
    old_name = old_name if old_name is not None else new_name
    new_name = new_name if new_name is not None else old_name
    if old_name is None or new_name is None:
        raise InvalidArgs("git_patch needs a file name")
    new_mode = old_mode if new_mode is None else new_mode
    old_b = None if old is None else _as_bytes(old)
    new_b = None if new is None else _as_bytes(new)
    src, dst = src_prefix + old_name, dst_prefix + new_name
    moved = old_b is not None and new_b is not None and old_name != new_name
    changed = old_b != new_b
    if not (moved or changed or old_mode != new_mode):
        return ""
    out = [f"diff --git {quote_path(src)} {quote_path(dst)}\n"]
    if old_b is None:
        out.append(f"new file mode {new_mode:06o}\n")
    elif new_b is None:
        out.append(f"deleted file mode {old_mode:06o}\n")
    elif old_mode != new_mode:
        out.append(f"old mode {old_mode:06o}\nnew mode {new_mode:06o}\n")
    if moved:
        verb = "copy" if copy else "rename"
        if not changed:
            out.append("similarity index 100%\n")
        out.append(f"{verb} from {quote_path(old_name)}\n{verb} to {quote_path(new_name)}\n")
    names = _file_line("---", None if old_b is None else src)
    names += _file_line("+++", None if new_b is None else dst)
    if old_b is None or new_b is None or changed:
        mode = (
            new_mode if old_mode == new_mode and old_b is not None and new_b is not None else None
        )
        out.extend(_index_and_content(old_b, new_b, mode, names, context, name_lines))
    elif name_lines and not moved:
        out.append(names)
    return "".join(out)


def _index_and_content(
    old: bytes | None,
    new: bytes | None,
    mode: int | None,
    names: str,
    context: int,
    name_lines: bool,
) -> tuple[str, str]:
    """The `index` line, then the `---`/`+++` lines and the hunks or the binary literal."""
    old_b, new_b = old or b"", new or b""
    if is_binary(old_b) or is_binary(new_b):
        # Full ids for binary content, which `git apply` requires; no ---/+++ unless asked.
        ids = (_NULL_ID if old is None else blob_id(old), _NULL_ID if new is None else blob_id(new))
        return _index_line(*ids, mode), (names if name_lines else "") + _binary_literal(new_b)
    if old_b == new_b:  # an added or deleted empty file: git writes no ---/+++ lines
        hunks, old_id, new_id = "", blob_id(old_b), blob_id(new_b)
    else:
        patch = _text_patch(old_b, new_b, context)
        hunks, old_id, new_id = patch.hunks, patch.old_id, patch.new_id
    ids = ((_NULL_ID if old is None else old_id)[:7], (_NULL_ID if new is None else new_id)[:7])
    return _index_line(*ids, mode), names + hunks if hunks or name_lines else ""


def _index_line(old_id: str, new_id: str, mode: int | None) -> str:
    return f"index {old_id}..{new_id}" + ("" if mode is None else f" {mode:06o}") + "\n"
