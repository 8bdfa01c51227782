"""Commands over files: `textdiff` (two files compared) and `apply` (search/replace edits)."""

from __future__ import annotations

from typing import BinaryIO

import click

from symdiff.cli.common import db_option, fail, print_apply
from symdiff.config import Settings
from symdiff.errors import SymdiffError


@click.command("textdiff")
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

    from symdiff.api import text_diff

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


@click.command("apply")
@click.argument("source", default="-", type=click.File("rb"))
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="Workspace root; relative paths in the edits are relative to it (default: .).")
@db_option
@click.option("--allow-write", "allow_write", multiple=True,
              type=click.Path(file_okay=False, exists=True),
              help="Another directory the edits may write in (repeatable; the root always).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Validate and preview; write nothing.")
@click.option("--backup", "backup", is_flag=True, help="Keep each edited file as <file>.backup.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def apply_cmd(source: BinaryIO, root: str | None, db: str | None,
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
        print_apply(result)
