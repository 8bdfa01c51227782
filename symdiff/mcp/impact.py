"""The `impact` tool (docs/impact.md): registered by `build_server`, in the style of its own
tools: parse, call `symdiff.api.impact`, format."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, WithJsonSchema

# pydantic needs typing_extensions' TypedDict on Python 3.11 for nested TypedDicts.
from typing_extensions import TypedDict

from symdiff.config import Settings
from symdiff.errors import SymdiffError
from symdiff.mcp.replies import failure, success
from symdiff.mcp.schema import AgainstArg, SinceArg
from symdiff.mcp.sessions import SessionArg, TurnArg


class ImpactOutput(TypedDict):
    """The changed symbols, their callers to `depth`, the tests that reach them, and the
    commands that run those tests."""

    changed: list[dict[str, Any]]
    callers: list[dict[str, Any]]
    tests: list[dict[str, Any]]
    run: dict[str, str]


SymbolsArg = Annotated[object, WithJsonSchema({
    "type": "array", "items": {"type": "string"},
    "description": (
        'Start from these definitions instead of recorded changes: "Name", "Class.method", '
        '"path/to/file.py:Name" (as diff records name symbols), or a Python dotted path '
        '"pkg.module.Name". Not with since, against or session.'),
})]
DepthArg = Annotated[object, WithJsonSchema({
    "type": "integer", "minimum": 0, "maximum": 10, "default": 2,
    "description": "How many hops of callers to list (tests are found at any depth).",
})]


def register_impact_tool(server: MCPServer, settings: Settings) -> None:
    """Add `impact` to `server`, whose held graph is numbered in the background (a server
    answers many questions from one graph)."""
    from symdiff.api import keep_impact_graphs_numbered

    keep_impact_graphs_numbered()

    @server.tool(
        name="impact",
        title="The callers and the tests a change reaches",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=False),
    )
    def impact(
        since: Annotated[SinceArg, Field(default=None)],
        against: AgainstArg = None,
        session: SessionArg = None,
        turn: TurnArg = None,
        symbols: SymbolsArg = None,
        depth: DepthArg = 2,
    ) -> Annotated[CallToolResult, ImpactOutput]:
        """Which callers to check and which tests to run after a change. Starts from the
        symbols changed within `since` (default 24h), or by the work tree `against` a git
        revision, or by an agent `session` (one `turn` of it), or from `symbols` by name.
        Returns `changed` [{name, path, change_type}], `callers` [{name, path, kind,
        start_line, depth, via, confidence}] (transitively to `depth`; `via` is the symbol one
        hop nearer the change; confidence "resolved" through imports and types, "name" by name
        only), `tests` [{path, name, node_id, depth, via, confidence}] (every test that reaches
        a changed symbol at any depth; confidence "mention" marks the weaker fallback: a test
        that only names the symbol), and `run`: the commands that run those tests
        ({"pytest": "pytest <node ids>"}, {"go": "go test -run ..."}, the test files for
        jest/vitest)."""
        from symdiff.api import impact as run

        try:
            found = run(settings, since=since, against=against, session=session, turn=turn,
                        symbols=() if symbols is None else symbols,
                        depth=depth)  # fmt: skip
        except SymdiffError as err:
            return failure(err)
        return success(found, found)
