"""A server answers for its own workspace only, unless started with --all-workspaces: two trees
indexed into one database (SQLite file or PostgreSQL), the server built for one of them in this
process, and once as a real `symdiff serve --root ... --all-workspaces --http` process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp_servers import call, http_server, indexed_tree, run_http, run_memory, text_of


def two_trees(base: Path, db: str) -> tuple[Path, Path]:
    return indexed_tree(base / "a", "alpha", db), indexed_tree(base / "b", "beta", db)


async def paths(session: ClientSession, **args: Any) -> list[str]:
    result = await call(session, "diff", args)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return sorted(r["path"] for r in result.structured_content["result"])


def own_only(a: Path, b: Path) -> Any:
    async def check(session: ClientSession) -> None:
        assert await paths(session) == ["alpha.py"]
        assert await paths(session, workspace=str(a)) == ["alpha.py"]
        assert await paths(session, workspace=f"{a}/../a") == ["alpha.py"]
        refusal = (f"invalid_args: this server answers only for {a}; start it with "
                   "--all-workspaces to query others")
        for other in ("all", str(b), f"{a}/..", "/nowhere", "", "relative", "~", "/x\0"):
            for patch in (False, True):  # neither records nor patches
                result = await call(session, "diff", {"workspace": other,
                                                      "include_patch": patch})
                assert result.is_error and text_of(result) == refusal, (other, text_of(result))
                assert result.structured_content is None
    return check


def every(a: Path, b: Path) -> Any:
    async def check(session: ClientSession) -> None:
        assert await paths(session) == ["alpha.py"]  # omitted: still the server's own
        assert await paths(session, workspace="all") == ["alpha.py", "beta.py"]
        assert await paths(session, workspace=str(b)) == ["beta.py"]
        patched = await call(session, "diff", {"workspace": str(b), "include_patch": True})
        assert patched.structured_content is not None
        [record] = patched.structured_content["result"]
        assert record["workspace"] == str(b)
        assert "+    return 2" in record["acp"]["patch"]["text"]
        bad = await call(session, "diff", {"workspace": "/x\0"})
        assert bad.is_error and text_of(bad).startswith("invalid_args: workspace must be")
    return check


def test_own_workspace_only_sqlite(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    a, b = two_trees(tmp_path, db)
    run_memory(own_only(a, b), a, db=db)
    run_memory(every(a, b), a, db=db, all_workspaces=True)
    # The flag reaches the server through the command line, and HTTP answers alike.
    with http_server(["--root", str(a), "--db", db, "--all-workspaces"], tmp_path) as served:
        run_http(served.url, every(a, b))


@pytest.mark.postgres
def test_own_workspace_only_postgres(tmp_path: Path, pg_url: str) -> None:
    a, b = two_trees(tmp_path, pg_url)
    run_memory(own_only(a, b), a, db=pg_url)
    run_memory(every(a, b), a, db=pg_url, all_workspaces=True)
