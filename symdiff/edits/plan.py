"""Validating search/replace edits: resolve each path, read each file, run its blocks in memory.

Nothing here writes. A file's blocks run in message order against the text the earlier blocks
leave; every file whose blocks do not fit is reported in one error (docs/edits.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.config import MAX_FILE_SIZE
from symdiff.edits.match import line_of, lines_list, near_match, occurrences
from symdiff.edits.parse import Block, FileEdit
from symdiff.errors import EditError, FsDenied, InvalidArgs
from symdiff.workspace import gate as fsgate
from symdiff.workspace.gate import Beneath
from symdiff.workspace.layout import STATE_DIR

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class FilePlan:
    """One file's validated edit: where, what it holds now and what it will hold."""

    path: str  # as shown: relative to the root (POSIX), or absolute outside it
    where: Beneath
    operation: str  # "add" | "modify" | "unchanged"
    old: bytes | None
    new: bytes
    mode: int | None
    blocks: int

    @property
    def real(self) -> Path:
        """The resolved absolute path."""
        return self.where.path


def display_path(real: Path, root: Path) -> str:
    """A path as results show it: relative to the root (POSIX), else absolute."""
    return real.relative_to(root).as_posix() if real.is_relative_to(root) else str(real)


def resolve_path(raw: str, *, root: Path, write_roots: Sequence[Path]) -> Beneath:
    """An edit target, resolved (symlinks and `..`), inside the root or a write root, and
    outside every directory that is never written (fsgate.PROTECTED)."""
    if "\0" in raw:
        raise InvalidArgs(f"path {raw!r} contains a NUL byte")
    p = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    real = fsgate.resolve(p if p.is_absolute() else root / p, raw)
    where = fsgate.locate(real, [root, *write_roots])
    if where is None:
        raise FsDenied(f"{raw} resolves to {real}, outside the allowed roots")
    part = fsgate.protected_part(where)
    if part is not None and part.casefold() == STATE_DIR:
        raise FsDenied(f"{raw} is inside symdiff's own {STATE_DIR}/ directory")
    if part is not None:
        raise FsDenied(f"{raw} is inside {part}/, a version-control directory that apply_edits "
                       "never writes (a planted hook or setting such as core.fsmonitor would "
                       "run code)")
    return where


def _missing(real: Path, shown: str) -> tuple[None, None]:
    """An absent target: fine when its nearest existing ancestor is a directory."""
    parent = real.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise EditError(f"{shown}: {parent} is not a directory")
    return None, None


def _read(where: Beneath, shown: str) -> tuple[bytes | None, int | None]:
    """The bytes and mode of an existing regular file, or (None, None) when absent
    (fsgate.read_regular)."""
    try:
        data, st = fsgate.read_regular(where, MAX_FILE_SIZE, shown)
    except FileNotFoundError:
        return _missing(where.path, shown)
    except fsgate.NotRegular:
        raise EditError(f"{shown} is not a regular file") from None
    if max(st.st_size, len(data)) > MAX_FILE_SIZE:
        raise EditError(f"{shown} is over the {MAX_FILE_SIZE // (1024 * 1024)} MiB edit cap")
    return data, st.st_mode


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
    bom: bool = False  # the file starts with a UTF-8 BOM, held apart while the blocks run


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
        if doc.bom:  # a search copied with the file's BOM still fits its first line
            search, replace = search.removeprefix(BOM), replace.removeprefix(BOM)
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
    search = block.search.removeprefix(BOM) if doc.bom else block.search
    if search == "":
        raise EditError(f"{label}: an empty SEARCH creates a file, but {doc.shown} exists")
    if counts:
        found = counts[0]
        lines = [line_of(doc.text, at) for at in found]
        raise EditError(f"{label}: the search text occurs {len(found)} times (at lines "
                        f"{lines_list(lines)}, counting the earlier blocks' changes); "
                        "add surrounding lines to make it unique")
    if search.startswith(BOM) and not doc.bom:
        raise EditError(f"{label}: the search text was not found: it starts with a UTF-8 byte "
                        f"order mark (U+FEFF) that {doc.shown} does not have; drop it")
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
        # A BOM is not part of the first line: a search without it must still match there.
        bom = text.startswith(BOM)
        text = text.removeprefix(BOM)
        doc = _Doc(shown, text, _eol(text), bom=bom)
        # Whole-line blocks can then match a last line that has no newline; it is removed again.
        if text and not text.endswith("\n"):
            doc.text, doc.virtual_eol = text + doc.eol, True
    for block in blocks:
        _apply_block(doc, block)
    assert doc.text is not None
    new = doc.text
    if doc.virtual_eol and new.endswith(doc.eol):
        new = new[: -len(doc.eol)]
    return ((BOM if doc.bom else "") + new).encode("utf-8")


def _group(files: Sequence[FileEdit], *, root: Path, write_roots: Sequence[Path]
           ) -> dict[Beneath, list[Block]]:
    """Blocks per resolved path, in message order; two spellings of one file are one file."""
    grouped: dict[Beneath, list[Block]] = {}
    for fe in files:
        where = resolve_path(fe.path, root=root, write_roots=write_roots)
        grouped.setdefault(where, []).extend(fe.blocks)
    return grouped


def plan_edits(files: Sequence[FileEdit], *, root: Path,
               write_roots: Sequence[Path] = ()) -> list[FilePlan]:
    """Validate every block of every file against the files as they are; write nothing.

    Raises FsDenied for a path outside the root and the write roots, and one EditError listing
    every file whose blocks do not fit (a file's later blocks are not tried after its first
    miss).
    """
    root = root.resolve()
    allowed = [Path(r).resolve() for r in write_roots]
    plans: list[FilePlan] = []
    errors: list[str] = []
    for where, blocks in _group(files, root=root, write_roots=allowed).items():
        shown = display_path(where.path, root)
        try:
            old, mode = _read(where, shown)
            new = _run_blocks(shown, old, blocks)
        except EditError as err:
            errors.append(err.reason)
            continue
        operation = "add" if old is None else "modify" if new != old else "unchanged"
        plans.append(FilePlan(shown, where, operation, old, new, mode, len(blocks)))
    if errors:
        head = "nothing was written; " if len(errors) == 1 else (
            f"{len(errors)} files have blocks that do not fit; nothing was written:\n")
        raise EditError(head + "\n".join(errors))
    return plans
