"""How `symdiff ui` listens: the page's routes behind the same door as `symdiff serve --http`
(symdiff/httpguard.py: Host, Origin, token; loopback only by default, a token on any other
bind), on uvicorn.

A browser cannot put an `Authorization` header on an `EventSource`, so the page's token travels
once in the URL `symdiff ui` prints (`/?token=...`), which sets a cookie (HttpOnly,
SameSite=Strict) that every later request of the page carries; either becomes the bearer
header the door checks. Every response also carries headers that keep the page to itself: a
Content-Security-Policy allowing only its own files (no inline script, no other origin), no
framing, no sniffing, no referrer.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from http.cookies import SimpleCookie
from types import FrameType
from urllib.parse import parse_qs, quote, unquote

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from symdiff.config import Settings
from symdiff.httpguard import HttpGuard, HttpOptions, is_loopback

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def cookie_name(port: int) -> str:
    """The token's cookie: one per port, since cookies do not tell ports apart."""
    return f"symdiff_ui_{port}"


def page_url(options: HttpOptions, *, with_token: bool = True) -> str:
    """The page's address as the bind address spells it, with the token when there is one."""
    host = f"[{options.host}]" if ":" in options.host else options.host
    url = f"http://{host}:{options.port}/"
    if with_token and options.token:
        url += f"?token={quote(options.token, safe='')}"
    return url


class BrowserSide:
    """ASGI middleware in front of the door: the token from `?token=` or the page's cookie as
    a bearer header (an explicit header wins), the cookie set when the URL brought the token,
    and the security headers on every response."""

    def __init__(self, app: ASGIApp, *, cookie: str, token: str | None) -> None:
        self._app = app
        self._cookie = cookie
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given, from_url = self._given(scope)
        if given is not None:
            scope = dict(scope, headers=[*scope["headers"],
                                         (b"authorization", b"Bearer " + given.encode())])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                if from_url and given is not None and message["status"] < 400:
                    headers.append("set-cookie", f"{self._cookie}={quote(given, safe='')}; "
                                   "HttpOnly; SameSite=Strict; Path=/")
            await send(message)

        await self._app(scope, receive, send_with_headers)

    def _given(self, scope: Scope) -> tuple[str | None, bool]:
        """The token this request brings beside the header, and whether in its URL."""
        headers = Headers(scope=scope)
        if self._token is None or "authorization" in headers:
            return None, False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if query.get("token"):
            return query["token"][0], True
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # http.cookies raises plain errors on a malformed header
            return None, False
        morsel = jar.get(self._cookie)
        if morsel is None:
            return None, False
        return unquote(morsel.value), False


def guarded(settings: Settings, options: HttpOptions, *, poll_s: float | None = None,
            stop: threading.Event | None = None) -> ASGIApp:
    """The page's app behind the door and the browser side."""
    from symdiff.ui.app import POLL_S, build_app

    app = build_app(settings, poll_s=POLL_S if poll_s is None else poll_s, stop=stop)
    door = HttpGuard(app, options, command="symdiff ui", token_help=(
        "open the page at the URL symdiff ui printed on stderr (it carries the token: "
        "/?token=...), or send 'Authorization: Bearer <token>' (--token or SYMDIFF_TOKEN)"))
    return BrowserSide(door, cookie=cookie_name(options.port), token=options.token)


def notice(options: HttpOptions, *, generated: bool) -> list[str]:
    """What `symdiff ui` says on stderr once it listens: where the page is, and a warning for
    a bind other machines can reach."""
    lines = []
    if not is_loopback(options.host):
        lines.append(f"symdiff: warning: the page at {page_url(options, with_token=False)} "
                     "can be reached from other machines; it shows the workspace's changes "
                     "and code to whoever has the token")
    if generated:
        lines.append("symdiff: the token was generated for this run (--token or SYMDIFF_TOKEN "
                     "chooses one)")
    lines.append(f"symdiff ui: the page is at {page_url(options)}")
    return lines


def listen(host: str, port: int) -> socket.socket:
    """A listening socket at host:port (port 0: one the system picks)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def run(app: ASGIApp, sock: socket.socket, *, stop: threading.Event,
        on_listen: Callable[[], None] | None = None) -> None:
    """Serve `app` on `sock` until SIGINT/SIGTERM, which set `stop` (the app's event streams
    then end within a poll, and the server stops without cutting them)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            stop.set()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, log_level="warning", lifespan="off",
                            timeout_graceful_shutdown=5)  # fmt: skip
    server = Server(config)
    if on_listen is not None:
        threading.Thread(target=on_listen, daemon=True).start()
    server.run(sockets=[sock])
