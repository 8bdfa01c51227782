"""A record's patch: the ACP v2 Diff, or the text `git diff` writes, from the bytes before and
after. pygit2 loads only when a patch is asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from symdiff.diffs.acp import FilePatch
    from symdiff.store import Store, StoredChange

# A record's change_type as an ACP v2 Diff names the operation.
OPERATIONS = {"add": "add", "modify": "modify", "delete": "delete", "rename": "move"}


def file_patch(change_type: str, path: str, *, old_path: str | None, old: bytes | None,
               new: bytes | None) -> FilePatch:  # fmt: skip
    """One file's change with its bytes before and after (an add has no before, a delete no
    after, only a move an old path)."""
    from symdiff.diffs.acp import FilePatch

    op = OPERATIONS[change_type]
    return FilePatch(op, path, old_path=old_path if op == "move" else None,
                     old_bytes=None if op == "add" else old,
                     new_bytes=None if op == "delete" else new)  # fmt: skip


def _stored(store: Store, change: StoredChange) -> FilePatch:
    """One stored change with its bytes before and after, from the snapshots."""
    r = change.record
    op = OPERATIONS[r["change_type"]]
    old = None if op == "add" or change.old_hash is None else store.get_blob(change.old_hash)
    new = None if op == "delete" or change.new_hash is None else store.get_blob(change.new_hash)
    return file_patch(r["change_type"], r["path"], old_path=r["old_path"], old=old, new=new)


def change_patch(store: Store, change: StoredChange) -> dict[str, object]:
    """The ACP v2 Diff of one stored change, its git patch rebuilt from the snapshots."""
    from symdiff.diffs.acp import build_diff

    return build_diff([_stored(store, change)], root=change.workspace)


def change_git_patch(store: Store, change: StoredChange) -> str:
    """One stored change as `git diff` writes it: paths relative to the workspace root behind
    `a/` and `b/`, so that plain `git apply` takes it there; "" without text to show."""
    from symdiff.diffs.acp import file_section

    return file_section(_stored(store, change), root=None)
