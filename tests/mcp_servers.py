"""The MCP server for the tests, reached by the real SDK client (`ClientSession`).

- `run_memory`: the server built in this process (`build`, the one place the tests build it)
  and spoken to over the SDK's in-memory transport: for everything but the transport.
- `run_stdio`, `http_server` + `run_http`: real `symdiff serve` processes, for what the
  process and the transport do (startup, flags, framing, the HTTP guard).
- `RawStdio`, `post`: raw JSON-RPC for what the SDK client cannot send.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from symdiff import Settings
from symdiff import index as index_once

if TYPE_CHECKING:
    from mcp.server import MCPServer

HOST = "mcp-test-host"
SERVE = ("-m", "symdiff", "serve")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

Check = Callable[[ClientSession], Awaitable[None]]


def env(**extra: str) -> dict[str, str]:
    """A clean environment: no SYMDIFF_* from the caller's, this test host name."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SYMDIFF_HOST": HOST, **extra}


def settings(root: Path, db: str | None = None) -> Settings:
    """The settings `symdiff serve --root ROOT [--db DB]` resolves, on this test host."""
    return Settings.resolve(root, db=db, host=HOST)


def index(root: Path, db: str | None = None) -> None:
    """One reconcile pass over `root`, in this process (`symdiff index` runs the same call)."""
    index_once(settings(root, db), show_progress=False)


def build(root: Path, *, db: str | None = None, read_only: bool = False,
          all_workspaces: bool = False, allow: Sequence[Path] = (),
          allow_write: Sequence[Path] = ()) -> MCPServer:
    """The server object `symdiff serve --root ROOT [--db DB] [flags]` runs, without its
    transport: the one place the tests build it."""
    from symdiff.mcp.server import build_server

    return build_server(settings(root, db), read_only=read_only, all_workspaces=all_workspaces,
                        allow=allow, allow_write=allow_write)


def run_memory(check: Check, root: Path, *, db: str | None = None, read_only: bool = False,
               all_workspaces: bool = False, allow: Sequence[Path] = (),
               allow_write: Sequence[Path] = ()) -> None:
    """An SDK client session with a server built in this process (`build`), over the SDK's
    in-memory transport: JSON-RPC messages through memory streams, the initialize handshake
    as over stdio. Each call builds a new server, as each `symdiff serve` does."""
    server = build(root, db=db, read_only=read_only, all_workspaces=all_workspaces,
                   allow=allow, allow_write=allow_write)

    async def main() -> None:
        async with Client(server, mode="legacy") as client:
            await check(client.session)

    anyio.run(main)


def indexed_tree(root: Path, name: str, db: str | None = None) -> Path:
    """A tree with one recorded change: `<name>.py`, whose function `f` was modified."""
    root.mkdir(parents=True)
    (root / f"{name}.py").write_text("def f():\n    return 1\n")
    index(root, db)
    (root / f"{name}.py").write_text("def f():\n    return 2\n")
    index(root, db)
    return root.resolve()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class HttpServer:
    """A running `symdiff serve --http`, reached at 127.0.0.1 whatever address it binds."""

    port: int
    stderr_file: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stderr(self) -> str:
        return self.stderr_file.read_text()


@contextmanager
def http_server(args: Sequence[str], tmp: Path, *, bind: str = "127.0.0.1",
                environ: dict[str, str] | None = None) -> Iterator[HttpServer]:
    port = free_port()
    served = HttpServer(port, tmp / f"serve-{port}.stderr")
    with served.stderr_file.open("w") as err:
        proc = subprocess.Popen([sys.executable, *SERVE, *args, "--http", f"{bind}:{port}"],
                                env=environ or env(), stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"serve did not start: {served.stderr()}") from None
                    time.sleep(0.1)
            yield served
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def run_http(url: str, check: Check, *, token: str | None = None) -> None:
    """An SDK client session over streamable HTTP (with the bearer token, if given)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}

    async def main() -> None:
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) \
                as client, streamable_http_client(url, http_client=client) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await check(session)

    anyio.run(main)


def run_stdio(args: Sequence[str], check: Check, *, cwd: Path) -> None:
    """An SDK client session with `symdiff serve` started over stdio, as an agent host does."""
    params = StdioServerParameters(command=sys.executable, args=[*SERVE, *args], env=env(),
                                   cwd=str(cwd))

    async def main() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                await check(session)

    anyio.run(main)


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> CallToolResult:
    result = await session.call_tool(name, args)
    assert isinstance(result, CallToolResult)
    return result


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def post(url: str, body: object, **headers: str) -> httpx2.Response:
    """A raw POST of a JSON-RPC message (`bytes`: sent as they are)."""
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with httpx2.Client(timeout=30) as client:
        return client.post(url, headers={**HEADERS, **headers}, content=content)


def rpc(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, sent as JSON or as one SSE event."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    message: dict[str, Any] = json.loads(text)
    return message


def session(url: str, **headers: str) -> dict[str, str]:
    """Headers of an initialized session (raw HTTP), for requests sent after it."""
    opened = post(url, INIT, **headers)
    assert opened.status_code == 200, opened.text
    headers = {**headers, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-06-18"}
    assert post(url, INITIALIZED, **headers).status_code == 202
    return headers


class RawStdio:
    """`symdiff serve` over stdio, spoken to in raw JSON-RPC lines."""

    def __init__(self, args: Sequence[str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, *SERVE, *args], cwd=cwd, env=env(),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, bufsize=0)  # select sees all
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.send(json.dumps(INIT).encode())
        assert "result" in self.receive()
        self.send(json.dumps(INITIALIZED).encode())

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 20) -> dict[str, Any]:
        """The next message the server writes; AssertionError when none comes in time."""
        assert self.proc.stdout is not None
        if not self._selector.select(timeout):
            raise AssertionError(f"no reply within {timeout} s")
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        self._selector.close()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self.proc.stdout.close()
