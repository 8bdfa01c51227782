"""The read side imports only what reading needs (a cold `symdiff changes` answers in a blink)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import symdiff_cli

HEAVY = ("watchdog", "tree_sitter", "tree_sitter_language_pack", "alembic", "pygit2", "mcp",
         "symdiff.record.indexer", "symdiff.record.daemon", "symdiff.parse.extract")  # fmt: skip


def _loaded(code: str, cwd: Path | None = None) -> set[str]:
    """The heavy modules (and their submodules) a fresh interpreter holds after `code`."""
    probe = f"""{code}
import sys, json
heavy = {HEAVY!r}
print(json.dumps([m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy)]))
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return set(json.loads(out.splitlines()[-1]))


def test_the_probe_sees_heavy_modules() -> None:
    loaded = _loaded("import symdiff.record.daemon")
    assert {"watchdog", "pygit2", "symdiff.record.indexer"} <= loaded


def test_importing_the_query_loads_no_heavy_module() -> None:
    assert _loaded("import symdiff.query.answer") == set()
    assert _loaded("import symdiff") == set()


def test_a_cold_changes_command_loads_no_heavy_module(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    assert symdiff_cli("index", str(tmp_path)).returncode == 0  # the setup, in this process
    (tmp_path / "a.py").write_text("def f():\n    return 2\n")
    assert symdiff_cli("index", str(tmp_path)).returncode == 0
    run = ("import sys, contextlib, io\nfrom symdiff.cli.main import cli\n"
           "sys.argv = ['symdiff', 'changes', '--json']\n"
           "buf = io.StringIO()\n"
           "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(buf):\n"
           "    cli()\n"
           "assert '\"a.py\"' in buf.getvalue(), buf.getvalue()")
    assert _loaded(run, cwd=tmp_path) == set()
    # A patch needs pygit2, and only then is it loaded.
    with_patch = _loaded(run.replace("'--json']", "'--json', '--patch']"), cwd=tmp_path)
    assert "pygit2" in with_patch
    assert {m.split(".")[0] for m in with_patch} == {"pygit2"}


def test_the_mcp_diff_tool_loads_no_heavy_module_beyond_the_sdk(tmp_path: Path) -> None:
    run = ("import asyncio\nfrom symdiff.config import Settings\n"
           "from symdiff.mcp.server import build_server\n"
           f"server = build_server(Settings.resolve({str(tmp_path)!r}))\n"
           "asyncio.run(server.call_tool('diff', {}))")
    assert {m.split(".")[0] for m in _loaded(run)} == {"mcp"}
