"""Which paths symdiff ignores: `.git/`, `.symdiff/`, nested `.gitignore`s, configured patterns."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

import pathspec

log = logging.getLogger(__name__)

ALWAYS_IGNORED = frozenset({".git", ".symdiff"})
# apply_edits stages files as `.<name>.<random>.symdiff-tmp` before renaming them into place.
TEMP_SUFFIX = ".symdiff-tmp"


class IgnoreRules:
    """Git's ignore semantics: one spec per directory that has a `.gitignore`, deeper ones win.

    Specs are loaded lazily per directory and cached for the life of the object: each reconcile
    pass makes its own, so a changed `.gitignore` takes effect at the next pass.
    """

    def __init__(self, root: Path, patterns: Sequence[str] = ()) -> None:
        self.root = root
        self._configured = pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def _spec_for(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            path = self.root / rel_dir / ".gitignore" if rel_dir else self.root / ".gitignore"
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._specs[rel_dir] = None
            else:
                self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines)
        return self._specs[rel_dir]

    def _decide(self, rel_path: str, is_dir: bool) -> bool:
        """Whether this entry itself matches (its parent directories are not checked)."""
        name = rel_path.rsplit("/", 1)[-1]
        if name in ALWAYS_IGNORED or name.endswith(TEMP_SUFFIX):
            return True
        probe = rel_path + "/" if is_dir else rel_path
        ignored = False
        if self._configured is not None:
            res = self._configured.check_file(probe)
            if res.include is not None:
                ignored = res.include
        parts = rel_path.split("/")
        for depth in range(len(parts)):
            rel_dir = "/".join(parts[:depth])
            spec = self._spec_for(rel_dir)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            res = spec.check_file(sub)
            if res.include is not None:
                ignored = res.include
        return ignored

    def is_ignored_entry(self, rel_path: str, *, is_dir: bool) -> bool:
        """Whether an entry is ignored, given that its parent directory is not (for walking)."""
        return self._decide(rel_path, is_dir)

    def is_ignored(self, rel_path: str, *, is_dir: bool = False) -> bool:
        """Whether a path is ignored, checking every ancestor directory too (for single events)."""
        parts = rel_path.split("/")
        for i in range(1, len(parts)):
            if self._decide("/".join(parts[:i]), True):
                return True
        return self._decide(rel_path, is_dir)


def walk(root: Path, rules: IgnoreRules, start: str = "") -> dict[str, os.stat_result]:
    """Every tracked regular file under `root/start`: relative POSIX path -> lstat result.

    Symlinks are not followed (a link is not tracked), so a symlink loop cannot trap the walk;
    unreadable directories are skipped with a warning.
    """
    found: dict[str, os.stat_result] = {}
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        abs_dir = root / rel_dir if rel_dir else root
        try:
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            log.warning("cannot list %s: %s", abs_dir, exc.strerror or exc)
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not rules.is_ignored_entry(rel, is_dir=True):
                        stack.append(rel)
                elif entry.is_file(follow_symlinks=False) and not rules.is_ignored_entry(
                    rel, is_dir=False
                ):
                    found[rel] = entry.stat(follow_symlinks=False)
            except OSError as exc:
                log.warning("cannot stat %s: %s", rel, exc.strerror or exc)
    return found
