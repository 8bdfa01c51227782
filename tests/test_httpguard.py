"""`symdiff serve --http` behind its door (symdiff.httpguard): real processes and sockets, raw
HTTP for what a client must not get past, the SDK's streamable-HTTP client for the rest."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_servers import (
    INIT,
    SERVE,
    call,
    env,
    http_server,
    indexed_tree,
    post,
    rpc,
    run_http,
    session,
    text_of,
)

# What an attacker sends: a real (not dry-run) edit creating a file in the workspace.
CREATE = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "apply_edits", "arguments": {
        "edits": [{"file": "pwned.txt", "blocks": [{"search": "", "replace": "owned\n"}]}],
        "dry_run": False}}}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return indexed_tree(tmp_path / "ws", "mod")


def refused(response: httpx2.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert words in error["message"], error


def sdk_client_is_refused(url: str, words: str, token: str | None = None) -> None:
    async def never(session: ClientSession) -> None:
        raise AssertionError("the session opened")

    with pytest.raises(ExceptionGroup) as caught:  # from the client's task groups
        run_http(url, never, token=token)
    assert caught.group_contains(MCPError, match=re.escape(words)), caught.value


async def diff_answers(session: ClientSession) -> None:
    result = await call(session, "diff", {})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert [r["path"] for r in result.structured_content["result"]] == ["mod.py"]


def test_a_given_token_is_required_on_loopback_too(tree: Path, tmp_path: Path) -> None:
    with http_server(["--root", str(tree), "--token", "s3cret", "--http-writes"],
                     tmp_path) as served:
        refused(post(served.url, INIT), 401, "Authorization: Bearer <token>")
        assert post(served.url, INIT).headers["www-authenticate"].startswith("Bearer")
        refused(post(served.url, INIT, authorization="Bearer s3cre"), 401, "wrong bearer token")
        refused(post(served.url, INIT, authorization="Basic s3cret"), 401, "Bearer")
        # A session opened with the token does not let a request without it through.
        headers = session(served.url, authorization="Bearer s3cret")
        del headers["authorization"]
        refused(post(served.url, CREATE, **headers), 401, "unauthorized")
        assert not (tree / "pwned.txt").exists()
        sdk_client_is_refused(served.url, "unauthorized")
        sdk_client_is_refused(served.url, "wrong bearer token", token="guess")

        async def check(session: ClientSession) -> None:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == {"diff", "text_diff", "apply_edits", "symbol_history", "symbol_source",
                             "restore_symbol", "blame", "undo_turn", "impact"}  # --http-writes
            await diff_answers(session)
            done = await call(session, "apply_edits", CREATE["params"]["arguments"])
            assert not done.is_error, text_of(done)

        run_http(served.url, check, token="s3cret")
    assert (tree / "pwned.txt").read_text() == "owned\n"


def test_a_non_loopback_bind_demands_a_generated_token(tree: Path, tmp_path: Path) -> None:
    with http_server(["--root", str(tree)], tmp_path, bind="0.0.0.0") as served:
        err = served.stderr()
        assert "warning: serving http://0.0.0.0:" in err and "other machines can reach" in err
        [token] = re.findall(r"'Authorization: Bearer (\S+)'", err)
        assert len(token) >= 40 and err.count(token) == 1  # printed once

        refused(post(served.url, INIT), 401, "unauthorized")
        refused(post(served.url, CREATE), 401, "unauthorized")
        sdk_client_is_refused(served.url, "unauthorized")
        # The token does not stand in for the Host check (DNS rebinding).
        refused(post(served.url, INIT, authorization=f"Bearer {token}", host="evil.example"),
                421, "host not allowed")

        async def check(session: ClientSession) -> None:
            tools = {t.name for t in (await session.list_tools()).tools}
            # no apply_edits (nor restore_symbol) over HTTP by default
            assert tools == {"diff", "text_diff", "symbol_history", "symbol_source", "blame",
                             "impact"}
            await diff_answers(session)
            refusal = await call(session, "apply_edits", CREATE["params"]["arguments"])
            assert refusal.is_error and "apply_edits" in text_of(refusal)

        run_http(served.url, check, token=token)
        headers = session(served.url, authorization=f"Bearer {token}")
        reply = rpc(post(served.url, CREATE, **headers))
        assert reply["result"]["isError"] and "apply_edits" in str(reply["result"]["content"])
    assert not (tree / "pwned.txt").exists()


def test_the_token_may_come_from_the_environment(tree: Path, tmp_path: Path) -> None:
    with http_server(["--root", str(tree)], tmp_path, bind="0.0.0.0",
                     environ=env(SYMDIFF_TOKEN="from-env")) as served:
        assert "Bearer" not in served.stderr()  # nothing generated, nothing printed
        assert "warning: serving" in served.stderr()
        refused(post(served.url, INIT), 401, "unauthorized")
        run_http(served.url, diff_answers, token="from-env")


def test_host_and_origin_are_checked_against_the_allow_list(tree: Path, tmp_path: Path) -> None:
    with http_server(["--root", str(tree), "--allow-host", "symdiff.example",
                      "--http-writes"], tmp_path) as served:
        port = served.port
        refused(post(served.url, INIT, host=f"evil.example:{port}"), 421, "host not allowed")
        refused(post(served.url, CREATE, host="evil.example"), 421, "--allow-host")
        refused(post(served.url, INIT, origin="http://evil.example"), 403, "origin not allowed")
        refused(post(served.url, INIT, origin="null"), 403, "origin not allowed")
        refused(post(served.url, INIT, origin="file://localhost"), 403, "origin not allowed")
        for host in (f"symdiff.example:{port}", f"localhost:{port}", f"[::1]:{port}",
                     "127.0.0.1"):
            assert post(served.url, INIT, host=host).status_code == 200, host
        for origin in (f"http://localhost:{port}", "https://symdiff.example"):
            assert post(served.url, INIT, origin=origin).status_code == 200, origin
        # A refused request never reaches a tool, session or not.
        headers = session(served.url)
        refused(post(served.url, CREATE, **headers, origin="http://evil.example"), 403,
                "origin not allowed")
        assert not (tree / "pwned.txt").exists()
        run_http(served.url, diff_answers)  # no token given on loopback: none asked


def test_http_writes_and_read_only_contradict(tree: Path) -> None:
    proc = subprocess.run([sys.executable, *SERVE, "--root", str(tree), "--http",
                           "127.0.0.1:1", "--http-writes", "--read-only"],
                          capture_output=True, text=True, env=env(), timeout=60)
    assert proc.returncode == 2
    assert "--http-writes and --read-only" in proc.stderr
