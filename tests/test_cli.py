"""The CLI as a user meets it: every command has help, errors have exit codes.

The real-process tests of the console script live here (the entry point, exit codes through
the interpreter, stdout and stderr as separate pipes, processes racing); the other CLI tests
run the same entry point in the process (conftest.symdiff_cli)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner
from conftest import cli_group, symdiff_cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, cmd in group.commands.items():
        out.append((*prefix, name))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, (*prefix, name)))
    return out


def test_every_command_and_option_has_help() -> None:
    cli = cli_group()
    commands = _commands(cli)
    assert {("index",), ("db",), ("db", "upgrade")} <= set(commands)
    for path in commands:
        cmd: click.Command = cli
        for name in path:
            assert isinstance(cmd, click.Group)
            cmd = cmd.commands[name]
        assert cmd.help, f"symdiff {' '.join(path)} has no help text"
        for param in cmd.params:
            if isinstance(param, click.Option):
                assert param.help, f"symdiff {' '.join(path)} {param.opts[0]} has no help text"
        result = CliRunner().invoke(cli, [*path, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_index_then_changes_through_the_console_script(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    script = Path(sys.executable).parent / "symdiff"  # pyproject's [project.scripts] wrapper
    assert script.is_file(), "the console script is installed beside the interpreter"
    first = subprocess.run([str(script), "index", str(tmp_path), "--json"], capture_output=True,
                           text=True, check=True)  # fmt: skip
    exe = [sys.executable, "-m", "symdiff"]
    assert json.loads(first.stdout)["baseline"] is True
    (tmp_path / "a.py").write_text("def f(x):\n    return 1\n")
    second = subprocess.run([*exe, "index", str(tmp_path), "--json"], capture_output=True,
                            text=True, check=True)  # fmt: skip
    [change] = json.loads(second.stdout)["changes"]
    assert change["symbols"][0]["change_type"] == "signature_changed"
    assert (tmp_path / ".symdiff" / "index.db").is_file()
    up = subprocess.run([*exe, "db", "upgrade", "--root", str(tmp_path)], capture_output=True,
                        text=True, check=True)  # fmt: skip
    assert "revision" in up.stdout


def test_a_bad_database_url_is_a_clear_error(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "symdiff", "index", str(tmp_path), "--db",
         "postgresql+psycopg://nobody@127.0.0.1:1/x"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert res.returncode == 1
    assert res.stderr.startswith("symdiff: store_error: cannot open database")
    assert "Traceback" not in res.stderr


def test_changes_warns_on_stderr_when_the_daemon_does_not_confirm(tmp_path: Path) -> None:
    from symdiff.config import Settings
    from symdiff.workspace.layout import COOKIE_DIR
    from symdiff.workspace.lock import workspace_lock

    (tmp_path / "a.py").write_text("x = 1\n")
    exe = [sys.executable, "-m", "symdiff"]
    subprocess.run([*exe, "index", str(tmp_path)], check=True, capture_output=True)
    (tmp_path / COOKIE_DIR).mkdir(parents=True)  # as a running daemon has it
    # A daemon that never answers cookies:
    with workspace_lock(tmp_path, Settings.resolve(tmp_path).host):
        res = subprocess.run([*exe, "changes", "--root", str(tmp_path), "--json"],
                             capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(res.stdout) == []
    assert "symdiff: warning: the symdiff daemon watching this tree" in res.stderr


def test_a_bad_environment_value_is_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "SYMDIFF_SETTLE_MS": "soon"}
    res = subprocess.run([sys.executable, "-m", "symdiff", "changes", "--root", str(tmp_path)],
                         capture_output=True, text=True, env=env)  # fmt: skip
    assert res.returncode == 2
    assert res.stderr == ("symdiff: invalid_args: SYMDIFF_SETTLE_MS must be a number of "
                          "milliseconds, got 'soon'\n")  # fmt: skip


def test_upgrade_reports_the_databases_revision(tmp_path: Path) -> None:
    from symdiff.store.schema import HEAD

    res = symdiff_cli("db", "upgrade", "--root", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"database at revision {HEAD}\n"


def test_two_processes_opening_a_new_database_at_once_both_succeed(tmp_path: Path) -> None:
    """A daemon and a query (here: two `symdiff index`) starting together on a fresh tree: one
    creates the schema, the other waits for it instead of failing with "database is locked"."""
    for i in range(20):
        (tmp_path / f"f{i}.py").write_text(f"x = {i}\n")
    exe = [sys.executable, "-m", "symdiff", "index", str(tmp_path)]
    for _ in range(3):
        shutil.rmtree(tmp_path / ".symdiff", ignore_errors=True)
        procs = [subprocess.Popen(exe, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]  # fmt: skip
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            assert "Traceback" not in err
