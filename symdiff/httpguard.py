"""The door of `symdiff serve --http`: who may reach the MCP endpoint, checked before the SDK
(and of `symdiff ui`, the live page, with the same rules: symdiff/ui/server.py).

Every request, on any path, passes three checks in this order; a refusal's body is a JSON-RPC
error saying what to do, which an MCP client shows as the error of the call it made:

1. Host: the Host header names an allowed host (the loopback names, the bind address, each
   `--allow-host`), else 421. This stops DNS rebinding: a web page whose name was re-pointed
   at this machine still sends its own name as Host.
2. Origin: absent (not a browser), or an http(s) origin on an allowed host, else 403.
3. Token: when the server has one, `Authorization: Bearer <token>`, compared in constant time,
   else 401 with `WWW-Authenticate: Bearer`. A server bound to a non-loopback address always
   has one (`with_token` generates it when none is given).

Then a POST whose JSON text holds a lone surrogate is answered here (`symdiff.mcp.wire`), since the
SDK's parser refuses it without naming the request. The SDK's own Host/Origin check
(TransportSecuritySettings) is switched off because this one replaces it: the SDK turns it on
only for a loopback bind and with the loopback names only, so `--allow-host` could not pass it.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from symdiff.errors import InvalidArgs

if TYPE_CHECKING:
    from mcp.server import MCPServer

# The MCP SDK loads where it is used (a refusal, a POST body, serve_http), not with the door:
# `symdiff ui` passes through the same door and runs without the SDK.

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How `symdiff serve --http` listens and whom it lets in."""

    host: str
    port: int
    token: str | None = None  # None: no token asked (allowed on a loopback bind only)
    allow_hosts: tuple[str, ...] = ()  # Host names accepted beside loopback and the bind address
    http_writes: bool = False  # offer apply_edits over HTTP

    @property
    def url(self) -> str:
        """The endpoint's URL as the bind address spells it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"


def parse_address(text: str, *, example: str, any_port: bool = False) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 as `[::1]:PORT`) as a (host, port) pair; `any_port`: port 0 too (any
    free port). `example` shows the form in the error."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    lowest = 0 if any_port else 1
    if not sep or not host or not port.isdigit() or not lowest <= int(port) < 65536:
        raise InvalidArgs(f"--http wants HOST:PORT, e.g. {example}, got {text!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether a bind address only this machine can reach: `localhost` or a loopback IP."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # any other name may resolve to an address others reach


def with_token(options: HttpOptions) -> tuple[HttpOptions, bool]:
    """The options with a token wherever one is required, and whether it was generated here."""
    if options.token or is_loopback(options.host):
        return options, False
    return replace(options, token=secrets.token_urlsafe(32)), True


def notice(options: HttpOptions, *, generated: bool) -> list[str]:
    """What `serve` says on stderr before serving: a warning for a bind others can reach, and
    a generated token (shown this once, with the URL)."""
    lines = []
    if not is_loopback(options.host):
        writes = ("apply_edits is on (--http-writes)" if options.http_writes
                  else "apply_edits is off (--http-writes turns it on)")
        lines.append(
            f"symdiff: warning: serving {options.url}, which other machines can reach; every "
            f"request must carry the bearer token and name one of these hosts in its Host "
            f"header: {', '.join(sorted(_allowed_names(options)))} (--allow-host NAME adds "
            f"one); {writes}"
        )
    if generated:
        lines.append(
            f"symdiff: clients of {options.url} must send 'Authorization: Bearer "
            f"{options.token}' (a token generated for this run; --token or SYMDIFF_TOKEN "
            "chooses one)"
        )
    return lines


def _name(host: str) -> str:
    """A host name as compared: lower case, no brackets, no trailing dot."""
    return host.strip().lower().removeprefix("[").removesuffix("]").removesuffix(".")


def _allowed_names(options: HttpOptions) -> frozenset[str]:
    return frozenset(_name(h) for h in (*LOOPBACK_NAMES, options.host, *options.allow_hosts))


def _host_name(header: str) -> str:
    """The name in a Host header: `name`, `name:port`, `[v6]` or `[v6]:port`."""
    if header.startswith("["):
        return _name(header.partition("]")[0])
    name, sep, port = header.rpartition(":")
    return _name(name if sep and port.isdigit() else header)


def _refusal(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    from mcp_types import INVALID_REQUEST

    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class HttpGuard:
    """ASGI middleware: the checks above, then the wrapped app."""

    def __init__(self, app: ASGIApp, options: HttpOptions, *, command: str = "symdiff serve",
                 token_help: str | None = None) -> None:
        self._app = app
        self._hosts = _allowed_names(options)
        self._token = None if not options.token else options.token.encode()
        self._command = command  # named in the refusals: the command to start differently
        self._token_help = token_help or (
            "send the header 'Authorization: Bearer <token>' with the token given to "
            f"{command} (--token or SYMDIFF_TOKEN) or printed by it on stderr")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":  # this server speaks no websocket
            await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self._check(Headers(scope=scope))
        if refusal is None and scope["method"] == "POST":
            refusal, receive = await _unicode_checked(receive)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _check(self, headers: Headers) -> Response | None:
        """The refusal of a request by its headers, or None to let it in."""
        host = headers.get("host")
        if not host or _host_name(host) not in self._hosts:
            return _refusal(421, (
                f"host not allowed: the Host header is {host!r}; this server answers to "
                f"{', '.join(sorted(self._hosts))} (start {self._command} with --allow-host "
                "NAME to accept another name)"))
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return _refusal(403, (
                f"origin not allowed: {origin!r}; only pages served from "
                f"{', '.join(sorted(self._hosts))} may call this server"))
        if self._token is None:
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return _refusal(401, f"unauthorized: {self._token_help}",
                            {"WWW-Authenticate": 'Bearer realm="symdiff"'})
        # Header values reach Starlette as latin-1; these are the bytes the client sent.
        if not hmac.compare_digest(given.strip().encode("latin-1"), self._token):
            return _refusal(401, "unauthorized: wrong bearer token",
                            {"WWW-Authenticate": 'Bearer realm="symdiff", error="invalid_token"'})
        return None

    def _origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            name = parts.hostname
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and name is not None and _name(
            name) in self._hosts


async def _unicode_checked(receive: Receive) -> tuple[Response | None, Receive]:
    """Read a POST body (at most the SDK's cap): the reply when its JSON text holds a lone
    surrogate, and a `receive` that hands the body on unchanged."""
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    from symdiff.mcp.wire import reply_to

    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return Response(status_code=400), receive
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            return _refusal(413, "request body too large"), receive
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    reply = reply_to(body)
    if reply is not None:
        content = reply.model_dump_json(by_alias=True, exclude_unset=True)
        return Response(content, media_type="application/json"), receive
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return None, replay


def serve_http(server: MCPServer, options: HttpOptions) -> None:
    """Serve `server` over streamable HTTP at `options.url`, behind the guard, until stopped."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    app = server.streamable_http_app(
        host=options.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    uvicorn.run(HttpGuard(app, options), host=options.host, port=options.port,
                log_level="warning", timeout_graceful_shutdown=5)

