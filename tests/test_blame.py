"""Blame and Agent Trace (issue 24, items 6 and 7).

The pure walk on small golden cases, then one real workspace: a git repository whose file is
written by imported commits, an agent's turns driven through the real `symdiff hook
claude-code` (Edit, Bash's `sed -i`), a person's saves and a rename, with no daemon (the hooks
record). The oracle is the test's own ledger of who wrote each line; `git blame --porcelain`
cross-checks the committed part; the Agent Trace records are validated against the schema's
copy in tests/fixtures/agent-trace/ and their ranges compared with the ledger's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agent_hooks import hook, symdiff, tool
from click.testing import CliRunner
from conftest import git
from mcp_servers import call, env, run_stdio, text_of

from symdiff.agents.blame import (
    BEFORE,
    UNKNOWN,
    UNRECORDED,
    Lines,
    carry,
    contributor,
    file_lines,
    lineage,
    ranges,
)
from symdiff.agents.trace import model_id
from symdiff.diffs.blobid import blob_id
from symdiff.store.filehistory import FileRow

SYMDIFF = str(Path(sys.executable).parent / "symdiff")
SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "agent-trace" /
                     "trace-record.schema.json").read_text())  # fmt: skip
GAP_S = 0.03
ZEROS = "0" * 40

# ---- the pure walk -------------------------------------------------------------------------


def _text(*lines: str) -> bytes:
    return "".join(f"{x}\n" for x in lines).encode()


def _row(i: int, old: bytes | None, new: bytes | None, *, origin: str = "watch",
         path: str = "f.py", old_path: str | None = None, ts: int | None = None,
         change: str = "modify") -> FileRow:  # fmt: skip
    return FileRow(i, ts if ts is not None else i * 1000, path, old_path, change,
                   None if old is None else blob_id(old), None if new is None else blob_id(new),
                   origin, None)  # fmt: skip


def _reader(*texts: bytes) -> Callable[[str | None], bytes | None]:
    known = {blob_id(t): t for t in texts}
    return lambda digest: None if digest is None else known.get(digest)


def test_carry_keeps_unchanged_lines_and_gives_the_rest_to_the_version() -> None:
    old = _text("a", "b", "c", "d")
    before = Lines(blob_id(old), old, [7, 8, 9, 10], [frozenset()] * 4)
    new = _text("top", "a", "B", "c", "d", "end")
    after = carry(before, old, new, 3)
    assert after.owners == [3, 7, 3, 9, 10, 3]
    assert after.replaced[2] == frozenset({8}) and after.replaced[0] == frozenset()
    assert carry(after, new, _text("a", "d"), 4).owners == [7, 10]  # deletions only
    no_eol = carry(before, old, b"a\nb\nc\nd", 5)  # the last line lost its newline: changed
    assert no_eol.owners == [7, 8, 9, 5]


def test_walk_commits_then_live_records_then_unrecorded_lines() -> None:
    v1, v2 = _text("a", "b"), _text("a", "b", "c")
    v3, v4 = _text("x", "a", "b", "c"), _text("x", "a", "b", "c", "now")
    rows = [_row(1, None, v1, origin="commit", change="add"),
            _row(2, v1, v2, origin="commit"),
            _row(3, v2, v3, origin="agent"),
            # the commit of the agent's save, imported after it: changes nothing
            _row(4, v2, v3, origin="commit"),
            # a partial commit that never was the work tree: skipped
            _row(5, v1, _text("zzz"), origin="commit")]  # fmt: skip
    found = file_lines(lambda p: rows, _reader(v1, v2, v3), "f.py", v4, blob_id(v4))
    assert found.lines.owners == [2, 0, 0, 1, UNRECORDED]  # indexes into found.versions


def test_a_gap_before_the_first_record_is_before_recording() -> None:
    base, v1 = _text("dirty", "a"), _text("dirty", "a", "agent")
    rows = [_row(1, None, _text("a"), origin="commit", change="add"),
            _row(2, base, v1, origin="agent")]  # fmt: skip
    found = file_lines(lambda p: rows, _reader(_text("a"), base, v1), "f.py", v1, blob_id(v1))
    assert found.lines.owners == [BEFORE, 0, 1]
    # Nothing recorded at all: every line is before recording.
    empty = file_lines(lambda p: [], _reader(), "f.py", v1, blob_id(v1))
    assert empty.lines.owners == [UNRECORDED] * 3
    # A version whose text is not kept: its lines are not known, the next change's are.
    lost = file_lines(lambda p: rows, _reader(_text("a"), base), "f.py", v1, blob_id(v1))
    assert lost.lines.owners == [UNKNOWN] * 3


def test_lineage_follows_renames_once_and_starts_after_a_delete() -> None:
    a, b = _text("a"), _text("a", "b")
    rows = {
        "old.py": [_row(1, None, a, path="old.py", change="add", ts=10),
                   _row(2, a, None, path="old.py", change="delete", ts=20),
                   _row(3, None, a, path="old.py", change="add", ts=30),
                   _row(4, a, a, path="new.py", old_path="old.py", change="rename", ts=40)],
        "new.py": [_row(4, a, a, path="new.py", old_path="old.py", change="rename", ts=40),
                   _row(5, a, b, path="new.py", ts=50),
                   # the history import's record of the same move, committed later
                   _row(6, a, b, path="new.py", old_path="old.py", change="rename",
                        origin="commit", ts=60)],
    }  # fmt: skip
    got = lineage(lambda p: rows.get(p, []), "new.py")
    assert [r.id for r in got] == [3, 4, 5, 6]
    found = file_lines(lambda p: rows.get(p, []), _reader(a, b), "new.py", b, blob_id(b))
    assert [found.versions[o].id for o in found.lines.owners] == [3, 5]


def test_a_move_committed_in_its_own_second_keeps_the_saves_before_it() -> None:
    """Saves, a move, and the move's commit, all within one second: the imported commit's
    record of the move takes the second's first moment as its time, before the saves. The live
    record of the move is the move itself, and the saves before it own their lines."""
    a, b, c = _text("a"), _text("a", "b"), _text("a", "b", "c")
    move = _row(5, c, c, path="new.py", old_path="old.py", change="rename", ts=100_600_000)
    imported = replace(move, id=6, origin="commit", ts_us=100_000_000)
    rows = {
        "old.py": [_row(1, None, a, path="old.py", change="add", ts=90_000_000),
                   _row(2, a, b, path="old.py", ts=100_100_000),
                   _row(3, b, c, path="old.py", origin="agent", ts=100_300_000),
                   imported, move],
        "new.py": [imported, move],
    }  # fmt: skip
    assert [r.id for r in lineage(lambda p: rows.get(p, []), "new.py")] == [1, 2, 3, 5]
    found = file_lines(lambda p: rows.get(p, []), _reader(a, b, c), "new.py", c, blob_id(c))
    assert [found.versions[o].id for o in found.lines.owners] == [1, 2, 3]


def test_a_commits_second_holds_its_history_up_to_the_version_it_committed() -> None:
    """Committer times are whole seconds: of the records made in the commit's second, those
    after the last that wrote the committed content (here: a move a moment later, as the
    fixture's person makes when the clock allows) are not the commit's history."""
    from symdiff.agents.trace import _before
    from symdiff.store.filehistory import FileRow

    def row(i: int, ts: float, path: str, old: str | None, new: str) -> FileRow:
        return FileRow(i, int(ts * 1e6), path, old, "modify" if old is None else "rename",
                       None, new, "watch", None)

    rows = [row(1, 99.5, "f.py", None, "a"), row(2, 100.2, "f.py", None, "b"),
            row(3, 100.0, "f.py", None, "b"), row(4, 100.9, "g.py", "f.py", "b"),
            row(5, 101.3, "f.py", None, "c")]
    assert [r.id for r in _before(rows, "f.py", "b", 101_000_000)] == [1, 2, 3]
    assert [r.id for r in _before(rows, "f.py", "zz", 101_000_000)] == [1]  # none wrote it
    assert _before(rows, "f.py", "b", None) == rows  # the work tree: every record


def test_a_later_commit_in_the_commits_second_is_not_its_history() -> None:
    """A move committed a moment after the commit, in its second, imported after it: its
    record takes the second's first moment as its time (and, imported later, sorts before the
    commit's own), yet it is no part of the commit's history. Counted, it ended the file's
    lineage there and made every line the commit changed `unknown`."""
    from symdiff.agents.trace import _before
    from symdiff.store.filehistory import oldest_first

    c2, a, c3 = _text("x"), _text("x", "agent"), _text("x", "agent", "sed")
    second = 100_000_000

    def imported(i: int, path: str, old: bytes, new: bytes, sha: str, *,
                 old_path: str | None = None) -> FileRow:  # fmt: skip
        return replace(_row(i, old, new, origin="commit", path=path, old_path=old_path,
                            ts=second, change="modify" if old_path is None else "rename"),
                       origin_info={"sha": sha})  # fmt: skip

    rows = sorted([_row(1, None, c2, origin="commit", change="add", ts=90_000_000),
                   _row(5, c2, a, origin="agent", ts=98_200_000),
                   _row(6, a, c3, origin="agent", ts=99_100_000),
                   imported(10, "f.py", c2, c3, "C3"),  # the commit traced
                   imported(11, "g.py", c3, c3, "C4", old_path="f.py"),  # the move's commit
                   _row(12, c3, c3, path="g.py", old_path="f.py", change="rename",
                        ts=second + 500_000)], key=oldest_first)  # fmt: skip
    cutoff = second + 1_000_000
    kept = _before(rows, "f.py", blob_id(c3), cutoff, frozenset({"C3"}))
    assert [r.id for r in kept] == [1, 5, 6, 10]
    found = file_lines(lambda p: [r for r in kept if p in (r.path, r.old_path)],
                       _reader(c2, a, c3), "f.py", c3, blob_id(c3))  # fmt: skip
    assert [found.versions[o].id for o in found.lines.owners] == [1, 5, 6]
    # Were C4 the commit's ancestor, its record would count (and end the file there).
    assert [r.id for r in _before(rows, "f.py", blob_id(c3), cutoff,
                                  frozenset({"C3", "C4"}))] == [1, 5, 6, 11, 10]  # fmt: skip


def test_a_commits_own_second_holds_its_ancestors_not_its_descendants(tmp_path: Path) -> None:
    import pygit2

    from symdiff.agents.trace import _same_second

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    shas = []
    for name, when in (("a", "2026-01-01T10:00:00Z"), ("b", "2026-01-01T10:00:05Z"),
                       ("c", "2026-01-01T10:00:05Z"), ("d", "2026-01-01T10:00:05Z"),
                       ("e", "2026-01-01T10:00:09Z")):  # fmt: skip
        (root / name).write_text(name)
        git(root, "add", "-A")
        git(root, "commit", "-qm", name, env={"GIT_COMMITTER_DATE": when,
                                              "GIT_AUTHOR_DATE": when})  # fmt: skip
        shas.append(git(root, "rev-parse", "HEAD").strip())
    repo = pygit2.Repository(str(root))
    a, _, c, d, e = (repo[sha] for sha in shas)
    assert _same_second(c) == {shas[1], shas[2]}  # b before it in its second; d after it
    assert _same_second(d) == {shas[1], shas[2], shas[3]}
    assert _same_second(a) == {shas[0]} and _same_second(e) == {shas[4]}


def test_ranges_group_runs_and_clip() -> None:
    got = ranges([1, 1, 2, 2, 2, 1], 2, 5)
    assert [(r.start_line, r.end_line, r.owner) for r in got] == [(2, 2, 1), (3, 5, 2)]


def test_contributor_and_model_ids() -> None:
    assert contributor("agent", {"session": "s"}) == "ai"
    assert contributor("edit", {"client": {"name": "claude-code"}}) == "ai"
    assert contributor("edit", {"client": "cli"}) == "human"
    assert contributor("edit", {"client": "cli", "session": "s"}) == "ai"
    assert contributor("watch", None) == contributor("scan", {"mtime": 1}) == "human"
    assert contributor("commit", {}) == contributor("git", {}) == contributor(None, None)
    assert model_id("claude-sonnet-4-5-20250929") == "anthropic/claude-sonnet-4-5-20250929"
    assert model_id("openai/gpt-5") == "openai/gpt-5" and model_id(None) is None


# ---- a real workspace and its ledger -------------------------------------------------------


@dataclass
class Line:
    text: str
    owner: tuple[Any, ...]  # ("commit", sha) | ("agent", session, turn, tool) | ("person",)
    written: int  # the ledger's clock: which step wrote it
    replaced: tuple[Any, ...] | None = None  # the owner of the line this one replaced
    committed: str | None = None  # the commit that first held it


@dataclass
class Ledger:
    root: Path
    path: str
    lines: list[Line] = field(default_factory=list)
    step: int = 0
    at: dict[str, list[Line]] = field(default_factory=dict)  # the lines each commit held

    def write(self) -> None:
        (self.root / self.path).write_text("".join(x.text + "\n" for x in self.lines))

    def _index(self, text: str) -> int:
        return [x.text for x in self.lines].index(text)

    def replace(self, text: str, new: list[str], owner: tuple[Any, ...]) -> None:
        self.step += 1
        i = self._index(text)
        gone = self.lines[i]
        self.lines[i:i + 1] = [Line(t, owner, self.step, gone.owner) for t in new]

    def insert(self, after: str | None, new: list[str], owner: tuple[Any, ...]) -> None:
        self.step += 1
        i = 0 if after is None else self._index(after) + 1
        self.lines[i:i] = [Line(t, owner, self.step) for t in new]

    def commit(self, message: str, *extra: str) -> str:
        git(self.root, "add", "-A", *extra)
        git(self.root, "commit", "-qm", message)
        sha = git(self.root, "rev-parse", "HEAD").strip()
        for x in self.lines:
            if x.committed is None:
                x.committed = sha
                if x.owner == ("pending",):
                    x.owner = ("commit", sha)
        self.step += 1
        self.at[sha] = [replace(x) for x in self.lines]
        return sha








def person(led: Ledger, change: Callable[[], None], *, record: bool = True) -> None:
    time.sleep(GAP_S)
    change()
    led.write()
    if record:
        symdiff("index", str(led.root), cwd=led.root)


@dataclass
class World:
    root: Path
    ledger: Ledger
    session: str
    commits: dict[str, str]


MODEL = "claude-sonnet-4-5-20250929"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = (tmp_path_factory.mktemp("blame") / "ws").resolve()
    root.mkdir()
    git(root, "init", "-q")
    led = Ledger(root, "f.py")
    s = "sess-blame"
    led.insert(None, [f"L{i} = {i}" for i in range(6)], ("pending",))
    led.write()
    c1 = led.commit("one")
    led.replace("L2 = 2", ["C2a = 'two'"], ("pending",))
    led.insert("L4 = 4", ["C2b = 'two b'"], ("pending",))
    led.write()
    c2 = led.commit("two")
    symdiff("index", str(root), cwd=root)  # the baseline
    symdiff("history", "import", str(root), cwd=root)
    hook(root, {"session_id": s, "hook_event_name": "SessionStart", "source": "startup",
                "model": MODEL})  # fmt: skip
    # Turn 1: the agent's Edit replaces one committed line and adds three.
    hook(root, {"session_id": s, "hook_event_name": "UserPromptSubmit", "prompt": "one"})
    edit = ("agent", s, 1, "Edit")

    def turn1() -> None:
        led.replace("L1 = 1", ["A1x = 'agent'"], edit)
        led.insert("L3 = 3", ["A1y = 'agent y'", "A1z = 'agent z'", "A1w = 'agent w'"], edit)
        led.write()

    tool(root, s, "Edit", {"file_path": str(root / "f.py")}, turn1)
    hook(root, {"session_id": s, "hook_event_name": "Stop", "stop_hook_active": False})
    # A person edits one of the agent's fresh lines and adds one of their own.
    person(led, lambda: (led.replace("A1z = 'agent z'", ["P1 = 'person'"], ("person",)),
                         led.insert("L5 = 5", ["P2 = 'person 2'"], ("person",))))
    # Turn 2: sed through Bash on a committed line (a window, not named).
    hook(root, {"session_id": s, "hook_event_name": "UserPromptSubmit", "prompt": "two"})

    def turn2() -> None:
        subprocess.run(["sed", "-i", "s/^C2a = 'two'$/A2 = 'sed'/", "f.py"], cwd=root,
                       check=True)  # fmt: skip
        led.replace("C2a = 'two'", ["A2 = 'sed'"], ("agent", s, 2, "Bash"))

    tool(root, s, "Bash", {"command": "sed -i ... f.py"}, turn2)
    hook(root, {"session_id": s, "hook_event_name": "Stop", "stop_hook_active": False})
    c3 = led.commit("agent work")
    symdiff("history", "import", str(root), cwd=root)  # c3 is recorded after the saves
    # A person moves the file; the move is recorded live, then committed and imported.
    def move() -> None:
        git(root, "mv", "f.py", "g.py")
        led.path = "g.py"

    person(led, move)
    c4 = led.commit("rename")
    symdiff("history", "import", str(root), cwd=root)
    # Turn 3 writes at the top of the renamed file.
    hook(root, {"session_id": s, "hook_event_name": "UserPromptSubmit", "prompt": "three"})

    def turn3() -> None:
        led.insert(None, ["A3 = 'top'"], ("agent", s, 3, "Write"))
        led.write()

    tool(root, s, "Write", {"file_path": str(root / "g.py")}, turn3)
    hook(root, {"session_id": s, "hook_event_name": "Stop", "stop_hook_active": False})
    # A save no record holds yet (no daemon, no index since).
    person(led, lambda: led.replace("P2 = 'person 2'", ["U = 'unrecorded'"], ("unrecorded",)),
           record=False)  # fmt: skip
    return World(root, led, s, {"c1": c1, "c2": c2, "c3": c3, "c4": c4})


def _tag(r: dict[str, Any]) -> tuple[Any, ...]:
    info = r["origin_info"] or {}
    if r["origin"] == "commit":
        return ("commit", info["sha"])
    if r["origin"] == "agent":
        return ("agent", info["session"], info["turn"], info["tool"])
    if r["origin"] in ("watch", "scan"):
        return ("person",)
    return ("unrecorded",) if r["note"] == "not recorded yet" else (r["note"],)


def _per_line(found: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for r in found["ranges"]:
        out.extend([_tag(r)] * (r["end_line"] - r["start_line"] + 1))
    return out


def test_blame_owns_every_line_as_the_ledger_says(world: World) -> None:
    out = symdiff("blame", "g.py", "--json", cwd=world.root)
    found = json.loads(out)
    assert found["path"] == "g.py" and found["lines"] == len(world.ledger.lines)
    assert _per_line(found) == [x.owner for x in world.ledger.lines]
    agent = next(r for r in found["ranges"]
                 if r["origin"] == "agent" and r["origin_info"]["turn"] == 1)  # fmt: skip
    assert agent["path"] == "f.py" and agent["contributor"] == "ai"  # written before the move
    assert set(agent["origin_info"]) >= {"agent", "session", "turn", "tool", "tool_use_id",
                                         "subagent", "by"}  # fmt: skip
    c1 = next(r for r in found["ranges"] if r["origin"] == "commit")
    assert c1["origin_info"]["summary"] == "one" and c1["origin_info"]["author"] == "t <t@t>"


def test_committed_lines_agree_with_git_blame(world: World) -> None:
    porcelain = git(world.root, "blame", "--porcelain", "g.py")
    shas = [line.split()[0] for line in porcelain.splitlines()
            if len(line) > 40 and line[40] == " " and all(c in "0123456789abcdef"
                                                         for c in line[:40])]  # fmt: skip
    assert len(shas) == len(world.ledger.lines)
    # git agrees with the ledger on which commit first held each line...
    assert shas == [x.committed or ZEROS for x in world.ledger.lines]
    # ...and so every line symdiff gives to a commit is that commit's to git too.
    ours = _per_line(json.loads(symdiff("blame", "g.py", "--json", cwd=world.root)))
    for tag, sha in zip(ours, shas, strict=True):
        if tag[0] == "commit":
            assert tag[1] == sha


def test_blame_lines_option_and_text_output(world: World) -> None:
    found = json.loads(symdiff("blame", str(world.root / "g.py"), "-L", "2,3", "--json",
                               cwd=world.root.parent))  # fmt: skip
    assert found["ranges"][0]["start_line"] == 2 and found["ranges"][-1]["end_line"] == 3
    text = symdiff("blame", "g.py", cwd=world.root)
    assert f"agent claude-code session {world.session} turn 3 Write" in text
    assert "(not recorded yet)" in text and "commit " in text and "person (scan)" in text
    runner = CliRunner()
    from symdiff.cli.main import cli

    bad = runner.invoke(cli, ["blame", str(world.root / "g.py"), "-L", "9,2"])
    assert bad.exit_code == 2 and "invalid_args" in bad.output
    missing = runner.invoke(cli, ["blame", str(world.root / "nope.py")])
    assert missing.exit_code == 1 and "tool_failed" in missing.output


def _kinds_of(record: dict[str, Any], path: str) -> dict[int, str]:
    [entry] = [f for f in record["files"] if f["path"] == path]
    out = {}
    for conv in entry["conversations"]:
        for r in conv["ranges"]:
            for n in range(r["start_line"], r["end_line"] + 1):
                assert n not in out
                out[n] = conv["contributor"]["type"]
    return out


KINDS = {"agent": "ai", "person": "human", "commit": "unknown", "pending": "unknown",
         "unrecorded": "unknown"}


def test_trace_of_the_agents_commit(world: World) -> None:
    c3 = world.commits["c3"]
    record = json.loads(symdiff("trace", c3, cwd=world.root))
    jsonschema.validate(record, SCHEMA, format_checker=jsonschema.FormatChecker())
    assert record["vcs"] == {"type": "git", "revision": c3}
    assert record["version"] == "0.1.0" and record["timestamp"].endswith("Z")
    # c3's version of f.py, as the ledger held it then (before the move and turn 3)
    lines = world.ledger.at[c3]
    assert "".join(x.text + "\n" for x in lines) == git(world.root, "show", f"{c3}:f.py")
    want = {n: KINDS[x.owner[0]] for n, x in enumerate(lines, 1) if x.committed == c3}
    [mixed] = [n for n, x in enumerate(lines, 1)
               if x.owner == ("person",) and x.replaced is not None and x.replaced[0] == "agent"]
    want[mixed] = "mixed"  # a person's edit of the agent's fresh line
    assert _kinds_of(record, "f.py") == want
    assert sorted(n for n, k in want.items() if k == "ai") == [
        n for n, x in enumerate(lines, 1) if x.owner[0] == "agent" and x.committed == c3]
    ai = [c for f in record["files"] for c in f["conversations"]
          if c["contributor"]["type"] == "ai"]  # fmt: skip
    assert ai and all(c["contributor"]["model_id"] == f"anthropic/{MODEL}" for c in ai)
    sessions = record["metadata"]["dev.symdiff"]["sessions"]
    assert sessions == {world.session: {"agent": "claude-code", "model": MODEL, "turns": [1, 2]}}


def test_trace_of_imported_history_and_a_pure_rename(world: World) -> None:
    c2 = json.loads(symdiff("trace", world.commits["c2"], cwd=world.root))
    jsonschema.validate(c2, SCHEMA)
    assert set(_kinds_of(c2, "f.py").values()) == {"unknown"}  # a commit's lines: no one known
    c4 = json.loads(symdiff("trace", cwd=world.root))  # HEAD
    jsonschema.validate(c4, SCHEMA)
    assert c4["vcs"]["revision"] == world.commits["c4"]
    assert c4["files"] == [{"path": "g.py", "conversations": []}]


def test_trace_of_the_worktree(world: World) -> None:
    record = json.loads(symdiff("trace", "--worktree", cwd=world.root))
    jsonschema.validate(record, SCHEMA)
    assert "vcs" not in record
    led = world.ledger
    want = {n: KINDS[x.owner[0]] for n, x in enumerate(led.lines, 1) if x.committed is None}
    assert _kinds_of(record, "g.py") == want
    assert set(want.values()) == {"ai", "unknown"}


def test_trace_refuses_what_it_cannot_answer(world: World, tmp_path: Path) -> None:
    from symdiff.cli.main import cli

    runner = CliRunner()
    bad = runner.invoke(cli, ["trace", "nosuchrev", "--root", str(world.root)])
    assert bad.exit_code == 2 and "no commit 'nosuchrev'" in bad.output
    both = runner.invoke(cli, ["trace", "HEAD", "--worktree", "--root", str(world.root)])
    assert both.exit_code == 2
    outside = runner.invoke(cli, ["trace", "--root", str(tmp_path)])
    assert outside.exit_code == 2 and "git work tree" in outside.output


def test_blame_over_mcp(world: World) -> None:
    async def check(session: Any) -> None:
        got = await call(session, "blame", {"path": "g.py", "start_line": 1, "end_line": 2})
        assert not got.is_error, text_of(got)
        found = got.structured_content
        assert found is not None and found["path"] == "g.py"
        assert _per_line(found) == [x.owner for x in world.ledger.lines[:2]]
        bad = await call(session, "blame", {"path": "../outside.py"})
        assert bad.is_error and text_of(bad).startswith("invalid_args: ")
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["blame"].annotations is not None and tools["blame"].annotations.read_only_hint
        jsonschema.Draft202012Validator.check_schema(tools["blame"].output_schema)

    run_stdio(["--root", str(world.root)], check, cwd=world.root)


def test_the_documented_post_commit_hook_keeps_the_trace_as_a_note(tmp_path: Path) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "agents.md").read_text()
    section = doc[doc.index("### Keeping traces beside commits"):]
    script = section[section.index("```sh\n") + 6:section.index("\n```", section.index("```sh"))]
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    symdiff("index", str(root), cwd=root)
    hook(root, {"session_id": "N", "hook_event_name": "UserPromptSubmit", "prompt": "p"})
    tool(root, "N", "Write", {"file_path": str(root / "a.py")},
         lambda: (root / "a.py").write_text("x = 1\ny = 2\n"))
    hook_file = root / ".git" / "hooks" / "post-commit"
    hook_file.write_text(script + "\n")
    hook_file.chmod(0o755)
    path = f"{Path(sys.executable).parent}:{env()['PATH']}"
    subprocess.run(["git", "commit", "-qam", "agent"], cwd=root, check=True, timeout=120,
                   env={**env(PATH=path), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(tmp_path)})  # fmt: skip
    note = json.loads(git(root, "notes", "--ref=agent-trace", "show", "HEAD"))
    jsonschema.validate(note, SCHEMA)
    assert note["vcs"]["revision"] == git(root, "rev-parse", "HEAD").strip()
    assert _kinds_of(note, "a.py") == {2: "ai"}


@pytest.mark.postgres
def test_blame_and_trace_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    git(root, "init", "-q")
    (root / "m.py").write_text("a = 1\nb = 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    sha = git(root, "rev-parse", "HEAD").strip()
    symdiff("index", str(root), "--db", pg_url, cwd=root)
    symdiff("history", "import", str(root), "--db", pg_url, cwd=root)
    time.sleep(GAP_S)
    (root / "m.py").write_text("a = 1\nmine = 3\nb = 2\n")
    symdiff("index", str(root), "--db", pg_url, cwd=root)
    found = json.loads(symdiff("blame", "m.py", "--json", "--db", pg_url, cwd=root))
    assert _per_line(found) == [("commit", sha), ("person",), ("commit", sha)]
    git(root, "commit", "-qam", "mine")
    record = json.loads(symdiff("trace", "--db", pg_url, cwd=root))
    jsonschema.validate(record, SCHEMA)
    assert _kinds_of(record, "m.py") == {2: "human"}
