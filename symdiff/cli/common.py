"""What the commands share: the error exit, the common options, the log as notes, the printed
result of an edit. The commands import this module; it imports none of them."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from symdiff.errors import InvalidArgs, SymdiffError

F = TypeVar("F", bound=Callable[..., Any])


def fail(err: SymdiffError) -> NoReturn:
    """Print `code: reason` on stderr and exit (2 for bad arguments, 1 otherwise)."""
    click.echo(f"symdiff: {err.render()}", err=True)
    sys.exit(2 if isinstance(err, InvalidArgs) else 1)


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


def access_options(*, token_help: str, allow_host_help: str) -> Callable[[F], F]:
    """`--token` and `--allow-host`: who may reach a server that listens over HTTP (the door of
    symdiff/httpguard.py), each command saying it in its own words."""
    token = click.option("--token", "token", default=None, envvar="SYMDIFF_TOKEN",
                         metavar="TOKEN", help=token_help)  # fmt: skip
    allow_host = click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
                              help=allow_host_help)  # fmt: skip

    def decorate(command: F) -> F:
        return token(allow_host(command))

    return decorate


def log_as_notes() -> None:
    """The library's warnings as `symdiff: warning: …` lines on stderr, like every note; the
    read-your-writes one is left to the stale note, which says more."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("symdiff: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logging.getLogger("symdiff.workspace.sync").setLevel(logging.ERROR)


def count(n: int, noun: str) -> str:
    """`1 file`, `3 files`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def print_apply(result: dict[str, Any]) -> None:
    """An edit's result as `symdiff apply` and `symdiff restore` print it."""
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
