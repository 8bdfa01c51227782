"""`against`: the work tree as it is now compared with any revision, as change records.

`git diff REF` with the untracked (not ignored) files taken in, renames found by content
similarity among all of them: what a commit of the whole work tree would show against REF.
Read through pygit2 (the tree against the index brought up to the work tree in memory, then
`find_similar`); nothing is stored,
and the records are built by `filechange.build_change` like every other record.
Decisions (origin, timestamps, paths, what does not apply): docs/against.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, DiffOption

from symdiff.blobid import blob_id
from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.filechange import build_change
from symdiff.gitstate import Repo, git_info, open_repo, snapshot
from symdiff.model import ChangeType, FileChange, Origin
from symdiff.queryargs import DiffQuery, Window, parse
from symdiff.records import of_change
from symdiff.store import PathFilter
from symdiff.store.blobs import git_binary

if TYPE_CHECKING:
    from symdiff.query import Answer

_WORKDIR_FLAGS = (DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
                  | DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_TYPECHANGE)  # fmt: skip
_TREE_FLAGS = DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_TYPECHANGE
# git diff -M: renames (50% similar), exact ones first.
_FIND = DiffFind.FIND_RENAMES
_KINDS = {
    DeltaStatus.ADDED: ChangeType.ADD,
    DeltaStatus.UNTRACKED: ChangeType.ADD,
    DeltaStatus.DELETED: ChangeType.DELETE,
    DeltaStatus.MODIFIED: ChangeType.MODIFY,
    DeltaStatus.TYPECHANGE: ChangeType.MODIFY,
    DeltaStatus.CONFLICTED: ChangeType.MODIFY,
    DeltaStatus.RENAMED: ChangeType.RENAME,
}
_LINK = 0o120000
_GITLINK = 0o160000


@dataclass(frozen=True, slots=True)
class Base:
    """The revision a work tree is compared with."""

    ref: str  # as the caller wrote it
    commit: str  # the sha it resolved to (for `REF...`: the merge base)


def check_ref(value: object) -> str:
    """The `against` argument: a revision git accepts, or `REF...` (the merge base with HEAD)."""
    if (not isinstance(value, str) or not value.strip() or "\0" in value or len(value) > 1000
            or value != value.strip()):
        raise InvalidArgs("against must be a git revision (HEAD, main, v2.1, HEAD~3, a sha) or "
                          f"REF... (its merge base with HEAD), got "
                          f"{json.dumps(value, default=repr)[:200]}")
    if ".." in value.removesuffix("..."):
        raise InvalidArgs(f"against takes one revision (or REF...), not a range: "
                          f"{json.dumps(value)}; the other side is always the work tree")
    return value


def open_work_tree(root: Path) -> Repo:
    """The repository whose work tree holds `root`; InvalidArgs when there is none."""
    repo = open_repo(root)
    if repo is None or repo.handle.is_bare:
        raise InvalidArgs(f"against needs a git work tree: {json.dumps(str(root))} is not inside "
                          "one (or git cannot read it)")
    return repo


def resolve(repo: Repo, ref: str) -> Base:
    """The commit `ref` names (for `REF...`, its merge base with HEAD); InvalidArgs if none."""
    handle = repo.handle
    if ref.endswith("..."):
        left = _commit(handle, ref[:-3] or "HEAD")
        head = _commit(handle, "HEAD")
        try:
            base = handle.merge_base(left, head)
        except (pygit2.GitError, KeyError, ValueError):
            base = None
        if base is None:
            raise InvalidArgs(f"{json.dumps(ref)}: {ref[:-3] or 'HEAD'} and HEAD have no merge "
                              f"base{_shallow_hint(handle)}")
        return Base(ref, str(base))
    return Base(ref, str(_commit(handle, ref)))


def _commit(handle: pygit2.Repository, ref: str) -> pygit2.Oid:
    if ref == "HEAD" and handle.head_is_unborn:
        raise InvalidArgs("HEAD names no commit yet (an unborn branch): commit once, or compare "
                          "against another revision")
    try:
        obj = handle.revparse_single(ref)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        why = _reason(exc)
        why = "no commit, branch or tag has that name" if why == ref else why
        raise InvalidArgs(f"unknown revision {json.dumps(ref)}: {why}"
                          f"{_shallow_hint(handle)}") from None
    return commit.id


def _reason(exc: Exception) -> str:
    text = str(exc).strip("'\" ") or exc.__class__.__name__
    return text if len(text) < 300 else text[:300] + "…"


def _shallow_hint(handle: pygit2.Repository) -> str:
    if handle.is_shallow:
        return ("; this is a shallow clone, so the commit may not have been fetched "
                "(git fetch --unshallow, or --deepen)")
    return ""


def changes_against(settings: Settings, ref: str, *, now: datetime | None = None,
                    with_bytes: bool = False) -> list[tuple[FileChange, bytes | None,
                                                            bytes | None]]:  # fmt: skip
    """Every file that differs between `ref`'s tree and the work tree, sorted by path.

    Each with the old and new bytes when `with_bytes` (for patches; None otherwise).
    """
    repo = open_work_tree(settings.root.resolve())
    base = resolve(repo, check_ref(ref))
    handle = repo.handle
    when = now or datetime.now(UTC)
    origin_info = {"against": base.ref, "commit": base.commit}
    git = git_info(snapshot(repo))
    out = []
    for kind, old_path, path, old, new in _deltas(handle, repo.workdir, base.commit):
        old_text = None if old is None or git_binary(old) else old
        new_text = None if new is None or git_binary(new) else new
        change = build_change(
            kind, path, old_path=old_path if kind is ChangeType.RENAME else None,
            old=old_text, new=new_text, timestamp=when, test_patterns=settings.test_patterns,
            old_hash=None if old is None else blob_id(old),
            new_hash=None if new is None else blob_id(new),
            origin=Origin.SCAN, origin_info=origin_info,
            git=None if git is None else dict(git),
        )  # fmt: skip
        out.append((change, old if with_bytes else None, new if with_bytes else None))
    out.sort(key=lambda c: c[0].path)
    return out


def _deltas(handle: pygit2.Repository, workdir: Path, commit: str
            ) -> Iterator[tuple[ChangeType, str, str, bytes | None, bytes | None]]:  # fmt: skip
    """(kind, old path, path, old bytes, new bytes) of each file the work tree changed."""
    tree = handle[commit].peel(pygit2.Tree)
    # The work tree as `git add -A` would stage it, in this handle's own index, in memory only
    # (never written): the index's stat cache finds the changed files, only those are hashed.
    index = handle.index
    try:
        for delta in index.diff_to_workdir(flags=_WORKDIR_FLAGS).deltas:
            path = delta.new_file.path
            if path.endswith("/") or _GITLINK in (delta.old_file.mode, delta.new_file.mode):
                continue  # a nested repository or a submodule: git add -A leaves them too
            _stage(index, path, deleted=delta.status == DeltaStatus.DELETED)
        diff = tree.diff_to_index(index, flags=_TREE_FLAGS)
        diff.find_similar(flags=_FIND)
    except (pygit2.GitError, KeyError, OSError) as exc:
        raise InvalidArgs(f"cannot compare the work tree with {commit[:12]}: {_reason(exc)}"
                          f"{_shallow_hint(handle)}") from None
    for delta in diff.deltas:
        kind = _KINDS.get(delta.status)
        if kind is None or _GITLINK in (delta.old_file.mode, delta.new_file.mode):
            continue
        path = delta.new_file.path
        old = None if kind is ChangeType.ADD else _blob(handle, delta.old_file.id)
        new = None if kind is ChangeType.DELETE else _read(workdir / path)
        if kind is not ChangeType.DELETE and new is None:
            if kind is ChangeType.ADD:  # vanished since the diff: nothing to report
                continue
            kind = ChangeType.DELETE
        yield kind, delta.old_file.path, path, old, new


def _stage(index: pygit2.Index, path: str, *, deleted: bool) -> None:
    """Bring one index entry to the work tree (a file gone meanwhile leaves the index)."""
    if not deleted:
        try:
            index.add(path)
            return
        except (pygit2.GitError, KeyError, OSError):
            pass
    with contextlib.suppress(pygit2.GitError, KeyError, OSError):
        index.remove(path)


def _blob(handle: pygit2.Repository, oid: pygit2.Oid) -> bytes | None:
    try:
        return bytes(handle[oid].read_raw())
    except (KeyError, ValueError, pygit2.GitError):
        return None  # a shallow or partial clone without the blob: counted 0/0


def _read(path: Path) -> bytes | None:
    """A work-tree file's content as git hashes it (a symlink: its target); None if gone."""
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(path))
        if not stat.S_ISREG(st.st_mode):
            return None
        return path.read_bytes()
    except OSError:
        return None


def selected(change: FileChange, window: Window) -> bool:
    """Whether a record passes the query's scope, origin and path filters."""
    if window.scope is not None and change.scope is not window.scope:
        return False
    if window.origins is not None and change.origin.value not in window.origins:
        return False
    return window.paths is None or _path_selected(change.path, window.paths)


def _path_selected(path: str, paths: PathFilter) -> bool:
    """The SQL rule of `store/changes.py` in Python: the last pattern that matches decides."""
    for regex, selects in reversed(paths.rules):
        if re.search(regex, path):
            return selects
    return paths.default


def answer(settings: Settings, query: DiffQuery, *, now: datetime | None = None) -> Answer:
    """The `diff` query with `against`: the differing files, by path, at most `limit`.

    `scope`, `origin`, `path`, `limit` and `include_patch` apply; `since` does not (a
    comparison has no window); `cursor`, `reader` and `workspace` are refused.
    """
    from symdiff.query import Answer

    ref = check_ref(query.against)
    for name in ("cursor", "reader", "workspace"):
        if getattr(query, name) is not None:
            raise InvalidArgs(f"against compares this work tree with a revision now; it takes "
                              f"no {name}")
    window = parse(query)
    found = [c for c in changes_against(settings, ref, now=now, with_bytes=query.include_patch)
             if selected(c[0], window)]  # fmt: skip
    records = []
    root = open_work_tree(settings.root.resolve()).workdir
    for change, old, new in found[: window.limit]:
        record = of_change(change)
        if query.include_patch:
            record["acp"] = _patch(change, old, new, root)
        records.append(record)
    return Answer(records, more=len(found) > window.limit)


def _patch(change: FileChange, old: bytes | None, new: bytes | None, root: Path
           ) -> dict[str, object]:  # fmt: skip
    from symdiff.acp import FilePatch, build_diff

    op = {"add": "add", "modify": "modify", "delete": "delete", "rename": "move"}[
        change.change_type.value]
    fp = FilePatch(op, change.path, old_path=change.old_path if op == "move" else None,
                   old_bytes=None if op == "add" else old,
                   new_bytes=None if op == "delete" else new)  # fmt: skip
    return build_diff([fp], root=str(root))
