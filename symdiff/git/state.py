"""Who changed the work tree: git's moving parts, read from the repository itself.

The daemon takes one `snapshot` when a batch of file events is recorded; `git_origin(previous,
current)` then says whether a git command ran between the two batches, and which one: from the
newest entry of HEAD's reflog, the stash reflog, an operation's state files (MERGE_HEAD,
rebase-merge/, ...), a moved HEAD, or a lock git holds while it writes (`index.lock`,
`HEAD.lock`). It is never guessed from how many files changed. What this can and cannot see,
and how the daemon must use it: docs/provenance.md.

A snapshot stays cheap however old the repository: it resolves HEAD (pygit2), reads the last
line of two reflogs from their end (libgit2 would parse every entry) and stats a few files. It
walks no history and never reads the index.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import ReferenceType, RepositoryState

# pydantic (the MCP SDK's schemas) needs typing_extensions' TypedDict on Python 3.11.
from typing_extensions import TypedDict

UNKNOWN = "unknown-git"
"""The operation when git evidently ran but left no entry that names it."""

_IN_PROGRESS = {
    RepositoryState.MERGE: "merge",
    RepositoryState.REVERT: "revert",
    RepositoryState.REVERT_SEQUENCE: "revert",
    RepositoryState.CHERRYPICK: "cherry-pick",
    RepositoryState.CHERRYPICK_SEQUENCE: "cherry-pick",
    RepositoryState.BISECT: "bisect",
    RepositoryState.REBASE: "rebase",
    RepositoryState.REBASE_INTERACTIVE: "rebase",
    RepositoryState.REBASE_MERGE: "rebase",
    RepositoryState.APPLY_MAILBOX: "am",
    RepositoryState.APPLY_MAILBOX_OR_REBASE: "am",
}
_ACTION = re.compile(r"[a-z][a-z0-9-]*")
_LOCKS = ("index.lock", "HEAD.lock")  # held by a git command writing the work tree or HEAD
_TAIL_CHUNK = 4096
_SETTLE_TRIES = 40
_SETTLE_S = 0.0005
_BROKEN = (pygit2.GitError, KeyError, ValueError, OSError)  # what a broken repository raises


@dataclass(frozen=True, slots=True)
class Repo:
    """An open repository and the paths a snapshot looks at."""

    handle: pygit2.Repository
    workdir: Path
    gitdir: Path  # this work tree's: HEAD, its reflog, index.lock, the operation state files
    commondir: Path  # shared by all work trees: refs/stash and its reflog


@dataclass(frozen=True, slots=True)
class ReflogTip:
    """A cheap marker of one reflog: its length and its newest entry, read from the end."""

    size: int = 0  # bytes through the newest complete entry; 0 when there is no reflog
    line: str = ""  # that entry as written: "<old> <new> <name> <email> <time> <tz>\t<message>"


@dataclass(frozen=True, slots=True)
class RepoState:
    """A snapshot of a repository's moving parts, taken once per daemon batch."""

    head: str | None  # the commit HEAD points to; None on an unborn branch
    branch: str | None  # the short branch name; None when HEAD is detached
    head_reflog: ReflogTip
    stash_reflog: ReflogTip
    locked: bool  # a git command is writing right now: index.lock or HEAD.lock exists
    operation: str | None  # in progress: rebase, merge, cherry-pick, revert, am or bisect


class GitInfo(TypedDict):
    """Where the repository stood when a change was recorded."""

    branch: str | None
    head: str | None


class GitOrigin(TypedDict):
    """The git command that changed the work tree between two snapshots."""

    operation: str
    head_before: str | None
    head_after: str | None


def open_repo(root: Path) -> Repo | None:
    """The repository whose work tree holds `root`; None outside one, bare or unreadable."""
    try:
        found = pygit2.discover_repository(str(root))
        if found is None:
            return None
        handle = pygit2.Repository(found)
        if handle.is_bare or handle.workdir is None or handle.path is None:
            return None
        _head(handle)  # a HEAD git itself could not read makes this no repository
        gitdir = Path(handle.path)
        return Repo(handle, Path(handle.workdir), gitdir, _commondir(gitdir))
    except _BROKEN:
        return None


def snapshot(repo: Repo) -> RepoState:
    """The repository's state now; never raises (an unreadable part reads as absent)."""
    head, branch, tip, in_flight = _head_and_tip(repo)
    return RepoState(
        head=head,
        branch=branch,
        head_reflog=tip,
        stash_reflog=_tip(repo.commondir / "logs" / "refs" / "stash"),
        locked=in_flight or any(os.path.lexists(repo.gitdir / n) for n in _LOCKS),
        operation=_in_progress(repo.handle),
    )


def git_info(state: RepoState | None) -> GitInfo | None:
    """The branch and head to store with a record; None outside git."""
    if state is None:
        return None
    return {"branch": state.branch, "head": state.head}


def git_origin(before: RepoState, after: RepoState) -> GitOrigin | None:
    """The git command that ran between two snapshots; None when nothing git-ish happened."""
    operation = _operation_between(before, after)
    if operation is None:
        return None
    return {"operation": operation, "head_before": before.head, "head_after": after.head}


def _operation_between(before: RepoState, after: RepoState) -> str | None:
    stash_moved = _moved(before.stash_reflog, after.stash_reflog)
    if stash_moved and before.head == after.head:
        return "stash"  # a push also logs "reset: moving to HEAD"; pop and drop log only here
    if _moved(before.head_reflog, after.head_reflog):
        action = _action(after.head_reflog.line)
        if action == "checkout" and "bisect" in (before.operation, after.operation):
            return "bisect"  # bisect's checkouts log as checkouts
        return action
    if stash_moved:
        return "stash"
    if after.operation != before.operation:  # started, or ended without a reflog entry
        return after.operation or before.operation
    # HEAD moved with no reflog entry: reflogs are switched off. (A branch switch at the same
    # commit writes no file, so only the commit counts.)
    if before.head != after.head or before.locked or after.locked:
        return UNKNOWN
    return None


def _moved(before: ReflogTip, after: ReflogTip) -> bool:
    """A different newest entry, or the same text written again (it grew).

    A reflog rewritten with the same newest entry (`git reflog expire`, `gc`) has not moved.
    """
    return after.line != before.line or after.size > before.size


def _action(line: str) -> str:
    """The command that wrote a reflog entry: its message's first word.

    "checkout: moving from a to b", "merge feature: Fast-forward", "rebase (finish): ...",
    "pull --rebase origin main (start): ...", "commit (amend): ..." name checkout, merge,
    rebase, pull and commit. `git switch` logs as checkout.
    """
    words = line.partition("\t")[2].split(maxsplit=1)
    word = words[0].rstrip(":").lower() if words else ""
    return word if _ACTION.fullmatch(word) else UNKNOWN


def _head(handle: pygit2.Repository) -> tuple[str | None, str | None]:
    """(commit, short branch name) HEAD stands on; raises what a broken repository raises."""
    ref = handle.lookup_reference("HEAD")
    if ref.type != ReferenceType.SYMBOLIC:
        return str(ref.target), None
    name = str(ref.target)
    branch = name.removeprefix("refs/heads/")
    try:
        return str(ref.resolve().target), branch
    except KeyError:  # pygit2.NotFoundError: the branch has no commit yet
        return None, branch


def _head_and_tip(repo: Repo) -> tuple[str | None, str | None, ReflogTip, bool]:
    """HEAD and the newest entry of its reflog, as a pair that agrees (else: in flight, True).

    A ref update holds HEAD.lock while HEAD and its reflog disagree: a branch moved through
    HEAD is renamed into place before HEAD's entry is appended; a detached or switched HEAD
    is renamed after it. A snapshot that lands in between reads again until the update has
    finished (at most _SETTLE_TRIES x _SETTLE_S, then the update is reported in flight); a tip
    that disagrees twice with no lock is stale.
    """
    log = repo.gitdir / "logs" / "HEAD"
    unlocked = 0
    for _ in range(_SETTLE_TRIES):
        head, branch = _safe_head(repo.handle)
        tip = _tip(log)
        if not tip.line or _new_head(tip.line) == head:
            return head, branch, tip, False
        if os.path.lexists(repo.gitdir / "HEAD.lock"):
            unlocked = 0
            time.sleep(_SETTLE_S)
        else:
            unlocked += 1
            if unlocked == 2:  # twice with no update in flight: the tip is stale (reflog surgery)
                return head, branch, tip, False
    return head, branch, tip, True


def _new_head(line: str) -> str | None:
    """The commit a reflog entry moved its ref to (None for the zero id)."""
    parts = line.split(" ", 2)
    new = parts[1] if len(parts) > 2 else ""
    return None if new.strip("0") == "" else new


def _safe_head(handle: pygit2.Repository) -> tuple[str | None, str | None]:
    try:
        return _head(handle)
    except _BROKEN:
        return None, None


def _in_progress(handle: pygit2.Repository) -> str | None:
    try:
        return _IN_PROGRESS.get(handle.state())
    except _BROKEN:
        return None


def _commondir(gitdir: Path) -> Path:
    """A linked work tree's gitdir names the shared one in its `commondir` file."""
    try:
        text = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    return Path(os.path.normpath(gitdir / text)) if text else gitdir


def _tip(path: Path) -> ReflogTip:
    """The newest complete entry of a reflog, read backwards from its end.

    An entry still being appended (no newline yet) is not there yet: the next snapshot sees it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ReflogTip()
    try:
        size = os.fstat(fd).st_size
        window = _TAIL_CHUNK
        while True:
            start = max(0, size - window)
            data = os.pread(fd, size - start, start)
            end = data.rfind(b"\n")
            begin = data.rfind(b"\n", 0, max(end, 0)) + 1
            if start == 0 or (end >= 0 and begin > 0):
                if end < 0:
                    return ReflogTip()
                return ReflogTip(start + end + 1, data[begin:end].decode("utf-8", "replace"))
            window *= 2
    except OSError:
        return ReflogTip()
    finally:
        os.close(fd)
