"""The replay of issue 24: the real `symdiff hook claude-code` fed Claude Code's documented
event JSON around real writes through every channel, with a daemon (the real daemon thread
and watchdog), without one, and with a daemon killed (-9) and restarted in the middle of a
turn. The oracle is the harness's own ledger of who wrote what."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import daemon_thread, git, wait_until
from mcp_servers import env, run_stdio

from symdiff.config import Settings
from symdiff.query.answer import DiffQuery, diff
from symdiff.workspace.sync import sync

SYMDIFF = str(Path(sys.executable).parent / "symdiff")
GAP_S = 0.03  # a person's save stays clear of a hook's moment by more than the file clock's tick
DB: dict[str, str] = {}  # {"SYMDIFF_DB": url} when the replay runs on PostgreSQL


def _env() -> dict[str, str]:
    return env(**DB)


@dataclass
class Expect:
    """One write the ledger knows: who made it."""

    path: str
    origin: str  # agent | edit | person
    session: str | None = None
    turn: int | None = None
    tool: str | None = None
    by: str | None = None
    git: str | None = None


@dataclass
class Replay:
    root: Path
    mode: str
    ledger: list[Expect] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    watch: subprocess.Popen[bytes] | None = None

    def hook(self, event: dict[str, Any]) -> str:
        body = {"session_id": "", "transcript_path": "/tmp/t.jsonl", "cwd": str(self.root),
                "permission_mode": "default", **event}
        res = subprocess.run([SYMDIFF, "hook", "claude-code", "--root", str(self.root)],
                             input=json.dumps(body).encode(), capture_output=True, timeout=120,
                             env=_env())  # fmt: skip
        assert res.returncode == 0
        assert res.stderr == b"", res.stderr
        return res.stdout.decode()

    def prompt(self, session: str) -> str:
        out = self.hook({"session_id": session, "hook_event_name": "UserPromptSubmit",
                         "prompt": "go on"})  # fmt: skip
        self.contexts.append(out)
        return out

    def stop(self, session: str) -> None:
        self.hook({"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False})

    @contextmanager
    def tool(self, session: str, name: str, tool_input: dict[str, Any], *,
             subagent: str | None = None, fail: bool = False) -> Iterator[str]:  # fmt: skip
        tid = "toolu_" + uuid.uuid4().hex[:20]
        extra = {} if subagent is None else {"agent_id": subagent, "agent_type": "general-purpose"}
        base = {"session_id": session, "tool_name": name, "tool_input": tool_input,
                "tool_use_id": tid, **extra}  # fmt: skip
        self.hook({**base, "hook_event_name": "PreToolUse"})
        yield tid
        end = "PostToolUseFailure" if fail else "PostToolUse"
        self.hook({**base, "hook_event_name": end, "tool_response": {}})

    def person(self, rel: str, text: str) -> None:
        time.sleep(GAP_S)
        (self.root / rel).write_text(text)
        self.ledger.append(Expect(rel, "person"))
        time.sleep(GAP_S)

    def bash(self, command: str) -> None:
        subprocess.run(["bash", "-c", command], cwd=self.root, check=True, capture_output=True,
                       env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"})  # fmt: skip


def _tree(root: Path) -> None:
    root.mkdir()
    git(root, "init", "-q")
    for name, body in {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 1\n",
                       "d.py": "def d( x ):\n    return x\n", "h.py": "def h():\n    return 1\n",
                       "m.py": "def m():\n    return 1\n"}.items():  # fmt: skip
        (root / name).write_text(body)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    subprocess.run([SYMDIFF, "index", str(root)], check=True, capture_output=True, env=_env())


@contextmanager
def _daemon(r: Replay) -> Iterator[None]:
    if r.mode == "daemon":
        with daemon_thread(Settings.resolve(r.root, host="mcp-test-host")):
            yield
    elif r.mode == "restart":
        r.watch = _start_watch(r.root)
        try:
            yield
        finally:
            r.watch.send_signal(signal.SIGTERM)
            r.watch.wait(30)
    else:
        yield


def _start_watch(root: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([SYMDIFF, "watch", "-q", "--no-history", str(root)], env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    status = root / ".symdiff" / "daemon.json"

    def ready() -> bool:
        try:
            data = json.loads(status.read_text())
        except (OSError, ValueError):
            return False
        return data.get("pid") == proc.pid and data.get("progress") is None

    wait_until(ready, timeout=60)
    return proc


def _scenario(r: Replay) -> None:
    s1, s2 = "sess-" + uuid.uuid4().hex[:8], "sess-" + uuid.uuid4().hex[:8]
    L = r.ledger
    # Turn 1.
    assert r.prompt(s1) == ""  # a first turn has nothing to be told
    with r.tool(s1, "Edit", {"file_path": str(r.root / "a.py"), "old_string": "1",
                             "new_string": "2"}):  # fmt: skip
        (r.root / "a.py").write_text("def a():\n    return 2\n")
    L.append(Expect("a.py", "agent", s1, 1, "Edit", "named"))
    with r.tool(s1, "Write", {"file_path": str(r.root / "new.py"), "content": "..."}):
        (r.root / "new.py").write_text("def new():\n    pass\n")
    L.append(Expect("new.py", "agent", s1, 1, "Write", "named"))
    with r.tool(s1, "Bash", {"command": "sed -i 's/return 1/return 10/' b.py"}):
        r.bash("sed -i 's/return 1/return 10/' b.py")
    L.append(Expect("b.py", "agent", s1, 1, "Bash", "window"))
    r.person("c.py", "def c():\n    return 1\n")  # during the turn, outside any tool call
    gen = "for i in $(seq 0 39); do printf 'def g%s():\\n    return %s\\n' $i $i > gen/g$i.py; done"
    with r.tool(s1, "Bash", {"command": "mkdir gen && " + gen}):
        r.bash("mkdir gen && " + gen)
    L.extend(Expect(f"gen/g{i}.py", "agent", s1, 1, "Bash", "window") for i in range(40))
    fmt = "python3 -c \"import pathlib; p = pathlib.Path('d.py'); " \
          "p.write_text(p.read_text().replace('( x )', '(x)'))\""
    with r.tool(s1, "Bash", {"command": fmt}):
        r.bash(fmt)
    L.append(Expect("d.py", "agent", s1, 1, "Bash", "window"))
    with r.tool(s1, "Bash", {"command": "sleep 1 && make test"}):  # a long call
        r.person("e.py", "def e():\n    return 1\n")
        L[-1] = Expect("e.py", "agent", s1, 1, "Bash", "window")  # the issue: `window`
    r.stop(s1)
    # Between turns: a person's save and commit.
    r.person("p.py", "def person():\n    return 1\n")
    if r.mode != "none":  # a save and a commit in one batch is `git` (docs/provenance.md)
        assert sync(r.root, timeout=20)
    git(r.root, "add", "-A")
    git(r.root, "commit", "-qm", "between turns")
    # Turn 2: told about p.py, then git inside Bash, a subagent, apply_edits over MCP.
    told = r.prompt(s1)
    context = json.loads(told)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert "p.py" in context["additionalContext"] and "person" in context["additionalContext"]
    assert "a.py" not in context["additionalContext"]
    (r.root / "b.py").write_text("def b():\n    return 99\n")  # a person, between tool calls
    r.ledger.append(Expect("b.py", "person"))
    time.sleep(GAP_S)
    with r.tool(s1, "Bash", {"command": "git checkout -- b.py"}):
        r.bash("git checkout -- b.py")
    L.append(Expect("b.py", "agent", s1, 2, "Bash", "window", git="checkout"))
    if r.mode == "none":  # no reconcile between the save and the checkout: no net change
        del L[-2:]
    with r.tool(s1, "Edit", {"file_path": str(r.root / "h.py")}):
        (r.root / "h.py").write_text("def h():\n    return 2\n")
    L.append(Expect("h.py", "agent", s1, 2, "Edit", "named"))
    if r.mode == "restart":  # kill the daemon mid-turn: the window lives on disk
        assert r.watch is not None
        with r.tool(s1, "Bash", {"command": "git stash"}):
            r.watch.send_signal(signal.SIGKILL)
            r.watch.wait(10)
            r.bash("git stash")
            r.watch = _start_watch(r.root)
    else:
        with r.tool(s1, "Bash", {"command": "git stash"}):
            r.bash("git stash")
    L.append(Expect("h.py", "agent", s1, 2, "Bash", "window", git="stash"))
    with r.tool(s1, "Edit", {"file_path": str(r.root / "s.py")}, subagent="agent-7"):
        (r.root / "s.py").write_text("def sub():\n    return 1\n")
    r.hook({"session_id": s1, "hook_event_name": "SubagentStop", "agent_id": "agent-7"})
    L.append(Expect("s.py", "agent", s1, 2, "Edit", "named"))
    with r.tool(s1, "mcp__symdiff__apply_edits", {"edits": "..."}):
        _apply_over_mcp(r.root)
    L.append(Expect("m.py", "edit", s1, 2))
    r.stop(s1)
    # Two sessions: s2 names x.py while s1's Bash window is open.
    r.prompt(s1)
    r.prompt(s2)
    with r.tool(s1, "Bash", {"command": "npm run build"}), \
            r.tool(s2, "Write", {"file_path": str(r.root / "x.py")}):
        (r.root / "x.py").write_text("def x():\n    return 1\n")
    L.append(Expect("x.py", "agent", s2, 1, "Write", "named"))
    r.stop(s2)
    r.stop(s1)
    _check(r, s1, s2)


def _apply_over_mcp(root: Path) -> None:
    async def check(session: Any) -> None:
        done = await session.call_tool("apply_edits", {"edits": [
            {"file": "m.py", "blocks": [{"search": "return 1", "replace": "return 5"}]}],
            "dry_run": False})  # fmt: skip
        assert not done.isError if hasattr(done, "isError") else not done.is_error

    db = ["--db", DB["SYMDIFF_DB"]] if DB else []
    run_stdio(["--root", str(root), *db], check, cwd=root)


def _records(root: Path, **kw: Any) -> list[dict[str, Any]]:
    settings = Settings.resolve(root, host="mcp-test-host", nearest=True)
    found = diff(settings, DiffQuery(since="1h", scope="all", limit=500, **kw))
    return list(reversed([dict(r) for r in found.records]))  # oldest first


def _check(r: Replay, s1: str, s2: str) -> None:
    if r.mode != "none":
        assert sync(r.root, timeout=20)
    records = _records(r.root)
    by_path: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_path.setdefault(rec["path"], []).append(rec)
    expected: dict[str, list[Expect]] = {}
    for e in r.ledger:
        expected.setdefault(e.path, []).append(e)
    assert set(by_path) == set(expected), (set(by_path) ^ set(expected))
    person = {"watch", "scan"} if r.mode != "none" else {"scan"}
    for path, wants in expected.items():
        got = by_path[path]
        assert len(got) == len(wants), (path, got)
        for want, rec in zip(wants, got, strict=True):
            info = rec["origin_info"] or {}
            if want.origin == "person":
                assert rec["origin"] in person, (path, rec)
                continue
            assert rec["origin"] == want.origin, (path, rec)
            assert (info.get("session"), info.get("turn")) == (want.session, want.turn), rec
            if want.tool is not None:
                assert (info["tool"], info["by"], info["agent"]) == (
                    want.tool, want.by, "claude-code"), rec
            if want.git is not None:
                assert info["git"]["operation"] == want.git, rec
    assert by_path["s.py"][0]["origin_info"]["subagent"] == "agent-7"
    assert by_path["a.py"][0]["origin_info"]["subagent"] is None
    # What did the agent do in turn N? Its records, whatever tool wrote them.
    for turn in (1, 2):
        mine = {rec["path"] for rec in _records(r.root, session=s1, turn=turn)}
        assert mine == {e.path for e in r.ledger if e.session == s1 and e.turn == turn}
    # What did anyone else change since my turn 1 ended?
    others = [rec["path"] for rec in _records(r.root, session=s1, since_turn=1)]
    saved = ["b.py"] if r.mode != "none" else []
    assert sorted(others) == sorted(["p.py", "x.py", *saved])
    person_only = {rec["path"] for rec in _records(r.root, origin="person")}
    assert person_only == {"c.py", "p.py", *saved}
    agents = {rec["path"] for rec in _records(r.root, origin="agent")}
    assert "c.py" not in agents and "m.py" in agents and "e.py" in agents
    # Sessions and turns are kept in the database and listed.
    out = subprocess.run([SYMDIFF, "sessions", str(r.root), "--json"], capture_output=True,
                         env=_env(), check=True, timeout=60)  # fmt: skip
    listed = {s["session"]: s for s in json.loads(out.stdout)}
    turns = listed[s1]["turns"]
    assert [t["turn"] for t in turns] == [1, 2, 3] and all(t["ended"] for t in turns)
    assert turns[0]["files"] == 45 and turns[0]["by_origin"] == {"agent": 45}
    assert turns[1]["by_origin"] == {"agent": 3 + len(saved), "edit": 1}


@pytest.mark.parametrize("mode", ["daemon", "none", "restart", "daemon-postgresql"])
def test_the_replay(mode: str, tmp_path: Path, request: pytest.FixtureRequest,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    DB.clear()
    if mode.endswith("-postgresql"):
        DB["SYMDIFF_DB"] = request.getfixturevalue("pg_url")
        monkeypatch.setenv("SYMDIFF_DB", DB["SYMDIFF_DB"])
        mode = mode.removesuffix("-postgresql")
    root = tmp_path / "ws"
    _tree(root)
    r = Replay(root.resolve(), mode)
    with _daemon(r) if mode != "none" else nullcontext():
        _scenario(r)
