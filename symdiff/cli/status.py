"""`symdiff status`: whether a daemon watches the workspace, and what is recorded."""

from __future__ import annotations

import sys

import click

from symdiff.cli.common import db_option
from symdiff.config import Settings


@click.command("status")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_cmd(root: str | None, db: str | None, as_json: bool) -> None:
    """Show whether a daemon watches ROOT (default: .), the baseline, what is recorded.

    ROOT may be a subdirectory of the workspace. Text or --json: the daemon (pid, start, last
    reconcile, warnings), the baseline's state and, while the daemon's start pass runs, its
    progress; the number of changes and the newest; the database and its size. Exits 1 when
    the database cannot be read.
    """
    from symdiff.api import status

    info = status(Settings.resolve(root, db=db, nearest=True))
    if as_json:
        import json

        click.echo(json.dumps(info, indent=2))
    else:
        from symdiff.cli.display import status_lines

        for line in status_lines(info):
            click.echo(line)
        if "error" in info:
            click.echo(f"symdiff: {info['error']}", err=True)
    if "error" in info:
        sys.exit(1)
