"""The `apply_edits` tool: validate search/replace edits, preview them, apply them.

The contract is docs/spec.md's "The `apply_edits` tool", after
docs/seeds/004-search-replace-edits.txt; docs/edits.md has the decisions.

    parse (edits.parse) -> plan: resolve paths, read, run blocks in memory (edits.plan)
        -> dry run: per-file results, ACP v2 Diff, symbol changes
        -> apply: atomic multi-file write (edits.write), recorded through a Recorder

Nothing here knows the index: a real apply records through the Recorder it is given
(symdiff.record.applied's IndexRecorder, passed by symdiff.api.apply_edits).

Nothing is written unless every block of every file fits. docs/edits.md has the rules.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from symdiff.attribute.spans import symbol_changes
from symdiff.diffs.acp import FilePatch, build_diff
from symdiff.diffs.linediff import EXECUTABLE_MODE, REGULAR_MODE, diff_lines
from symdiff.edits.parse import parse_edits
from symdiff.edits.plan import FilePlan, display_path, plan_edits
from symdiff.edits.write import Write, commit
from symdiff.errors import EditError, FsDenied, SymdiffError, ToolFailed
from symdiff.parse.languages import language_for
from symdiff.records import of_symbol
from symdiff.workspace import gate as fsgate
from symdiff.workspace.gate import Beneath

__all__ = ["Recorder", "apply_edits"]


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
        "symbols": [of_symbol(s) for s in symbol_changes(language, plan.old, plan.new, diff=diff)],
    }
    if backup is not None:
        out["backup"] = backup
    return out


def _backup_of(plan: FilePlan) -> Beneath:
    where = plan.where
    return Beneath(where.root, (*where.parts[:-1], where.parts[-1] + ".backup"))


def _backup_write(plan: FilePlan) -> Write:
    where = _backup_of(plan)
    path = where.path
    not_regular = EditError(f"cannot keep a backup: {path} exists and is not a regular file")
    try:
        fd = fsgate.open_beneath(where, fsgate.READ_FLAGS)
    except FileNotFoundError:
        return Write(where, None, plan.old or b"", plan.mode)
    except FsDenied:
        if path.is_symlink():
            raise not_regular from None
        raise
    except OSError as exc:
        raise ToolFailed(f"cannot read {path}: {exc.strerror}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise not_regular
        existing = fsgate.read_upto(fd, os.fstat(fd).st_size + 1)
    finally:
        os.close(fd)
    return Write(where, existing, plan.old or b"", plan.mode)


def _writes(plans: Sequence[FilePlan], *, backup: bool) -> list[Write]:
    """Backups first, so that no new content is in place before its backup."""
    changed = [p for p in plans if p.operation != "unchanged"]
    backups = [_backup_write(p) for p in changed if backup and p.old is not None]
    return [*backups, *(Write(p.where, p.old, p.new, p.mode) for p in changed)]


def _preview(plans: Sequence[FilePlan], *, root: Path, backup: bool) -> dict[str, object]:
    """Per-file results, totals and the ACP v2 Diff of validated plans."""
    changed = [p for p in plans if p.operation != "unchanged"]
    files = []
    for p in plans:
        keeps = backup and p.old is not None and p.operation == "modify"
        files.append(_file_result(p, display_path(_backup_of(p).path, root) if keeps else None))
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


class Recorder(Protocol):
    """Where a real apply records its change: the seam to the index (symdiff.record.applied)."""

    def before(self, writes: Mapping[str, bytes]) -> None:
        """Snapshot the files the edit will touch (relative path -> the bytes it will write),
        so that the record holds this edit and nothing someone else changed first, and say
        what the edit will write, so that whoever records it first records an `edit`."""

    def after(self, paths: Sequence[str]) -> list[dict[str, object]]:
        """Record the edit; return the change records."""


def apply_edits(
    edits: object,
    *,
    root: Path,
    write_roots: Sequence[Path] = (),
    dry_run: bool = True,
    backup: bool = False,
    recorder: Recorder | None = None,
) -> dict[str, object]:
    """Validate search/replace `edits` (text or JSON form) and preview or apply them.

    Returns `dry_run`, `applied`, `files` (path, operation, blocks, lines_added,
    lines_removed, language, symbols[, backup]), totals, `acp` (an ACP v2 Diff with its git
    patch) and, after a real apply with a `recorder`, `recorded` (the change records) or
    `record_error`. Raises InvalidArgs, FsDenied, EditError or ToolFailed; on any error
    nothing has been written.

    Args:
        root: the workspace root; relative paths are relative to it, and it may be written.
        write_roots: further directories the edits may write in.
        recorder: records a real apply (paths relative to `root`); None records nothing.
    """
    root = root.resolve()
    plans = plan_edits(parse_edits(edits), root=root, write_roots=write_roots)
    writes = [] if dry_run else _writes(plans, backup=backup)
    result: dict[str, object] = {"dry_run": dry_run, "applied": False,
                                 **_preview(plans, root=root, backup=backup)}
    if dry_run:
        return result
    changed = {p.path: p.new for p in plans
               if p.operation != "unchanged" and p.real.is_relative_to(root)}  # fmt: skip
    rels = list(changed)
    errors: list[str] = []
    if recorder is not None and rels:
        try:
            recorder.before(changed)
        except SymdiffError as err:
            errors.append(err.render())
            recorder = None
    commit(writes)
    result["applied"] = True
    if recorder is not None and rels:
        try:
            result["recorded"] = recorder.after(rels)
        except SymdiffError as err:
            errors.append(err.render())
    if errors:
        result["record_error"] = "; ".join(errors)
    return result
