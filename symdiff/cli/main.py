"""The command line: the `symdiff` group and, in one place, the commands it holds.

Each command is a thin click function in a module of its own job (record.py, status.py,
changes.py, symbols.py, files.py, db.py, serve.py, ui.py, impact.py) that parses, calls
`symdiff.api` and formats; what they share is in common.py.
"""

from __future__ import annotations

import click

from symdiff.cli.blame import blame_cmd, trace_cmd
from symdiff.cli.changes import changes_cmd
from symdiff.cli.common import fail
from symdiff.cli.db import db_group
from symdiff.cli.files import apply_cmd, textdiff_cmd
from symdiff.cli.impact import impact_cmd
from symdiff.cli.record import history_group, index_cmd, watch_cmd
from symdiff.cli.serve import serve_cmd
from symdiff.cli.sessions import hook_cmd, init_cmd, sessions_cmd, undo_cmd
from symdiff.cli.status import status_cmd
from symdiff.cli.symbols import log_cmd, restore_cmd, show_cmd
from symdiff.cli.ui import ui_cmd
from symdiff.errors import SymdiffError

COMMANDS = (index_cmd, watch_cmd, status_cmd, changes_cmd, log_cmd, show_cmd, restore_cmd,
            db_group, textdiff_cmd, serve_cmd, apply_cmd, history_group, ui_cmd, hook_cmd,
            sessions_cmd, init_cmd, undo_cmd, blame_cmd, trace_cmd, impact_cmd)  # fmt: skip


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             commands=COMMANDS)  # fmt: skip
@click.version_option(package_name="symdiff")
def cli() -> None:
    """symdiff: what changed here recently, at the level of symbols."""


def main() -> None:
    """Console-script entry point: any SymdiffError a command lets through (a bad
    SYMDIFF_* value, say) is `symdiff: code: reason` too, never a traceback."""
    try:
        cli()
    except SymdiffError as err:
        fail(err)
