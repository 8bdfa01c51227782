"""A pygit2 diff (without `find_similar`) → file changes, renames paired as git pairs them.

Shared by `against` (a tree against the work tree) and the history import (a commit against its
first parent): each gives the pygit2 diff and how to read either side's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pygit2

from symdiff.git.renames import Side, find_renames
from symdiff.model import ChangeType

_KINDS = {"A": ChangeType.ADD, "D": ChangeType.DELETE, "M": ChangeType.MODIFY,
          "T": ChangeType.MODIFY, "C": ChangeType.MODIFY}  # fmt: skip
_GITLINK = 0o160000

Read = Callable[[pygit2.DiffFile], bytes | None]


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One file's change: its kind, paths, and bytes before and after (None: absent)."""

    kind: ChangeType
    path: str
    old_path: str | None  # for a rename
    old: bytes | None
    new: bytes | None


def tree_changes(diff: pygit2.Diff, *, read_old: Read, read_new: Read,
                 edited: Callable[[list[TreeChange]], None] | None = None
                 ) -> Iterator[TreeChange]:  # fmt: skip
    """The diff's file changes; added and deleted files paired into renames git's way.

    `edited`: called with the changes that are no add, delete or rename, once all are read and
    before renames are paired (`against` starts their parse meanwhile)."""
    deleted: dict[str, Side] = {}
    added: dict[str, Side] = {}
    others: list[TreeChange] = []
    for entry in diff.deltas:  # pygit2's name for a diff's per-file entries
        kind = _KINDS.get(entry.status_char())
        if kind is None or _GITLINK in (entry.old_file.mode, entry.new_file.mode):
            continue  # unmodified, ignored, or a submodule (no lines, no symbols)
        old_file, new_file = entry.old_file, entry.new_file
        if kind is ChangeType.DELETE:
            deleted[old_file.path] = Side(str(old_file.id), old_file.mode, read_old(old_file))
        elif kind is ChangeType.ADD:
            added[new_file.path] = Side(str(new_file.id), new_file.mode, read_new(new_file))
        else:
            others.append(TreeChange(kind, new_file.path, None, read_old(old_file),
                                     read_new(new_file)))  # fmt: skip
    if edited is not None:
        edited(others)
    renames = find_renames(deleted, added)
    gone = set(renames.values())
    yield from others
    for path, side in added.items():
        if path in renames:
            source = renames[path]
            yield TreeChange(ChangeType.RENAME, path, source, deleted[source].data, side.data)
        else:
            yield TreeChange(ChangeType.ADD, path, None, None, side.data)
    for path, side in deleted.items():
        if path not in gone:
            yield TreeChange(ChangeType.DELETE, path, None, side.data, None)
