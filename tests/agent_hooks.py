"""Driving an agent's hooks as the agent calls them: the real `symdiff hook claude-code`
command, Claude Code's documented JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_servers import env

SYMDIFF = str(Path(sys.executable).parent / "symdiff")


def hook(root: Path, event: dict[str, Any]) -> None:
    body = {"session_id": "S", "transcript_path": "/tmp/t.jsonl", "cwd": str(root), **event}
    res = subprocess.run([SYMDIFF, "hook", "claude-code", "--root", str(root)],
                         input=json.dumps(body).encode(), capture_output=True, timeout=120,
                         env=env())  # fmt: skip
    assert res.returncode == 0 and res.stderr == b"", res.stderr


def tool(root: Path, session: str, name: str, tool_input: dict[str, Any],
         write: Callable[[], None]) -> None:  # fmt: skip
    tid = f"toolu_{time.monotonic_ns()}"
    base = {"session_id": session, "tool_name": name, "tool_input": tool_input,
            "tool_use_id": tid}  # fmt: skip
    hook(root, {**base, "hook_event_name": "PreToolUse"})
    write()
    hook(root, {**base, "hook_event_name": "PostToolUse", "tool_response": {}})


def symdiff(*args: str, cwd: Path) -> str:
    res = subprocess.run([SYMDIFF, *args], cwd=cwd, capture_output=True, text=True, env=env(),
                         timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout
