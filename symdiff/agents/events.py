"""Hook events: Claude Code's JSON and the harness-neutral form, as one journal line.

A journal line is a flat JSON object: `kind`, `session`, `agent`, `t` (wall clock, ns), and
when known `tool`, `tool_use_id`, `paths` (named by the tool's input, relative to the root),
`subagent`, `subagent_type`, `command`, `failed`, `model`, `detail`. `state.Event` reads it.
This module imports only the standard library's cheapest parts: it runs in every hook.

Claude Code's hook input (its hooks reference): every event has `session_id`,
`transcript_path`, `cwd`, `hook_event_name` (and `prompt_id`, and `agent_id`/`agent_type`
inside a subagent); tool events add `tool_name`, `tool_input`, `tool_use_id`; SessionStart
may add `source` and `model`; SessionEnd `reason`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

SESSION_START = "session-start"
TURN_START = "turn-start"
TOOL_START = "tool-start"
TOOL_END = "tool-end"
TURN_END = "turn-end"
SUBAGENT_END = "subagent-end"
SESSION_END = "session-end"
NEUTRAL_KINDS = (TURN_START, TURN_END, TOOL_START, TOOL_END)

CLAUDE_EVENTS = {
    "SessionStart": SESSION_START,
    "UserPromptSubmit": TURN_START,
    "PreToolUse": TOOL_START,
    "PostToolUse": TOOL_END,
    "PostToolUseFailure": TOOL_END,
    "Stop": TURN_END,
    "SubagentStop": SUBAGENT_END,
    "SessionEnd": SESSION_END,
}
CLAUDE_CODE = "claude-code"
# The tool inputs that name the file a tool writes (Edit, Write, MultiEdit; NotebookEdit).
PATH_FIELDS = ("file_path", "notebook_path")
MAX_COMMAND = 500  # a Bash command is kept this long: enough to tell the git operation


class BadEvent(ValueError):
    """Hook input that is not an event symdiff can record (said on stderr, never recorded)."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def relative(root: str, path: str, cwd: str | None = None) -> str | None:
    """`path` (absolute, or relative to `cwd`) relative to `root`, POSIX; None outside it."""
    full = os.path.normpath(os.path.join(cwd or root, path))
    rel = os.path.relpath(full, root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        return None
    return rel.replace(os.sep, "/")


Line = dict[str, object]


def line(kind: str, session: str, agent: str, t: int, **fields: object) -> Line:
    """A journal line: the fields that are set."""
    out: Line = {"kind": kind, "session": session, "agent": agent, "t": t}
    out.update((k, v) for k, v in fields.items() if v is not None and v != () and v is not False)
    if "paths" in out:
        out["paths"] = list(out["paths"])  # type: ignore[call-overload]
    return out


def from_claude_code(obj: object, *, root: str, now: int) -> Line:
    """The event a Claude Code hook input stands for; BadEvent when it is none we handle."""
    if not isinstance(obj, dict):
        raise BadEvent("the hook input is not a JSON object")
    name = obj.get("hook_event_name")
    if not isinstance(name, str):
        raise BadEvent("the hook input has no hook_event_name")
    kind = CLAUDE_EVENTS.get(name)
    if kind is None:
        raise BadEvent(f"{name} is not an event symdiff records")
    session = obj.get("session_id")
    if not isinstance(session, str) or not session:
        raise BadEvent(f"{name} without a session_id")
    cwd = _text(obj.get("cwd"))
    tool = tool_use_id = command = None
    paths: tuple[str, ...] = ()
    if kind in (TOOL_START, TOOL_END):
        tool, tool_use_id = _text(obj.get("tool_name")), _text(obj.get("tool_use_id"))
        if tool is None or tool_use_id is None:
            raise BadEvent(f"{name} without tool_name or tool_use_id")
        tool_input = obj.get("tool_input")
        if isinstance(tool_input, dict):
            paths = named_paths(root, tool_input, cwd)
            cmd = tool_input.get("command")
            command = cmd[:MAX_COMMAND] if isinstance(cmd, str) else None
    detail = _text(obj.get("source")) if kind == SESSION_START else (
        _text(obj.get("reason")) if kind == SESSION_END else None)
    return line(kind, session, CLAUDE_CODE, now, tool=tool, tool_use_id=tool_use_id,
                paths=paths, subagent=_text(obj.get("agent_id")),
                subagent_type=_text(obj.get("agent_type")), command=command,
                failed=name == "PostToolUseFailure", model=_model(obj.get("model")),
                detail=detail)  # fmt: skip


def _model(value: object) -> str | None:
    if isinstance(value, dict):  # some versions send {"id": …, "display_name": …}
        value = value.get("id")
    return _text(value)


def named_paths(root: str, tool_input: Mapping[str, object], cwd: str | None) -> tuple[str, ...]:
    """The paths under `root` a tool's input names (`file_path`, `notebook_path`)."""
    out = []
    for key in PATH_FIELDS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            rel = relative(root, value, cwd)
            if rel is not None:
                out.append(rel)
    return tuple(out)


def neutral(*, agent: str, session: str, kind: str, tool: str | None, tool_use_id: str | None,
            paths: Sequence[str], root: str, now: int, command: str | None = None) -> Line:
    """An event of the harness-neutral form (`symdiff hook event`)."""
    if kind not in NEUTRAL_KINDS:
        raise BadEvent(f"--event must be one of {', '.join(NEUTRAL_KINDS)}, got {kind!r}")
    if not agent or not session:
        raise BadEvent("--agent and --session are required")
    if kind in (TOOL_START, TOOL_END) and not tool_use_id:
        raise BadEvent(f"--event {kind} needs --tool-use-id")
    rels = tuple(r for p in paths if (r := relative(root, p, os.getcwd())) is not None)
    return line(kind, session, agent, now, tool=tool or ("tool" if tool_use_id else None),
                tool_use_id=tool_use_id, paths=rels,
                command=None if command is None else command[:MAX_COMMAND])  # fmt: skip
