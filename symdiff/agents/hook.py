"""`symdiff hook claude-code` and `symdiff hook event`: one event in, one journal line out.

The common path — parse, append, return — imports only `json`, `os`, `fcntl` and this package's
stdlib-only modules (`events`, `journal`): a hook runs synchronously on every tool call. The
slow paths (`recorder.py`) load only where needed: a PostToolUse with no daemon records the tree
before it returns; a UserPromptSubmit may answer with `additionalContext`.

A hook never gets in the agent's way: it exits 0 whatever happens (exit 2 would block the
tool), prints nothing on stdout but hook JSON, and says what went wrong in one stderr line.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from typing import TextIO

from symdiff.agents import events, journal
from symdiff.workspace.names import LOCK_FILE, STATE_DIR

USAGE = ("usage: symdiff hook claude-code [--root ROOT] < event.json\n"
         "       symdiff hook event --agent NAME --session ID --event "
         "turn-start|turn-end|tool-start|tool-end [--tool NAME] [--tool-use-id ID] "
         "[--path P]... [--command CMD] [--root ROOT]")


def main(argv: list[str], *, stdin: TextIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:  # fmt: skip
    """Run one hook; always 0."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        if argv[:1] == ["claude-code"]:
            answer = claude_code(_options(argv[1:], {"--root"}), (stdin or sys.stdin).read())
        elif argv[:1] == ["event"]:
            answer = neutral_event(_options(argv[1:], _NEUTRAL_OPTIONS))
        else:
            raise events.BadEvent(USAGE)
        if answer is not None:
            out.write(json.dumps(answer) + "\n")
            out.flush()
    except events.BadEvent as exc:
        err.write(f"symdiff hook: {exc}\n")
    except Exception as exc:  # never block the agent: say it, exit 0
        first = str(exc).splitlines()[0] if str(exc) else ""
        err.write(f"symdiff hook: {type(exc).__name__}: {first}\n")
    return 0


_NEUTRAL_OPTIONS = {"--agent", "--session", "--event", "--tool", "--tool-use-id", "--path",
                    "--command", "--root"}


def _options(args: list[str], known: set[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        name, _, value = args[i].partition("=")
        if name not in known:
            raise events.BadEvent(f"unknown argument {args[i]!r}\n{USAGE}")
        if not _:
            if i + 1 >= len(args):
                raise events.BadEvent(f"{name} needs a value")
            i, value = i + 1, args[i + 1]
        found.setdefault(name, []).append(value)
        i += 1
    return found


def find_root(explicit: str | None, cwd: str | None) -> str:
    """`--root`; else the nearest directory at or above the event's cwd with a `.symdiff/`;
    else $CLAUDE_PROJECT_DIR, else the cwd."""
    if explicit:
        return os.path.realpath(explicit)
    start = os.path.realpath(cwd or os.getcwd())
    here = start
    while True:
        if os.path.isdir(os.path.join(here, STATE_DIR)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    return os.path.realpath(project) if project else start


def daemon_running(root: str) -> bool:
    """Whether a daemon holds the workspace lock (as workspace.lock.running, without its
    imports: this runs in every PostToolUse)."""
    try:
        f = open(os.path.join(root, STATE_DIR, LOCK_FILE), "rb")  # noqa: SIM115
    except OSError:
        return False
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def claude_code(options: dict[str, list[str]], text: str) -> dict[str, object] | None:
    """Record one Claude Code hook event; the hook JSON to print, if any."""
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise events.BadEvent(f"the hook input is not JSON ({exc})") from None
    cwd = obj.get("cwd") if isinstance(obj, dict) else None
    explicit = options.get("--root")
    root = find_root(explicit[-1] if explicit else None, cwd if isinstance(cwd, str) else None)
    line = events.from_claude_code(obj, root=root, now=time.time_ns())
    return _after(root, line, hook_event=str(obj.get("hook_event_name")))


def neutral_event(options: dict[str, list[str]]) -> dict[str, object] | None:
    """Record one harness-neutral event (no hook JSON: other agents read none)."""
    def one(name: str) -> str | None:
        values = options.get(name)
        return values[-1] if values else None

    root = find_root(one("--root"), None)
    line = events.neutral(agent=one("--agent") or "", session=one("--session") or "",
                          kind=one("--event") or "", tool=one("--tool"),
                          tool_use_id=one("--tool-use-id"), paths=options.get("--path", []),
                          root=root, now=time.time_ns(), command=one("--command"))  # fmt: skip
    _after(root, line, hook_event=None)
    return None


def _after(root: str, line: events.Line, *, hook_event: str | None) -> dict[str, object] | None:
    """Append the event (first: a failing slow path never loses it); then the slow path its
    kind needs. Without a daemon, a turn-start records a person's saves before the turn's
    tools run, and a tool-end what the tool wrote (attributed by write time either way)."""
    kind = line["kind"]
    journal.append(root, line)
    if kind in (events.TURN_START, events.TOOL_END) and not daemon_running(root):
        _record(root)
    if kind == events.TURN_START and hook_event is not None:
        return _context(root, str(line["session"]), hook_event)
    return None


def _record(root: str) -> None:
    from pathlib import Path

    from symdiff.agents.recorder import record_now

    record_now(Path(root))


def _context(root: str, session: str, hook_event: str) -> dict[str, object] | None:
    try:  # the first turn of a session has nothing to be told: no database, no imports
        with open(os.path.join(journal.folder(root), journal.file_name(session)), "rb") as f:
            if b'"kind":"turn-end"' not in f.read():
                return None
    except OSError:
        return None
    from pathlib import Path

    from symdiff.agents.recorder import context

    text = context(Path(root), session)
    if text is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": hook_event, "additionalContext": text}}
