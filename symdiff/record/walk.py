"""Which paths symdiff tracks, and the walk that finds them.

Not tracked: `.git/`, `.symdiff/`, what nested `.gitignore`s and configured patterns ignore,
and names that are not valid UTF-8.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

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


def undecodable_prefix(rel_path: str) -> str | None:
    """The leading part of a path up to its first name that is not valid UTF-8; None if none.

    Such a name cannot be stored as text (the database, JSON records and agents all take
    UTF-8), so symdiff does not track what lies there; see docs/daemon.md.
    """
    if rel_path.isascii():
        return None
    parts = rel_path.split("/")
    for i, part in enumerate(parts):
        try:
            part.encode("utf-8")
        except UnicodeEncodeError:
            return "/".join(parts[: i + 1])
    return None


def shown(rel_path: str) -> str:
    """A path fit for messages: bytes that are not UTF-8 written as `\\xff`."""
    return rel_path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(slots=True)
class Walk:
    """What a walk found: the tracked regular files, and what it could not look at."""

    files: dict[str, os.stat_result] = field(default_factory=dict)
    # Paths it could not list or stat (-> why): what is stored at or under them may still be
    # there, so it is neither confirmed nor denied.
    unknown: dict[str, str] = field(default_factory=dict)
    # Tracked-looking entries whose name is not valid UTF-8 (directories not entered).
    undecodable: list[str] = field(default_factory=list)

    def update(self, other: Walk) -> None:
        """Add what another walk found."""
        self.files.update(other.files)
        self.unknown.update(other.unknown)
        self.undecodable.extend(other.undecodable)


def walk(root: Path, rules: IgnoreRules, start: str = "") -> Walk:
    """Every tracked regular file under `root/start` (relative POSIX path -> lstat result).

    Symlinks are not followed (a link is not tracked), so a symlink loop cannot trap the walk.
    Directories it cannot list and entries it cannot stat are reported in `unknown`, names
    that are not UTF-8 in `undecodable`; the caller decides what to say about them.
    """
    found = Walk()
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        abs_dir = root / rel_dir if rel_dir else root
        try:
            entries = list(os.scandir(abs_dir))
        except (FileNotFoundError, NotADirectoryError):
            continue  # gone since it was seen: what was under it is gone too
        except OSError as exc:
            found.unknown[rel_dir] = f"cannot list {abs_dir}: {exc.strerror or exc}"
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                _visit(entry, rel, rules, found, stack)
            except FileNotFoundError:
                continue  # gone between the listing and the stat
            except OSError as exc:
                found.unknown[rel] = f"cannot stat {rel}: {exc.strerror or exc}"
    return found


def _visit(entry: os.DirEntry[str], rel: str, rules: IgnoreRules, found: Walk,
           stack: list[str]) -> None:
    """File one directory entry of a walk."""
    if entry.is_symlink():
        return
    is_dir = entry.is_dir(follow_symlinks=False)
    if not is_dir and not entry.is_file(follow_symlinks=False):
        return
    if rules.is_ignored_entry(rel, is_dir=is_dir):
        return
    if undecodable_prefix(entry.name) is not None:
        found.undecodable.append(rel)
    elif is_dir:
        stack.append(rel)
    else:
        found.files[rel] = entry.stat(follow_symlinks=False)
