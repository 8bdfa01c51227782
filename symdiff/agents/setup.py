"""`symdiff init claude-code`: the hooks and the MCP server merged into a project's settings.

Merging, never clobbering: every other key, hook and server stays as it was; a symdiff hook
already there (any command starting `symdiff hook`) is left alone, so running it twice writes
nothing. Pure: it returns the texts; the CLI writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HOOK_COMMAND = 'symdiff hook claude-code --root "$CLAUDE_PROJECT_DIR"'
TOOL_MATCHER = "Bash|Edit|Write|MultiEdit|NotebookEdit|mcp__.*"
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
OTHER_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "SessionEnd")
MCP_SERVER = {"command": "symdiff", "args": ["serve", "--root", "."]}


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a JSON object; not touching it")
    return data


def merge_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with symdiff's hook on every event it records (a copy)."""
    out: dict[str, Any] = json.loads(json.dumps(settings))
    hooks = out.setdefault("hooks", {})
    for event in (*TOOL_EVENTS, *OTHER_EVENTS):
        groups = hooks.setdefault(event, [])
        present = any(str(h.get("command", "")).startswith("symdiff hook")
                      for g in groups if isinstance(g, dict)
                      for h in g.get("hooks", []) if isinstance(h, dict))  # fmt: skip
        if present:
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": HOOK_COMMAND,
                                            "timeout": 30}]}  # fmt: skip
        if event in TOOL_EVENTS:
            group = {"matcher": TOOL_MATCHER, **group}
        groups.append(group)
    return out


def merge_mcp(config: dict[str, Any]) -> dict[str, Any]:
    """`.mcp.json` with a `symdiff` server unless one is there (a copy)."""
    out: dict[str, Any] = json.loads(json.dumps(config))
    servers = out.setdefault("mcpServers", {})
    servers.setdefault("symdiff", dict(MCP_SERVER))
    return out


def plan_claude_code(root: Path) -> list[tuple[Path, str, bool]]:
    """(path, text to write, whether it differs from what is there) for each file."""
    out = []
    for path, merge in ((root / ".claude" / "settings.local.json", merge_hooks),
                        (root / ".mcp.json", merge_mcp)):
        before = _load(path)
        after = merge(before)
        out.append((path, json.dumps(after, indent=2) + "\n", after != before))
    return out
