"""Undo a turn (issue 24, item 5), driven like the replay: the real hook around real writes,
then `symdiff undo` and MCP `undo_turn`. Every line the agent wrote in the turn goes, every
line anyone else wrote stays byte for byte, created and deleted files are as before the turn;
a conflicting undo writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp_servers import call, env, run_stdio

SYMDIFF = str(Path(sys.executable).parent / "symdiff")
F = "def a():\n    return 1\n\n\ndef b():\n    return 1\n\n\ndef c():\n    return 1\n"


def _run(root: Path, *args: str, stdin: bytes | None = None, check: bool = True
         ) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    return subprocess.run([SYMDIFF, *args], input=stdin, capture_output=True, env=env(),
                          check=check, timeout=120, cwd=root)  # fmt: skip


def _hook(root: Path, session: str, name: str, **fields: Any) -> None:
    body = {"session_id": session, "transcript_path": "/t", "cwd": str(root),
            "hook_event_name": name, **fields}  # fmt: skip
    _run(root, "hook", "claude-code", "--root", str(root), stdin=json.dumps(body).encode())


def _turn_with_every_kind_of_write(root: Path) -> str:
    session = "s-" + uuid.uuid4().hex[:8]
    _hook(root, session, "UserPromptSubmit", prompt="refactor")
    tool = {"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "./refactor"}}
    _hook(root, session, "PreToolUse", **tool)
    (root / "f.py").write_text(F.replace("def a():\n    return 1", "def a():\n    return 2"))
    (root / "n.py").write_text("def created():\n    pass\n")
    (root / "d.py").unlink()
    (root / "r.py").rename(root / "r2.py")
    _hook(root, session, "PostToolUse", **tool)
    _hook(root, session, "Stop")
    return session


def _tree(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "f.py").write_text(F)
    (root / "d.py").write_text("def doomed():\n    return 0\n")
    (root / "r.py").write_text("def moved():\n    return 0\n")
    _run(root, "index", str(root))
    return root


def test_undo_reverts_the_turn_and_keeps_everyone_elses_lines(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = {p.name: p.read_bytes() for p in root.glob("*.py")}
    session = _turn_with_every_kind_of_write(root)
    # A person edits the same file beside the agent's change, after the turn.
    person = (root / "f.py").read_text().replace("def c():\n    return 1", "def c():\n    return 3")
    (root / "f.py").write_text(person)
    dry = json.loads(_run(root, "undo", "--session", session, "--turn", "1", "--json").stdout)
    assert dry["applied"] is False and dry["conflicts"] == []
    assert {f["path"] for f in dry["files"]} == {"f.py", "n.py", "d.py", "r.py", "r2.py"}
    summary = next(f for f in dry["files"] if f["path"] == "f.py")
    assert [(s["name"], s["change_type"]) for s in summary["symbols"]] == [("a", "modified")]
    assert "-    return 2\n+    return 1\n" in dry["patch"]
    assert (root / "n.py").exists()  # a dry run writes nothing
    done = json.loads(_run(root, "undo", "--session", session, "--turn", "1", "--apply",
                           "--json").stdout)  # fmt: skip
    assert done["applied"] is True
    after = {p.name: p.read_bytes() for p in root.glob("*.py")}
    # The agent's line is gone, the person's is there byte for byte; n.py is gone again, d.py
    # and r.py are back.
    assert after == {**before, "f.py": person.encode()
                     .replace(b"def a():\n    return 2", b"def a():\n    return 1")}
    assert b"return 3" in after["f.py"] and b"return 2" not in after["f.py"]
    assert {r["origin"] for r in done["recorded"]} == {"edit"}
    assert all(r["origin_info"]["undo"] == {"session": session, "turn": 1}
               for r in done["recorded"])  # fmt: skip


def test_a_conflicting_undo_writes_nothing_and_shows_both_sides(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    session = _turn_with_every_kind_of_write(root)
    clash = (root / "f.py").read_text().replace("def a():\n    return 2", "def a():\n    return 7")
    (root / "f.py").write_text(clash)
    now = {p.name: p.read_bytes() for p in root.glob("*.py")}
    refused = _run(root, "undo", "--session", session, "--turn", "1", "--apply", check=False)
    assert refused.returncode == 2 and b"conflicts in f.py" in refused.stderr
    assert {p.name: p.read_bytes() for p in root.glob("*.py")} == now

    async def check(s: ClientSession) -> None:
        got = await call(s, "undo_turn", {"session": session, "turn": 1})
        found = got.structured_content
        assert found is not None and found["applied"] is False
        [conflict] = found["conflicts"]
        assert conflict["path"] == "f.py" and conflict["lines"][0]["now"] == "    return 7\n"
        assert conflict["lines"][0]["undo"] == "    return 1\n"
        bad = await call(s, "undo_turn", {"session": session, "turn": 1, "apply": True})
        assert bad.is_error

    run_stdio(["--root", str(root)], check, cwd=root)
    assert {p.name: p.read_bytes() for p in root.glob("*.py")} == now
