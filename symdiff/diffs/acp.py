"""ACP v2 `Diff` objects: structured file changes plus one multi-file git patch.

Build one from `FilePatch` values, the small input that the indexer, the diff query, the edit
tool and `text_diff` all use::

    build_diff([FilePatch("modify", "src/a.py", old_bytes=b"x\\n", new_bytes=b"y\\n")],
               root="/home/me/proj")
    -> {"type": "diff",
        "changes": [{"operation": "modify", "path": "/home/me/proj/src/a.py",
                     "fileType": "text", "mimeType": "text/x-python"}],
        "patch": {"format": "git_patch", "text": "diff --git /home/me/proj/src/a.py ..."}}

Paths in `FilePatch` are POSIX paths relative to `root` (or already absolute). Every path that
leaves this module is absolute, in `changes` and in the patch alike (the ACP schema requires
absolute paths in `git_patch` text, as in `diff --git /abs/x /abs/x`), so the patch applies
from any directory with `git apply --unsafe-paths -p0` (and, for text, `patch -p0`).
"""

from __future__ import annotations

import mimetypes
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from symdiff.diffs.linediff import REGULAR_MODE, SYMLINK_MODE, git_patch, is_binary
from symdiff.errors import InvalidArgs

OPERATIONS = frozenset({"add", "delete", "modify", "move", "copy"})
# Bounds what one tool answer carries; a larger patch is left out (ACP allows no patch).
PATCH_CAP = 2 * 1024 * 1024

# Only Python's built-in table, not /etc/mime.types, so answers do not vary by machine.
_MIME = mimetypes.MimeTypes()


@dataclass(frozen=True, slots=True)
class FilePatch:
    """One file-level change: the operation, its paths and the bytes before and after.

    `old_bytes` is None for `add`, `new_bytes` None for `delete`; for any other operation a
    None side means the content is unknown (e.g. a binary tracked by hash only), and the file
    is then listed in `changes` but left out of the patch text. `old_path` is required for
    `move` and `copy` and forbidden otherwise. `mode` is the git mode after the change,
    `old_mode` the one before (defaults to `mode`).
    """

    operation: str
    path: str
    old_path: str | None = None
    old_bytes: bytes | None = None
    new_bytes: bytes | None = None
    mode: int = REGULAR_MODE
    old_mode: int | None = None

    def __post_init__(self) -> None:
        if self.operation not in OPERATIONS:
            raise InvalidArgs(f"unknown file operation {self.operation!r}")
        paired = self.operation in ("move", "copy")
        if paired != (self.old_path is not None):
            need = "needs" if paired else "takes no"
            raise InvalidArgs(f"operation {self.operation!r} {need} old_path")
        if self.operation == "add" and self.old_bytes is not None:
            raise InvalidArgs("an added file has no old_bytes")
        if self.operation == "delete" and self.new_bytes is not None:
            raise InvalidArgs("a deleted file has no new_bytes")


def _absolute(root: str, path: str) -> str:
    return posixpath.normpath(posixpath.join(root, path))


def _file_type(fp: FilePatch) -> str | None:
    if fp.mode == SYMLINK_MODE:
        return "symlink"
    content = fp.new_bytes if fp.new_bytes is not None else fp.old_bytes
    if content is None:
        return None
    return "binary" if is_binary(content) else "text"


def _change(fp: FilePatch, root: str) -> dict[str, object]:
    change: dict[str, object] = {"operation": fp.operation, "path": _absolute(root, fp.path)}
    if fp.old_path is not None:
        change["oldPath"] = _absolute(root, fp.old_path)
    file_type = _file_type(fp)
    if file_type is not None:
        change["fileType"] = file_type
    mime, _ = _MIME.guess_type(fp.path, strict=False)
    if mime is not None:
        change["mimeType"] = mime
    return change


def file_section(fp: FilePatch, *, root: str | None, context: int = 3) -> str:
    """The git patch section of one change; "" if there is nothing to show.

    With a `root`: absolute paths and no prefixes, as ACP asks (`git apply -p0`). With None:
    the relative paths behind `a/` and `b/`, as `git diff` writes them (plain `git apply`
    from the root).
    """
    absolute = root is not None
    path = _absolute(root, fp.path) if root is not None else fp.path
    old_path = fp.old_path or fp.path
    old_path = _absolute(root, old_path) if root is not None else old_path
    old = None if fp.operation == "add" else fp.old_bytes
    new = None if fp.operation == "delete" else fp.new_bytes
    if (old is None and fp.operation != "add") or (new is None and fp.operation != "delete"):
        return ""  # content unknown: listed in changes only
    return git_patch(
        old,
        new,
        old_name=old_path,
        new_name=path,
        old_mode=fp.mode if fp.old_mode is None else fp.old_mode,
        new_mode=fp.mode,
        copy=fp.operation == "copy",
        context=context,
        # ACP wants absolute paths in the patch: no a/ b/ prefixes, so `git apply -p0`.
        src_prefix="" if absolute else "a/",
        dst_prefix="" if absolute else "b/",
        name_lines=absolute,
    )


def build_diff(
    files: Iterable[FilePatch],
    *,
    root: str,
    context: int = 3,
    max_patch_bytes: int = PATCH_CAP,
) -> dict[str, object]:
    """An ACP v2 `Diff` (`type: "diff"`) for `files`; `root` anchors their relative paths.

    `patch` is omitted when no file has renderable content or the text would exceed
    `max_patch_bytes` (a cut patch would not apply).
    """
    if not posixpath.isabs(root):
        raise InvalidArgs(f"root must be an absolute path, got {root!r}")
    files = list(files)
    diff: dict[str, object] = {"type": "diff", "changes": [_change(fp, root) for fp in files]}
    text = "".join(file_section(fp, root=root, context=context) for fp in files)
    if text and len(text.encode("utf-8")) <= max_patch_bytes:
        diff["patch"] = {"format": "git_patch", "text": text}
    return diff
