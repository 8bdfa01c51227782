"""symbol_history, symbol_source and restore_symbol from the real MCP SDK client, with the server
in this process over the SDK's in-memory transport (test_mcp.py starts the real processes)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from mcp.client.session import ClientSession
from mcp_servers import call, index, run_memory, text_of

V1 = "import os\n\n\ndef parse(text):\n    return text.split()\n\n\ndef other():\n    return 0\n"
V2 = V1.replace("return text.split()", "words = text.split()\n    return words")
V3 = V2.replace("def parse(text):", "def parse(text, sep=None):").replace(
    "text.split()", "text.split(sep)")


def _tree(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    for text in (V1, V2, V3):
        (root / "mod.py").write_text(text)
        index(root)
    return root


def test_history_source_and_restore(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    async def check(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"symbol_history", "symbol_source", "restore_symbol"} <= set(tools)
        for name in ("symbol_history", "symbol_source", "restore_symbol"):
            jsonschema.Draft202012Validator.check_schema(tools[name].input_schema)
            assert tools[name].output_schema is not None
        assert tools["restore_symbol"].input_schema["properties"]["dry_run"]["default"] is True

        history = await call(session, "symbol_history", {"name": "parse"})
        assert not history.is_error, text_of(history)
        data = history.structured_content
        assert data is not None and data["status"] == "found"
        jsonschema.validate(data, tools["symbol_history"].output_schema)
        assert json.loads(history.content[0].text) == data  # type: ignore[union-attr]
        newest, oldest = data["versions"]
        assert newest["change_type"] == "signature_changed"
        assert newest["diff"].startswith("--- a/mod.py\n+++ b/mod.py\n@@ -4,")
        assert oldest["change_type"] == "modified" and oldest["start_line"] == 4

        unknown = await call(session, "symbol_history", {"name": "pars"})
        assert unknown.structured_content is not None
        assert unknown.structured_content["suggestions"] == ["parse"]
        bad = await call(session, "symbol_history", {"name": "parse", "limit": 0})
        assert bad.is_error and text_of(bad).startswith("invalid_args: ")

        source = await call(session, "symbol_source", {"name": "parse",
                                                       "version": oldest["version"]})
        assert source.structured_content is not None, text_of(source)
        assert source.structured_content["source"] == (
            "def parse(text):\n    words = text.split()\n    return words\n")
        missing = await call(session, "symbol_source", {"name": "parse", "version": 99999})
        assert missing.is_error and "has no version 99999" in text_of(missing)

        preview = await call(session, "restore_symbol", {"name": "parse",
                                                         "version": oldest["version"]})
        assert not preview.is_error, text_of(preview)
        assert preview.structured_content is not None
        assert preview.structured_content["dry_run"] is True
        assert (root / "mod.py").read_text() == V3
        done = await call(session, "restore_symbol", {"name": "parse", "version": oldest["version"],
                                                      "dry_run": False})  # fmt: skip
        assert done.structured_content is not None and done.structured_content["applied"]
        assert (root / "mod.py").read_text() == V2
        again = await call(session, "symbol_history", {"name": "parse", "limit": 1})
        assert again.structured_content is not None
        [restored] = again.structured_content["versions"]
        assert restored["origin"] == "edit"
        assert restored["origin_info"]["client"]["name"] == "mcp"

    run_memory(check, root)


def test_a_read_only_server_reads_history_but_cannot_restore(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    async def check(session: ClientSession) -> None:
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"symbol_history", "symbol_source"} <= names
        assert "restore_symbol" not in names
        now = await call(session, "symbol_source", {"name": "parse"})
        assert now.structured_content is not None
        assert now.structured_content["version"] is None
        assert now.structured_content["source"].startswith("def parse(text, sep=None):")

    run_memory(check, root, read_only=True)


def test_same_named_definitions_in_one_file_are_picked_by_selector(tmp_path: Path) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    text = ("import sys\n\nif sys.version_info >= (3, 12):\n    def f():\n        return {a}\n"
            "else:\n    def f():\n        return {b}\n")
    for a, b in ((1, 1), (2, 1), (2, 3)):
        (root / "m.py").write_text(text.format(a=a, b=b))
        index(root)

    async def check(session: ClientSession) -> None:
        both = await call(session, "symbol_history", {"name": "f"})
        assert both.structured_content is not None, text_of(both)
        assert both.structured_content["status"] == "ambiguous"
        selectors = [c["selector"] for c in both.structured_content["candidates"]]
        assert selectors == ["m.py:f#1", "m.py:f#2"]
        second = await call(session, "symbol_history", {"name": "m.py:f#2"})
        assert second.structured_content is not None
        [version] = second.structured_content["versions"]
        source = await call(session, "symbol_source", {"name": "f:L5"})
        assert source.structured_content is not None, text_of(source)
        assert source.structured_content["source"] == "    def f():\n        return 2\n"
        refused = await call(session, "symbol_source", {"name": "f"})
        assert refused.is_error and "m.py:f#1" in text_of(refused)
        undo = await call(session, "restore_symbol", {"name": "f", "version": version["version"],
                                                      "dry_run": False})  # fmt: skip
        assert undo.structured_content is not None, text_of(undo)
        assert (root / "m.py").read_text() == text.format(a=2, b=3)  # its own text: no change

    run_memory(check, root)
