"""`symdiff ui`: a live page of the records as they are recorded (docs/ui.md).

The page reads through `symdiff.api` (following new records: `symdiff.query.follow`; a symbol's
history: `symdiff.symbols.history`); `app.py` routes (the page, its event stream, its JSON
reads), `server.py` listens (the door of
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

__all__ = ["serve_ui"]


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
