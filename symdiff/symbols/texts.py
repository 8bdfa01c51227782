"""A version's texts: the definition's whole lines on each side of a change, from the stored
snapshots (or, for imported commits, the repository's objects), and its symbol-scoped diff
numbered as in the file. Tree-sitter and pygit2 load only when a text is asked for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symdiff.model import Symbol
from symdiff.store import Store
from symdiff.symbols.lineage import Version

if TYPE_CHECKING:
    from symdiff.diffs.linediff import LineDiff

__all__ = ["Texts", "definition_text", "find_symbol", "split_lines"]

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


def split_lines(source: bytes) -> list[bytes]:
    """Lines split on `\\n` only (as git counts them), each with its newline."""
    parts = source.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def definition_text(source: bytes, sym: Symbol) -> bytes:
    """A definition's whole lines, decorators and comments it spans included."""
    return b"".join(split_lines(source)[sym.start_line - 1 : sym.end_line])


def find_symbol(symbols: Iterable[Symbol], name: str, line: int) -> Symbol | None:
    """The definition called `name` nearest to `line`."""
    named = [s for s in symbols if s.name == name]
    return min(named, key=lambda s: abs(s.start_line - line), default=None)


class Texts:
    """Snapshots and their definitions, each read and extracted once per answer."""

    def __init__(self, store: Store, root: str) -> None:
        self._store = store
        self._root = root
        self._blobs: dict[str, bytes | None] = {}
        self._symbols: dict[tuple[str, str], list[Symbol]] = {}
        self._git: Any = None  # the work tree's repository, opened on first need

    def blob(self, digest: str | None) -> bytes | None:
        if digest is None:
            return None
        if digest not in self._blobs:
            data = self._store.get_blob(digest)
            self._blobs[digest] = self._from_git(digest) if data is None else data
        return self._blobs[digest]

    def _from_git(self, digest: str) -> bytes | None:
        """An imported commit's content: its hash is the git blob id, and the repository keeps
        the bytes (the history import stores no snapshot of its own)."""
        import pygit2  # loaded only for imported commits' texts

        from symdiff.git.state import open_repo

        if self._git is None:
            repo = open_repo(Path(self._root))
            self._git = False if repo is None else repo.handle
        if self._git is False:
            return None
        try:
            return bytes(self._git.odb.read(digest)[1])
        except (KeyError, ValueError, pygit2.GitError):
            return None  # not there: a shallow or partial clone, or another repository

    def symbols(self, digest: str | None, language: str) -> list[Symbol] | None:
        """The definitions of a snapshot (None: no text of it is kept), extracted once."""
        source = self.blob(digest)
        if source is None or digest is None:
            return None
        key = (digest, language)
        if key not in self._symbols:
            from symdiff.parse.extract import extract  # tree-sitter: only when texts are asked for

            self._symbols[key] = extract(language, source)
        return self._symbols[key]

    def side(self, v: Version, *, new: bool) -> tuple[bytes, Symbol] | None:
        """The definition's source and Symbol after (`new`) or before the change."""
        r = v.row
        if r.language is None:
            return None
        line = r.start_line
        if new:
            if v.removed or r.file_change_type == "delete":
                return None
            digest, name = r.new_hash, r.name
        elif v.moved_from is not None:
            digest, name = v.moved_from.old_hash, v.old_name
            line = v.moved_from.start_line
        else:
            if r.change_type == "added" and r.renamed_from is None:
                return None
            if r.file_change_type == "add":
                return None
            digest, name = r.old_hash, v.old_name
        symbols = self.symbols(digest, r.language)
        source = self.blob(digest)
        if symbols is None or source is None:
            return None
        sym = find_symbol(symbols, name, line)
        return None if sym is None else (source, sym)

    def text(self, v: Version) -> bytes | None:
        """The definition's text after the change (None: removed, or not kept)."""
        found = self.side(v, new=True)
        return None if found is None else definition_text(*found)

    def scoped_diff(self, v: Version) -> str | None:
        """The definition's old lines against its new ones, numbered as in the file."""
        old, new = self.side(v, new=False), self.side(v, new=True)
        if old is None and new is None:
            return None
        from symdiff.diffs.linediff import diff_lines, unified_diff

        r = v.row
        old_text = b"" if old is None else definition_text(*old)
        new_text = b"" if new is None else definition_text(*new)
        if old is not None and new is not None:
            shifts = (old[1].start_line - 1, new[1].start_line - 1)
        else:
            old_src = self.blob(r.old_hash) or b""
            new_src = self.blob(r.new_hash) or b""
            file_diff = diff_lines(old_src, new_src)
            if old is None:
                assert new is not None
                shifts = (_anchor(file_diff, new[1].start_line, new_side=True),
                          new[1].start_line - 1)  # fmt: skip
            else:
                shifts = (old[1].start_line - 1,
                          _anchor(file_diff, old[1].start_line, new_side=False))  # fmt: skip
        label_a = "/dev/null" if old is None else f"a/{v.old_path or r.path}"
        label_b = "/dev/null" if new is None else f"b/{r.path}"
        text = unified_diff(old_text, new_text, label_a=label_a, label_b=label_b)
        return _shift_hunks(text, *shifts)


def _anchor(diff: LineDiff, line: int, *, new_side: bool) -> int:
    """The line of the other side after which `line` of one side stands (0: the top)."""
    offset = 0
    for h in diff.hunks:
        start, count = (h.new_start, h.new_count) if new_side else (h.old_start, h.old_count)
        other_start, other_count = ((h.old_start, h.old_count) if new_side
                                    else (h.new_start, h.new_count))  # fmt: skip
        if count and start <= line <= start + count - 1:
            return other_start + other_count - 1 if other_count else other_start
        if start + max(count, 1) - 1 < line:
            offset += other_count - count
    return max(line - 1 + offset, 0)


def _shift_hunks(text: str, old_shift: int, new_shift: int) -> str:
    def shifted(m: re.Match[str]) -> str:
        return (f"@@ -{int(m[1]) + old_shift}{m[2] or ''} "
                f"+{int(m[3]) + new_shift}{m[4] or ''} @@")  # fmt: skip

    return _HUNK.sub(shifted, text)
