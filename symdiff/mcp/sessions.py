"""The MCP `diff` tool's agent-session arguments (docs/agents.md): their JSON schemas."""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

SessionArg = Annotated[object, WithJsonSchema({
    "type": "string",
    "description": (
        "An agent session id (Claude Code's session_id; `symdiff sessions` lists them). With "
        "`turn`: what that turn did, whatever tool wrote it. With `since_turn`: what anyone "
        "else changed since that turn ended. Alone: the whole session."
    ),
})]
TurnArg = Annotated[object, WithJsonSchema({
    "type": "integer", "minimum": 1,
    "description": "With `session`: the turn (1, 2, …) whose records to return.",
})]
SinceTurnArg = Annotated[object, WithJsonSchema({
    "type": "integer", "minimum": 1,
    "description": ("With `session`: every record not of this session since this turn ended "
                    "(what a person or another agent changed meanwhile)."),
})]
