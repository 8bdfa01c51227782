"""The `apply_edits` tool (seed 004): validate search/replace edits, preview them, apply them.

    parse (edits_parse) -> resolve paths -> read -> run blocks in memory (edits_match)
        -> dry run: per-file results, ACP v2 Diff, symbol changes
        -> apply: atomic multi-file write (edits_write), then record in the index

Nothing is written unless every block of every file fits. docs/edits.md has the rules.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from symdiff.acp import FilePatch, build_diff
from symdiff.attribute import symbol_changes
from symdiff.config import MAX_FILE_SIZE, STATE_DIR, Settings
from symdiff.edits_match import line_of, lines_list, near_match, occurrences
from symdiff.edits_parse import Block, FileEdit, parse_edits
from symdiff.edits_write import Write, commit
from symdiff.errors import EditError, FsDenied, InvalidArgs, SymdiffError, ToolFailed
from symdiff.languages import language_for
from symdiff.linediff import EXECUTABLE_MODE, REGULAR_MODE, diff_lines
from symdiff.records import of_change, of_symbol

if TYPE_CHECKING:  # the store pulls in SQLAlchemy; a dry run needs none of it
    from symdiff.model import FileChange
    from symdiff.store import Store

__all__ = ["FilePlan", "apply_edits", "plan_edits"]


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


def _display(real: Path, root: Path) -> str:
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
        shown = _display(real, root)
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


def _git_mode(mode: int | None) -> int:
    return EXECUTABLE_MODE if mode is not None and mode & 0o111 else REGULAR_MODE


def _file_result(plan: FilePlan, backup: str | None) -> dict[str, object]:
    language = language_for(plan.path)
    diff = diff_lines(plan.old or b"", plan.new)
    out: dict[str, object] = {
        "path": plan.path,
        "operation": plan.operation,
        "blocks": plan.blocks,
        "lines_added": diff.lines_added,
        "lines_removed": diff.lines_removed,
        "language": language,
        "symbols": [of_symbol(s) for s in symbol_changes(language, plan.old, plan.new)],
    }
    if backup is not None:
        out["backup"] = backup
    return out


def _backup_path(plan: FilePlan) -> Path:
    return plan.real.with_name(plan.real.name + ".backup")


def _backup_write(plan: FilePlan) -> Write:
    path = _backup_path(plan)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Write(path, None, plan.old or b"", plan.mode)
    if not stat.S_ISREG(st.st_mode):
        raise EditError(f"cannot keep a backup: {path} exists and is not a regular file")
    return Write(path, path.read_bytes(), plan.old or b"", plan.mode)


def _writes(plans: Sequence[FilePlan], *, backup: bool) -> list[Write]:
    """Backups first, so that no new content is in place before its backup."""
    changed = [p for p in plans if p.operation != "unchanged"]
    backups = [_backup_write(p) for p in changed if backup and p.old is not None]
    return [*backups, *(Write(p.real, p.old, p.new, p.mode) for p in changed)]


@contextlib.contextmanager
def _index(settings: Settings, store: Store | None) -> Iterator[Store]:
    """The caller's store, or the workspace's own, opened for the duration."""
    if store is not None:
        yield store
        return
    from symdiff.api import open_store

    with open_store(settings) as opened:
        yield opened


def _reconcile(
    store: Store, settings: Settings, rels: Sequence[str], *, baseline: bool | None = None
) -> list[FileChange]:
    from symdiff.indexer import reconcile

    return list(reconcile(store, settings, paths=rels, baseline=baseline).changes)


def _preview(plans: Sequence[FilePlan], *, root: Path, backup: bool) -> dict[str, object]:
    """Per-file results, totals and the ACP v2 Diff of validated plans."""
    changed = [p for p in plans if p.operation != "unchanged"]
    files = []
    for p in plans:
        keeps = backup and p.old is not None and p.operation == "modify"
        files.append(_file_result(p, _display(_backup_path(p), root) if keeps else None))
    acp = build_diff(
        [FilePatch(p.operation, str(p.real), old_bytes=p.old, new_bytes=p.new,
                   mode=_git_mode(p.mode)) for p in changed],
        root=str(root),
    )
    return {
        "files": files,
        "lines_added": sum(int(str(f["lines_added"])) for f in files),
        "lines_removed": sum(int(str(f["lines_removed"])) for f in files),
        "acp": acp,
    }


def _render(err: Exception) -> str:
    return err.render() if isinstance(err, SymdiffError) else f"store_error: {err}"


def apply_edits(
    edits: object,
    *,
    settings: Settings,
    allow: Sequence[Path] = (),
    dry_run: bool = True,
    backup: bool = False,
    store: Store | None = None,
    record: bool = True,
) -> dict[str, object]:
    """Validate search/replace `edits` (text or JSON form) and preview or apply them.

    Returns `dry_run`, `applied`, `files` (path, operation, blocks, lines_added,
    lines_removed, language, symbols[, backup]), totals, `acp` (an ACP v2 Diff with its git
    patch) and, after a real apply, `recorded` (the change records the index now holds) or
    `record_error`. Raises InvalidArgs, FsDenied, EditError or ToolFailed; on any error
    nothing has been written.

    Args:
        store: the workspace's open store for recording; None opens it from `settings`.
        record: False skips recording in the index (the daemon will see the write anyway).
    """
    root = settings.root.resolve()
    plans = plan_edits(parse_edits(edits), root=root, allowed_roots=allow)
    writes = [] if dry_run else _writes(plans, backup=backup)
    result: dict[str, object] = {"dry_run": dry_run, "applied": False,
                                 **_preview(plans, root=root, backup=backup)}
    if dry_run:
        return result
    rels = [p.path for p in plans if p.operation != "unchanged" and p.real.is_relative_to(root)]
    errors: list[str] = []
    with contextlib.ExitStack() as stack:
        index: Store | None = None
        if record and rels:
            try:
                index = stack.enter_context(_index(settings, store))
                # Snapshot the files first, so that the record holds this edit and nothing
                # someone else changed before it.
                _reconcile(index, settings, rels)
            except SymdiffError as err:
                errors.append(_render(err))
                index = None
        commit(writes)
        result["applied"] = True
        if index is not None:
            try:
                # The edit itself is a change even in a workspace never fully indexed (whose
                # files the first reconcile above took as its baseline).
                done = _reconcile(index, settings, rels, baseline=False)
                result["recorded"] = [of_change(c) for c in done]
            except SymdiffError as err:
                errors.append(_render(err))
    if errors:
        result["record_error"] = "; ".join(errors)
    return result
