"""`symdiff ui`: a live page of the records as they are recorded (docs/ui.md).

`feed.py` reads (the query's filters and cursor order, a record's patch, a symbol's history),
`app.py` routes (the page, its event stream, its JSON reads), `server.py` listens (the door of
httpguard.py, the token in the page's URL and cookie, uvicorn); `static/` is the page itself,
plain HTML, CSS and JavaScript shipped in the wheel.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.httpguard import HttpOptions, with_token

__all__ = ["DEFAULT_ADDRESS", "parse_address", "serve_ui"]

DEFAULT_ADDRESS = "127.0.0.1:8766"


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 as `[::1]:PORT`; port 0: any free port) as a (host, port) pair."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise InvalidArgs(f"--http wants HOST:PORT, e.g. {DEFAULT_ADDRESS}, got {text!r}")
    return host, int(port)


def serve_ui(
    settings: Settings,
    options: HttpOptions,
    *,
    open_browser: bool = False,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page for `settings`' workspace until stopped; `say` gets the lines that tell
    where it is (the URL, with the token when there is one)."""
    from symdiff.ui.server import guarded, listen, notice, page_url, run

    options, generated = with_token(options)
    try:
        sock = listen(options.host, options.port)
    except OSError as err:
        raise InvalidArgs(f"cannot listen at {options.host}:{options.port}: "
                          f"{err.strerror or err}") from None  # fmt: skip
    options = HttpOptions(options.host, sock.getsockname()[1], token=options.token,
                          allow_hosts=options.allow_hosts)  # fmt: skip
    for line in notice(options, generated=generated):
        say(line)
    url = page_url(options)

    def show() -> None:
        webbrowser.open(url)

    stop = threading.Event()
    run(guarded(settings, options, stop=stop), sock, stop=stop,
        on_listen=show if open_browser else None)
