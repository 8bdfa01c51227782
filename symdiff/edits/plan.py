"""Validating search/replace edits: resolve each path, read each file, run its blocks in memory.

Nothing here writes. A file's blocks run in message order against the text the earlier blocks
leave; every file whose blocks do not fit is reported in one error (docs/edits.md).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.config import MAX_FILE_SIZE, STATE_DIR
from symdiff.edits.match import line_of, lines_list, near_match, occurrences
from symdiff.edits.parse import Block, FileEdit
from symdiff.errors import EditError, FsDenied, InvalidArgs, ToolFailed


@dataclass(frozen=True, slots=True)
class FilePlan:
    """One file's validated edit: where, what it holds now and what it will hold."""

    path: str  # as shown: relative to the root (POSIX), or absolute outside it
    real: Path
    operation: str  # "add" | "modify" | "unchanged"
    old: bytes | None
    new: bytes
    mode: int | None
    blocks: int


def display_path(real: Path, root: Path) -> str:
    """A path as results show it: relative to the root (POSIX), else absolute."""
    return real.relative_to(root).as_posix() if real.is_relative_to(root) else str(real)


def resolve_path(raw: str, *, root: Path, allowed_roots: Sequence[Path]) -> Path:
    """The real path of an edit target (symlinks and `..` resolved), inside an allowed root."""
    if "\0" in raw:
        raise InvalidArgs(f"path {raw!r} contains a NUL byte")
    p = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    try:
        real = (p if p.is_absolute() else root / p).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolFailed(f"cannot resolve {raw}: {exc}") from exc
    if not any(real.is_relative_to(r) for r in (root, *allowed_roots)):
        raise FsDenied(f"{raw} resolves to {real}, outside the allowed roots")
    if real.is_relative_to(root / STATE_DIR):
        raise FsDenied(f"{raw} is inside symdiff's own {STATE_DIR}/ directory")
    return real


def _read(real: Path, shown: str) -> tuple[bytes | None, int | None]:
    """The bytes and mode of an existing regular file, or (None, None) when absent."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        parent = real.parent
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir():
            raise EditError(f"{shown}: {parent} is not a directory") from None
        return None, None
    except OSError as exc:
        raise ToolFailed(f"cannot read {shown}: {exc.strerror}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise EditError(f"{shown} is not a regular file")
    if st.st_size > MAX_FILE_SIZE:
        raise EditError(f"{shown} is over the {MAX_FILE_SIZE // (1024 * 1024)} MiB edit cap")
    try:
        return real.read_bytes(), st.st_mode
    except OSError as exc:
        raise ToolFailed(f"cannot read {shown}: {exc.strerror}") from exc


def _eol(content: str) -> str:
    """A file's newline: CRLF when every line break is CRLF, else LF."""
    crlf = content.count("\r\n")
    return "\r\n" if crlf and crlf == content.count("\n") else "\n"


def _variants(search: str, replace: str, eol: str, content: str) -> list[tuple[str, str]]:
    """The (search, replace) spellings to look for: the file's newline first; in a file with
    mixed newlines, both."""
    lf = [(search, replace)]
    crlf = [(search.replace("\n", "\r\n"), replace.replace("\n", "\r\n"))]
    if eol == "\r\n":
        return crlf
    return lf + crlf if "\r\n" in content else lf


@dataclass(slots=True)
class _Doc:
    """A file's text while its blocks run: None until it exists."""

    shown: str
    text: str | None
    eol: str
    virtual_eol: bool = False


def _apply_block(doc: _Doc, block: Block) -> None:
    """Run one block on the text in memory; EditError when it does not fit."""
    label = f"{doc.shown}, {block.where}"
    if doc.text is None:
        creates = [r for s, r in block.readings() if s == ""]
        if not creates:
            raise EditError(f"{label}: no such file (an empty SEARCH creates a new file)")
        doc.text = creates[0]
        return
    # Readings come preferred first; the first that fits the file exactly once wins.
    counts: list[list[int]] = []
    for search, replace in block.readings():
        if search == "":
            continue
        for s, r in _variants(search, replace, doc.eol, doc.text):
            found = occurrences(doc.text, s, whole_lines=block.whole_lines)
            if len(found) == 1:
                at = found[0]
                doc.text = doc.text[:at] + r + doc.text[at + len(s):]
                return
            if found:
                counts.append(found)
                break
    search = block.search
    if search == "":
        raise EditError(f"{label}: an empty SEARCH creates a file, but {doc.shown} exists")
    if counts:
        found = counts[0]
        lines = [line_of(doc.text, at) for at in found]
        raise EditError(f"{label}: the search text occurs {len(found)} times (at lines "
                        f"{lines_list(lines)}, counting the earlier blocks' changes); "
                        "add surrounding lines to make it unique")
    raise EditError(f"{label}: the search text was not found; {near_match(doc.text, search)}")


def _run_blocks(shown: str, old: bytes | None, blocks: Sequence[Block]) -> bytes:
    if old is None:
        doc = _Doc(shown, None, "\n")
    else:
        try:
            text = old.decode("utf-8")
        except UnicodeDecodeError:
            raise EditError(f"{shown} is not UTF-8 text; symdiff edits text only") from None
        if "\0" in text:
            raise EditError(f"{shown} is binary (it holds a NUL byte); symdiff edits text only")
        doc = _Doc(shown, text, _eol(text))
        # Whole-line blocks can then match a last line that has no newline; it is removed again.
        if text and not text.endswith("\n"):
            doc.text, doc.virtual_eol = text + doc.eol, True
    for block in blocks:
        _apply_block(doc, block)
    assert doc.text is not None
    new = doc.text
    if doc.virtual_eol and new.endswith(doc.eol):
        new = new[: -len(doc.eol)]
    return new.encode("utf-8")


def _group(files: Sequence[FileEdit], *, root: Path, allowed_roots: Sequence[Path]
           ) -> dict[Path, list[Block]]:
    """Blocks per real path, in message order; two spellings of one file are one file."""
    grouped: dict[Path, list[Block]] = {}
    for fe in files:
        real = resolve_path(fe.path, root=root, allowed_roots=allowed_roots)
        grouped.setdefault(real, []).extend(fe.blocks)
    return grouped


def plan_edits(files: Sequence[FileEdit], *, root: Path,
               allowed_roots: Sequence[Path] = ()) -> list[FilePlan]:
    """Validate every block of every file against the files as they are; write nothing.

    Raises FsDenied for a path outside the allowed roots, and one EditError listing every
    file whose blocks do not fit (a file's later blocks are not tried after its first miss).
    """
    root = root.resolve()
    allowed = [Path(r).resolve() for r in allowed_roots]
    plans: list[FilePlan] = []
    errors: list[str] = []
    for real, blocks in _group(files, root=root, allowed_roots=allowed).items():
        shown = display_path(real, root)
        try:
            old, mode = _read(real, shown)
            new = _run_blocks(shown, old, blocks)
        except EditError as err:
            errors.append(err.reason)
            continue
        operation = "add" if old is None else "modify" if new != old else "unchanged"
        plans.append(FilePlan(shown, real, operation, old, new, mode, len(blocks)))
    if errors:
        head = "nothing was written; " if len(errors) == 1 else (
            f"{len(errors)} files have blocks that do not fit; nothing was written:\n")
        raise EditError(head + "\n".join(errors))
    return plans
