"""The command line: thin click commands that parse, call the library, format."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError


def fail(err: SymdiffError) -> NoReturn:
    """Print `code: reason` on stderr and exit (2 for bad arguments, 1 otherwise)."""
    click.echo(f"symdiff: {err.render()}", err=True)
    sys.exit(2 if isinstance(err, InvalidArgs) else 1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symdiff")
def cli() -> None:
    """symdiff: what changed here recently, at the level of symbols."""


db_option = click.option(
    "--db", "db", metavar="URL", default=None,
    help="SQLAlchemy database URL (default: $SYMDIFF_DB, else sqlite at ROOT/.symdiff/index.db).",
)
ignore_option = click.option(
    "--ignore", "ignore", multiple=True, metavar="PATTERN",
    help="Extra gitignore-style pattern to ignore (repeatable; also $SYMDIFF_IGNORE, comma-separated).",
)
test_option = click.option(
    "--test-pattern", "test_patterns", multiple=True, metavar="PATTERN",
    help="Extra gitignore-style pattern that marks test files (repeatable; `!pat` makes a path impl).",
)


@cli.command("index")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@db_option
@ignore_option
@test_option
@click.option("--json", "as_json", is_flag=True, help="Print the pass's report as JSON.")
def index_cmd(root: str | None, db: str | None, ignore: tuple[str, ...],
              test_patterns: tuple[str, ...], as_json: bool) -> None:
    """Run one reconcile pass over ROOT (default: .) and exit.

    The first pass takes a baseline snapshot of every tracked file without recording `add`
    changes; later passes record what was added, modified, deleted or renamed since.
    """
    from symdiff.api import index

    settings = Settings.resolve(root, db=db, ignore=ignore, test_patterns=test_patterns)
    try:
        report = index(settings, show_progress=not as_json)
    except SymdiffError as err:
        fail(err)
    if as_json:
        import json

        click.echo(json.dumps({
            "baseline": report.baseline, "scanned": report.scanned, "read": report.read,
            "skipped": list(report.skipped), "seconds": round(report.seconds, 3),
            "changes": [c.to_dict() for c in report.changes],
        }, indent=2))
        return
    what = "baseline of" if report.baseline else "reconciled"
    click.echo(f"{what} {report.scanned} files in {report.seconds:.2f}s: "
               f"{len(report.changes)} changes recorded, {len(report.skipped)} skipped")


@cli.group("db")
def db_group() -> None:
    """Database maintenance."""


@db_group.command("upgrade")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Workspace root whose default database to upgrade (default: .).")
@db_option
def db_upgrade_cmd(root: str | None, db: str | None) -> None:
    """Create or upgrade the database schema to the newest migration."""
    from symdiff.api import upgrade_database

    settings = Settings.resolve(root, db=db)
    try:
        revision = upgrade_database(settings)
    except SymdiffError as err:
        fail(err)
    click.echo(f"database at revision {revision}")


@cli.command("textdiff")
@click.argument("path_a", type=click.Path(dir_okay=True))
@click.argument("path_b", type=click.Path(dir_okay=True))
@click.option("--context", "context", default=3, type=int, show_default=True,
              help="Lines of context around each change (0-20).")
@click.option("--json", "as_json", is_flag=True, help="Print the text_diff result as JSON.")
def textdiff_cmd(path_a: str, path_b: str, context: int, as_json: bool) -> None:
    """Unified diff of two files (the text_diff tool); exit 0 whether or not they differ."""
    import json
    import os
    from pathlib import Path

    from symdiff.textdiff import text_diff

    # The CLI acts for the local user, so every readable path is allowed (the root "/").
    try:
        result = text_diff(path_a=os.path.abspath(path_a), path_b=os.path.abspath(path_b),
                           label_a=path_a, label_b=path_b, context_lines=context,
                           allowed_roots=[Path("/")])
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
    else:
        click.echo(str(result["diff"]), nl=False)


def main() -> None:
    """Console-script entry point."""
    cli()
