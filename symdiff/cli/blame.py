"""`symdiff blame` and `symdiff trace` (docs/agents.md, "Blame" and "Agent Trace")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError


def _line_range(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    start, sep, end = text.partition(",")
    if not start.isdigit() or (sep and not end.isdigit()):
        raise InvalidArgs(f"-L wants START,END (line numbers), got {text!r}")
    return int(start), int(end) if end else int(start)


@click.command("blame")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("-L", "lines", metavar="START,END", default=None,
              help="Only these lines (1-based, inclusive).")
@click.option("--db", "db", metavar="URL", default=None,
              help="SQLAlchemy database URL (default: $SYMDIFF_DB, else the workspace's).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
def blame_cmd(path: str, lines: str | None, db: str | None, as_json: bool) -> None:
    """Who last wrote each line of PATH as it is now, saves never committed included: the
    agent (session, turn, tool), a person, git, or the commit; lines older than anything
    recorded say so."""
    from symdiff.api import blame
    from symdiff.cli.common import fail

    try:
        start, end = _line_range(lines)
        settings = Settings.resolve(Path(path).resolve().parent, db=db, nearest=True)
        root = settings.root
        found = blame(settings, Path(path).resolve(), start_line=start, end_line=end)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False, indent=2))
        return
    text = (root / str(found["path"])).read_text(encoding="utf-8", errors="replace")
    source = text.splitlines()
    for r in found["ranges"]:
        click.echo(f"{r['start_line']}-{r['end_line']}  {who(r, str(found['path']))}")
        for n in range(r["start_line"], r["end_line"] + 1):
            click.echo(f"{n:>6} | {source[n - 1] if n <= len(source) else ''}")
    if not found["indexed"]:
        click.echo("note: nothing is indexed here: run `symdiff watch` (or `symdiff index`)")


def who(r: dict[str, Any], path: str) -> str:
    """A range's owner in one line: the record's origin and who, its time and version."""
    if r["origin"] is None:
        return f"({r['note']})"
    info = r["origin_info"] or {}
    origin = r["origin"]
    if origin == "agent":
        said = (f"agent {info.get('agent')} session {info.get('session')} turn "
                f"{info.get('turn')} {info.get('tool')}")  # fmt: skip
    elif origin == "commit":
        said = f"commit {str(info.get('sha'))[:10]} {info.get('author')}: {info.get('summary')}"
    elif origin == "edit":
        client = info.get("client")
        said = "apply_edits by " + str(client.get("name") if isinstance(client, dict) else client)
        if info.get("session"):
            said += f" (session {info['session']} turn {info.get('turn')})"
    elif origin == "git":
        said = f"git {info.get('operation', '')}".rstrip()
    else:
        said = f"person ({origin})"
    moved = f" (as {r['path']})" if r["path"] != path else ""
    return f"{said}  {r['timestamp']}  version {r['version']}{moved}"


@click.command("trace")
@click.argument("rev", required=False)
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="The workspace (default: the one at or above .).")
@click.option("--db", "db", metavar="URL", default=None,
              help="SQLAlchemy database URL (default: $SYMDIFF_DB, else the workspace's).")
@click.option("--worktree", "worktree", is_flag=True,
              help="The uncommitted work against HEAD instead of a commit (no `vcs`).")
def trace_cmd(rev: str | None, root: str | None, db: str | None, worktree: bool) -> None:
    """Print the Agent Trace record of commit REV (default HEAD): for each file it changed,
    the line ranges an agent (`ai`, with its model), a person (`human`), both (`mixed`) or
    nobody known (`unknown`) wrote."""
    from symdiff.api import trace
    from symdiff.cli.common import fail

    try:
        record = trace(Settings.resolve(root, db=db, nearest=True), rev, worktree=worktree)
    except SymdiffError as err:
        fail(err)
    click.echo(json.dumps(record, ensure_ascii=False, indent=2))
