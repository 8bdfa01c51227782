"""The `text_diff` tool: a unified diff of two files or two texts, with its caps.

The contract is docs/spec.md's "The `text_diff` tool", after docs/seeds/000-text-diff-tool.txt;
docs/textdiff.md has the decisions.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from symdiff.diffs.acp import FilePatch, build_diff
from symdiff.diffs.linediff import encode_text, line_counts, unified_diff
from symdiff.errors import FsDenied, InvalidArgs, ToolFailed
from symdiff.workspace import gate as fsgate
from symdiff.workspace.gate import Beneath

READ_CAP = 4 * 1024 * 1024
OUTPUT_CAP = 2 * 1024 * 1024
MAX_CONTEXT = 20
# Room kept under OUTPUT_CAP for the marker line, so that the whole text stays within the cap.
_MARKER_ROOM = 64

PathArg = str | os.PathLike[str]

# Reads path_b while path_a is read (see _read_pair); its thread starts on first use.
_second_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="symdiff-text-diff-read")


def text_diff(
    *,
    path_a: PathArg | None = None,
    path_b: PathArg | None = None,
    text_a: str | None = None,
    text_b: str | None = None,
    label_a: str | None = None,
    label_b: str | None = None,
    context_lines: int = 3,
    allowed_roots: Sequence[Path] = (),
) -> dict[str, object]:
    """Diff two files (path mode, gated by `allowed_roots`) or two strings (text mode).

    Returns seed 000's fields (`diff`, `label_a`, `label_b`, `lines_a`, `lines_b`,
    `identical`, `diff_lines`, `truncated`); path mode adds `acp`, an ACP v2 Diff of the pair.
    Raises InvalidArgs, FsDenied or ToolFailed.
    """
    path_mode = _pick_mode(path_a, path_b, text_a, text_b)
    _check_context(context_lines)
    for name, label in (("label_a", label_a), ("label_b", label_b)):
        _check_label(name, label)
    if path_mode:
        assert path_a is not None and path_b is not None  # _pick_mode checked both
        where_a = _gate(path_a, "path_a", allowed_roots)
        where_b = _gate(path_b, "path_b", allowed_roots)
        old, new = _read_pair(where_a, path_a, where_b, path_b)
        label_a = os.fspath(path_a) if label_a is None else label_a
        label_b = os.fspath(path_b) if label_b is None else label_b
    else:
        old, new = _text_bytes(text_a, "text_a"), _text_bytes(text_b, "text_b")
        label_a = "a" if label_a is None else label_a
        label_b = "b" if label_b is None else label_b
    diff, truncated = _cap(
        unified_diff(old, new, label_a=label_a, label_b=label_b, context=context_lines)
    )
    # Binary content has no lines worth counting (0).
    lines_a, lines_b = line_counts(old, new, context=context_lines)
    result: dict[str, object] = {
        "diff": diff,
        "label_a": label_a,
        "label_b": label_b,
        "lines_a": lines_a,
        "lines_b": lines_b,
        "identical": old == new,
        "diff_lines": diff.count("\n"),
        "truncated": truncated,
    }
    if path_mode:
        # The pair as one change: the modification that turns A's content into B's.
        change = FilePatch("modify", str(where_a.path), old_bytes=old, new_bytes=new)
        result["acp"] = build_diff([change], root="/", context=context_lines)
    return result


def _pick_mode(path_a: object, path_b: object, text_a: object, text_b: object) -> bool:
    """True for path mode, False for text mode; anything else is invalid_args."""
    paths = path_a is not None or path_b is not None
    texts = text_a is not None or text_b is not None
    if paths and texts:
        raise InvalidArgs("give either path_a and path_b or text_a and text_b, not both")
    if not (paths or texts):
        raise InvalidArgs("give either path_a and path_b or text_a and text_b")
    if paths and (path_a is None or path_b is None):
        raise InvalidArgs("path mode needs both path_a and path_b")
    if texts and (text_a is None or text_b is None):
        raise InvalidArgs("text mode needs both text_a and text_b")
    return paths


def _check_context(context_lines: object) -> None:
    # bool is an int subclass, but `true` is not a line count.
    if isinstance(context_lines, bool) or not isinstance(context_lines, int):
        raise InvalidArgs(f"context_lines must be an integer, got {context_lines!r}")
    if not 0 <= context_lines <= MAX_CONTEXT:
        raise InvalidArgs(f"context_lines must be in [0, {MAX_CONTEXT}], got {context_lines}")


def _check_label(name: str, label: object) -> None:
    if label is None:
        return
    if not isinstance(label, str):
        raise InvalidArgs(f"{name} must be a string")
    # A line break in a header line would corrupt the patch for every consumer.
    if "\n" in label or "\r" in label:
        raise InvalidArgs(f"{name} must not contain a line break")


def _text_bytes(text: object, name: str) -> bytes:
    if not isinstance(text, str):
        raise InvalidArgs(f"{name} must be a string")
    # A lone surrogate from JSON makes the text non-UTF-8, i.e. binary, not a crash.
    return encode_text(text)


def _gate(path: object, name: str, allowed_roots: Sequence[Path]) -> Beneath:
    """Resolve `path` (symlinks, `..`) and check it lies inside an allowed root."""
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise InvalidArgs(f"{name} must be a non-empty path string")
    raw = Path(os.fspath(path))
    if not raw.is_absolute():
        raise InvalidArgs(f"{name} must be an absolute path, got {os.fspath(path)!r}")
    real = fsgate.resolve(raw, raw)
    where = fsgate.locate(real, [fsgate.resolve(Path(root), raw) for root in allowed_roots])
    if where is None:
        raise FsDenied(f"{raw} is outside the allowed roots")
    return where


def _read_pair(
    where_a: Beneath, shown_a: PathArg, where_b: Beneath, shown_b: PathArg
) -> tuple[bytes, bytes]:
    """Both files, the second read on a thread of its own while the first is read here.

    A read lets go of the GIL, and most of its time is the kernel's (copying from the page
    cache into fresh pages): two 4 MiB files take about 2 ms each. A's error wins over B's,
    as if they were read one after the other.
    """
    later = _second_reader.submit(_read, where_b, shown_b)
    old = _read(where_a, shown_a)
    return old, later.result()


def _read(where: Beneath, shown: PathArg) -> bytes:
    """Read a regular file of at most READ_CAP bytes (fsgate.read_regular)."""
    text = os.fspath(shown)
    try:
        data, _ = fsgate.read_regular(where, READ_CAP, text)
    except FileNotFoundError as exc:
        raise ToolFailed(f"{text}: no such file") from exc
    except fsgate.NotRegular as exc:
        what = "is a directory" if stat.S_ISDIR(exc.mode) else "is not a regular file"
        raise ToolFailed(f"{text} {what}") from None
    if len(data) > READ_CAP:
        raise ToolFailed(f"{text} is over the {READ_CAP}-byte read cap")
    return data


def _cap(diff: str) -> tuple[str, bool]:
    """Cut a diff over OUTPUT_CAP bytes at a line end and add the truncation marker line."""
    data = diff.encode("utf-8")
    if len(data) <= OUTPUT_CAP:
        return diff, False
    room = OUTPUT_CAP - _MARKER_ROOM
    cut = data.rfind(b"\n", 0, room) + 1
    if cut == 0:  # one line longer than the cap: cut at a character boundary instead
        cut = room
        while cut and data[cut] & 0xC0 == 0x80:
            cut -= 1
    body = data[:cut].decode("utf-8")
    if not body.endswith("\n") and body:
        body += "\n"
    return body + f"[diff truncated at {cut} bytes]\n", True
