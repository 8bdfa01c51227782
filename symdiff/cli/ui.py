"""`symdiff ui`: the live page of what changes in the workspace (symdiff/ui, docs/ui.md)."""

from __future__ import annotations

import click

from symdiff.cli.common import access_options, db_option, fail
from symdiff.config import Settings
from symdiff.errors import SymdiffError

DEFAULT_ADDRESS = "127.0.0.1:8766"  # where the page listens unless --http says otherwise


@click.command("ui")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Where you are: the page shows the workspace whose root this is in "
                   "(default: .).")
@db_option
@click.option("--http", "http", default=DEFAULT_ADDRESS, show_default=True,
              metavar="HOST:PORT",
              help="Where the page listens (port 0: any free port). Loopback only unless you "
                   "name another address; then a token is required.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the web browser.")
@access_options(
    token_help="Every request must carry this token (else SYMDIFF_TOKEN; on a non-loopback "
    "address one is generated when none is given). The URL printed on stderr carries it.",
    allow_host_help="Another name the browser may use in the Host header (repeatable; loopback "
    "names and the bind address are always allowed).",
)
def ui_cmd(root: str | None, db: str | None, http: str, open_browser: bool, token: str | None,
           allow_hosts: tuple[str, ...]) -> None:
    """Serve a live page of the changes as they are recorded, until Ctrl-C.

    Newest first: time, who made each change, path, line counts and the symbols it touched;
    filters for scope, origin, path and time window; a click shows a change's diff, or a
    symbol's own diff and history; a heat strip shows which files changed most. It reads the
    index (run `symdiff watch` beside it to record changes as they happen); it writes nothing.
    """
    from symdiff.httpguard import HttpOptions, parse_address
    from symdiff.ui import serve_ui

    settings = Settings.resolve(root, db=db, nearest=True)
    try:
        host, port = parse_address(http, example=DEFAULT_ADDRESS, any_port=True)
        serve_ui(settings, HttpOptions(host, port, token=token or None, allow_hosts=allow_hosts),
                 open_browser=open_browser, say=lambda line: click.echo(line, err=True))
    except SymdiffError as err:
        fail(err)
