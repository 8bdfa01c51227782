"""`symdiff db`: database maintenance, `upgrade` (the schema) and `gc` (one collection of the
retention window, symdiff.record.retention), printed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from symdiff.cli.common import db_option, fail, keep_option
from symdiff.config import Settings
from symdiff.errors import SymdiffError


@click.group("db")
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


def _mb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:.1f} MB"


@db_group.command("gc")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Workspace root whose default database to collect (default: .).")
@db_option
@keep_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def gc_cmd(root: str | None, db: str | None, keep: str | None, as_json: bool) -> None:
    """Delete records older than --keep, and the snapshots and stored symbols nothing needs.

    A record goes with its symbol rows; the stored symbols of blobs (symbols by content) go
    when another extractor version made them, or when nothing names their blob any more.

    Safe while a daemon records and readers read; a named reader's unread records stay. On
    SQLite the freed room goes back to the file system; a database made before symdiff did
    that is switched once by one VACUUM (writers wait while it copies the file).
    """
    from symdiff.api import collect

    try:
        settings = Settings.resolve(root, db=db, keep=keep)
        report = collect(settings, convert=True)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(report.as_json()))
        return
    cutoff = datetime.fromtimestamp(report.cutoff_us / 1e6, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    click.echo(f"collected {report.records} records ({report.symbol_rows} symbol rows) "
               f"observed before {cutoff}, {report.blobs} snapshots and {report.facts} stored "
               f"symbol sets; database "
               f"{_mb(report.size_before)} -> {_mb(report.size_after)} "
               f"({report.vacuum}, {report.seconds:.1f} s)")
