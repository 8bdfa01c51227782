"""Every argument error over MCP is `invalid_args: <argument> must be <what>, got <value>`, in
this process and over real HTTP; a request whose JSON text is not Unicode gets that answer too
(symdiff.mcp.wire), where it used to get no reply at all: over real stdio and HTTP, since that
answer is the transport's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp_servers import (
    HttpServer,
    RawStdio,
    call,
    http_server,
    indexed_tree,
    post,
    rpc,
    run_http,
    run_memory,
    session,
    text_of,
)

NEW_FILE = [{"file": "new.txt", "blocks": [{"search": "", "replace": "x\n"}]}]
TYPED = "a boolean (true or false)"
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("diff", {"workspace": 5}, "workspace must be a string, got 5"),
    ("diff", {"include_patch": "yes"}, f'include_patch must be {TYPED}, got "yes"'),
    ("diff", {"include_patch": 1}, f"include_patch must be {TYPED}, got 1"),
    ("diff", {"workspace": "/x\0"}, "this server answers only for "),
    ("text_diff", {"text_a": "a", "text_b": "b", "context_lines": "x"},
     'context_lines must be an integer, got "x"'),
    ("text_diff", {"text_a": "a", "text_b": "b", "context_lines": "3"},
     'context_lines must be an integer, got "3"'),
    ("text_diff", {"text_a": "a", "text_b": "b", "context_lines": 2.5},
     "context_lines must be an integer, got 2.5"),
    ("text_diff", {"text_a": ["a"], "text_b": "b"}, 'text_a must be a string, got ["a"]'),
    ("text_diff", {"path_a": 5, "path_b": "b.txt"}, "path_a must be a string, got 5"),
    ("text_diff", {"path_a": "a.txt\0", "path_b": "b.txt"},
     'path_a must be a path without NUL bytes, got "a.txt\\u0000"'),
    ("text_diff", {"path_a": "a.txt", "path_b": "/etc/\0passwd"},
     'path_b must be a path without NUL bytes, got "/etc/\\u0000passwd"'),
    # "false", 0 or "no" for dry_run must not mean "write": they are errors, nothing is written.
    ("apply_edits", {"edits": NEW_FILE, "dry_run": 3}, f"dry_run must be {TYPED}, got 3"),
    ("apply_edits", {"edits": NEW_FILE, "dry_run": "false"}, f'dry_run must be {TYPED}, got "f'),
    ("apply_edits", {"edits": NEW_FILE, "dry_run": 0}, f"dry_run must be {TYPED}, got 0"),
    ("apply_edits", {"edits": NEW_FILE, "dry_run": False, "backup": "no"},
     f'backup must be {TYPED}, got "no"'),
    ("apply_edits", {}, "edits is required"),
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = indexed_tree(tmp_path_factory.mktemp("args") / "ws", "mod")
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("two\n")
    return root


@pytest.fixture(scope="module")
def served(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """`symdiff serve --http` with the tools that write, for the HTTP tests of this module."""
    with http_server(["--root", str(tree), "--http-writes"],
                     tmp_path_factory.mktemp("http")) as served:
        yield served


async def check_argument_errors(session: ClientSession, root: Path) -> None:
    for tool, args, reason in CASES:
        result = await call(session, tool, args)
        assert result.is_error, (tool, args)
        assert text_of(result).startswith(f"invalid_args: {reason}"), (args, text_of(result))
        assert result.structured_content is None
    assert not (root / "new.txt").exists()
    # The strict types still take what is right.
    ok = await call(session, "text_diff", {"path_a": "a.txt", "path_b": "b.txt",
                                           "context_lines": 0})
    assert not ok.is_error, text_of(ok)
    ok = await call(session, "diff", {"include_patch": True, "workspace": str(root)})
    assert not ok.is_error, text_of(ok)


def test_argument_errors(tree: Path) -> None:
    async def check(session: ClientSession) -> None:
        tools = {t.name for t in (await session.list_tools()).tools}
        assert tools == {"diff", "text_diff", "apply_edits", "symbol_history", "symbol_source",
                         "restore_symbol", "blame", "undo_turn", "impact"}  # as over stdio
        await check_argument_errors(session, tree)
    run_memory(check, tree)


def test_argument_errors_over_http(tree: Path, served: HttpServer) -> None:
    async def check(session: ClientSession) -> None:
        await check_argument_errors(session, tree)
    run_http(served.url, check)


# Raw JSON-RPC: the SDK client cannot send a lone surrogate (it encodes to UTF-8 first).
LONE = [
    (b'{"name": "diff", "arguments": {"since": "\\ud800"}}',
     r'since must be Unicode text, got "\ud800": a lone surrogate U+D800 at index 0'),
    (b'{"name": "text_diff", "arguments": {"path_a": "a\\uDFFF.txt", "path_b": "b.txt"}}',
     r'path_a must be Unicode text, got "a\udfff.txt": a lone surrogate U+DFFF at index 1'),
    (b'{"name": "apply_edits", "arguments": {"edits": [{"file": "x\\ud83d", '
     b'"blocks": [{"search": "", "replace": "y"}]}]}}',
     "edits[0].file must be Unicode text"),
    (b'{"name": "diff", "arguments": {"scope": "impl", "\\udc80": 1}}',
     r'a key must be Unicode text, got "\udc80"'),
]


def _call(request_id: int, params: bytes) -> bytes:
    return b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": %s}' % (
        request_id, params)


def _assert_refused(reply: dict[str, Any], request_id: int, reason: str) -> None:
    assert reply["id"] == request_id, reply
    result = reply["result"]
    assert result["isError"] is True
    [block] = result["content"]
    assert block["text"].startswith(f"invalid_args: {reason}"), block["text"]


def test_a_lone_surrogate_gets_an_answer_over_stdio(tree: Path) -> None:
    raw = RawStdio(["--root", str(tree)], cwd=tree)
    try:
        for i, (params, reason) in enumerate(LONE, start=1):
            raw.send(_call(i, params))
            _assert_refused(raw.receive(), i, reason)
        # Outside tools/call: the JSON-RPC error for invalid params, with the same text.
        raw.send(b'{"jsonrpc": "2.0", "id": 50, "method": "resources/read", '
                 b'"params": {"uri": "file:///\\ud800"}}')
        reply = raw.receive()
        assert reply["id"] == 50 and reply["error"]["code"] == -32602
        assert reply["error"]["message"].startswith("invalid_args: params.uri must be Unicode")
        # A surrogate pair is a character like any other: it reaches the tool.
        raw.send(_call(51, b'{"name": "diff", "arguments": {"since": "\\ud83d\\ude00"}}'))
        reply = raw.receive()
        assert reply["id"] == 51 and reply["result"]["isError"]
        assert reply["result"]["content"][0]["text"].startswith(
            'invalid_args: since: time: invalid duration "\\xf0\\x9f\\x98\\x80"')
        # And the server is still there.
        raw.send(b'{"jsonrpc": "2.0", "id": 52, "method": "tools/list"}')
        assert {t["name"] for t in raw.receive()["result"]["tools"]} >= {"diff"}
    finally:
        raw.close()
    assert not list(tree.glob("x*"))


def test_a_lone_surrogate_gets_an_answer_over_http(tree: Path, served: HttpServer) -> None:
    headers = session(served.url)
    for i, (params, reason) in enumerate(LONE, start=1):
        response = post(served.url, _call(i, params), **headers)
        assert response.status_code == 200, response.text
        _assert_refused(rpc(response), i, reason)
    # Plain requests still pass the door unchanged.
    listed = rpc(post(served.url, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                      **headers))
    assert "apply_edits" in json.dumps(listed)
    assert not list(tree.glob("x*"))
