"""`symdiff serve`: the MCP server (symdiff/mcp) over stdio or HTTP."""

from __future__ import annotations

import click

from symdiff.cli.common import access_options, db_option, fail
from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError


@click.command("serve")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Workspace root the server answers for; path tools may read inside it "
                   "(default: .).")
@db_option
@click.option("--allow", "allow", multiple=True, type=click.Path(exists=True),
              help="Another directory that path tools may read (repeatable).")
@click.option("--allow-write", "allow_write", multiple=True,
              type=click.Path(file_okay=False, exists=True),
              help="Another directory that apply_edits may write in (repeatable; the root "
                   "always).")
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--read-only", "read_only", is_flag=True,
              help="Offer only tools that write nothing (no apply_edits).")
@click.option("--all-workspaces", "all_workspaces", is_flag=True,
              help='Let diff answer for other workspaces in the database too (workspace: "all" '
                   "or another root); without it the server answers only for its own root.")
@access_options(
    token_help="With --http: every request must carry 'Authorization: Bearer TOKEN' (else "
    "SYMDIFF_TOKEN; on a non-loopback address a token is generated and printed on stderr when "
    "none is given).",
    allow_host_help="With --http: another name clients may give in the Host header "
    "(repeatable; loopback names and the bind address are always allowed).",
)
@click.option("--http-writes", "http_writes", is_flag=True,
              help="With --http: offer apply_edits too (over HTTP it is off by default).")
def serve_cmd(root: str | None, db: str | None, allow: tuple[str, ...], http: str | None,
              read_only: bool, all_workspaces: bool, token: str | None,
              allow_hosts: tuple[str, ...], http_writes: bool,
              allow_write: tuple[str, ...]) -> None:
    """Run the MCP server (tools diff, text_diff, apply_edits) over stdio or HTTP."""
    from pathlib import Path

    from symdiff.mcp.server import serve

    settings = Settings.resolve(root, db=db)
    options = None
    if http is not None:
        from symdiff.httpguard import HttpOptions, notice, parse_address, with_token

        try:
            host, port = parse_address(http, example="127.0.0.1:8765")
            if http_writes and read_only:
                raise InvalidArgs("--http-writes and --read-only contradict each other")
        except SymdiffError as err:
            fail(err)
        options, generated = with_token(HttpOptions(
            host, port, token=token or None, allow_hosts=allow_hosts, http_writes=http_writes))
        for line in notice(options, generated=generated):
            click.echo(line, err=True)
    serve(settings, allow=[Path(p) for p in allow], read_only=read_only,
          all_workspaces=all_workspaces, http=options,
          allow_write=[Path(p) for p in allow_write])
