"""The command line: thin click commands that parse, call the library, format."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from symdiff.errors import InvalidArgs, SymdiffError


def fail(err: SymdiffError) -> NoReturn:
    """Print `code: reason` on stderr and exit (2 for bad arguments, 1 otherwise)."""
    click.echo(f"symdiff: {err.render()}", err=True)
    sys.exit(2 if isinstance(err, InvalidArgs) else 1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symdiff")
def cli() -> None:
    """symdiff: what changed here recently, at the level of symbols."""


def main() -> None:
    """Console-script entry point."""
    cli()
