"""The MCP tool `undo_turn` (docs/agents.md): registered only on a server that may write."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

from symdiff.config import Settings
from symdiff.errors import SymdiffError
from symdiff.mcp.replies import client_info, failure, success
from symdiff.mcp.sessions import SessionArg, TurnArg


def register_undo_tool(server: MCPServer, settings: Settings, *, read_only: bool) -> None:
    """Add `undo_turn` to `server`, unless it is read-only."""
    if read_only:
        return

    @server.tool(
        name="undo_turn",
        title="Undo an agent's turn, keeping everyone else's work",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                    idempotent_hint=False),
    )
    def undo_turn(
        session: SessionArg,
        turn: TurnArg = None,
        apply: Annotated[StrictBool, Field(description=(
            "Write the undo (all files or none). Default false: a dry run."))] = False,
        ctx: Context | None = None,
    ) -> CallToolResult:
        """Revert exactly what an agent session did in one turn (or, without `turn`, in the
        whole session), whatever tool wrote it, applied three-way to the files as they are
        now: lines others changed beside or after are kept; lines both touched are a conflict
        and then nothing is written. Returns the patch, a symbol-level summary per file,
        conflicts, and after `apply` the change records (origin edit)."""
        from symdiff.api import undo_turn as run

        try:
            found: dict[str, Any] = run(settings, session=session, turn=turn, write=apply,
                                        client=client_info(ctx))  # fmt: skip
        except SymdiffError as err:
            return failure(err)
        return success(found, found)
