"""The `blame` tool (docs/agents.md, "Blame"): registered by `build_server`, in the style of
its own tools: parse, call `symdiff.api.blame`, format."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictInt

# pydantic needs typing_extensions' TypedDict on Python 3.11 for nested TypedDicts.
from typing_extensions import TypedDict

from symdiff.config import Settings
from symdiff.errors import SymdiffError
from symdiff.mcp.replies import failure, success


class BlameRange(TypedDict):
    """Consecutive lines with one owner: the record that last wrote them, or a note."""

    start_line: int
    end_line: int
    version: int | None
    timestamp: str | None
    origin: str | None
    origin_info: dict[str, Any] | None
    path: str | None
    contributor: str
    note: str | None


class BlameOutput(TypedDict):
    """The file's line count and its ranges, first line first."""

    path: str
    lines: int
    indexed: bool
    ranges: list[BlameRange]


LineArg = Annotated[StrictInt, Field(default=None, ge=1)]


def register_blame_tool(server: MCPServer, settings: Settings) -> None:
    """Add `blame` to `server`."""

    @server.tool(
        name="blame",
        title="Who wrote each line, uncommitted work included",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=False),
    )
    def blame(
        path: Annotated[str, Field(description=(
            "The file, relative to the workspace root (or absolute, inside it)."))],
        start_line: Annotated[LineArg, Field(description="First line (1-based); default 1.")],
        end_line: Annotated[LineArg, Field(description="Last line; default the file's last.")],
    ) -> Annotated[CallToolResult, BlameOutput]:
        """For each line of the file as it is now, the record that last wrote it, grouped into
        ranges: its version, timestamp, origin (agent/edit/watch/scan/git/commit) and
        origin_info — for an agent {agent, session, turn, tool, tool_use_id, subagent, by},
        for an imported commit {sha, author, summary} — and `contributor` (ai, human,
        unknown). Lines older than anything recorded have origin null and note "before
        recording"; lines on disk that no record holds yet, "not recorded yet". Unlike `git
        blame` it sees saves never committed, and who (which agent turn, or a person) made them.
        """
        from symdiff.api import blame as run

        try:
            found = run(settings, path, start_line=start_line, end_line=end_line)
        except SymdiffError as err:
            return failure(err)
        return success(found, found)
