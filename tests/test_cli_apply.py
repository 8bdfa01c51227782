"""`symdiff apply` from a shell, and `apply_edits` from a real MCP client over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp.client.session import ClientSession
from mcp_servers import run_stdio
from mcp_types import CallToolResult, TextContent

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures/acp/v2_schema.toolcallcontent.json").read_text()
)
SOURCE = (
    "def greet(name):\n    return 'hi ' + name\n\n\nclass Box:\n    def size(self):\n"
    "        return 1\n"
)
EDIT = (
    "FILE: app.py\n<<<<<<< SEARCH\ndef greet(name):\n=======\ndef greet(name, loud=False):\n"
    ">>>>>>> REPLACE\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n"
    ">>>>>>> REPLACE\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "app.py").write_text(SOURCE)
    return root


def symdiff(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    where = [str(root)] if args[0] == "index" else ["--root", str(root)]
    db = f"sqlite:///{root.parent / 'db' / 'index.db'}"
    return subprocess.run([sys.executable, "-m", "symdiff", *args, *where, "--db", db],
                          input=stdin, capture_output=True, text=True, cwd=root)


def test_dry_run_from_stdin_prints_the_summary_and_writes_nothing(ws: Path) -> None:
    res = symdiff(ws, "apply", "--dry-run", stdin=EDIT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "dry run, nothing written: +2 -2",
        "  M app.py  +2 -2  2 block(s)",
        "      signature_changed function greet (lines 1-2)",
        "      modified          method Box.size (lines 6-7)",
    ]
    assert (ws / "app.py").read_text() == SOURCE


def test_json_form_from_a_file_with_json_output_and_backup(ws: Path) -> None:
    edits = ws.parent / "edits.json"
    edits.write_text(json.dumps([{"file": "app.py", "blocks": [
        {"search": "'hi '", "replace": "'hello '"}]}]))
    assert symdiff(ws, "index").returncode == 0
    res = symdiff(ws, "apply", str(edits), "--json", "--backup")
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout)
    assert result["applied"] and not result["dry_run"]
    assert result["files"][0]["backup"] == "app.py.backup"
    jsonschema.validate(result["acp"], SCHEMA)
    [recorded] = result["recorded"]
    assert recorded["path"] == "app.py" and recorded["change_type"] == "modify"
    assert [s["name"] for s in recorded["symbols"]] == ["greet"]
    assert (ws / "app.py").read_text() == SOURCE.replace("'hi '", "'hello '")
    assert (ws / "app.py.backup").read_text() == SOURCE
    changes = symdiff(ws, "changes", "--json")
    assert changes.returncode == 0, changes.stderr
    assert [c["path"] for c in json.loads(changes.stdout)] == ["app.py"]


def test_edit_failure_exits_1_with_code_and_reason(ws: Path) -> None:
    res = symdiff(ws, "apply", stdin=EDIT.replace("def greet(name):\n=", "def greet(name) :\n="))
    assert res.returncode == 1
    assert res.stderr.startswith("symdiff: edit_failed: ")
    assert "differ only in whitespace" in res.stderr and "line 1" in res.stderr
    assert (ws / "app.py").read_text() == SOURCE


def test_parse_error_exits_2(ws: Path) -> None:
    res = symdiff(ws, "apply", stdin="FILE: app.py\n<<<<<<< SEARCH\nx\n")
    assert res.returncode == 2
    assert res.stderr.startswith("symdiff: invalid_args: line 2: ")


def test_outside_the_root_needs_allow_write(ws: Path, tmp_path: Path) -> None:
    extra = (tmp_path / "extra").resolve()
    extra.mkdir()
    edit = f"FILE: {extra / 'n.txt'}\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n"
    res = symdiff(ws, "apply", stdin=edit)
    assert res.returncode == 1 and res.stderr.startswith("symdiff: fs_denied: ")
    res = symdiff(ws, "apply", "--allow", str(extra), stdin=edit)  # the old spelling is gone
    assert res.returncode == 2 and "No such option '--allow'" in res.stderr
    res = symdiff(ws, "apply", "--allow-write", str(extra), stdin=edit)
    assert res.returncode == 0, res.stderr
    assert (extra / "n.txt").read_text() == "new\n"


def test_help_mentions_the_format() -> None:
    res = subprocess.run([sys.executable, "-m", "symdiff", "apply", "--help"],
                         capture_output=True, text=True)
    assert res.returncode == 0 and "<<<<<<< SEARCH" in res.stdout and "--dry-run" in res.stdout


# -- MCP -------------------------------------------------------------------------------------

def _text(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def _mcp(root: Path, check: Any, *extra: str) -> None:
    db = f"sqlite:///{root.parent / 'db' / 'index.db'}"
    run_stdio(["--root", str(root), "--db", db, *extra], check, cwd=root)


def test_mcp_apply_edits_dry_run_by_default_then_apply(ws: Path) -> None:
    async def check(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        tool = tools["apply_edits"]
        assert tool.input_schema["properties"]["dry_run"]["default"] is True
        assert tool.output_schema is not None
        preview = await session.call_tool("apply_edits", {"edits": EDIT})
        assert not preview.is_error, _text(preview)
        data = preview.structured_content
        assert data is not None and data["dry_run"] and not data["applied"]
        jsonschema.validate(data["acp"], SCHEMA)
        assert (ws / "app.py").read_text() == SOURCE
        as_json = [{"file": "app.py", "blocks": [{"search": "return 1", "replace": "return 3"}]}]
        done = await session.call_tool("apply_edits", {"edits": as_json, "dry_run": False})
        assert not done.is_error, _text(done)
        assert "return 3" in (ws / "app.py").read_text()
        bad = await session.call_tool("apply_edits", {"edits": as_json})
        assert bad.is_error and _text(bad).startswith("edit_failed: ")
        outside = await session.call_tool("apply_edits", {"edits": [
            {"file": "../x.py", "blocks": [{"search": "", "replace": "x"}]}]})
        assert outside.is_error and _text(outside).startswith("fs_denied: ")
        malformed = await session.call_tool("apply_edits", {"edits": "FILE: a\n"})
        assert malformed.is_error and _text(malformed).startswith("invalid_args: line 1")
    _mcp(ws, check)


def test_read_only_server_has_no_apply_edits(ws: Path) -> None:
    async def check(session: ClientSession) -> None:
        names = {t.name for t in (await session.list_tools()).tools}
        assert "apply_edits" not in names and "diff" in names
    _mcp(ws, check, "--read-only")


def test_mcp_allow_grants_reading_and_allow_write_grants_writing(ws: Path, tmp_path: Path) -> None:
    readable = (tmp_path / "readable").resolve()
    writable = (tmp_path / "writable").resolve()
    for folder in (readable, writable):
        folder.mkdir()
        (folder / "r.txt").write_text("r\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    config = (ws / ".git/config").read_text()

    def create(path: Path | str) -> dict[str, Any]:
        return {"edits": [{"file": str(path), "blocks": [{"search": "", "replace": "x\n"}]}],
                "dry_run": False}

    async def check(session: ClientSession) -> None:
        read = await session.call_tool("text_diff", {"path_a": str(readable / "r.txt"),
                                                     "path_b": "app.py"})
        assert not read.is_error, _text(read)
        denied = await session.call_tool("apply_edits", create(readable / "new.txt"))
        assert denied.is_error and _text(denied).startswith("fs_denied: ")
        done = await session.call_tool("apply_edits", create(writable / "new.txt"))
        assert not done.is_error, _text(done)
        # What the server may write it may read (a dry run would show it anyway).
        also_read = await session.call_tool("text_diff", {"path_a": str(writable / "r.txt"),
                                                          "path_b": "app.py"})
        assert not also_read.is_error, _text(also_read)
        outside = await session.call_tool("text_diff", {"path_a": str(tmp_path / "x.txt"),
                                                        "path_b": "app.py"})
        assert outside.is_error and _text(outside).startswith("fs_denied: ")
        planted = await session.call_tool("apply_edits", {"edits": [{"file": ".git/config",
            "blocks": [{"search": "[core]\n", "replace": "[core]\n\tfsmonitor = x\n"}]}],
            "dry_run": False})  # fmt: skip
        assert planted.is_error and ".git/" in _text(planted)
        assert _text(planted).startswith("fs_denied: ")
    _mcp(ws, check, "--allow", str(readable), "--allow-write", str(writable))
    assert not (readable / "new.txt").exists()
    assert (writable / "new.txt").read_text() == "x\n"
    assert (ws / ".git/config").read_text() == config


def test_a_file_line_that_is_not_utf8_is_invalid_args_naming_the_line(ws: Path) -> None:
    from click.testing import CliRunner

    from symdiff.cli.main import cli

    edit = (b"FILE: app.py\n<<<<<<< SEARCH\n        return 1\n=======\n        return 2\n"
            b">>>>>>> REPLACE\nFILE: caf\xff.py\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n")
    db = f"sqlite:///{ws.parent / 'db' / 'index.db'}"
    res = CliRunner().invoke(cli, ["apply", "--root", str(ws), "--db", db], input=edit)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert res.stderr.startswith("symdiff: invalid_args: line 7: not UTF-8 text: byte 0xff ")
    assert sorted(p.name for p in ws.iterdir()) == ["app.py"]  # nothing written
    assert (ws / "app.py").read_text() == SOURCE
