"""Who wrote what the daemon is about to record: the provenance of each batch.

The repository is read (never a `git` subprocess) once per batch, when the batch closes; the
snapshot is kept as the next batch's "before". A batch during which HEAD, a reflog or the stash
moved, or a git command held its lock, was written by git (`origin: "git"`, with the operation
and HEAD before and after) — a full rescan too; any other event batch by someone else
(`watch`); any other full pass found what it found (`scan`). docs/provenance.md has what can
and cannot be told apart.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from symdiff.agents.attribute import with_agents
from symdiff.agents.reader import Journals
from symdiff.git.state import Repo, RepoState, git_info, git_origin, open_repo, snapshot
from symdiff.model import Origin, Provenance

log = logging.getLogger(__name__)

LOCK_WAIT_S = 30.0  # how long a batch waits for a git command holding its lock to finish
LOCK_POLL_S = 0.02
GRACE_S = 0.1  # git moves HEAD and writes its reflog just after its last file write
QUIET_S = 1.0  # an idle refresh waits this long after git's last ref write (see `refresh`)


class BatchOrigins:
    """The provenance of successive batches of one work tree.

    `monotonic` and `sleep` time the waits for a git command's lock; `wall_ns` is compared
    with the mtimes of git's ref files (`time.time_ns`). Tests pass fakes, so that they wait
    for nothing.
    """

    def __init__(self, root: Path, *, monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 wall_ns: Callable[[], int] = time.time_ns) -> None:  # fmt: skip
        self._monotonic = monotonic
        self._sleep = sleep
        self._wall_ns = wall_ns
        self._repo: Repo | None = open_repo(root)
        self._last: RepoState | None = None
        self._stale: tuple[int, int] | None = None  # a lock outwaited once is not waited again
        self._agents = Journals(str(root))  # agents' tool windows (docs/agents.md)

    def _lock_identity(self) -> tuple[int, int] | None:
        assert self._repo is not None
        for name in ("index.lock", "HEAD.lock"):
            try:
                st = (self._repo.gitdir / name).stat()
            except OSError:
                continue
            return st.st_ino, st.st_mtime_ns
        return None

    def _snapshot(self) -> RepoState | None:
        if self._repo is None:
            return None
        try:
            state = snapshot(self._repo)
            if state.locked and self._lock_identity() == self._stale:
                return state  # a lock left behind by a git that died: do not wait for it again
            deadline = self._monotonic() + LOCK_WAIT_S
            waited = False
            while state.locked and self._monotonic() < deadline:
                self._sleep(LOCK_POLL_S)  # a git command is still writing: let it finish
                state, waited = snapshot(self._repo), True
            if state.locked:
                self._stale = self._lock_identity()
            if waited:
                # A checkout releases index.lock a moment before it moves HEAD and logs it.
                self._sleep(GRACE_S)
                state = snapshot(self._repo)
            return state
        except Exception:  # an odd repository costs the git fields, never the record
            log.warning("cannot read the git repository of %s; recording without git state",
                        self._repo.workdir, exc_info=True)
            return None

    @property
    def in_git(self) -> bool:
        """Whether the tree is a git work tree (there is a state to refresh)."""
        return self._repo is not None

    def refresh(self) -> bool:
        """Take the repository's state as the next batch's "before" while the tree is idle;
        True when it was taken.

        A git command that writes no work-tree file (`git checkout -b`, `git commit`) closes no
        batch; without this, the next edit, made seconds later by someone else, would be taken
        for that command's. Called only when no event is pending; skipped while a git command
        holds its lock or wrote a ref less than `QUIET_S` ago (a `git stash` writes its ref a
        moment before the files it resets).
        """
        if self._repo is None or self._last is None:
            return False
        try:
            state = snapshot(self._repo)
            if state.locked or self._recent_ref_write():
                return False
        except Exception:  # as in _snapshot: keep the old state rather than fail the loop
            return False
        self._last = state
        return True

    def _recent_ref_write(self) -> bool:
        assert self._repo is not None
        now = self._wall_ns()
        for path in (self._repo.gitdir / "HEAD", self._repo.gitdir / "logs" / "HEAD",
                     self._repo.commondir / "logs" / "refs" / "stash"):
            try:
                if now - path.stat().st_mtime_ns < QUIET_S * 1e9:
                    return True
            except OSError:
                continue
        return False

    def next(self, *, full: bool) -> Provenance:
        """The provenance of the batch closing now (`full`: a reconcile pass over the tree),
        with the agents' tool windows as they stand now."""
        return with_agents(self._next(full=full), self._agents)

    def _next(self, *, full: bool) -> Provenance:
        before, state = self._last, self._snapshot()
        if full and before is not None and state is not None and git_origin(before, state) is None:
            # A rescan after an overflow may have been handed out in that moment between a
            # checkout's last write and its HEAD update: look once more before calling it a scan.
            self._sleep(GRACE_S)
            state = self._snapshot()
        self._last = state
        info = git_info(state)
        git = None if info is None else dict(info)
        moved = None if before is None or state is None else git_origin(before, state)
        if moved is not None:
            # Also for a full pass: a rescan after an inotify overflow during a checkout finds
            # what git wrote (the start pass has no `before`, so it stays `scan`).
            return Provenance(Origin.GIT, dict(moved), git)
        if full:
            return Provenance(Origin.SCAN, None, git)
        return Provenance(Origin.WATCH, None, git)


def scan_provenance(root: Path) -> Provenance:
    """The provenance of a one-off pass (`symdiff index`, an edit's own snapshot)."""
    return with_agents(_scan_provenance(root), Journals(str(root)))


def _scan_provenance(root: Path) -> Provenance:
    repo = open_repo(root)
    if repo is None:
        return Provenance()
    try:
        info = git_info(snapshot(repo))
    except Exception:  # as above: no git fields rather than no record
        return Provenance()
    return Provenance(git=None if info is None else dict(info))
