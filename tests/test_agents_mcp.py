"""The MCP `diff` tool's session arguments, through the real SDK client over stdio: a turn's
records, and `invalid_args` for what the rules refuse, as every other argument."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp_servers import call, env, indexed_tree, run_stdio, text_of

SYMDIFF = str(Path(sys.executable).parent / "symdiff")


def _hook(root: Path, **event: object) -> None:
    body = {"session_id": "S", "transcript_path": "/t", "cwd": str(root), **event}
    subprocess.run([SYMDIFF, "hook", "claude-code", "--root", str(root)], check=True,
                   input=json.dumps(body).encode(), env=env(), timeout=60)  # fmt: skip


def test_diff_takes_session_turn_and_since_turn(tmp_path: Path) -> None:
    root = indexed_tree(tmp_path / "ws", "mod")
    _hook(root, hook_event_name="UserPromptSubmit", prompt="x")
    tool = {"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "gen"}}
    _hook(root, hook_event_name="PreToolUse", **tool)
    (root / "gen.py").write_text("def generated():\n    return 1\n")
    _hook(root, hook_event_name="PostToolUse", **tool)
    _hook(root, hook_event_name="Stop")

    async def check(session: ClientSession) -> None:
        got = await call(session, "diff", {"session": "S", "turn": 1, "scope": "all"})
        records = got.structured_content["result"]  # type: ignore[index]
        assert [(r["path"], r["origin"], r["origin_info"]["by"]) for r in records] == [
            ("gen.py", "agent", "window")]
        since = await call(session, "diff", {"session": "S", "since_turn": 1})
        assert since.structured_content["result"] == []  # type: ignore[index]
        mine = await call(session, "diff", {"origin": "agent", "since": "1h"})
        assert [r["path"] for r in mine.structured_content["result"]] == ["gen.py"]  # type: ignore[index]
        for args, says in (({"turn": 1}, "turn and since_turn need session"),
                           ({"session": "S", "turn": 0}, "turn must be a turn number"),
                           ({"session": "S", "turn": 1, "since_turn": 1}, "not both"),
                           ({"session": 5}, "session must be a session id"),
                           ({"session": "S", "since_turn": 9}, "turn 9 of session S"),
                           ({"origin": "robots"}, "origin must be one of"),
                           ({"against": "HEAD", "session": "S"}, "no session")):  # fmt: skip
            bad = await call(session, "diff", args)
            assert bad.is_error and text_of(bad).startswith("invalid_args: "), text_of(bad)
            assert says in text_of(bad)

    run_stdio(["--root", str(root)], check, cwd=root)
    cli = subprocess.run([SYMDIFF, "changes", "--root", str(root), "--session", "S", "--turn",
                          "1", "--scope", "all", "--json"], capture_output=True, text=True,
                         env=env(), timeout=60)  # fmt: skip
    assert [r["path"] for r in json.loads(cli.stdout)] == ["gen.py"], cli.stderr
    refused = subprocess.run([SYMDIFF, "changes", "--root", str(root), "--turn", "1"],
                             capture_output=True, text=True, env=env(), timeout=60)
    assert refused.returncode == 2 and "invalid_args" in refused.stderr
    listed = subprocess.run([SYMDIFF, "sessions", str(root)], capture_output=True, text=True,
                            env=env(), timeout=60, check=True).stdout  # fmt: skip
    assert "claude-code session S" in listed and "turn 1" in listed and "agent 1" in listed
