"""The symbol history tools: `symbol_history`, `symbol_source`, `restore_symbol`.

Registered by `symdiff.mcp.server.build_server` on its server (`restore_symbol` only when the server
may write), in the same style as its own tools: parse, call one library function, format.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NotRequired

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool, StrictInt, WithJsonSchema

# pydantic needs typing_extensions' TypedDict on Python 3.11 for nested TypedDicts.
from typing_extensions import TypedDict

from symdiff.config import Settings
from symdiff.errors import SymdiffError
from symdiff.mcp.replies import client_info, failure, success
from symdiff.mcp.schema import ApplyEditsOutput


class SymbolVersion(TypedDict):
    """One recorded version of a definition (docs/symbol_history.md)."""

    version: int
    timestamp: str
    change_type: str
    file_change_type: str
    origin: str
    origin_info: dict[str, Any] | None
    path: str
    old_path: str | None
    name: str
    kind: str
    start_line: int
    end_line: int
    renamed_from: NotRequired[str]
    renamed_to: NotRequired[str]
    diff: NotRequired[str | None]


class SymbolHistoryOutput(TypedDict):
    """The versions (newest first), or the candidates of an ambiguous name, or the closest
    names to an unknown one."""

    name: str
    status: str
    versions: list[SymbolVersion]
    candidates: list[dict[str, Any]]
    suggestions: list[str]
    more: bool


class SymbolSourceOutput(TypedDict):
    """A definition's source at a version (version null: as the file is now)."""

    name: str
    path: str
    kind: str
    version: int | None
    start_line: int
    end_line: int
    source: str


class RestoreSymbolOutput(ApplyEditsOutput):
    """apply_edits' result for the restoring edit, and what was restored."""

    restored: dict[str, Any]


NameArg = Annotated[str, Field(description=(
    'The qualified name of a definition as records show it: "Session.refresh", "parse", '
    '"pkg.Type.Method"; it may say which of several: "[PATH:]NAME[#N|:LINE][@VERSION]", e.g. '
    '"pkg/io.py:load", "load#2" (the 2nd definition of the name in its file), "load:L120" '
    '(the one holding line 120 now), "load@4711" (the one version 4711 changed). An '
    "ambiguous answer gives each candidate's `selector`."))]
SymbolPathArg = Annotated[str, Field(default=None, description=(
    "The file the definition is in, relative to the workspace root: needed only when the name "
    "is in several files (the answer then lists them as candidates)."))]
VersionArg = Annotated[StrictInt, Field(description=(
    "A version id from symbol_history (`version`)."))]


def register_symbol_tools(server: MCPServer, settings: Settings, *, read_only: bool,
                          write_roots: Sequence[Path]) -> None:  # fmt: skip
    """Add the symbol history tools to `server`."""

    @server.tool(
        name="symbol_history",
        title="Every version of one function, save by save",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=False),
    )
    def symbol_history(
        name: NameArg,
        path: SymbolPathArg,
        since: Annotated[str, Field(default=None, description=(
            'Only versions recorded within this Go duration ("90m", "24h", "720h"); default: '
            "every version."))],
        limit: Annotated[StrictInt, Field(default=20), WithJsonSchema({
            "type": "integer", "minimum": 1, "maximum": 500, "default": 20,
            "description": "At most this many versions, newest first (1-500).",
        })],
    ) -> Annotated[CallToolResult, SymbolHistoryOutput]:
        """Every recorded version of one definition (function, method, class, ...), newest
        first, across saves that were never committed as well as commits: each with its
        version id, timestamp, change_type (added/modified/signature_changed/removed), origin
        (edit/git/watch/scan/commit), path, name, kind, lines, and `diff`: that definition's
        old lines against its new ones as a unified diff numbered as in the file.

        Follows the definition across symbol renames and file renames. When the name matches
        several definitions, status is "ambiguous" and `candidates` lists them (call again
        with a candidate's `selector` as the name); when it matches none, status is "unknown"
        and `suggestions` holds the closest recorded names. Use symbol_source for a version's
        full text and restore_symbol to put it back.
        """
        from symdiff.api import symbol_history as run

        try:
            answer = run(settings, name, path=path, since=since, limit=limit).as_dict()
        except SymdiffError as err:
            return failure(err)
        return success(answer, answer)

    @server.tool(
        name="symbol_source",
        title="A definition's source at a version",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
    def symbol_source(
        name: NameArg,
        version: Annotated[StrictInt, Field(default=None, description=(
            "A version id from symbol_history; omit for the definition as it is now on "
            "disk."))],
        path: SymbolPathArg,
    ) -> Annotated[CallToolResult, SymbolSourceOutput]:
        """The source text of one definition (its whole lines, decorators included) at a
        version recorded by symbol_history, or as the file is now. Errors: invalid_args (a
        name that names no single definition, a version it does not have), tool_failed (a
        version that removed it, a file it is no longer in)."""
        from symdiff.api import symbol_source as run

        try:
            found = run(settings, name, version=version, path=path)
        except SymdiffError as err:
            return failure(err)
        return success(found, found)

    if read_only:
        return

    @server.tool(
        name="restore_symbol",
        title="Put one definition back as it was at a version",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False
        ),
    )
    def restore_symbol(
        name: NameArg,
        version: VersionArg,
        path: SymbolPathArg,
        dry_run: Annotated[StrictBool, Field(description=(
            "true (the default): preview the edit, write nothing. false: write it and record "
            "it in the index."))] = True,
        ctx: Context | None = None,
    ) -> Annotated[CallToolResult, RestoreSymbolOutput]:
        """Replace one definition by its text at `version` (from symbol_history), leaving
        every other line of its file as it is now: an undo for one function. It is an
        apply_edits edit (same validation, atomic write, ACP diff and symbol preview, recorded
        as origin "edit"), previewed unless dry_run=false. A definition no longer in the file
        goes back beside a former neighbour. Errors: invalid_args, tool_failed, edit_failed.
        """
        from symdiff.api import restore_symbol as run

        try:
            result = run(settings, name, to=version, path=path, dry_run=dry_run,
                         client=client_info(ctx), allow_write=write_roots)  # fmt: skip
        except SymdiffError as err:
            return failure(err)
        return success(result, result)
