"""`symdiff init claude-code`: the hooks and the MCP server merged into a project's settings.

Merging, never clobbering: every other key, hook and server stays as it was; a symdiff hook
already there (any command starting `symdiff hook`) is left alone, so running it twice writes
nothing. Pure: it returns the texts; the CLI writes them.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

TOOL_MATCHER = "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
OTHER_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "SessionEnd")


def symdiff_command() -> list[str]:
    """How the agent is to run this symdiff: the `symdiff` script running now, by its absolute
    path (README's install puts it in a venv, not on the PATH an agent's shell has), else the
    one on PATH, else this interpreter with `-m symdiff`."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if here is not None and here.name == "symdiff" and os.access(here, os.X_OK):
        return [str(here.resolve())]
    found = shutil.which("symdiff")
    return [found] if found else [sys.executable, "-m", "symdiff"]


def hook_command(symdiff: list[str]) -> str:
    """The hook's command line, as Claude Code's shell runs it."""
    return shlex.join([*symdiff, "hook", "claude-code", "--root"]) + ' "$CLAUDE_PROJECT_DIR"'


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a JSON object; not touching it")
    return data


def merge_hooks(settings: dict[str, Any], symdiff: list[str] | None = None) -> dict[str, Any]:
    """`settings` with symdiff's hook on every event it records (a copy); a symdiff hook
    already there (any command that runs `symdiff hook`) is kept as it is."""
    command = hook_command(symdiff or symdiff_command())
    out: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    for event in (*TOOL_EVENTS, *OTHER_EVENTS):
        groups = hooks.setdefault(event, [])
        present = any("symdiff hook" in str(h.get("command", ""))
                      for g in groups if isinstance(g, dict)
                      for h in g.get("hooks", []) if isinstance(h, dict))  # fmt: skip
        if present:
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command,
                                            "timeout": 30}]}  # fmt: skip
        if event in TOOL_EVENTS:
            group = {"matcher": TOOL_MATCHER, **group}
        groups.append(group)
    return out


def merge_mcp(config: dict[str, Any], symdiff: list[str] | None = None) -> dict[str, Any]:
    """`.mcp.json` with a `symdiff` server unless one is there (a copy)."""
    program, *first = symdiff or symdiff_command()
    out: dict[str, Any] = json.loads(json.dumps(config))
    servers = out.setdefault("mcpServers", {})
    servers.setdefault("symdiff", {"command": program, "args": [*first, "serve", "--root", "."]})
    return out


def plan_claude_code(root: Path, symdiff: list[str] | None = None
                     ) -> list[tuple[Path, str, bool]]:  # fmt: skip
    """(path, text to write, whether it differs from what is there) for each file; `symdiff`
    is how the agent runs symdiff (default: `symdiff_command()`)."""
    run = symdiff or symdiff_command()
    out = []
    for path, merge in ((root / ".claude" / "settings.local.json", merge_hooks),
                        (root / ".mcp.json", merge_mcp)):
        before = _load(path)
        after = merge(before, run)
        out.append((path, json.dumps(after, indent=2) + "\n", after != before))
    return out
