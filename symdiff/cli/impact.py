"""`symdiff impact`: the callers and the tests a change reaches (docs/impact.md)."""

from __future__ import annotations

import json
from typing import Any

import click

from symdiff.cli.common import db_option
from symdiff.config import Settings
from symdiff.errors import SymdiffError


@click.command("impact")
@click.argument("symbols", nargs=-1)
@click.option("--since", default=None, metavar="DURATION",
              help="The symbols changed in this window (Go duration, e.g. 90m; default 24h).")
@click.option("--against", default=None, metavar="REF",
              help="The symbols the work tree changed against a git revision.")
@click.option("--session", default=None, help="The symbols an agent session changed.")
@click.option("--turn", type=int, default=None, help="Only this turn of --session.")
@click.option("--depth", type=int, default=2, show_default=True,
              help="How many hops of callers to list (tests are found at any depth).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="The workspace (default: the one at or above the current directory).")
@db_option
@click.option("--refresh", is_flag=True,
              help="Record what changed since the last index first, unless a daemon watches.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def impact_cmd(symbols: tuple[str, ...], since: str | None, against: str | None,
               session: str | None, turn: int | None, depth: int, root: str | None,
               db: str | None, refresh: bool, as_json: bool) -> None:  # fmt: skip
    """The callers and the tests that changed symbols reach.

    The changed symbols are those of --since, --against, --session [--turn], or the SYMBOLS
    given ('Name', 'Class.method', 'path/to/file.py:Name'); with none of them, the last 24h.
    Callers are listed to --depth hops; tests at any depth, with the command that runs them.
    The index is the tree as last recorded: a daemon keeps it current; without one, --refresh
    records what changed first (as `symdiff changes --refresh`).
    """
    from symdiff.api import impact
    from symdiff.cli.common import fail

    try:
        settings = Settings.resolve(root, db=db, nearest=True)
        found = impact(settings, since=since, against=against, session=session, turn=turn,
                       symbols=symbols, depth=depth, refresh_first=refresh)  # fmt: skip
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False, indent=2))
        return
    for line in lines(found):
        click.echo(line)


SHOWN = 100  # callers, and tests, listed in the text form; --json has them all


def lines(found: dict[str, Any], shown: int = SHOWN) -> list[str]:
    """The answer for a person: what changed, who calls it, which tests to run and how (the
    nearest `shown` callers and tests, then how many more there are)."""
    out = [f"changed ({len(found['changed'])}):"]
    out += [f"  {c['path']}: {c['name']} ({c['change_type']})" for c in found["changed"]]
    callers, tests = found["callers"], found["tests"]
    out.append(f"callers ({len(callers)}):")
    out += [f"  {'  ' * (c['depth'] - 1)}{c['path']}:{c['start_line']}: {c['name']}"
            f" -> {c['via']}{'' if c['confidence'] == 'resolved' else ' (by name)'}"
            for c in callers[:shown]]  # fmt: skip
    out += _more(len(callers) - shown, "callers")
    out.append(f"tests ({len(tests)}):")
    weaker = {"name": " (by name)", "mention": " (names it; no call found)"}
    out += [f"  {t['node_id']}{weaker.get(t['confidence'], '')}" for t in tests[:shown]]
    out += _more(len(tests) - shown, "tests")
    for runner, command in found["run"].items():
        out.append(f"run ({runner}): {command}")
    return out


def _more(hidden: int, what: str) -> list[str]:
    return [f"  ... and {hidden} more {what}, farther away (--json lists them all)"] \
        if hidden > 0 else []
