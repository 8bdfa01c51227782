"""The MCP tools' schemas: the outputs as TypedDicts, and the arguments whose JSON Schema is
written out because the query's own rules (not the SDK's validation) judge their values.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import WithJsonSchema

# pydantic needs typing_extensions' TypedDict on Python 3.11 for nested TypedDicts.
from typing_extensions import TypedDict

from symdiff.records import ChangeRecord, SymbolRecord


class DiffOutput(TypedDict):
    """The diff records (the first text block carries the same JSON array), the cursor to
    continue from, and whether more records match beyond the limit."""

    result: list[ChangeRecord]
    cursor: str
    more: bool
    stale: NotRequired[bool]
    impact: NotRequired[dict[str, Any]]


# Seed 000 is docs/seeds/000-text-diff-tool.txt. The docstring is the output schema's
# description, which agents read.
class TextDiffOutput(TypedDict):
    """A unified diff of two files or texts (seed 000's fields, plus `acp` in path mode)."""

    diff: str
    label_a: str
    label_b: str
    lines_a: int
    lines_b: int
    identical: bool
    diff_lines: int
    truncated: NotRequired[bool]
    acp: NotRequired[dict[str, Any]]


class EditFileResult(TypedDict):
    """What an edit does (or would do) to one file."""

    path: str
    operation: Literal["add", "modify", "unchanged"]
    blocks: int
    lines_added: int
    lines_removed: int
    language: str | None
    symbols: list[SymbolRecord]
    backup: NotRequired[str]


class ApplyEditsOutput(TypedDict):
    """The result of apply_edits: per-file results, the ACP v2 Diff, and what the index holds."""

    dry_run: bool
    applied: bool
    files: list[EditFileResult]
    lines_added: int
    lines_removed: int
    acp: dict[str, Any]
    recorded: NotRequired[list[ChangeRecord]]
    record_error: NotRequired[str]


# Typed `object` so that malformed edits reach the parser, whose errors carry line numbers.
EditsArg = Annotated[
    object,
    WithJsonSchema({
        "description": (
            "Either the SEARCH/REPLACE text: a `FILE: path` line, then one or more blocks "
            "`<<<<<<< SEARCH` / exact current lines / `=======` / new lines / "
            "`>>>>>>> REPLACE`, repeated per file; or the JSON form "
            '[{"file": path, "blocks": [{"search": exact text, "replace": new text}]}]. '
            "Paths are relative to the workspace root. An empty search creates a new file."
        ),
        "oneOf": [
            {"type": "string"},
            {"type": "array", "items": {
                "type": "object", "required": ["file", "blocks"],
                "properties": {
                    "file": {"type": "string"},
                    "blocks": {"type": "array", "items": {
                        "type": "object", "required": ["search", "replace"],
                        "properties": {"search": {"type": "string"},
                                       "replace": {"type": "string"}},
                    }},
                },
            }},
        ],
    }),
]


# `since`, `scope` and `limit` are typed `object` so that every JSON value reaches the query's
# own rules (invalid_args for since/scope, a silent 50 for limit) instead of the SDK's
# validation; their schemas are written out here.
SinceArg = Annotated[
    object,
    WithJsonSchema({
        "type": "string",
        "default": "24h",
        "description": (
            'Time window as a Go duration: "30m", "1h", "24h", "168h" (7 days; there is no '
            '"d" unit). Values above "720h" (30 days) are clamped to 720h. A negative or '
            "malformed duration is an invalid_args error saying why."
        ),
    }),
]
LimitArg = Annotated[
    object,
    WithJsonSchema({
        "default": 50,
        "description": (
            "Maximum number of records, an integer in 1-500. Any other value (0, 501, 2.5, "
            '"ten", null) silently becomes 50; it is never an error.'
        ),
    }),
]
ScopeArg = Annotated[
    object,
    WithJsonSchema({
        "type": "string",
        "enum": ["impl", "test", "all"],
        "default": "impl",
        "description": (
            '"impl" (implementation files), "test" (test files by their language\'s '
            'conventions) or "all". The filter applies before the limit.'
        ),
    }),
]


OriginArg = Annotated[
    object,
    WithJsonSchema({
        "anyOf": [
            {"type": "string", "enum": ["edit", "git", "watch", "scan", "commit", "agent",
                                        "person"]},
            {"type": "array", "items": {"type": "string", "enum": [
                "edit", "git", "watch", "scan", "commit", "agent", "person"]}},
        ],
        "description": (
            'Only changes made by these writers: "edit" (apply_edits), "git" (checkout, '
            'reset, merge, stash, ...), "watch" (an editor or another tool, seen live), "scan" '
            '(found by a rescan, writer unknown), "commit" (imported history), "agent" (an '
            'agent\'s tool call was open when it was written: its Edit, Bash, formatter, ...). '
            'Groups: "person" (watch, scan: what a person changed), "agent" (agent, edit: what '
            'agents did). Applies before the limit.'
        ),
    }),
]
PathArg = Annotated[
    object,
    WithJsonSchema({
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        "description": (
            'gitignore-style patterns relative to the workspace root ("src/auth/**", "*.go", '
            '"!vendor/"); the last pattern that matches a path decides. Applies before the '
            "limit."
        ),
    }),
]
CursorArg = Annotated[
    object,
    WithJsonSchema({
        "type": "string",
        "description": (
            "The `cursor` of an earlier answer: returns what was recorded after it, oldest "
            "first, at most `limit` records (`more` says whether others remain). Following "
            "the cursors yields every record exactly once. `since` does not apply."
        ),
    }),
]
ReaderArg = Annotated[
    object,
    WithJsonSchema({
        "type": "string",
        "description": (
            'A name for yourself, e.g. "claude-session-7": the server keeps your cursor, so '
            "each call returns exactly what you have not seen yet, oldest first (the first "
            "call: what was recorded within `since`). Not with `cursor`."
        ),
    }),
]
AgainstArg = Annotated[
    object,
    WithJsonSchema({
        "type": "string",
        "description": (
            'A git revision ("HEAD", "main", "v2.1", "HEAD~3", a sha) or "REF..." (where the '
            "branch left REF: their merge base). The answer is then one record per file that "
            "differs between that revision and the work tree as it is now (uncommitted and "
            "untracked files included, ignored ones not; renames found by similarity), sorted "
            "by path, origin \"scan\" with origin_info {against, commit}. scope, path, origin, "
            "limit and include_patch apply; since does not; not with cursor, reader or workspace."
        ),
    }),
]
