"""The command line: thin click commands that parse, call the library, format.

Over 400 lines: one command per job (index, watch, status, db, textdiff, serve, apply,
history), each short; `changes` and the symbol commands live in cli_changes.py and
cli_symbols.py.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import click

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError

if TYPE_CHECKING:
    from symdiff.model import FileChange


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
    help="Extra gitignore-style pattern to ignore (repeatable; also $SYMDIFF_IGNORE, "
    "comma-separated).",
)
keep_option = click.option(
    "--keep", "keep", metavar="DURATION", default=None,
    help="Keep records this long, a Go duration (default: $SYMDIFF_KEEP, else 2160h = 90 "
    "days); older ones and the snapshots nothing needs are collected.",
)
test_option = click.option(
    "--test-pattern", "test_patterns", multiple=True, metavar="PATTERN",
    help="Extra gitignore-style pattern that marks test files (repeatable; `!pat` makes a "
    "path impl).",
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
    from symdiff.record.indexer import check_root

    _log_as_notes()
    settings = Settings.resolve(root, db=db, ignore=ignore, test_patterns=test_patterns)
    try:
        check_root(settings)  # before the database URL, which holds the root, is parsed
        report = index(settings, show_progress=not as_json)
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
        click.echo(f"baseline of {_count(report.scanned, 'file')} taken in "
                   f"{report.seconds:.2f}s ({len(report.skipped)} skipped): later changes are "
                   "recorded against it")
        return
    click.echo(f"reconciled {_count(report.scanned, 'file')} in {report.seconds:.2f}s: "
               f"{_count(len(report.changes), 'change')} recorded, {len(report.skipped)} skipped")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


@cli.command("watch")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@db_option
@ignore_option
@test_option
@click.option("--settle-ms", "settle_ms", type=int, default=None, metavar="MS",
              help="Quiet window before a batch of events is recorded (default: "
                   "$SYMDIFF_SETTLE_MS, else 40).")
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
    from symdiff.record.daemon import watch

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


@cli.command("status")
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
    from symdiff.workspace.status import status

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

    from symdiff.diffs.textdiff import text_diff

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


def _log_as_notes() -> None:
    """The library's warnings as `symdiff: warning: …` lines on stderr, like every note; the
    read-your-writes one is left to the stale note, which says more."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("symdiff: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logging.getLogger("symdiff.workspace.sync").setLevel(logging.ERROR)



@cli.command("serve")
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
@click.option("--token", "token", default=None, envvar="SYMDIFF_TOKEN", metavar="TOKEN",
              help="With --http: every request must carry 'Authorization: Bearer TOKEN' "
                   "(else SYMDIFF_TOKEN; on a non-loopback address a token is generated and "
                   "printed on stderr when none is given).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="With --http: another name clients may give in the Host header "
                   "(repeatable; loopback names and the bind address are always allowed).")
@click.option("--http-writes", "http_writes", is_flag=True,
              help="With --http: offer apply_edits too (over HTTP it is off by default).")
def serve_cmd(root: str | None, db: str | None, allow: tuple[str, ...], http: str | None,
              read_only: bool, all_workspaces: bool, token: str | None,
              allow_hosts: tuple[str, ...], http_writes: bool,
              allow_write: tuple[str, ...]) -> None:
    """Run the MCP server (tools diff, text_diff, apply_edits) over stdio or HTTP."""
    from pathlib import Path

    from symdiff.mcp.server import parse_http_address, serve

    settings = Settings.resolve(root, db=db)
    options = None
    if http is not None:
        from symdiff.httpguard import HttpOptions, notice, with_token

        try:
            host, port = parse_http_address(http)
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


@cli.command("apply")
@click.argument("source", default="-", type=click.File("r", encoding="utf-8"))
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Workspace root; relative paths in the edits are relative to it (default: .).")
@db_option
@click.option("--allow-write", "allow_write", multiple=True,
              type=click.Path(file_okay=False, exists=True),
              help="Another directory the edits may write in (repeatable; the root always).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Validate and preview; write nothing.")
@click.option("--backup", "backup", is_flag=True, help="Keep each edited file as <file>.backup.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def apply_cmd(source: TextIO, root: str | None, db: str | None,
              allow_write: tuple[str, ...], dry_run: bool, backup: bool, as_json: bool) -> None:
    """Apply SEARCH/REPLACE edits from SOURCE (a file, or - for stdin; default: -).

    SOURCE holds `FILE: path` lines each followed by `<<<<<<< SEARCH` / `=======` /
    `>>>>>>> REPLACE` blocks, or the JSON form [{"file": ..., "blocks": [{"search": ...,
    "replace": ...}]}]. Every block must match exactly once before anything is written; then
    all files are written atomically (or none) and the change is recorded in the index.
    """
    from pathlib import Path

    from symdiff.api import apply_edits

    settings = Settings.resolve(root, db=db)
    try:
        result = apply_edits(source.read(), settings=settings,
                             allow_write=[Path(a).resolve() for a in allow_write],
                             dry_run=dry_run, backup=backup)
    except SymdiffError as err:
        fail(err)
    if as_json:
        import json

        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _print_apply(result)


def _print_apply(result: dict[str, Any]) -> None:
    marks = {"add": "A", "modify": "M", "unchanged": "="}
    files = result["files"]
    head = "dry run, nothing written" if result["dry_run"] else f"applied to {len(files)} files"
    click.echo(f"{head}: +{result['lines_added']} -{result['lines_removed']}")
    for f in files:
        backup = f"  (backup {f['backup']})" if "backup" in f else ""
        click.echo(f"  {marks[f['operation']]} {f['path']}  +{f['lines_added']} "
                   f"-{f['lines_removed']}  {f['blocks']} block(s){backup}")
        for s in f["symbols"]:
            click.echo(f"      {s['change_type']:<17} {s['kind']} {s['name']} "
                       f"(lines {s['start_line']}-{s['end_line']})")
    if "recorded" in result:
        click.echo(f"recorded {len(result['recorded'])} change(s) in the index")
    if "record_error" in result:
        click.echo(f"not recorded in the index: {result['record_error']}", err=True)


@cli.group("history")
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


def _more_commands() -> None:
    """`changes` (symdiff.cli.changes), `log`, `show`, `restore` (symdiff.cli.symbols) and `ui`
    (symdiff.cli.ui) live in modules of their own; they use `fail` and the options above, so
    they are added once this module is loaded."""
    from symdiff.cli.blame import blame_cmd, trace_cmd
    from symdiff.cli.changes import changes_cmd
    from symdiff.cli.sessions import hook_cmd, init_cmd, sessions_cmd, undo_cmd
    from symdiff.cli.symbols import log_cmd, restore_cmd, show_cmd
    from symdiff.cli.ui import ui_cmd

    for command in (changes_cmd, log_cmd, show_cmd, restore_cmd, ui_cmd, hook_cmd, sessions_cmd,
                    init_cmd, undo_cmd, blame_cmd, trace_cmd):
        cli.add_command(command)
    from symdiff.cli.db import gc_cmd

    db_group.add_command(gc_cmd)


_more_commands()


def main() -> None:
    """Console-script entry point: any SymdiffError a command lets through (a bad
    SYMDIFF_* value, say) is `symdiff: code: reason` too, never a traceback."""
    try:
        cli()
    except SymdiffError as err:
        fail(err)
