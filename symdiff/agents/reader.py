"""Reading the journals back: sessions, turns and tool windows (`state.fold`).

`Journals` re-reads only what was appended since its last look (a daemon keeps one).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from symdiff.agents.events import BadEvent
from symdiff.agents.journal import file_name, folder
from symdiff.agents.state import Event, Session, ToolWindow, fold


def parse_lines(data: bytes) -> list[Event]:
    """The events of complete journal lines (a torn or foreign line is skipped)."""
    events = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            events.append(Event.from_json(json.loads(raw)))
        except (ValueError, BadEvent, TypeError):
            continue
    return events


def read_session(root: str, session: str) -> Session | None:
    """One session's state, read whole (a hook's question about its own session)."""
    try:
        with open(os.path.join(folder(root), file_name(session)), "rb") as f:
            data = f.read()
    except OSError:
        return None
    data = data[: data.rfind(b"\n") + 1]
    return fold(parse_lines(data)).get(session)


@dataclass(slots=True)
class _Tail:
    size: int = 0  # bytes folded (up to the last complete line)
    events: list[Event] = field(default_factory=list)


class Journals:
    """Every session of a workspace, re-read as journals grow (a daemon keeps one)."""

    def __init__(self, root: str) -> None:
        self._root = str(root)
        self._tails: dict[str, _Tail] = {}
        self._sessions: dict[str, Session] = {}
        self._stamp: tuple[tuple[str, int, int], ...] = ()

    def refresh(self) -> bool:
        """Read what was appended since the last call; whether anything changed."""
        try:
            entries = sorted((e for e in os.scandir(folder(self._root))
                              if e.name.endswith(".jsonl")), key=lambda e: e.name)
        except OSError:
            entries = []
        stamp = tuple((e.name, *self._size_mtime(e)) for e in entries)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        for name, size, _ in stamp:
            tail = self._tails.setdefault(name, _Tail())
            if size < tail.size:  # rewritten: read again
                tail.size, tail.events = 0, []
            if size > tail.size:
                self._read(name, tail)
        events = [e for t in self._tails.values() for e in t.events]
        self._sessions = fold(sorted(events, key=lambda e: e.t))
        return True

    @staticmethod
    def _size_mtime(entry: os.DirEntry[str]) -> tuple[int, int]:
        try:
            st = entry.stat()
        except OSError:
            return 0, 0
        return st.st_size, st.st_mtime_ns

    def _read(self, name: str, tail: _Tail) -> None:
        try:
            with open(os.path.join(folder(self._root), name), "rb") as f:
                f.seek(tail.size)
                data = f.read()
        except OSError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        tail.size += len(complete)
        tail.events.extend(parse_lines(complete))

    @property
    def sessions(self) -> dict[str, Session]:
        """Sessions by id as of the last refresh."""
        return self._sessions

    def windows(self) -> tuple[ToolWindow, ...]:
        """Every tool window of every session, refreshed first, by start time."""
        self.refresh()
        return tuple(sorted((w for s in self._sessions.values() for w in s.windows.values()),
                            key=lambda w: w.start))  # fmt: skip
