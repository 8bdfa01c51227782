"""The history import: the first-parent commits of the current branch → change records.

One record per file per commit, as `git log --first-parent -M --numstat` lists them: the
commit's tree against its first parent's (the empty tree for a root commit), renames paired
as git pairs them (git/renames.py), timestamp = the committer time, `origin: "commit"` with
`{sha, author, summary}`.
Records already imported (keyed by sha and path) are not recorded again, so importing twice
adds nothing and a longer window adds only what is missing. docs/history.md.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial

import pygit2
from pygit2.enums import SortMode

from symdiff.attribute.filechange import build_change, change_between
from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.errors import InvalidArgs, StoreError
from symdiff.git.state import Repo, open_repo
from symdiff.git.treediff import tree_changes
from symdiff.model import ChangeType, Origin
from symdiff.parse.languages import language_for
from symdiff.parse.pool import HEAD_BYTES, HeadStart, shared
from symdiff.parse.shelf import Side, SymbolShelf, keys
from symdiff.store import Mutation, Store
from symdiff.store.blobs import git_binary
from symdiff.store.imported import imported_keys
from symdiff.workspace.lock import history_lock

_BATCH = 500
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one import did: commits walked, records added, records already there."""

    commits: int
    recorded: int
    already: int


def import_history(
    settings: Settings,
    store: Store,
    *,
    since: timedelta | None = None,
    max_commits: int | None = None,
    now: datetime | None = None,
) -> ImportReport:
    """Import the first-parent history of the branch checked out at `settings.root`.

    `since`: only commits whose committer time is within it (the walk stops at the first older
    one); `max_commits`: at most that many commits, newest first. InvalidArgs outside a git work
    tree or on an unborn branch.
    """
    repo = open_repo(settings.root)
    if repo is None or repo.handle.is_bare:
        raise InvalidArgs(f"history import needs a git work tree: {str(settings.root)!r} is not "
                          "inside one (or git cannot read it)")
    if repo.handle.head_is_unborn:
        raise InvalidArgs("the current branch has no commit yet: there is no history to import")
    if max_commits is not None and max_commits < 1:
        raise InvalidArgs(f"max-commits must be a positive integer, got {max_commits}")
    cutoff = None if since is None else (now or datetime.now(UTC)) - since
    ws = store.ensure_workspace(str(settings.root), settings.host)
    with history_lock(settings.root):  # one import of a workspace at a time (workspace/lock.py)
        return _import(repo, settings, store, ws.id, cutoff, max_commits)


def _import(repo: Repo, settings: Settings, store: Store, workspace_id: int,
            cutoff: datetime | None, max_commits: int | None) -> ImportReport:  # fmt: skip
    have = imported_keys(store, workspace_id)
    prefix = _prefix(repo, settings)
    commits = recorded = already = 0
    batch = _Batch()
    try:  # a head start is taken by its batch's parse, or let go here (the pool is held)
        for commit in _first_parent(repo.handle, cutoff, max_commits):
            commits += 1
            sha = str(commit.id)
            for found in _commit_changes(repo.handle, commit, prefix):
                if (sha, found.path) in have:  # imported before: not read again, not parsed
                    already += 1
                    continue
                batch.add(found)
                have.add((sha, found.path))
            if len(batch.found) >= _BATCH:
                recorded += _record(store, workspace_id, settings, batch)
                batch = _Batch()
            else:
                batch.head_start(store)
        recorded += _record(store, workspace_id, settings, batch)
    finally:
        batch.close()
    return ImportReport(commits, recorded, already)


class _Batch:
    """Changes read from git and not yet recorded, the shelf of their symbols, and the head
    start of their parse."""

    def __init__(self) -> None:
        self.found: list[_Found] = []
        self.shelf = SymbolShelf(pairs=False)  # a commit's change is not asked about again
        self.head: HeadStart | None = None
        self._bytes = 0  # of the texts to parse
        self._started = False

    def add(self, found: _Found) -> None:
        self.found.append(found)
        if language_for(found.path) is not None:
            self._bytes += len(found.old or b"") + len(found.new or b"")

    def sides(self) -> list[Side]:
        """What `SymbolShelf.fill` parses: each change of a language we parse."""
        return [(language, _text(f.old), f.old_id, _text(f.new), f.new_id)
                for f in self.found if (language := language_for(f.path))]  # fmt: skip

    def load(self, store: Store) -> None:
        """Put on the shelf what the store holds of these changes' blobs (each asked once)."""
        store.load_shelf(self.shelf, keys((language_for(f.path), f.old_id, f.new_id)
                                          for f in self.found))  # fmt: skip

    def head_start(self, store: Store) -> None:
        """Once the batch holds a head start's worth of texts, send their parse to one
        worker (`SymbolShelf.head_start`), which parses them while git is read for the rest;
        once a batch. A failure here leaves the batch to be parsed as if it had not begun."""
        if self._started or self._bytes < HEAD_BYTES:
            return
        self._started = True
        try:
            self.load(store)
            self.head = self.shelf.head_start(shared(), self.sides(), change_between)
        except Exception:
            log.exception("the head start of imported commits failed")

    def close(self) -> None:
        """Let go of a head start not taken (the pool is held until then)."""
        if self.head is not None:
            self.head.close()


def _record(store: Store, workspace_id: int, settings: Settings, batch: _Batch) -> int:
    """Build and store a batch's records; their blobs' symbols are read from the store where
    an earlier import, the daemon or `against` stored them, and the rest stored after."""
    if not batch.found:
        return 0
    shelf = batch.shelf
    batch.load(store)  # (the caller lets go of a head start when this raises)
    try:  # what the store lacks, in one batch (worker processes when worth it)
        shelf.fill(shared(), batch.sides(), change_between, batch.head)
    except Exception:  # each record then parses its own files as it is built
        log.exception("the batch parse of imported commits failed")
    changes = [build_change(
        f.kind, f.path, old_path=f.old_path, old=_text(f.old), new=_text(f.new),
        timestamp=f.commit.when, test_patterns=settings.test_patterns, old_hash=f.old_id,
        new_hash=f.new_id, origin=Origin.COMMIT, origin_info=f.commit.info, git=f.commit.git,
        shelf=shelf) for f in batch.found]  # fmt: skip
    recorded = len(store.apply(workspace_id, [Mutation(change=c) for c in changes]))
    try:
        store.keep_shelf(shelf)
    except StoreError as exc:  # a cache: the records are in
        log.warning("cannot store the symbols of imported blobs: %s", exc)
    return recorded


def _prefix(repo: Repo, settings: Settings) -> str:
    """The workspace root's path inside the work tree ("" at its top, else "sub/dir/")."""
    rel = os.path.relpath(settings.root.resolve(), repo.workdir.resolve())
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"


def _first_parent(handle: pygit2.Repository, cutoff: datetime | None,
                  max_commits: int | None) -> Iterator[pygit2.Commit]:  # fmt: skip
    walker = handle.walk(handle.head.target, SortMode.NONE)
    walker.simplify_first_parent()
    for n, commit in enumerate(walker):
        if max_commits is not None and n >= max_commits:
            return
        if cutoff is not None and _committed(commit) < cutoff:
            return
        yield commit


def _committed(commit: pygit2.Commit) -> datetime:
    return datetime.fromtimestamp(commit.commit_time, UTC)


@dataclass(frozen=True, slots=True)
class _Commit:
    """What every record of one commit carries."""

    when: datetime
    info: dict[str, object]
    git: dict[str, object]


@dataclass(frozen=True, slots=True)
class _Found:
    """One file's change in a commit, read but not yet parsed (paths under the workspace)."""

    commit: _Commit
    kind: ChangeType
    path: str
    old_path: str | None
    old: bytes | None
    new: bytes | None
    old_id: str | None
    new_id: str | None


def _commit_changes(handle: pygit2.Repository, commit: pygit2.Commit,
                    prefix: str) -> Iterator[_Found]:  # fmt: skip
    """The file changes of one commit against its first parent, in git's order."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    author = commit.author
    info: dict[str, object] = {"sha": str(commit.id), "author": f"{author.name} <{author.email}>",
                               "summary": (commit.message.splitlines() or [""])[0]}  # fmt: skip
    git: dict[str, object] = {
        "branch": handle.head.shorthand if not handle.head_is_detached else None,
        "head": str(commit.id)}  # fmt: skip
    made = _Commit(_committed(commit), info, git)
    read = partial(_raw, handle)
    for d in tree_changes(diff, read_old=read, read_new=read):
        if not d.path.startswith(prefix) or (d.old_path is not None
                                             and not d.old_path.startswith(prefix)):  # fmt: skip
            continue
        yield _Found(made, d.kind, d.path.removeprefix(prefix),
                     None if d.old_path is None else d.old_path.removeprefix(prefix),
                     d.old, d.new, None if d.old is None else blob_id(d.old),
                     None if d.new is None else blob_id(d.new))  # fmt: skip


def _raw(handle: pygit2.Repository, file: pygit2.DiffFile) -> bytes | None:
    """A blob's bytes; None when missing (a shallow or partial clone)."""
    try:
        return handle.odb.read(file.id)[1]  # once: handle[id] would inflate it twice
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _text(data: bytes | None) -> bytes | None:
    """Text, or None when absent or binary (git's NUL rule: counted 0/0, no symbols)."""
    return None if data is None or git_binary(data) else data


WATCH_WINDOW = timedelta(hours=720)


def import_in_background(settings: Settings) -> threading.Thread:
    """`symdiff watch`'s import of the last 720h, on a thread of its own with its own Store.

    Never raises: outside git or on an unborn branch there is nothing to import (logged at
    info); any other failure is logged. A daemon thread: a watcher stopped mid-import leaves
    whole batches behind, and its next start imports the rest (the import is idempotent).
    """

    def run() -> None:
        try:
            with Store(settings.db_url) as store:
                report = import_history(settings, store, since=WATCH_WINDOW)
        except InvalidArgs as exc:
            log.info("no git history imported: %s", exc.reason)
        except Exception:  # the watcher must survive whatever the import meets
            log.exception("the git history import failed")
        else:
            log.info("git history: %d commits of the last 720h, %d changes recorded (%d were "
                     "already)", report.commits, report.recorded, report.already)

    thread = threading.Thread(target=run, name="symdiff-history", daemon=True)
    thread.start()
    return thread
