"""`symdiff changes`: the diff query on the command line — the table, the JSON, and the notes
on stderr that say what the answer does not show (no daemon, hidden scope, more records).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from symdiff.cli.common import db_option, fail, log_as_notes
from symdiff.config import Settings
from symdiff.errors import SymdiffError

if TYPE_CHECKING:
    from symdiff.api import Answer


@click.command("changes")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False),
              help="Where you are: the query covers the workspace whose root this is in "
                   "(default: .).")
@db_option
@click.option("--since", "since", default="24h", show_default=True, metavar="DURATION",
              help='Time window as a Go duration ("90m", "24h", "168h"); clamped to 720h.')
@click.option("--limit", "limit", default="50", show_default=True, metavar="N",
              help="Maximum records, 1-500 (any other value means 50, with a note on "
                   "stderr); page on with --cursor.")
@click.option("--scope", "scope", default="impl", show_default=True, metavar="impl|test|all",
              help="Implementation files, test files, or all; filtered before the limit.")
@click.option("--workspace", "workspace", default=None, metavar="all|ROOT",
              help='"all" for every workspace in the database, or another workspace\'s root.')
@click.option("--origin", "origins", multiple=True, metavar="edit|git|watch|scan|commit",
              help="Only changes by this writer (repeatable; --origin watch --origin scan: what "
                   "a person changed).")
@click.option("--path", "paths", multiple=True, metavar="PATTERN",
              help='Only paths matching this gitignore-style pattern (repeatable; "src/**", '
                   '"*.go", "!vendor/"; the last that matches decides).')
@click.option("--cursor", "cursor", default=None, metavar="CURSOR",
              help="What was recorded after an earlier answer's cursor, oldest first.")
@click.option("--reader", "reader", default=None, metavar="NAME",
              help="Keep a cursor under this name: each call shows what NAME has not seen yet.")
@click.option("--against", "against", default=None, metavar="REF",
              help="Instead: how the work tree differs from git revision REF (HEAD, main, "
                   "v2.1, a sha; REF... for the merge base with HEAD), untracked files "
                   "included; one record per file. --scope, --path, --origin, --limit apply.")
@click.option("--refresh", "refresh", is_flag=True,
              help="When no daemon watches the tree: first record what changed since it was "
                   "last indexed (one reconcile pass, as `symdiff index`).")
@click.option("--json", "as_json", is_flag=True, help="Print the records as a JSON array.")
@click.option("--envelope", "envelope", is_flag=True,
              help='With --json: print {"result": [...], "cursor": ..., "more": ...} instead.')
@click.option("--patch", "patch", is_flag=True,
              help="Show each change's patch (relative a/ b/ paths: `git apply` from the root "
                   "takes it; JSON: an ACP v2 Diff under `acp`, absolute paths).")
def changes_cmd(root: str | None, db: str | None, since: str, limit: str, scope: str,
                workspace: str | None, origins: tuple[str, ...], paths: tuple[str, ...],
                cursor: str | None, reader: str | None, refresh: bool, as_json: bool,
                envelope: bool, patch: bool, against: str | None) -> None:
    """What changed recently, newest first, with the symbols each change touched.

    Run it anywhere in the workspace. With --cursor or --reader: what was recorded since,
    oldest first. Notes go to stderr: when more records match than --limit (`--cursor ...`),
    when --scope hid some, when no daemon watches the tree (the answer is then what was
    recorded up to a time it names; --refresh records what changed since), when nothing is
    indexed here at all.
    """
    import json

    from symdiff.api import DiffQuery, diff
    from symdiff.cli.display import changes_notes, window_of

    log_as_notes()
    settings = Settings.resolve(root, db=db, nearest=True)
    if against is not None:
        _changes_against(settings, against, scope=scope, limit=limit, paths=paths,
                         origins=origins, as_json=as_json, envelope=envelope, patch=patch)
        return
    query = DiffQuery(since=since, limit=limit, scope=scope, include_patch=patch and as_json,
                      workspace=workspace, origin=list(origins) or None,
                      path=list(paths) or None, cursor=cursor, reader=reader)  # fmt: skip
    try:
        result = diff(settings, query, refresh_first=refresh, show_progress=True, explain=True,
                      git_patches=patch and not as_json)  # fmt: skip
    except SymdiffError as err:
        fail(err)
    records = result.records
    if as_json and envelope:
        click.echo(json.dumps({"result": records, "cursor": result.cursor, "more": result.more},
                              ensure_ascii=False, indent=2))  # fmt: skip
    elif as_json:
        click.echo(json.dumps(records, ensure_ascii=False, indent=2))
    else:
        _print_changes(result, scope=scope, since=window_of(result, since),
                       after=cursor or reader)  # fmt: skip
    for note in changes_notes(result):
        click.echo(f"symdiff: {note}", err=True)
    if result.more and not envelope:
        click.echo(f"symdiff: more records match; continue with --cursor {result.cursor}",
                   err=True)  # fmt: skip


def _changes_against(settings: Settings, against: str, *, scope: str, limit: str,
                     paths: tuple[str, ...], origins: tuple[str, ...], as_json: bool,
                     envelope: bool, patch: bool) -> None:  # fmt: skip
    """`changes --against REF`: the work tree compared with a revision (query/against.py)."""
    import json

    from symdiff.api import DiffQuery, diff
    from symdiff.cli.display import changes_table, console, show

    query = DiffQuery(limit=limit, scope=scope, include_patch=patch, origin=list(origins) or None,
                      path=list(paths) or None, against=against)  # fmt: skip
    try:
        result = diff(settings, query)
    except SymdiffError as err:
        fail(err)
    records = result.records
    if as_json:
        out: object = {"result": records, "more": result.more} if envelope else records
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
    elif not records:
        click.echo(f"no {scope} files differ from {against}")
    else:
        terminal = console()
        show(terminal, changes_table(records))  # the same table as `changes`: names never cut
        for r in records:
            if "acp" in r:
                terminal.out(r["acp"]["patch"]["text"], end="", highlight=False)
    if result.more:
        click.echo("symdiff: more files differ; raise --limit (at most 500) or narrow --path",
                   err=True)  # fmt: skip


def _print_changes(result: Answer, *, scope: str, since: str, after: str | None) -> None:
    """The records as a table, then their patches; a line saying so when there are none."""
    from symdiff.cli.display import changes_table, console, patch_text, show

    out = console()
    if not result.records:
        if result.indexed:
            window = "after that point" if after else f"in the last {since}"
            out.print(f"no {'' if scope == 'all' else scope + ' '}changes {window}",
                      markup=False)
        return
    show(out, changes_table(result.records))
    for text in result.patches:
        out.print(patch_text(text), end="", soft_wrap=True)
