"""Agent sessions, the pure parts: hook events, the journal's fold, attribution by write time,
the turn arguments' rules, `symdiff init claude-code`'s merge, and the hook command's edges."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from symdiff.agents import events, journal
from symdiff.agents.attribute import SLACK_NS, Windows, attribute, git_operation
from symdiff.agents.reader import Journals, read_session
from symdiff.agents.recorder import summary
from symdiff.agents.setup import hook_command, merge_hooks, merge_mcp, plan_claude_code
from symdiff.agents.state import MAX_OPEN_NS, Event, fold
from symdiff.errors import InvalidArgs
from symdiff.query.args import normalize_origin, normalize_turn_args

SYMDIFF = str(Path(sys.executable).parent / "symdiff")
MS = 1_000_000


def _cc(name: str, **fields: object) -> dict[str, object]:
    return {"session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": name,
            **fields}  # fmt: skip


def _events(*lines: dict[str, object]) -> list[Event]:
    return [Event.from_json(line) for line in lines]


def test_claude_code_events_become_journal_lines() -> None:
    pre = events.from_claude_code(_cc("PreToolUse", tool_name="Edit", tool_use_id="t1",
                                      tool_input={"file_path": "/r/src/a.py"}, agent_id="x",
                                      agent_type="general-purpose"), root="/r", now=5)  # fmt: skip
    assert pre == {"kind": "tool-start", "session": "s", "agent": "claude-code", "t": 5,
                   "tool": "Edit", "tool_use_id": "t1", "paths": ["src/a.py"],
                   "subagent": "x", "subagent_type": "general-purpose"}  # fmt: skip
    nb = events.from_claude_code(_cc("PostToolUseFailure", tool_name="NotebookEdit",
                                     tool_use_id="t2", tool_input={"notebook_path": "n.ipynb"}),
                                 root="/r", now=6)  # fmt: skip
    assert nb["paths"] == ["n.ipynb"] and nb["failed"] is True and nb["kind"] == "tool-end"
    outside = events.from_claude_code(_cc("PreToolUse", tool_name="Write", tool_use_id="t3",
                                          tool_input={"file_path": "/etc/passwd"}),
                                      root="/r", now=7)  # fmt: skip
    assert "paths" not in outside
    start = events.from_claude_code(_cc("SessionStart", source="startup",
                                        model={"id": "claude-x"}), root="/r", now=1)  # fmt: skip
    assert (start["model"], start["detail"]) == ("claude-x", "startup")


@pytest.mark.parametrize("obj", [
    [], {"hook_event_name": "Notification", "session_id": "s"},
    {"hook_event_name": "Stop"}, {"hook_event_name": "PreToolUse", "session_id": "s"},
])  # fmt: skip
def test_what_is_not_an_event_is_refused(obj: object) -> None:
    with pytest.raises(events.BadEvent):
        events.from_claude_code(obj, root="/r", now=1)


def test_turns_and_windows_fold_from_the_journal() -> None:
    s = fold(_events(
        {"kind": "turn-start", "session": "s", "agent": "a", "t": 10},
        {"kind": "tool-start", "session": "s", "agent": "a", "t": 11, "tool": "Bash",
         "tool_use_id": "b"},
        {"kind": "tool-start", "session": "s", "agent": "a", "t": 12, "tool": "Read",
         "tool_use_id": "r"},
        {"kind": "tool-start", "session": "s", "agent": "a", "t": 13, "tool": "Edit",
         "tool_use_id": "e", "subagent": "x"},
        {"kind": "subagent-end", "session": "s", "agent": "a", "t": 14, "subagent": "x"},
        {"kind": "tool-end", "session": "s", "agent": "a", "t": 15, "tool": "Bash",
         "tool_use_id": "b"},
        {"kind": "turn-end", "session": "s", "agent": "a", "t": 20},
        {"kind": "tool-start", "session": "s", "agent": "a", "t": 30, "tool": "Bash",
         "tool_use_id": "late"},
    ))["s"]  # fmt: skip
    assert [(t.number, t.start, t.end) for t in s.turns] == [(1, 10, 20), (2, 30, None)]
    assert "r" not in s.windows  # a Read opens no window
    assert (s.windows["b"].start, s.windows["b"].end) == (11, 15)
    assert s.windows["e"].end == 14  # closed by its subagent's stop
    assert s.windows["late"].turn == 2 and s.windows["late"].end is None
    assert s.windows["late"].closes_at() == 30 + MAX_OPEN_NS


def _win(**kw: object) -> dict[str, object]:
    return {"kind": "tool-start", "agent": "claude-code", **kw}


def _windows(*lines: dict[str, object]) -> Windows:
    sessions = fold(_events(*lines))
    return Windows([w for s in sessions.values() for w in s.windows.values()])


def test_a_write_is_attributed_by_when_it_happened() -> None:
    ws = _windows(
        _win(session="A", t=100 * MS, tool="Bash", tool_use_id="a1", command="git stash pop"),
        {"kind": "tool-end", "session": "A", "agent": "claude-code", "t": 200 * MS,
         "tool_use_id": "a1"},
    )  # fmt: skip
    assert attribute(ws, "f.py", 50 * MS) is None
    assert attribute(ws, "f.py", 250 * MS) is None
    early = attribute(ws, "f.py", 100 * MS - SLACK_NS // 2)  # the file clock's tick
    assert early is not None and early["by"] == "window"
    info = attribute(ws, "f.py", 150 * MS)
    assert info == {"agent": "claude-code", "session": "A", "turn": 1, "tool": "Bash",
                    "tool_use_id": "a1", "subagent": None, "by": "window",
                    "git": {"operation": "stash"}}  # fmt: skip
    seen = attribute(ws, "f.py", 150 * MS, git={"operation": "stash", "head_before": "x"})
    assert seen is not None and seen["git"] == {"operation": "stash", "head_before": "x"}


def test_two_sessions_named_wins_else_the_newest_window() -> None:
    ws = _windows(
        _win(session="A", t=100 * MS, tool="Bash", tool_use_id="a1"),
        _win(session="B", t=120 * MS, tool="Write", tool_use_id="b1", paths=["x.py"]),
    )  # fmt: skip
    named = attribute(ws, "x.py", 150 * MS)
    assert named is not None and (named["session"], named["by"]) == ("B", "named")
    assert "also" not in named
    other = attribute(ws, "y.py", 150 * MS)
    assert other is not None and (other["session"], other["by"]) == ("B", "window")
    assert other["also"] == [{"session": "A", "turn": 1, "tool_use_id": "a1"}]
    before_b = attribute(ws, "y.py", 105 * MS)
    assert before_b is not None and before_b["session"] == "A" and "also" not in before_b


@pytest.mark.parametrize(("command", "op"), [
    ("git checkout -- f.py", "checkout"), ("cd x && git -C y stash pop", "stash"),
    ("GIT_DIR=.git git --no-pager restore f", "restore"), ("sed -i s/a/b/ f", None),
    ("echo git", None),
])  # fmt: skip
def test_the_git_operation_of_a_command(command: str, op: str | None) -> None:
    assert git_operation(command) == op


def test_journals_append_read_back_and_skip_a_torn_line(tmp_path: Path) -> None:
    root = str(tmp_path)
    journal.append(root, {"kind": "turn-start", "session": "s/1", "agent": "a", "t": 1})
    journal.append(root, {"kind": "turn-end", "session": "s/1", "agent": "a", "t": 2})
    path = Path(journal.folder(root)) / journal.file_name("s/1")
    assert path.name.startswith("h-")  # an unsafe id is hashed
    assert (tmp_path / ".symdiff" / ".gitignore").exists()
    with open(path, "ab") as f:
        f.write(b'{"kind": "turn-st')  # a hook killed half-way
    s = read_session(root, "s/1")
    assert s is not None and [(t.number, t.end) for t in s.turns] == [(1, 2)]
    j = Journals(root)
    assert j.refresh() and not j.refresh()
    journal.append(root, {"kind": "turn-start", "session": "t", "agent": "a", "t": 3})
    assert j.refresh() and set(j.sessions) == {"s/1", "t"}


def test_turn_arguments_and_origin_groups() -> None:
    assert normalize_turn_args(None, None, None) is None
    assert normalize_turn_args("s", 2, None) is not None
    assert normalize_turn_args("s", None, "3") is not None
    for bad in (("s", 1, 1), (None, 1, None), ("s", 0, None), ("s", True, None),
                (5, None, None), ("s", "x", None)):  # fmt: skip
        with pytest.raises(InvalidArgs):
            normalize_turn_args(*bad)
    assert normalize_origin("person") == ("watch", "scan")
    assert normalize_origin(["agent", "git"]) == ("agent", "edit", "git")
    with pytest.raises(InvalidArgs):
        normalize_origin("robot")


def test_the_context_is_short_and_says_how_many_more() -> None:
    rec = {"path": "p.py", "old_path": None, "change_type": "modify", "lines_added": 1,
           "lines_removed": 1, "symbols": [{"name": "f", "change_type": "modified"}],
           "origin": "watch", "origin_info": None}  # fmt: skip
    assert summary([], 1) is None
    text = summary([rec] * 100, 3)  # type: ignore[list-item]
    assert text is not None and len(text) <= 2100 and text.endswith("more")
    assert "f modified" in text and "turn 3" in text


def test_init_merges_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    mine = {"permissions": {"allow": ["Bash(ls)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "my-guard"}]}]}}  # fmt: skip
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps(mine))
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "o"}}}))
    shown = subprocess.run([SYMDIFF, "init", "claude-code", str(tmp_path), "--print"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    # The agent's shell has no venv on its PATH: the hook runs this symdiff by its full path.
    command = hook_command([str(Path(SYMDIFF).resolve())])
    assert command.startswith(str(Path(SYMDIFF).resolve()) + " hook claude-code --root ")
    assert json.dumps(command) in shown.stdout
    assert json.loads((tmp_path / ".claude" / "settings.local.json").read_text()) == mine
    subprocess.run([SYMDIFF, "init", "claude-code", str(tmp_path)], check=True,
                   capture_output=True)  # fmt: skip
    merged = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert merged["permissions"] == mine["permissions"]
    assert merged["hooks"]["PreToolUse"][0] == mine["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["PreToolUse"][1]["hooks"][0]["command"] == command
    assert "matcher" not in merged["hooks"]["UserPromptSubmit"][0]
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"other", "symdiff"}
    assert servers["symdiff"] == {"command": str(Path(SYMDIFF).resolve()),
                                  "args": ["serve", "--root", "."]}
    assert all(not changed for _, _, changed in plan_claude_code(tmp_path))
    assert merge_hooks(merged) == merged and merge_mcp({"mcpServers": servers})["mcpServers"] \
        == servers


def test_the_hook_command_never_fails_and_prints_only_hook_json(tmp_path: Path) -> None:
    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([SYMDIFF, "hook", *args], input=stdin, capture_output=True,
                              text=True, timeout=60)  # fmt: skip

    root = str(tmp_path)
    for stdin in ("not json", "[]", json.dumps(_cc("Notification"))):
        res = run("claude-code", "--root", root, stdin=stdin)
        assert (res.returncode, res.stdout) == (0, "")
        assert res.stderr.startswith("symdiff hook: ") and res.stderr.count("\n") == 1
    assert not Path(journal.folder(root)).exists()  # nothing recorded
    res = run("event", "--agent", "codex", "--session", "c1", "--event", "tool-start",
              "--tool", "shell", "--tool-use-id", "u1", "--path", str(tmp_path / "a.py"),
              "--root", root)  # fmt: skip
    assert (res.returncode, res.stdout, res.stderr) == (0, "", "")
    line = json.loads(Path(journal.folder(root), "c1.jsonl").read_text())
    assert (line["agent"], line["kind"], line["paths"]) == ("codex", "tool-start", ["a.py"])
    res = run("event", "--agent", "codex", "--session", "c1", "--event", "explode")
    assert res.returncode == 0 and "must be one of" in res.stderr
    helped = subprocess.run([SYMDIFF, "hook", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "claude-code" in helped.stdout


def test_the_write_time_is_the_read_contents_when_a_write_raced_the_read(tmp_path: Path
                                                                          ) -> None:  # fmt: skip
    from symdiff.agents.attribute import write_time

    f = tmp_path / "f.py"
    f.write_text("one\n")
    st = f.stat()
    assert write_time(str(tmp_path), "f.py", st.st_mtime_ns) == st.st_ctime_ns
    read_mtime = st.st_mtime_ns - 5_000_000_000  # the content read was older than the file now
    assert write_time(str(tmp_path), "f.py", read_mtime) == read_mtime
    f.unlink()
    assert write_time(str(tmp_path), "f.py") == tmp_path.stat().st_mtime_ns  # a delete
