"""JSON-RPC text that is not Unicode: answered at the transport, before the SDK drops it.

A JSON string may spell a lone surrogate (`"\\ud800"` with no low surrogate after it): the JSON
grammar allows it (RFC 8259 §8.2) but it is not Unicode text (I-JSON, RFC 7493 §2.1, forbids
it) and has no UTF-8 encoding. pydantic's JSON parser, which the SDK's transports use, refuses
such a message; the SDK's stdio transport then hands the server an exception that it drops at
debug level, so the client waits for a reply that never comes, and its HTTP transport answers
a Parse error without the request's id. symdiff answers the request itself, on both transports
(`StdioReader` for stdio, `symdiff.httpguard` for HTTP): a `tools/call` gets the tool error
`invalid_args: <argument> must be Unicode text, ...` that every other argument error gets, any
other request the JSON-RPC error -32602 (invalid params) with the same text. No tool ever sees
such text, and no reply ever echoes it.
"""

from __future__ import annotations

import contextvars
import json
import re
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from anyio import EndOfStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCResponse,
    TextContent,
)
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream

# A surrogate escape, high or low, in raw JSON text: the cheap test before any parsing.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _first_lone_surrogate(value: object, where: str) -> tuple[str, str, int] | None:
    """(where, the string, the index) of the first lone surrogate in a parsed JSON value.

    `json.loads` joins an escaped pair into one character, so any surrogate left is lone.
    """
    if isinstance(value, str):
        found = _SURROGATE.search(value)
        return None if found is None else (where, value, found.start())
    if isinstance(value, dict):
        for key, item in value.items():
            hit = _first_lone_surrogate(key, f"a key in {where}" if where else "a key") or (
                _first_lone_surrogate(item, f"{where}.{key}" if where else key))
            if hit is not None:
                return hit
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if (hit := _first_lone_surrogate(item, f"{where}[{i}]")) is not None:
                return hit
    return None


def _reason(where: str, text: str, index: int) -> str:
    """The invalid_args reason, all ASCII-safe: the surrogate is shown escaped, never echoed."""
    shown = json.dumps(text if len(text) <= 60 else text[:60] + "...")
    name = where.encode("utf-8", "backslashreplace").decode()
    return (f"{name} must be Unicode text, got {shown}: a lone surrogate "
            f"U+{ord(text[index]):04X} at index {index}, which no UTF-8 text can hold")


def reply_to(data: str | bytes) -> JSONRPCMessage | None:
    """The reply to a JSON-RPC request whose text holds a lone surrogate, else None.

    None for everything else, notifications and responses included (they get no reply): the
    transport then handles `data` as it always does.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _SURROGATE_ESCAPE.search(raw) is None:
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    if isinstance(request_id, str) and _SURROGATE.search(request_id):
        return None  # an id that cannot be echoed cannot be answered
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if message["method"] == "tools/call" and isinstance(arguments, dict):
        hit = _first_lone_surrogate(arguments, "")
        if hit is not None:
            text = f"invalid_args: {_reason(*hit)}"
            result = CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
            return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=_dumped(result))
    hit = _first_lone_surrogate(message, "")
    if hit is None:
        return None
    error = ErrorData(code=INVALID_PARAMS, message=f"invalid_args: {_reason(*hit)}")
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _dumped(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_unset=True)


class StdioReader:
    """The SDK stdio transport's read stream, with the requests it could not parse for a lone
    surrogate answered on its write stream instead of handed on (and dropped)."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception],
                 write: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last item, as the SDK's own read stream keeps it."""
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, ValidationError):
                return item
            # A line pydantic could not parse is the error's input (a json_invalid error).
            line = item.errors(include_url=False)[0].get("input")
            reply = reply_to(line) if isinstance(line, str) else None
            if reply is None:
                return item
            await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()
