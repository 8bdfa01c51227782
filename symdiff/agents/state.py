"""Sessions, turns and tool windows: the fold of a session's journal (pure).

- A turn runs from a turn-start (UserPromptSubmit) to a turn-end (Stop), numbered 1, 2, … per
  session. A tool call outside any open turn opens one (hooks installed mid-turn).
- A tool window runs from a tool-start to the tool-end with the same `tool_use_id`. A window
  still open when its turn ends, its subagent stops or its session ends is closed then; one
  left open `MAX_OPEN_NS` after it started (its PostToolUse never came) counts as closed there.
- Read-only tools (`READ_ONLY`) open no window: a write during a Read is not the Read's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from symdiff.agents.events import (
    SESSION_END,
    SESSION_START,
    SUBAGENT_END,
    TOOL_END,
    TOOL_START,
    TURN_END,
    TURN_START,
    BadEvent,
)

MAX_OPEN_NS = 15 * 60 * 1_000_000_000  # Claude Code's Bash tool times out at 10 minutes
# Tools that write nothing: Task/Agent's subagent makes its own tool calls, each a window.
READ_ONLY = frozenset({
    "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "Task",
    "Agent", "NotebookRead", "ExitPlanMode", "BashOutput", "KillShell", "KillBash",
    "ListMcpResourcesTool", "ReadMcpResourceTool",
    "mcp__symdiff__diff", "mcp__symdiff__text_diff", "mcp__symdiff__symbol_history",
    "mcp__symdiff__show_symbol",
})


@dataclass(frozen=True, slots=True)
class Event:
    """One journal line (events.py): one thing an agent did; `t` is the wall clock in ns."""

    kind: str
    session: str
    agent: str
    t: int
    tool: str | None = None
    tool_use_id: str | None = None
    paths: tuple[str, ...] = ()
    subagent: str | None = None
    command: str | None = None
    failed: bool = False
    model: str | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> Event:
        """The event of a journal line (BadEvent when it is not one)."""
        kind, session, agent, t = (obj.get(k) for k in ("kind", "session", "agent", "t"))
        if not (isinstance(kind, str) and isinstance(session, str) and isinstance(agent, str)
                and isinstance(t, int)):
            raise BadEvent("not a journal line")
        paths = obj.get("paths")
        named = tuple(p for p in paths if isinstance(p, str)) if isinstance(paths, list) else ()
        return cls(kind, session, agent, t, tool=_text(obj.get("tool")),
                   tool_use_id=_text(obj.get("tool_use_id")), paths=named,
                   subagent=_text(obj.get("subagent")), command=_text(obj.get("command")),
                   failed=obj.get("failed") is True, model=_text(obj.get("model")))  # fmt: skip


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class ToolWindow:
    """One tool call of one agent: writes between `start` and `end` are its own."""

    agent: str
    session: str
    turn: int
    tool: str
    tool_use_id: str
    start: int
    end: int | None = None  # None: still open (see `closes_at`)
    paths: tuple[str, ...] = ()
    subagent: str | None = None
    command: str | None = None
    failed: bool = False

    def closes_at(self) -> int:
        """When the window closes: its end, or `MAX_OPEN_NS` after its start if still open."""
        return self.end if self.end is not None else self.start + MAX_OPEN_NS


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt's turn of a session."""

    number: int
    start: int
    end: int | None = None


@dataclass(slots=True)
class Session:
    """What a session's journal says so far."""

    id: str
    agent: str
    start: int
    end: int | None = None
    model: str | None = None
    turns: list[Turn] = field(default_factory=list)
    windows: dict[str, ToolWindow] = field(default_factory=dict)  # by tool_use_id

    @property
    def open_turn(self) -> Turn | None:
        """The turn in progress, if any."""
        return self.turns[-1] if self.turns and self.turns[-1].end is None else None

    def feed(self, e: Event) -> None:
        """Apply one event."""
        if e.kind == SESSION_START:
            self.model = e.model or self.model
        elif e.kind == TURN_START:
            self._end_turn(e.t)
            self.turns.append(Turn(len(self.turns) + 1, e.t))
        elif e.kind == TURN_END:
            self._end_turn(e.t)
        elif e.kind == SESSION_END:
            self._end_turn(e.t)
            self.end = e.t
        elif e.kind == SUBAGENT_END:
            self._close(e.t, lambda w: w.subagent is not None and w.subagent == e.subagent)
        elif e.kind == TOOL_START and e.tool_use_id and e.tool not in READ_ONLY:
            turn = self.open_turn or self._implicit_turn(e.t)
            self.windows[e.tool_use_id] = ToolWindow(
                e.agent, self.id, turn.number, e.tool or "tool", e.tool_use_id, e.t,
                paths=e.paths, subagent=e.subagent, command=e.command)  # fmt: skip
        elif e.kind == TOOL_END and e.tool_use_id:
            w = self.windows.get(e.tool_use_id)
            if w is not None and w.end is None:
                self.windows[e.tool_use_id] = replace(
                    w, end=e.t, failed=e.failed, paths=tuple(dict.fromkeys(w.paths + e.paths)))

    def _implicit_turn(self, t: int) -> Turn:
        turn = Turn(len(self.turns) + 1, t)
        self.turns.append(turn)
        return turn

    def _end_turn(self, t: int) -> None:
        turn = self.open_turn
        if turn is not None:
            self.turns[-1] = replace(turn, end=t)
        self._close(t, lambda w: True)

    def _close(self, t: int, which: Callable[[ToolWindow], bool]) -> None:
        for key, w in list(self.windows.items()):
            if w.end is None and which(w):
                self.windows[key] = replace(w, end=max(w.start, min(t, w.closes_at())))


def fold(events: Iterable[Event]) -> dict[str, Session]:
    """Sessions by id, from events in journal order."""
    sessions: dict[str, Session] = {}
    for e in events:
        s = sessions.get(e.session)
        if s is None:
            s = sessions[e.session] = Session(e.session, e.agent, e.t)
        s.feed(e)
    return sessions


def last_ended_turn(session: Session) -> Turn | None:
    """The newest turn that has ended (the one whose end "since my last turn" counts from)."""
    for turn in reversed(session.turns):
        if turn.end is not None:
            return turn
    return None
