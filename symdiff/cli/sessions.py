"""`symdiff hook`, `symdiff sessions`, `symdiff init claude-code`, and the session options of
`symdiff changes` (docs/agents.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from symdiff.config import Settings
from symdiff.errors import SymdiffError

F = TypeVar("F", bound=Callable[..., Any])


def session_options(f: F) -> F:
    """`--session S` with `--turn N` or `--since-turn N` (symdiff changes)."""
    f = click.option("--since-turn", "since_turn", default=None, metavar="N",
                     help="With --session: what anyone else changed since turn N of that "
                          "session ended.")(f)  # fmt: skip
    f = click.option("--turn", "turn", default=None, metavar="N",
                     help="With --session: what the agent did in turn N, whatever tool "
                          "wrote it.")(f)  # fmt: skip
    return click.option("--session", "session", default=None, metavar="ID",
                        help="An agent session (symdiff sessions lists them).")(f)


@click.command("hook", context_settings={"ignore_unknown_options": True,
                                         "allow_extra_args": True})  # fmt: skip
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_cmd(args: tuple[str, ...]) -> None:
    """Record one agent hook event; always exits 0.

    `symdiff hook claude-code [--root ROOT]` reads a Claude Code hook event (JSON) on stdin.
    `symdiff hook event --agent NAME --session ID --event turn-start|turn-end|tool-start|
    tool-end [--tool NAME] [--tool-use-id ID] [--path P]... [--command CMD] [--root ROOT]`
    is the same for any other agent. Nothing is printed on stdout but Claude Code's hook JSON
    (the changes others made since the session's last turn, on UserPromptSubmit).
    """
    from symdiff.api import hook

    sys.exit(hook(list(args)))


@click.command("sessions")
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@click.option("--db", "db", metavar="URL", default=None,
              help="SQLAlchemy database URL (default: $SYMDIFF_DB, else the workspace's).")
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON.")
def sessions_cmd(root: str | None, db: str | None, as_json: bool) -> None:
    """Agent sessions in this workspace and their turns: start, end, files, symbols, and
    records by origin."""
    from symdiff.api import sessions
    from symdiff.cli.common import fail

    try:
        found = sessions(Settings.resolve(root, db=db, nearest=True))
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False, indent=2))
        return
    if not found:
        click.echo("no agent sessions recorded here (docs/agents.md: symdiff init claude-code)")
    for s in found:
        end = s["ended"] or "open"
        click.echo(f"{s['agent']} session {s['session']}  {s['started']} → {end}"
                   f"{'  model ' + str(s['model']) if s['model'] else ''}")
        for t in s["turns"]:
            origins = ", ".join(f"{k} {v}" for k, v in t["by_origin"].items()) or "no changes"
            click.echo(f"  turn {t['turn']}  {t['started']} → {t['ended'] or 'open'}  "
                       f"{t['files']} files, {t['symbols']} symbols  ({origins})")


@click.command("init")
@click.argument("agent", type=click.Choice(["claude-code"]))
@click.argument("root", required=False, type=click.Path(file_okay=False, exists=True))
@click.option("--print", "show", is_flag=True, help="Show what would be written; write nothing.")
def init_cmd(agent: str, root: str | None, show: bool) -> None:
    """Set an agent up: hooks into .claude/settings.local.json, the MCP server into .mcp.json.

    Merges: other settings, hooks and servers are kept; running it twice changes nothing.
    """
    from pathlib import Path

    from symdiff.api import agent_setup

    target = Path(root or ".").resolve()
    for path, text, changed in agent_setup(agent, target):
        if show:
            click.echo(f"# {path}{'' if changed else ' (unchanged)'}")
            click.echo(text)
        elif changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".symdiff-tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
            click.echo(f"wrote {path}")
        else:
            click.echo(f"{path} already set up")


@click.command("undo")
@click.option("--root", "root", default=None, type=click.Path(file_okay=False, exists=True),
              help="The workspace (default: the nearest above the current directory).")
@click.option("--session", "session", required=True, metavar="ID", help="The agent session.")
@click.option("--turn", "turn", default=None, metavar="N",
              help="The turn to undo (default: the whole session).")
@click.option("--apply", "write", is_flag=True, help="Write the undo (default: a dry run).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def undo_cmd(root: str | None, session: str, turn: str | None, write: bool,
             as_json: bool) -> None:  # fmt: skip
    """Undo what an agent did in a turn, keeping everyone else's work.

    A dry run by default: the patch and a symbol-level summary (and any conflict: lines the
    turn and a later change both touched). --apply writes it (all files or none) and records
    it as an edit.
    """
    from symdiff.api import undo_turn
    from symdiff.cli.common import fail

    settings = Settings.resolve(root, nearest=True)
    try:
        result = undo_turn(settings, session=session, turn=turn, write=write)
    except SymdiffError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for f in result["files"]:  # type: ignore[attr-defined]
        symbols = ", ".join(f"{s['name']} {s['change_type']}" for s in f["symbols"])
        click.echo(f"{f['change_type']} {f['path']} +{f['lines_added']} -{f['lines_removed']}"
                   f"{'  ' + symbols if symbols else ''}")
    for c in result["conflicts"]:  # type: ignore[attr-defined]
        click.echo(f"conflict: {c['path']}: {c['reason']}", err=True)
        for x in c["lines"]:
            click.echo(f"  lines {x['start']}-{x['end']}: now {x['now']!r}, undo {x['undo']!r}",
                       err=True)  # fmt: skip
    if not write:
        click.echo(str(result["patch"]), nl=False)
        click.echo("dry run: nothing written (--apply writes it)", err=True)
    else:
        click.echo(f"undone: {len(result['recorded'])} changes recorded as edit")  # type: ignore[arg-type]
