"""The symbol history commands: `log`, `show`, `restore`."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from symdiff.cli.common import db_option, fail, print_apply
from symdiff.config import Settings
from symdiff.errors import SymdiffError

root_option = click.option(
    "--root", "root", default=None, type=click.Path(file_okay=False),
    help="Where you are: the workspace whose root this is in (default: .).",
)
path_option = click.option(
    "--path", "path", default=None, metavar="PATH",
    help="The file the definition is in (relative to the workspace root), when the name is "
    "in several.",
)


@click.command("log")
@click.argument("symbol")
@root_option
@db_option
@path_option
@click.option("--since", "since", default=None, metavar="DURATION",
              help='Only versions recorded within this Go duration ("720h"); default: all.')
@click.option("--limit", "limit", default=20, show_default=True, type=click.IntRange(1, 500),
              metavar="N", help="At most N versions, 1-500.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def log_cmd(symbol: str, root: str | None, db: str | None, path: str | None,
            since: str | None, limit: int, as_json: bool) -> None:
    """Every recorded version of the definition SYMBOL (a qualified name: Session.refresh),
    newest first, each with its own diff, numbered as in the file.

    SYMBOL may say which definition: [PATH:]NAME[#N|:LINE][@VERSION], e.g. pkg/io.py:load,
    load#2 (the second `def load` in its file), load:L120 (the one holding line 120 now),
    load@4711 (the one version 4711 changed). Follows the definition across symbol and file
    renames. A name in several places lists the selectors that name each one; an unknown
    name lists the closest recorded names. Exits 1 when no single definition is found.
    """
    from symdiff.api import symbol_history

    settings = Settings.resolve(root, db=db, nearest=True)
    try:
        answer = symbol_history(settings, symbol, path=path, since=since, limit=limit)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(answer.as_dict(), ensure_ascii=False, indent=2))
    else:
        _print_log(answer.as_dict())
    if answer.status != "found":
        sys.exit(1)


def _print_log(answer: dict[str, Any]) -> None:
    if answer["status"] == "unknown":
        close = answer["suggestions"]
        hint = f"; did you mean: {', '.join(close)}" if close else ""
        click.echo(f"symdiff: no recorded version of {answer['name']}{hint}", err=True)
        return
    if answer["status"] == "ambiguous":
        click.echo(f"symdiff: {answer['name']} names {len(answer['candidates'])} definitions; "
                   "name one of them:", err=True)
        width = max(len(c["selector"]) for c in answer["candidates"])
        for c in answer["candidates"]:
            click.echo(f"  {c['selector']:<{width}}  {c['kind']}, {c['versions']} version(s), "
                       f"lines {c['start_line']}-{c['end_line']} at version "
                       f"{c['newest_version']}", err=True)
        return
    for v in answer["versions"]:
        renamed = f" (renamed from {v['renamed_from']})" if "renamed_from" in v else ""
        moved = f" (from {v['old_path']})" if v["old_path"] else ""
        click.echo(f"version {v['version']}  {v['timestamp']}  {v['origin']}")
        click.echo(f"  {v['change_type']} {v['kind']} {v['name']}{renamed}  "
                   f"{v['path']}{moved}:{v['start_line']}-{v['end_line']}")
        if v.get("diff"):
            click.echo("")
            click.echo(v["diff"], nl=False)
        click.echo("")
    if answer["more"]:
        click.echo("symdiff: older versions match: raise --limit or narrow --since", err=True)


@click.command("show")
@click.argument("symbol", metavar="[PATH:]SYMBOL[#N|:LINE][@VERSION]")
@root_option
@db_option
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def show_cmd(symbol: str, root: str | None, db: str | None, path: str | None,
             as_json: bool) -> None:
    """Print the source of the definition SYMBOL as it is now, or at VERSION (a version id
    from `symdiff log`, which also tells same-named definitions apart). PATH:, #N (the Nth
    definition of the name in its file) and :LINE (the one holding that line now) pick one
    of several, as in `symdiff log`."""
    from symdiff.api import symbol_source

    settings = Settings.resolve(root, db=db, nearest=True)
    try:
        found = symbol_source(settings, symbol, path=path)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False, indent=2))
    else:
        click.echo(str(found["source"]), nl=False)


@click.command("restore")
@click.argument("symbol")
@click.option("--to", "to", required=True, type=int, metavar="VERSION",
              help="The version (from `symdiff log`) whose text to put back.")
@root_option
@db_option
@path_option
@click.option("--dry-run", "dry_run", is_flag=True, help="Preview the edit; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def restore_cmd(symbol: str, to: int, root: str | None, db: str | None, path: str | None,
                dry_run: bool, as_json: bool) -> None:
    """Put the definition SYMBOL back as it was at VERSION, leaving every other line of its
    file as it is now. SYMBOL is picked as in `symdiff log` ([PATH:]NAME[#N|:LINE]); VERSION
    alone tells same-named definitions apart.

    The restore is a search/replace edit: validated, written atomically and recorded in the
    index (origin `edit`) as `symdiff apply` does. A definition no longer in the file goes
    back beside a former neighbour.
    """
    from symdiff.api import restore_symbol

    settings = Settings.resolve(root, db=db, nearest=True)
    try:
        result = restore_symbol(settings, symbol, to=to, path=path, dry_run=dry_run)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    restored = result["restored"]
    assert isinstance(restored, dict)
    click.echo(f"{restored['name']} in {restored['path']} as at version {restored['version']}")
    print_apply(result)
