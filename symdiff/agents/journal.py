"""The hooks' state on disk: one append-only journal per session, `.symdiff/agents/<id>.jsonl`.

A hook appends one JSON line with one `write` on an `O_APPEND` descriptor: hooks of parallel
tool calls never overwrite each other, a hook killed half-way leaves at most a line without its
newline (skipped), and a daemon killed and restarted reads every window back. Readers fold the
lines (`reader.py`). Standard library only: every hook runs this.
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from symdiff.agents.events import Line
from symdiff.workspace.names import AGENTS, STATE_DIR

GITIGNORE = "# symdiff's index and daemon state: nothing here belongs in version control\n*\n"
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,100}")


def folder(root: str) -> str:
    """The journals' folder of a workspace."""
    return os.path.join(root, STATE_DIR, AGENTS)


def file_name(session: str) -> str:
    """A session's journal file name: its id when that is a safe name, else a hash of it."""
    if _SAFE.fullmatch(session) and not session.startswith("."):
        return session + ".jsonl"
    return "h-" + hashlib.sha256(session.encode()).hexdigest()[:32] + ".jsonl"


def append(root: str, event: Line) -> None:
    """Append one event to its session's journal (one write, O_APPEND)."""
    path = os.path.join(folder(root), file_name(str(event["session"])))
    line = (json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except FileNotFoundError:
        _make_folder(root)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _make_folder(root: str) -> None:
    state = os.path.join(root, STATE_DIR)
    fresh = not os.path.isdir(state)
    os.makedirs(folder(root), exist_ok=True)
    if fresh:  # as workspace.layout.ensure_state_dir: `.symdiff/` never shows in git status
        try:
            with open(os.path.join(state, ".gitignore"), "x", encoding="utf-8") as f:
                f.write(GITIGNORE)
        except OSError:
            pass
