"""What every tool returns: a result with structured content, or a tool error whose whole text
is `code: reason`; and who the client is, for the records of what it writes."""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent

from symdiff.errors import SymdiffError


def client_info(ctx: Context | None) -> dict[str, object]:
    """The MCP client's name and version, from its `initialize` handshake."""
    params = None if ctx is None else ctx.request_context.session.client_params
    info = None if params is None else params.client_info
    if info is None:
        return {"name": "unknown", "version": None}
    return {"name": info.name, "version": info.version}


def failure(err: SymdiffError) -> CallToolResult:
    """A tool error whose text is `code: reason`."""
    return CallToolResult(content=[TextContent(type="text", text=err.render())], is_error=True)


def success(structured: dict[str, Any], text: object) -> CallToolResult:
    """A result carrying structured content and its JSON text."""
    body = json.dumps(text, ensure_ascii=False, indent=2)
    return CallToolResult(
        content=[TextContent(type="text", text=body)], structured_content=structured
    )
