"""The MCP server from a real MCP client (the SDK's `ClientSession`): the tools' rules in this
process over the SDK's in-memory transport, and `symdiff serve` as a real process over stdio
(startup) and streamable HTTP (every rule again)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from mcp.client.session import ClientSession
from mcp_servers import (
    HOST,
    Check,
    call,
    http_server,
    run_http,
    run_memory,
    run_stdio,
    text_of,
)
from mcp_types import TextContent

from symdiff.cli.main import cli
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.store import Mutation, Store
from symdiff.store.blobs import pack

# The published ToolCallContent schema (ACP v2), as tests/test_acp.py uses it.
ACP_SCHEMA = Path(__file__).parent / "fixtures" / "acp" / "v2_schema.toolcallcontent.json"


@dataclass(frozen=True)
class Workspace:
    root: Path
    db_url: str


def _record(store: Store, ws_id: int, path: str, minutes: float, scope: Scope,
            *, old: bytes | None = None, new: bytes | None = None) -> None:
    blobs = tuple(pack(b) for b in (old, new) if b is not None)
    store.apply(ws_id, [Mutation(blobs=blobs, change=FileChange(
        path=path, old_path=None, timestamp=datetime.now(UTC) - timedelta(minutes=minutes),
        change_type=ChangeType.MODIFY, lines_added=1, lines_removed=1, scope=scope,
        language="python",
        symbols=(SymbolChange("f", "function", SymbolChangeType.MODIFIED, 1, 2),),
        old_hash=None if old is None else blobs[0].hash,
        new_hash=None if new is None else blobs[-1].hash,
    ))])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """60 impl changes in the last hour, 3 older test changes, one 30-hour-old change."""
    base = tmp_path_factory.mktemp("mcp")
    root = (base / "ws").resolve()
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "b.txt").write_text("one\nthree\n")
    db = base / "db" / "index.db"
    db.parent.mkdir()
    url = f"sqlite:///{db}"
    with Store(url) as store:
        ws = store.ensure_workspace(str(root), HOST)
        _record(store, ws.id, "old.py", 30 * 60, Scope.IMPL)
        for i in range(3):
            _record(store, ws.id, f"tests/test_{i}.py", 50 + i, Scope.TEST)
        for i in range(60):
            _record(store, ws.id, f"src/m{i}.py", i * 0.5, Scope.IMPL,
                    old=b"x = 1\n", new=f"x = {i}\n".encode())
    return Workspace(root, url)


def _server_args(ws: Workspace, *extra: str) -> list[str]:
    return ["--root", str(ws.root), "--db", ws.db_url, *extra]


def run_here(ws: Workspace, check: Check) -> None:
    """`check` in a session with the server in this process (what `serve` runs, no transport)."""
    run_memory(check, ws.root, db=ws.db_url)


@pytest.fixture(scope="module")
def http_url(workspace: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`symdiff serve --http 127.0.0.1:<port>` running as a subprocess."""
    with http_server(_server_args(workspace), tmp_path_factory.mktemp("http")) as served:
        yield served.url


async def records(session: ClientSession, **args: Any) -> list[dict[str, Any]]:
    result = await call(session, "diff", args)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    items: list[dict[str, Any]] = result.structured_content["result"]
    first, *rest = [b.text for b in result.content if isinstance(b, TextContent)]
    assert json.loads(first) == items  # the first text block is the same JSON array
    cursor = result.structured_content["cursor"]  # and the last says where to continue
    assert rest[-1].startswith(f"cursor: {cursor} (")
    assert isinstance(result.structured_content["more"], bool)
    return items


async def check_tool_listing(session: ClientSession, *, expect: set[str]) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == expect
    diff = tools["diff"]
    props = diff.input_schema["properties"]
    assert set(props) == {"since", "limit", "scope", "include_patch", "workspace", "origin",
                          "path", "cursor", "reader", "against", "session", "turn",
                          "since_turn", "include_impact"}
    assert props["since"]["type"] == "string" and props["since"]["default"] == "24h"
    assert props["scope"]["enum"] == ["impl", "test", "all"]
    assert "type" not in props["limit"]  # any JSON value is accepted, then normalised
    assert "720h" in props["since"]["description"]
    assert diff.description and "symbol" in diff.description
    assert diff.output_schema is not None
    assert diff.output_schema["properties"]["result"]["type"] == "array"
    jsonschema.Draft202012Validator.check_schema(diff.input_schema)
    jsonschema.Draft202012Validator.check_schema(diff.output_schema)
    td = tools["text_diff"]
    assert {"path_a", "path_b", "text_a", "text_b", "label_a", "label_b",
            "context_lines"} == set(td.input_schema["properties"])
    assert td.output_schema is not None and "identical" in td.output_schema["properties"]
    assert diff.annotations is not None and diff.annotations.read_only_hint
    impact = tools["impact"]
    assert set(impact.input_schema["properties"]) == {"since", "against", "session", "turn",
                                                      "symbols", "depth"}
    assert impact.output_schema is not None and set(impact.output_schema["required"]) == {
        "changed", "callers", "tests", "run"}
    jsonschema.Draft202012Validator.check_schema(impact.input_schema)
    jsonschema.Draft202012Validator.check_schema(impact.output_schema)


async def check_diff_rules(session: ClientSession) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    output_schema = tools["diff"].output_schema
    assert output_schema is not None

    default = await records(session)
    assert len(default) == 50
    assert [r["path"] for r in default[:3]] == ["src/m0.py", "src/m1.py", "src/m2.py"]
    stamps = [r["timestamp"] for r in default]
    assert stamps == sorted(stamps, reverse=True)
    assert default[0]["symbols"] == [{"name": "f", "kind": "function",
                                      "change_type": "modified", "start_line": 1,
                                      "end_line": 2}]
    whole = await call(session, "diff", {})
    assert whole.structured_content is not None and whole.structured_content["more"] is True
    jsonschema.validate(whole.structured_content, output_schema)

    for limit in (0, 501, -3, 2.5, "ten", None, True, [1], {"n": 1}):
        assert len(await records(session, limit=limit)) == 50, limit
    assert len(await records(session, limit=7)) == 7
    assert len(await records(session, limit=500)) == 60
    # scope before limit: the 3 test changes are older than 50 impl changes.
    tests = await records(session, scope="test", limit=2)
    assert [r["path"] for r in tests] == ["tests/test_0.py", "tests/test_1.py"]
    assert len(await records(session, scope="test")) == 3
    assert len(await records(session, scope="all", limit=500)) == 63
    assert len(await records(session, since="31h", limit=500)) == 61
    assert len(await records(session, since="100000h", limit=500)) == 61  # clamped to 720h
    assert len(await records(session, since=None, scope=None, limit=500)) == 60
    assert len(await records(session, since="31h", scope="all", limit=500)) == 64
    assert len(await records(session, since="1m", scope="all", limit=500)) < 60

    patched = await records(session, limit=1, include_patch=True)
    acp = patched[0]["acp"]
    assert acp["changes"][0]["path"] == "/".join([str(Path(acp["changes"][0]["path"]).parent),
                                                    "m0.py"])
    assert acp["patch"]["format"] == "git_patch" and "+x = 0" in acp["patch"]["text"]
    jsonschema.validate(acp, json.loads(ACP_SCHEMA.read_text()))


async def check_diff_errors(session: ClientSession) -> None:
    cases = {
        json.dumps({"since": "1 day"}): 'invalid_args: since: time: unknown unit " day" in '
                                        'duration "1 day"',
        json.dumps({"since": "7d"}): 'invalid_args: since: time: unknown unit "d" in duration '
                                     '"7d"',
        json.dumps({"since": "-1h"}): 'invalid_args: since must not be negative, got "-1h"',
        json.dumps({"since": 24}): "invalid_args: since must be a string, got 24",
        json.dumps({"scope": "docs"}): 'invalid_args: scope must be "impl", "test" or "all", '
                                       'got "docs"',
        json.dumps({"scope": "docs", "since": "7d"}): "invalid_args: since",
    }
    for args, prefix in cases.items():
        result = await call(session, "diff", json.loads(args))
        assert result.is_error, args
        assert text_of(result).startswith(prefix), (args, text_of(result))
        assert result.structured_content is None


async def check_text_diff(session: ClientSession, root: Path) -> None:
    same = await call(session, "text_diff", {"text_a": '{"k": 1}\n', "text_b": '{"k": 1}\n'})
    assert not same.is_error and same.structured_content is not None
    assert same.structured_content["identical"] is True
    text = await call(session, "text_diff", {"text_a": "[1]\n", "text_b": "[2]\n"})
    assert text.structured_content is not None
    assert "-[1]\n+[2]\n" in text.structured_content["diff"]
    paths = await call(session, "text_diff", {"path_a": str(root / "a.txt"),
                                              "path_b": str(root / "b.txt")})
    assert paths.structured_content is not None, text_of(paths)
    assert "+three" in paths.structured_content["diff"]
    assert "acp" in paths.structured_content
    denied = await call(session, "text_diff", {"path_a": "/etc/passwd",
                                               "path_b": str(root / "a.txt")})
    assert denied.is_error and text_of(denied).startswith("fs_denied: ")
    mixed = await call(session, "text_diff", {"path_a": str(root / "a.txt"), "text_b": "x"})
    assert mixed.is_error and text_of(mixed).startswith("invalid_args: ")
    wide = await call(session, "text_diff", {"text_a": "a", "text_b": "b", "context_lines": 21})
    assert wide.is_error and text_of(wide).startswith("invalid_args: ")
    folder = await call(session, "text_diff", {"path_a": str(root), "path_b": str(root)})
    assert folder.is_error and text_of(folder).startswith("tool_failed: ")


def test_stdio_starts_and_lists_tools_with_schemas(workspace: Workspace) -> None:
    """A real `symdiff serve` over stdio, as an agent host starts it: no --root (the working
    directory), its flags (--db, --read-only) reach the server, and a call is answered."""
    async def check(session: ClientSession) -> None:
        await check_tool_listing(session, expect={"diff", "text_diff", "symbol_history",
                                                 "symbol_source", "blame", "impact"})
        assert len(await records(session)) == 50  # the root is the working directory
    run_stdio(["--db", workspace.db_url, "--read-only"], check, cwd=workspace.root)


def test_lists_tools_with_schemas(workspace: Workspace) -> None:
    async def check(session: ClientSession) -> None:
        await check_tool_listing(session, expect={"diff", "text_diff", "apply_edits",
                                                 "symbol_history", "symbol_source",
                                                 "restore_symbol", "blame", "undo_turn", "impact"})
    run_here(workspace, check)


def test_diff_rules(workspace: Workspace) -> None:
    run_here(workspace, check_diff_rules)


def test_diff_errors_are_tool_errors(workspace: Workspace) -> None:
    run_here(workspace, check_diff_errors)


def test_text_diff(workspace: Workspace) -> None:
    async def check(session: ClientSession) -> None:
        await check_text_diff(session, workspace.root)
    run_here(workspace, check)


def test_stdio_serves_before_anything_is_indexed(tmp_path: Path) -> None:
    """Startup over stdio on a tree never indexed: it answers, and creates nothing there."""
    root = (tmp_path / "fresh").resolve()
    root.mkdir()
    ws = Workspace(root, f"sqlite:///{root / '.symdiff' / 'index.db'}")

    async def check(session: ClientSession) -> None:
        assert await records(session) == []
        bad = await call(session, "diff", {"scope": "nope"})
        assert bad.is_error and text_of(bad).startswith("invalid_args: scope")
    run_stdio(_server_args(ws), check, cwd=root)
    assert not (root / ".symdiff").exists()


def test_http_transport(workspace: Workspace, http_url: str) -> None:
    async def check(session: ClientSession) -> None:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert {"diff", "text_diff"} <= tools
        await check_diff_rules(session)
        await check_diff_errors(session)
        await check_text_diff(session, workspace.root)
    run_http(http_url, check)


def test_bad_http_address_exits_2(workspace: Workspace) -> None:
    run = CliRunner().invoke(cli, ["serve", *_server_args(workspace, "--http", "localhost")])
    assert run.exit_code == 2
    assert "invalid_args: --http wants HOST:PORT" in run.stderr


def test_an_unconfirmed_answer_says_it_may_be_stale(workspace: Workspace) -> None:
    """A daemon holds the workspace lock but never acknowledges cookies (it is stuck): the
    answer still comes, after the 1 s bound, and says itself that it may be stale."""
    from symdiff.config import Settings
    from symdiff.workspace.layout import COOKIE_DIR
    from symdiff.workspace.lock import workspace_lock

    settings = Settings.resolve(workspace.root, db=workspace.db_url, host=HOST)
    (workspace.root / COOKIE_DIR).mkdir(parents=True, exist_ok=True)  # as a daemon has it

    async def check(session: ClientSession) -> None:
        result = await call(session, "diff", {"since": "2h", "limit": 100})
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["stale"] is True
        assert len(result.structured_content["result"]) == 60
        blocks = [b.text for b in result.content if isinstance(b, TextContent)]
        assert len(blocks) == 3 and blocks[1].startswith("warning: the symdiff daemon")
        assert blocks[2].startswith("cursor: ")

    with workspace_lock(settings.root, settings.host):
        run_here(workspace, check)

    async def fresh(session: ClientSession) -> None:  # no daemon: nothing to wait for
        result = await call(session, "diff", {"since": "2h"})
        assert result.structured_content is not None
        assert "stale" not in result.structured_content
    run_here(workspace, fresh)


def test_the_answer_says_when_no_daemon_watches_and_when_nothing_is_indexed(
        workspace: Workspace, tmp_path: Path) -> None:
    """An agent reads the tool's text, not the CLI's stderr: an answer from an unwatched index
    names the time it is current to, and one from an empty index says why it is empty."""
    async def unwatched(session: ClientSession) -> None:
        result = await call(session, "diff", {"since": "2h", "scope": "all"})
        assert result.structured_content is not None
        newest = result.structured_content["result"][0]["timestamp"]
        blocks = [b.text for b in result.content if isinstance(b, TextContent)]
        assert blocks[1] == (f"note: no symdiff daemon watches {workspace.root}: these are the "
                             f"changes recorded up to {newest}; start `symdiff watch` there "
                             "to keep the answer current")
        assert len(blocks) == 3 and blocks[2].startswith("cursor: ")
    run_here(workspace, unwatched)

    async def beyond(session: ClientSession) -> None:
        result = await call(session, "diff", {"since": "2000h", "scope": "all", "limit": 500})
        assert result.structured_content is not None
        assert len(result.structured_content["result"]) == 64  # the 30-hour-old one too
        blocks = [b.text for b in result.content if isinstance(b, TextContent)]
        assert blocks[1] == ("note: since 2000h is longer than 720h, the longest window: these "
                             "are the last 720h (symbol_history follows a symbol through older "
                             "records)")
        assert blocks[2].startswith("note: no symdiff daemon watches")
    run_here(workspace, beyond)

    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = Workspace(empty, f"sqlite:///{tmp_path / 'none.db'}")

    async def unindexed(session: ClientSession) -> None:
        result = await call(session, "diff", {})
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["result"] == []
        blocks = [b.text for b in result.content if isinstance(b, TextContent)]
        assert blocks[1].startswith(f"note: nothing is indexed for {empty} yet, so no change "
                                    "is recorded: start `symdiff watch` there")
        assert len(blocks) == 3
    run_here(nothing, unindexed)


def test_text_diff_paths_are_relative_to_the_root(workspace: Workspace) -> None:
    async def check(session: ClientSession) -> None:
        ok = await call(session, "text_diff", {"path_a": "a.txt", "path_b": "b.txt"})
        assert not ok.is_error, text_of(ok)
        assert ok.structured_content is not None
        assert ok.structured_content["diff"].startswith("--- a.txt\n+++ b.txt\n")
        out = await call(session, "text_diff", {"path_a": "../db/index.db", "path_b": "a.txt"})
        assert out.is_error and text_of(out).startswith("fs_denied: ")
    run_here(workspace, check)
