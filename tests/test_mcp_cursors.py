"""Cursors and named readers through the real MCP SDK client: a reader's cursor survives a server
restart (a server in this process, then a real `symdiff serve --http` process), two readers
advance independently, and a cursor pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp_servers import call, http_server, index, indexed_tree, run_http, run_memory, text_of


async def page(session: ClientSession, **args: Any) -> tuple[list[str], str, bool]:
    result = await call(session, "diff", args)
    assert not result.is_error, text_of(result)
    content = result.structured_content
    assert content is not None
    return [r["path"] for r in content["result"]], content["cursor"], content["more"]


def test_readers_and_cursors_survive_a_restart(tmp_path: Path) -> None:
    root = indexed_tree(tmp_path / "ws", "alpha")
    args = ["--root", str(root)]

    async def first(session: ClientSession) -> None:
        assert (await page(session, reader="agent-a"))[0] == ["alpha.py"]
        assert (await page(session, reader="agent-a"))[0] == []
        result = await call(session, "diff", {"reader": "agent-a", "cursor": "c1.LTE6MA"})
        assert result.is_error and text_of(result).startswith("invalid_args: give cursor or")

    run_memory(first, root)  # what it remembers is in the database: the next server is a process
    for i in range(3):  # changes made while no server runs
        (root / f"n{i}.py").write_text(f"def g{i}():\n    return {i}\n")
    index(root)

    async def after_restart(session: ClientSession) -> None:
        paths, _, more = await page(session, reader="agent-a", limit=2)
        assert paths == ["n0.py", "n1.py"] and more
        assert (await page(session, reader="agent-a"))[0] == ["n2.py"]
        assert (await page(session, reader="agent-b"))[0] == ["alpha.py", "n0.py", "n1.py",
                                                             "n2.py"]  # fmt: skip
        newest, cursor, _ = await page(session, limit=1)
        assert newest == ["n2.py"]
        assert (await page(session, cursor=cursor))[0] == []
        old, cursor, more = await page(session, cursor="c1.LTE6MA", limit=3)
        assert old == ["alpha.py", "n0.py", "n1.py"] and more
        assert (await page(session, cursor=cursor, limit=3))[0:3:2] == (["n2.py"], False)

    with http_server(args, tmp_path) as served:
        run_http(served.url, after_restart)
