"""Whose write is it: a change recorded while an agent's tool call was open is the agent's.

Pure rules over `ToolWindow`s, plus `write_time`, the one filesystem question they need. A
write is placed in time by when it *happened* — the file's ctime (any write, rename or
`git checkout` sets it; `touch -d` and `cp -p` cannot set it back) — never by when a batch
closed, so a daemon that sees the write after the PostToolUse, or a daemon restarted after it,
attributes it the same. A delete has no inode left: its time is the mtime of the nearest
directory still there (a later change in that directory moves it on; docs/agents.md).

The file clock is the kernel's coarse clock, up to one tick (≤ 10 ms) behind the hook's
`time.time_ns()`: a window starts `SLACK_NS` early, so a write just after the PreToolUse is
never missed; a person's save within that tick before it counts as the tool's.
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

from symdiff.agents.reader import Journals
from symdiff.agents.state import ToolWindow
from symdiff.model import Origin, Provenance

SLACK_NS = 10_000_000
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_SEPARATORS = re.compile(r"&&|\|\||;|\||\n")


def write_time(root: str, path: str, read_mtime_ns: int | None = None) -> int:
    """When `path` (relative to `root`) was last written: its ctime, or for a deleted file the
    mtime of the nearest directory above it that still exists. `read_mtime_ns`: the mtime of
    the content the caller read; if the file has changed since that read (another write
    raced it), its ctime is the newer write's, so the read's mtime is the answer."""
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
    except OSError:
        st = None
    if st is not None:
        if read_mtime_ns is not None and st.st_mtime_ns != read_mtime_ns:
            return read_mtime_ns
        return st.st_ctime_ns
    parent = os.path.dirname(full)
    while True:
        try:
            return os.lstat(parent).st_mtime_ns
        except OSError:
            if parent == root or len(parent) <= len(root):
                return 0
            parent = os.path.dirname(parent)


class Windows:
    """Tool windows indexed by start time: the candidates for a write at time t."""

    def __init__(self, windows: Sequence[ToolWindow]) -> None:
        self._windows = sorted(windows, key=lambda w: w.start)
        self._starts = [w.start for w in self._windows]
        self._longest = max((w.closes_at() - w.start for w in self._windows), default=0)

    def __bool__(self) -> bool:
        return bool(self._windows)

    def at(self, t: int) -> list[ToolWindow]:
        """The windows open at `t` (starting `SLACK_NS` early), newest start first."""
        hi = bisect.bisect_right(self._starts, t + SLACK_NS)
        lo = bisect.bisect_left(self._starts, t - self._longest - SLACK_NS)
        return [w for w in reversed(self._windows[lo:hi]) if t <= w.closes_at()]


def attribute(windows: Windows, path: str, t: int, *, git: Mapping[str, object] | None = None
              ) -> dict[str, object] | None:  # fmt: skip
    """The agent `origin_info` of a write of `path` at `t`, or None when no tool call was open.

    A window whose tool input named the path wins (`by: named`); otherwise the newest open
    window (`by: window`), and the other windows open at that moment are listed in `also`.
    `git`: what the repository said of the batch (a git operation), kept beside the agent.
    """
    open_now = windows.at(t)
    if not open_now:
        return None
    named = [w for w in open_now if path in w.paths]
    chosen = (named or open_now)[0]
    info: dict[str, object] = {
        "agent": chosen.agent, "session": chosen.session, "turn": chosen.turn,
        "tool": chosen.tool, "tool_use_id": chosen.tool_use_id, "subagent": chosen.subagent,
        "by": "named" if named else "window",
    }
    others = [w for w in open_now if w is not chosen and not named]
    if others:
        info["also"] = [{"session": w.session, "turn": w.turn, "tool_use_id": w.tool_use_id}
                        for w in others]  # fmt: skip
    # The repository's evidence of a git command goes to a shell call (which may have run
    # it, directly or through a script), not to an Edit that landed in the same batch.
    operation = git_operation(chosen.command) if chosen.command else None
    if git is not None and git.get("operation") and chosen.command is not None:
        info["git"] = dict(git)
    elif operation is not None:
        info["git"] = {"operation": operation}
    return info


def git_operation(command: str) -> str | None:
    """The git subcommand a shell command line runs (`git stash pop` → "stash"), if any; the
    first one when it runs several."""
    for part in _SEPARATORS.split(command):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # VAR=value git …
        if not words or os.path.basename(words[0]) != "git":
            continue
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[2:] if rest[0] in _GIT_OPTIONS_WITH_VALUE else rest[1:]
        if rest:
            return rest[0]
    return None


def session_of(windows: Windows, t: int, *, tool_suffix: str = "apply_edits"
               ) -> dict[str, object] | None:  # fmt: skip
    """For an `apply_edits` inside a hooked session: the agent, session and turn of the tool
    call open now — the one calling apply_edits if its hook saw it, else the newest."""
    open_now = windows.at(t)
    if not open_now:
        return None
    chosen = next((w for w in open_now if w.tool.endswith(tool_suffix)), open_now[0])
    return {"agent": chosen.agent, "session": chosen.session, "turn": chosen.turn,
            "tool_use_id": chosen.tool_use_id}  # fmt: skip


class LiveWindows(Windows):
    """The journals' windows, read again whenever a write is asked about that may be newer than
    the last read: a batch's provenance is made when it closes, but a daemon may take in
    writes after that (a git batch's tail), whose tool calls started later still."""

    def __init__(self, journals: Journals) -> None:
        self._journals = journals
        self._read_at = 0
        super().__init__(())

    def __bool__(self) -> bool:
        return True

    def at(self, t: int) -> list[ToolWindow]:
        if t + SLACK_NS >= self._read_at:  # a window journaled since the last read may hold t
            self._read_at = time.time_ns()
            super().__init__(self._journals.windows())
        return super().at(t)


def with_agents(provenance: Provenance, journals: Journals) -> Provenance:
    """`provenance` carrying the agents' tool windows (none journaled yet: as is)."""
    if not journals.windows():
        return provenance
    return replace(provenance, agents=LiveWindows(journals))


def agent_origin(provenance: Provenance, root: str, path: str, read_mtime_ns: int | None
                 ) -> tuple[Origin, dict[str, object]] | None:  # fmt: skip
    """`agent` and its origin_info when `path` was written inside a tool window of
    `provenance.agents`; None otherwise. A git operation the batch saw is kept.
    `read_mtime_ns`: the mtime of the content recorded (None for a delete)."""
    windows = provenance.agents
    if not isinstance(windows, Windows) or not windows:
        return None
    git = provenance.origin_info if provenance.origin is Origin.GIT else None
    info = attribute(windows, path, write_time(root, path, read_mtime_ns), git=git)
    return None if info is None else (Origin.AGENT, info)


def in_session(origin_info: Mapping[str, object] | None, provenance: Provenance
               ) -> Mapping[str, object] | None:  # fmt: skip
    """An apply_edits' `origin_info` with the agent session and turn of the tool call open now
    (`session_of`), when one is: the edit stays `edit` and says which turn made it."""
    windows = provenance.agents
    if not isinstance(windows, Windows) or not windows:
        return origin_info
    found = session_of(windows, time.time_ns())
    if found is None:
        return origin_info
    return {**(origin_info or {}), **found}
