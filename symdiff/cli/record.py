"""The commands that record: `index` (one pass), `watch` (the daemon), `history import` (git)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from symdiff.cli.common import (
    count,
    db_option,
    fail,
    ignore_option,
    keep_option,
    log_as_notes,
    test_option,
)
from symdiff.config import Settings
from symdiff.errors import SymdiffError

if TYPE_CHECKING:
    from symdiff.model import FileChange


@click.command("index")
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

    log_as_notes()
    settings = Settings.resolve(root, db=db, ignore=ignore, test_patterns=test_patterns)
    try:
        report = index(settings, show_progress=not as_json)  # the root is checked first
    except SymdiffError as err:
        fail(err)
    if as_json:
        import json

        from symdiff.records import of_change

        click.echo(json.dumps({
            "baseline": report.baseline, "scanned": report.scanned, "read": report.read,
            "skipped": list(report.skipped), "seconds": round(report.seconds, 3),
            "changes": [of_change(c) for c in report.changes],
        }, indent=2))
        return
    if report.baseline:
        click.echo(f"baseline of {count(report.scanned, 'file')} taken in "
                   f"{report.seconds:.2f}s ({len(report.skipped)} skipped): later changes are "
                   "recorded against it")
        return
    click.echo(f"reconciled {count(report.scanned, 'file')} in {report.seconds:.2f}s: "
               f"{count(len(report.changes), 'change')} recorded, {len(report.skipped)} skipped")


@click.command("watch")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@db_option
@ignore_option
@test_option
@click.option("--settle-ms", "settle_ms", type=int, default=None, metavar="MS",
              help="Quiet window before a batch of events is recorded (default: "
                   "$SYMDIFF_SETTLE_MS, else 20).")
@click.option("--rescan-s", "rescan_s", type=float, default=5.0, show_default=True,
              metavar="SECONDS",
              help="Full rescan period when some directories cannot be watched (watch limit).")
@click.option("-q", "--quiet", "quiet", is_flag=True,
              help="Print no line per change; log only warnings and errors.")
@click.option("--no-history", "no_history", is_flag=True,
              help="Do not import the last 720h of git history after the start pass.")
@keep_option
def watch_cmd(root: str | None, db: str | None, ignore: tuple[str, ...],
              test_patterns: tuple[str, ...], settle_ms: int | None, rescan_s: float,
              quiet: bool, no_history: bool, keep: str | None) -> None:
    """Watch ROOT (default: .) in the foreground and record every change until Ctrl-C.

    Prints one line per recorded change on stdout (time, change, path, +/-, symbols, who made
    it); the log goes to stderr. Every start reconciles what changed while no daemon ran (the
    first takes a baseline). In a git work tree it then imports the last 720h of history in
    the background (`symdiff history import`; --no-history skips it). Records older than
    --keep are collected daily (`symdiff db gc`). One daemon per workspace; SIGINT/SIGTERM
    record pending events, then exit.
    """
    from symdiff.api import watch

    handler = _StderrNow()
    handler.setFormatter(logging.Formatter("%(asctime)s symdiff %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, handlers=[handler])
    logging.getLogger("alembic").setLevel(logging.WARNING)
    settings = Settings.resolve(root, db=db, ignore=ignore, test_patterns=test_patterns,
                                settle_ms=settle_ms, keep=keep)
    try:
        watch(settings, show_progress=True, poll_s=rescan_s,
              on_changes=None if quiet else _change_printer(), history=not no_history)
    except SymdiffError as err:
        fail(err)


class _StderrNow(logging.StreamHandler):  # type: ignore[type-arg]
    """Log to whatever `sys.stderr` is when a line is written: while the progress bar shows,
    rich puts a proxy there that prints the line above the bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _change_printer() -> Callable[[Sequence[FileChange]], None]:
    """Print each recorded change as one line on stdout (rich on a terminal, plain piped)."""
    from symdiff.cli.display import console, watch_line
    from symdiff.records import of_change

    out = console()

    def show(changes: Sequence[FileChange]) -> None:
        for change in changes:
            out.print(watch_line(of_change(change)), soft_wrap=True)
        out.file.flush()

    return show


@click.group("history")
def history_group() -> None:
    """The committed past: import git history into the index."""


@history_group.command("import")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@db_option
@test_option
@click.option("--since", "since", default=None, metavar="DURATION",
              help='Only commits made within this Go duration ("720h"); default: all.')
@click.option("--max-commits", "max_commits", default=None, type=click.IntRange(min=1),
              metavar="N", help="At most the N newest commits.")
@click.option("--json", "as_json", is_flag=True, help="Print the import's report as JSON.")
def history_import_cmd(root: str | None, db: str | None, test_patterns: tuple[str, ...],
                       since: str | None, max_commits: int | None, as_json: bool) -> None:
    """Record the first-parent commits of ROOT's current branch (default: .) as changes.

    One record per file per commit, timestamped with the commit's committer time, origin
    `commit`. Importing again records only what is missing.
    """
    import json

    from symdiff.api import import_history

    settings = Settings.resolve(root, db=db, test_patterns=test_patterns)
    try:
        report = import_history(settings, since=since, max_commits=max_commits)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps({"commits": report.commits, "recorded": report.recorded,
                               "already": report.already}))  # fmt: skip
    else:
        click.echo(f"{report.commits} commits: recorded {report.recorded} changes, "
                   f"{report.already} already in the index")
