"""`against`: the work tree as it is now compared with any revision, as change records.

`git diff REF` with the untracked (not ignored) files taken in, renames found by content
similarity among all of them: what a commit of the whole work tree would show against REF.
Read through pygit2 (the tree against the index brought up to the work tree in memory), renames
paired as git pairs them (git/renames.py); nothing is stored, and the records are built by
`attribute/filechange.build_change` like every other record.
Decisions (origin, timestamps, paths, what does not apply): docs/against.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileMode

from symdiff.attribute.filechange import build_change, change_between
from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.errors import InvalidArgs, StoreError
from symdiff.git.lru import Lru
from symdiff.git.state import Repo, git_info, open_repo, snapshot
from symdiff.git.treediff import TreeChange, tree_changes
from symdiff.model import ChangeType, FileChange, Origin, Scope
from symdiff.parse.languages import language_for
from symdiff.parse.shelf import Side, SymbolShelf, keys
from symdiff.parse.testpaths import classify
from symdiff.query.args import DiffQuery, Window, parse
from symdiff.query.patches import file_patch
from symdiff.query.result import Answer
from symdiff.records import of_change
from symdiff.store import PathFilter, Store
from symdiff.store.blobs import git_binary
from symdiff.store.kept import reader, settle, write_behind

if TYPE_CHECKING:
    from symdiff.parse.pool import HeadStart  # the pool loads tree-sitter: only when parsing

_WORKDIR_FLAGS = (DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
                  | DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_TYPECHANGE)  # fmt: skip
_TREE_FLAGS = DiffOption.IGNORE_SUBMODULES | DiffOption.INCLUDE_TYPECHANGE
_GITLINK = 0o160000

log = logging.getLogger(__name__)

# The revision's side of the files that differ, by blob id: asked again, `against` reads from
# the object database only the blobs it has not met. At most 32 MiB.
_held_blobs: Lru[bytes, bytes] = Lru(entries=4096, weight=32 << 20, weigh=len)


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


def changes_against(settings: Settings, ref: str, window: Window, *,
                    now: datetime | None = None, with_bytes: bool = False
                    ) -> tuple[list[tuple[FileChange, bytes | None, bytes | None]], bool]:
    """The files that differ between `ref`'s tree and the work tree and that `window`'s scope,
    origin and path filters select: the first `window.limit` by path, and whether more differ.

    Each with the old and new bytes when `with_bytes` (for patches; None otherwise). Only the
    records answered are built (line counts, symbols): a large difference asked for 50 files
    parses 50.
    """
    repo = open_work_tree(settings.root.resolve())
    base = resolve(repo, check_ref(ref))
    handle = repo.handle
    when = now or datetime.now(UTC)
    origin_info = {"against": base.ref, "commit": base.commit}
    git = git_info(snapshot(repo))
    ids = _BlobIds()
    shelf = SymbolShelf()
    head: list[HeadStart | None] = []

    def head_start(edited: list[TreeChange], deltas: int) -> None:
        """The edited files' parse started on one worker while renames are paired, when the
        answer will hold every file that differs (a limit leaves no guess to make)."""
        if deltas > window.limit:
            return
        sides = [(language, old, ids(old), new, ids(new)) for d in edited
                 if (language := language_for(d.path)) is not None
                 and (old := _text(d.old)) is not None and (new := _text(d.new)) is not None
                 and _selected(d.path, classify(d.path, settings.test_patterns), Origin.SCAN,
                               window)]  # fmt: skip
        _shelf(settings, [(language, old_id, new_id) for language, _, old_id, _, new_id in sides],
               shelf)  # fmt: skip
        head.append(_head_start(shelf, sides))

    try:  # a head start is taken by the batch below, or let go here (the pool is held)
        differ = []
        for d in _tree_changes(handle, repo.workdir, base.commit, head_start, ids):
            kind = d.kind
            if d.new is None and kind is not ChangeType.DELETE:
                if kind is ChangeType.ADD:  # gone since the index saw it: nothing to report
                    continue
                kind = ChangeType.DELETE  # a tracked file gone since: what it is now
            if _selected(d.path, classify(d.path, settings.test_patterns), Origin.SCAN, window):
                differ.append((d, kind))
        differ.sort(key=lambda found: found[0].path)
        answered = [(d, kind, None if d.old is None else ids(d.old),
                     None if d.new is None else ids(d.new)) for d, kind in differ[: window.limit]]
        _shelf(settings, [(language_for(d.path), old_id, new_id)
                          for d, _, old_id, new_id in answered], shelf)  # fmt: skip
        _parse(shelf, [(language, _text(d.old), old_id, _text(d.new), new_id)
                       for d, _, old_id, new_id in answered
                       if (language := language_for(d.path)) is not None],
               head[0] if head else None)  # fmt: skip
    finally:
        for started in head:
            if started is not None:
                started.close()

    out = []
    for d, kind, old_id, new_id in answered:
        old, new = d.old, d.new
        change = build_change(
            kind, d.path, old_path=d.old_path if kind is ChangeType.RENAME else None,
            old=_text(old), new=_text(new), timestamp=when, test_patterns=settings.test_patterns,
            old_hash=old_id, new_hash=new_id, origin=Origin.SCAN, origin_info=origin_info,
            git=None if git is None else dict(git), shelf=shelf,
        )  # fmt: skip
        out.append((change, old if with_bytes else None, new if with_bytes else None))
    _keep(settings, shelf)
    return out, len(differ) > window.limit


def _shelf(settings: Settings, sides: list[tuple[str | None, str | None, str | None]],
           shelf: SymbolShelf) -> None:  # fmt: skip
    """Put on `shelf` what the workspace's database holds for these changes — each pair of
    blobs' line counts and symbol changes, each blob's symbols — (nothing when it has none)."""
    settle(settings.db_url)  # what the answer before stored behind itself
    store = reader(settings.db_url)
    if store is not None:
        pairs = [(language, old, new) for language, old, new in sides
                 if language is not None and old is not None and new is not None]
        try:
            store.load_shelf(shelf, keys(sides), pairs)
        except StoreError as exc:  # a cache: the answer is built without it
            log.warning("cannot read stored symbols: %s", exc)


def _head_start(shelf: SymbolShelf, sides: Sequence[Side]) -> HeadStart | None:
    """The first of the batch sent to a worker (`SymbolShelf.head_start`); None when the
    pool does not take it, or it fails (the batch is then parsed as if it had not begun)."""
    from symdiff.parse.pool import shared

    try:
        return shelf.head_start(shared(), sides, change_between)
    except Exception:
        log.exception("the head start of an against answer failed")
        return None


def _parse(shelf: SymbolShelf, sides: list[Side], head: HeadStart | None) -> None:
    """Parse what the database did not hold in one batch: through the process's parse pool,
    which uses worker processes when the batch is worth it (parse/pool.py); `head`: its first
    jobs, sent while renames were paired. A cache fill: if it fails, each record parses its
    own files as it is built."""
    from symdiff.parse.pool import shared

    try:
        shelf.fill(shared(), sides, change_between, head)
    except Exception:  # a parser bug must cost the batch its head start, never the answer
        log.exception("the batch parse of an against answer failed")


def _text(data: bytes | None) -> bytes | None:
    """Text as git counts it; None when absent or binary (counted 0/0, no symbols)."""
    return None if data is None or git_binary(data) else data


def _keep(settings: Settings, shelf: SymbolShelf) -> None:
    """Store the symbols extracted for this answer, where a database exists (none is made),
    behind the answer: the next `against` on this database waits for it (`_shelf`)."""
    if not shelf.dirty() or reader(settings.db_url) is None:
        return

    def keep(store: Store) -> None:
        try:
            store.keep_shelf(shelf)
        except StoreError as exc:
            log.warning("cannot store the symbols of this answer: %s", exc)

    write_behind(settings.db_url, keep)


def _tree_changes(handle: pygit2.Repository, workdir: Path, commit: str,
                  edited: Callable[[list[TreeChange], int], None], ids: _BlobIds
                  ) -> Iterator[TreeChange]:  # fmt: skip
    """The file changes from the commit's tree to the work tree, renames paired git's way;
    `edited` is called with the edited files and how many files differ, before renames."""
    tree = handle[commit].peel(pygit2.Tree)
    # The work tree as `git add -A` would stage it, in this handle's own index, in memory only:
    # the index's stat cache finds the files that differ from it, only those are read and
    # hashed, and their entries get the ids of their bytes. Nothing is written — not the
    # index, not an object (pygit2's `index.add` would store each file as a loose blob).
    # An entry may name a blob that is not in the object database (it is only on disk); libgit2
    # refuses such entries unless told not to check. A process-wide libgit2 option, harmless
    # here: symdiff never writes a git object.
    pygit2.settings.enable_strict_object_creation(False)
    index = handle.index
    root = str(workdir)
    read: dict[str, bytes | None] = {}
    try:
        for entry in index.diff_to_workdir(flags=_WORKDIR_FLAGS).deltas:
            path = entry.new_file.path
            if path.endswith("/") or _GITLINK in (entry.old_file.mode, entry.new_file.mode):
                continue  # a nested repository or a submodule: git add -A leaves them too
            data = None if entry.status == DeltaStatus.DELETED else _read(root, path)
            read[path] = data
            _stage(index, path, data, entry.new_file.mode, ids)
        diff = tree.diff_to_index(index, flags=_TREE_FLAGS)
    except (pygit2.GitError, KeyError, OSError) as exc:
        raise InvalidArgs(f"cannot compare the work tree with {commit[:12]}: {_reason(exc)}"
                          f"{_shallow_hint(handle)}") from None

    def read_new(file: pygit2.DiffFile) -> bytes | None:
        return read[file.path] if file.path in read else _read(root, file.path)

    deltas = len(diff)
    return tree_changes(diff, read_old=partial(_blob, handle, ids), read_new=read_new,
                        edited=lambda changes: edited(changes, deltas))  # fmt: skip


def _stage(index: pygit2.Index, path: str, data: bytes | None, mode: int,
           ids: _BlobIds) -> None:  # fmt: skip
    """Set one in-memory index entry to the file's content now (None: the file is gone)."""
    if data is None:
        with contextlib.suppress(pygit2.GitError, KeyError, OSError):
            index.remove(path)
        return
    kind = FileMode(mode) if mode in (FileMode.BLOB_EXECUTABLE, FileMode.LINK) else FileMode.BLOB
    index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=ids(data)), kind))


class _BlobIds:
    """The blob ids of one answer's texts, by the texts' identity: the revision's side named
    by git, the work tree's hashed once (when staged), whoever asks after."""

    def __init__(self) -> None:
        self._ids: dict[int, tuple[bytes, str]] = {}  # the text is held: its id stays its own

    def note(self, data: bytes, oid: str) -> None:
        self._ids[id(data)] = (data, oid)

    def __call__(self, data: bytes) -> str:
        found = self._ids.get(id(data))
        if found is not None and found[0] is data:
            return found[1]
        oid = blob_id(data)
        self.note(data, oid)
        return oid


def _blob(handle: pygit2.Repository, ids: _BlobIds, file: pygit2.DiffFile) -> bytes | None:
    data = _read_blob(handle, file)
    if data is not None:
        ids.note(data, str(file.id))
    return data


def _read_blob(handle: pygit2.Repository, file: pygit2.DiffFile) -> bytes | None:
    key = file.id.raw
    data = _held_blobs.get(key)
    if data is not None:
        return data
    try:
        data = handle.odb.read(file.id)[1]  # once: handle[id] would inflate it twice
    except (KeyError, ValueError, pygit2.GitError):
        return None  # a shallow or partial clone without the blob: counted 0/0
    _held_blobs.put(key, data)
    return data


def forget() -> None:
    """Drop the blobs held (for benchmarks: a run as the first one)."""
    _held_blobs.clear()


def _read(root: str, relative: str) -> bytes | None:
    """A work-tree file's content as git hashes it (a symlink: its target); None if gone."""
    path = os.path.join(root, relative)  # not a Path: two hundred of them cost a few ms
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(path))
        if not stat.S_ISREG(st.st_mode):
            return None
        with open(path, "rb") as file:
            return file.read()
    except OSError:
        return None


def _selected(path: str, scope: Scope, origin: Origin, window: Window) -> bool:
    """Whether a record passes the query's scope, origin and path filters."""
    if window.scope is not None and scope is not window.scope:
        return False
    if window.origins is not None and origin.value not in window.origins:
        return False
    return window.paths is None or _path_selected(path, window.paths)


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
    ref = check_ref(query.against)
    for name in ("cursor", "reader", "workspace", "session", "turn", "since_turn"):
        if getattr(query, name) is not None:
            raise InvalidArgs(f"against compares this work tree with a revision now; it takes "
                              f"no {name}")
    window = parse(query)
    found, more = changes_against(settings, ref, window, now=now, with_bytes=query.include_patch)
    records = []
    root = open_work_tree(settings.root.resolve()).workdir
    for change, old, new in found:
        record = of_change(change)
        if query.include_patch:
            record["acp"] = _patch(change, old, new, root)
        records.append(record)
    return Answer(records, more=more)


def _patch(change: FileChange, old: bytes | None, new: bytes | None, root: Path
           ) -> dict[str, object]:  # fmt: skip
    from symdiff.diffs.acp import build_diff

    fp = file_patch(change.change_type.value, change.path, old_path=change.old_path, old=old,
                    new=new)  # fmt: skip
    return build_diff([fp], root=str(root))
