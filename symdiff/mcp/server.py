"""The MCP server: thin tools over the library, on the official SDK (`mcp`).

Each tool parses, calls one library function and formats. A `SymdiffError` becomes a tool
error (`isError: true`) whose whole text is `code: reason`, e.g. `invalid_args: ...`: the tools
return the SDK's `CallToolResult` themselves (with the output schema given by the `Annotated`
model) because a raised `ToolError` would reach the client prefixed `Error executing tool ...`.

Every argument error is such an error, `invalid_args: <argument> must be <what>, got <value>`:
arguments typed `object` reach the library's own rules, and the rest are checked by the SDK
with strict types (no "yes" for true, no "3" for 3), its validation error rewritten by
`_Server.call_tool`. A request whose JSON text is not Unicode (a lone surrogate) is answered at
the transport, on stdio by `_Server.run_stdio_async` (see `symdiff.mcp.wire`).

The three tools' declarations (each with its argument descriptions, the schema an agent reads)
and the argument-error rewriting; their schemas are in mcp/schema.py, the replies every tool gives
in mcp/replies.py, and the symbol tools in mcp/symbols.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field, StrictBool, StrictInt, ValidationError, WithJsonSchema

from symdiff.api import (
    STALE_WARNING,
    Answer,
    DiffQuery,
    Note,
    NothingIndexed,
    SinceCut,
    Unwatched,
    impact_of,
    is_own,
)
from symdiff.api import diff as run_diff
from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError
from symdiff.mcp.replies import client_info, failure, success
from symdiff.mcp.schema import (
    AgainstArg,
    ApplyEditsOutput,
    CursorArg,
    DiffOutput,
    EditsArg,
    LimitArg,
    OriginArg,
    PathArg,
    ReaderArg,
    ScopeArg,
    SinceArg,
    TextDiffOutput,
)
from symdiff.mcp.sessions import SessionArg, SinceTurnArg, TurnArg
from symdiff.mcp.wire import StdioReader

if TYPE_CHECKING:
    from symdiff.httpguard import HttpOptions

INSTRUCTIONS = (
    "symdiff knows what changed in this source tree recently, at the level of symbols. "
    "Call `diff` to see which functions, methods and classes were added, removed, modified or "
    "had their signature changed (e.g. after a build broke, before a review, when joining work "
    "mid-flight); `text_diff` to compare two files or two texts; `apply_edits` (unless the "
    "server is read-only) to apply SEARCH/REPLACE edits, previewing by default (dry run) with "
    "the patch and the symbols the edit would change. `symbol_history` lists every recorded "
    "version of one function (saves never committed included) with its diff, `symbol_source` "
    "shows a version's text, and `restore_symbol` puts one function back as it was. After a "
    "change, `impact` says which callers to check and which tests to run (with the command)."
)


def _version() -> str:
    try:
        return version("symdiff")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def _under(root: Path, path: str | None, name: str) -> str | None:
    """A tool's path argument: relative paths are relative to the workspace root."""
    if not path:
        return path
    if "\0" in path:  # no file name holds one; the OS calls would raise ValueError
        raise InvalidArgs(f"{name} must be a path without NUL bytes, got {_shown(path)}")
    return str(root / path)  # an absolute `path` stays itself: `/` joins replace the root


_EXPECTED = {
    "bool_type": "a boolean (true or false)", "bool_parsing": "a boolean (true or false)",
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "string_type": "a string",
}


def _shown(value: object) -> str:
    """A JSON value as an error shows it: ASCII, at most about 80 characters."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= 80 else text[:77] + "..."


def _argument_error(exc: ValidationError) -> InvalidArgs:
    """The SDK's argument validation failure, told as the library tells its own."""
    reasons = []
    for error in exc.errors(include_url=False):
        name = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            reasons.append(f"{name} is required")
        elif error["type"] in _EXPECTED:
            reasons.append(f"{name} must be {_EXPECTED[error['type']]}, "
                           f"got {_shown(error['input'])}")
        else:
            reasons.append(f"{name}: {error['msg']}, got {_shown(error['input'])}")
    return InvalidArgs("; ".join(reasons))


class _Server(MCPServer[Any]):
    """The SDK's server, its argument errors and its stdio transport as the module says."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # The SDK raises a plain ToolError from the ValidationError of the arguments.
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__,
                                                                      ValidationError):
                raise
            return failure(_argument_error(exc.__cause__))

    async def run_stdio_async(self) -> None:
        async with stdio_server() as (read, write):
            lowlevel = self._lowlevel_server
            await lowlevel.run(StdioReader(read, write), write,
                               lowlevel.create_initialization_options())


def note_text(note: Note) -> str | None:
    """One note of a `diff` answer as the tool words it beside the records, so that an empty
    or short answer is read right; None for the notes the tool leaves to its fields (the
    stale warning: `stale`, a limit: the schema) or that never apply to it."""
    if isinstance(note, SinceCut):
        return (f"note: since {note.given} is longer than {note.longest}, the longest window: "
                f"these are the last {note.longest} (symbol_history follows a symbol through "
                "older records)")
    if isinstance(note, NothingIndexed):
        return (f"note: nothing is indexed for {note.root} yet, so no change is recorded: start "
                "`symdiff watch` there (it also imports the last 720h of git history) or run "
                "`symdiff index`; `against` answers from git meanwhile")
    if isinstance(note, Unwatched):
        upto = (f"these are the changes recorded up to {note.until}" if note.until
                else "changes made since it was last indexed are missing")
        return (f"note: no symdiff daemon watches {note.root}: {upto}; start `symdiff watch` there "
                "to keep the answer current")
    return None


def _diff_texts(found: Answer, *, compared: bool) -> list[str]:
    """The text blocks after the records: the stale warning, the notes, where to go on."""
    texts = []
    if found.stale:
        # The answer itself says it may be stale, not only a log line the agent never sees.
        texts.append(f"warning: {STALE_WARNING}")
    if compared:  # a comparison has no cursor: a larger limit or a path
        if found.more:
            texts.append("more files differ: raise limit (at most 500) or narrow path")
        return texts
    texts.extend(text for note in found.notes if (text := note_text(note)))
    more = "more records match: call again with this cursor" if found.more else "no more"
    texts.append(f"cursor: {found.cursor} ({more})")
    return texts


def build_server(
    settings: Settings, *, allow: Sequence[Path] = (), allow_write: Sequence[Path] = (),
    read_only: bool = False, all_workspaces: bool = False,
) -> MCPServer:
    """The symdiff MCP server for one workspace; `allow` adds roots that path tools may read;
    `allow_write` roots that apply_edits may write in (reading grants no writing);
    `all_workspaces` lets `diff` answer for other workspaces in the database too."""
    server: MCPServer = _Server(
        "symdiff", instructions=INSTRUCTIONS, version=_version(), log_level="WARNING"
    )
    write_roots = tuple(Path(p).resolve() for p in allow_write)
    # What a server may write it may read: a dry run shows that content anyway.
    allowed_roots = (settings.root, *(Path(p).resolve() for p in allow), *write_roots)

    @server.tool(
        name="diff",
        title="Recent symbol-level changes",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=False),
    )
    def diff(
        since: SinceArg = "24h",
        limit: LimitArg = 50,
        scope: ScopeArg = "impl",
        include_patch: Annotated[StrictBool, Field(description=(
            "Add to each record `acp`: an ACP v2 Diff whose patch.text is the change's git "
            "patch, rebuilt from stored snapshots."))] = False,
        workspace: Annotated[str | None, Field(description=(
            'Omit for the workspace this server watches. Only a server started with '
            '--all-workspaces takes "all" (every workspace in the database) or the absolute '
            "root path of another indexed workspace; others answer invalid_args."))] = None,
        origin: OriginArg = None,
        path: PathArg = None,
        cursor: CursorArg = None,
        reader: ReaderArg = None,
        against: AgainstArg = None,
        session: SessionArg = None,
        turn: TurnArg = None,
        since_turn: SinceTurnArg = None,
        include_impact: Annotated[StrictBool, Field(description=(
            "Add `impact`: the callers and the tests the answer's changed symbols reach, as "
            "the impact tool gives them (callers to depth 2)."))] = False,
    ) -> Annotated[CallToolResult, DiffOutput]:
        """Show recent file changes and which symbols (functions, methods, classes, ...) each
        one added, removed, modified or signature_changed, newest first.

        Complements `git log` with symbol-level attribution of uncommitted and committed work
        alike: use it for bug triage ("what changed in the last hour?"), code review, or to
        catch up with a repository mid-flight. Each record has path, old_path (renames),
        timestamp (UTC), change_type (add/modify/delete/rename), lines_added/lines_removed,
        scope (impl/test), language, symbols [{name, kind, change_type, start_line,
        end_line}], origin (edit/git/watch/scan/commit/agent: who made it; the groups
        "person" and "agent" filter), origin_info and git
        ({branch, head} when it was observed). For the text of a change pass
        include_patch=true. To follow what happens, pass `reader` (the server remembers what
        you have seen) or the `cursor` of the previous answer. To see how the work tree differs
        from a git revision (what a review of this branch would show), pass `against`.
        """
        if not all_workspaces and not is_own(workspace, settings.root):
            return failure(InvalidArgs(f"this server answers only for {settings.root}; start it "
                                       "with --all-workspaces to query others"))
        query = DiffQuery(since=since, limit=limit, scope=scope, include_patch=include_patch,
                          workspace=workspace, origin=origin, path=path, cursor=cursor,
                          reader=reader, against=against, session=session, turn=turn,
                          since_turn=since_turn)  # fmt: skip
        try:
            # Not the count of what scope hid: a full scan in the worst case (query.diff).
            found = run_diff(settings, query, explain=True, count_hidden=False)
        except SymdiffError as err:
            return failure(err)
        records = found.records
        structured: dict[str, Any] = {"result": records, "cursor": found.cursor,
                                      "more": found.more}  # fmt: skip
        if found.stale:
            structured["stale"] = True
        if include_impact:
            try:
                structured["impact"] = impact_of(settings, records)
            except SymdiffError as err:
                return failure(err)
        result = success(structured, records)
        texts = _diff_texts(found, compared=against is not None)
        result.content.extend(TextContent(type="text", text=text) for text in texts)
        return result

    # The SDK JSON-decodes a string argument unless its annotation is exactly `str`, so the
    # optional strings are typed `str` with a None default (Field): a text that looks like
    # JSON must reach the diff as the text it is.
    @server.tool(
        name="text_diff",
        title="Unified diff of two files or texts",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
    def text_diff(
        *,
        path_a: Annotated[str, Field(default=None, description=(
            "Path mode: the first file (absolute, or relative to the workspace root). Only "
            "files inside the server's allowed roots can be read (else fs_denied)."))],
        path_b: Annotated[str, Field(default=None, description="Path mode: the second file.")],
        text_a: Annotated[str, Field(default=None, description=(
            "Text mode: the first text. Give either both paths or both texts, never a mix."))],
        text_b: Annotated[str, Field(default=None, description="Text mode: the second text.")],
        label_a: Annotated[str, Field(default=None, description=(
            'Header label for the first side (default: its path, or "a").'))],
        label_b: Annotated[str, Field(default=None, description=(
            'Header label for the second side (default: its path, or "b").'))],
        context_lines: Annotated[StrictInt, Field(default=3), WithJsonSchema({
            "type": "integer", "minimum": 0, "maximum": 20, "default": 3,
            "description": "Lines of context around each change, 0-20.",
        })],
    ) -> Annotated[CallToolResult, TextDiffOutput]:
        """Compare two files (path mode) or two texts (text mode) and return a unified diff
        that GNU `patch` applies to A to give B exactly.

        Output: diff (unified text, "" when identical), identical, label_a, label_b, lines_a,
        lines_b, diff_lines, truncated (diff over 2 MB), and in path mode `acp`, an ACP v2
        Diff. Errors: invalid_args (mixed or missing modes, context_lines outside 0-20),
        fs_denied (a path outside the allowed roots), tool_failed (missing file, directory,
        file over 4 MiB).
        """
        from symdiff.api import text_diff as run_text_diff  # pygit2: loaded on first use

        try:
            result = run_text_diff(
                path_a=_under(settings.root, path_a, "path_a"),
                path_b=_under(settings.root, path_b, "path_b"),
                text_a=text_a, text_b=text_b,
                label_a=label_a if label_a is not None else path_a,
                label_b=label_b if label_b is not None else path_b,
                context_lines=context_lines, allowed_roots=allowed_roots,
            )
        except SymdiffError as err:
            return failure(err)
        return success(dict(result), result)

    if not read_only:
        # apply_edits (docs/spec.md) registers here, and only here: a --read-only server never
        # offers a tool that writes files.
        @server.tool(
            name="apply_edits",
            title="Apply search/replace edits",
            annotations=ToolAnnotations(
                read_only_hint=False, destructive_hint=True, idempotent_hint=False
            ),
        )
        def apply_edits(
            edits: EditsArg,
            dry_run: Annotated[StrictBool, Field(description=(
                "true (the default): validate and preview, write nothing. false: write every "
                "file atomically, all or none, and record the change in the index."))] = True,
            backup: Annotated[StrictBool, Field(description=(
                "Also keep each modified file's previous content as <file>.backup."))] = False,
            ctx: Context | None = None,
        ) -> Annotated[CallToolResult, ApplyEditsOutput]:
            """Edit files with SEARCH/REPLACE blocks, safely: every block of every file must
            match its file exactly once (as earlier blocks leave it) before anything is written.

            Returns per-file results (operation, lines added/removed, the symbols the edit
            adds, removes, modifies or whose signature it changes), an ACP v2 Diff with the git
            patch (`acp`), and after a real apply the change records now in the index. Call
            with dry_run=true first, then false. Errors: edit_failed (search text not found,
            with the nearest near-match and its lines; ambiguous, with the count and lines;
            creating a file that exists), invalid_args (malformed edits, with line numbers),
            fs_denied (a path outside the workspace root and the server's write roots, or
            inside .git/, .hg/, .svn/ or .symdiff/, which are never written).
            """
            from symdiff.api import apply_edits as run_apply_edits

            try:
                result = run_apply_edits(
                    edits, settings=settings, allow_write=write_roots, dry_run=dry_run,
                    backup=backup, client=client_info(ctx),
                )
            except SymdiffError as err:
                return failure(err)
            return success(result, result)

    from symdiff.mcp.symbols import register_symbol_tools

    register_symbol_tools(server, settings, read_only=read_only, write_roots=write_roots)
    from symdiff.mcp.undo import register_undo_tool  # docs/agents.md

    register_undo_tool(server, settings, read_only=read_only)
    from symdiff.mcp.blame import register_blame_tool

    register_blame_tool(server, settings)
    from symdiff.mcp.impact import register_impact_tool  # docs/impact.md

    register_impact_tool(server, settings)
    return server


def serve(
    settings: Settings,
    *,
    allow: Sequence[Path] = (),
    allow_write: Sequence[Path] = (),
    read_only: bool = False,
    all_workspaces: bool = False,
    http: HttpOptions | None = None,
) -> None:
    """Run the server over stdio, or over streamable HTTP as `http` says, until stopped.

    Over HTTP the tools that write are offered only with `http.http_writes`.
    """
    writes = not read_only and (http is None or http.http_writes)
    server = build_server(settings, allow=allow, allow_write=allow_write, read_only=not writes,
                          all_workspaces=all_workspaces)
    from symdiff.api import settle_heap

    # Keeping freed memory spares text_diff's large pairs 2,500 page faults a call (heap.py).
    settle_heap(keep_freed_memory=True)
    if http is None:
        server.run("stdio")
    else:
        from symdiff.httpguard import serve_http

        serve_http(server, http)
