"""The `diff` query's arguments and their rules: docs/spec.md's (after
docs/seeds/003-diff-query-tool.txt), and the filters and cursors of docs/query.md.

`DiffQuery` holds the arguments as a caller gives them (any JSON values); `parse` turns them into
a `Window` or raises `InvalidArgs`, before any database work.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass

from symdiff.duration import parse_duration_arg, parse_go_duration
from symdiff.errors import InvalidArgs
from symdiff.model import Origin, Scope
from symdiff.store import PathFilter, Position

DEFAULT_SINCE = "24h"
LONGEST_SINCE = "720h"  # the longest window a diff query answers for
MAX_SINCE_NS = 720 * 3600 * 1_000_000_000
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
DEFAULT_SCOPE = "impl"
SCOPES = ("impl", "test", "all")
ALL_WORKSPACES = "all"

_DECIMAL = re.compile(r"[0-9]+")
_DURATION_HINT = (
    'since is a Go duration: a number and a unit (ns, us, ms, s, m, h), e.g. "90m", "24h"; '
    'there is no day unit, write 168h for 7 days'
)
@dataclass(frozen=True, slots=True)
class DiffQuery:
    """The diff query's arguments as a caller gives them (any JSON values); the rules below
    turn them into a `Window` or an `InvalidArgs` before any database work."""

    since: object = DEFAULT_SINCE
    limit: object = DEFAULT_LIMIT
    scope: object = DEFAULT_SCOPE
    include_patch: bool = False
    workspace: str | None = None  # None: the caller's workspace; "all"; or another root
    origin: object = None  # one origin or a list of them; None: every origin
    path: object = None  # gitignore-style patterns, a string or a list; None: every path
    cursor: object = None  # from an earlier answer: what was recorded after it, oldest first
    reader: object = None  # a name: the server keeps this reader's cursor between answers
    against: object = None  # a git revision: the work tree compared with it (against.py)


@dataclass(frozen=True, slots=True)
class Window:
    """A query's arguments after the rules."""

    since_ns: int
    limit: int
    scope: Scope | None  # None: both
    origins: tuple[str, ...] | None = None  # None: every origin
    paths: PathFilter | None = None
    cursor: Position | None = None
    reader: str | None = None


def parse(query: DiffQuery) -> Window:
    """Apply the rules to every argument; errors before any database work."""
    check_workspace(query.workspace)
    if query.cursor is not None and query.reader is not None:
        raise InvalidArgs("give cursor or reader, not both: a reader keeps its own cursor")
    return Window(
        normalize_since(query.since), normalize_limit(query.limit), normalize_scope(query.scope),
        origins=normalize_origin(query.origin), paths=normalize_path(query.path),
        cursor=None if query.cursor is None else decode_cursor(query.cursor),
        reader=normalize_reader(query.reader),
    )  # fmt: skip


def normalize_since(value: object) -> int:
    """Nanoseconds of a `since` argument: Go syntax, never negative, clamped to 720h.

    None stands for an absent argument (the default, 24h).
    """
    if value is None:
        value = DEFAULT_SINCE
    if not isinstance(value, str):
        raise InvalidArgs(f"since must be a string, got {json.dumps(value, default=repr)}; "
                          f"{_DURATION_HINT}")
    ns = parse_duration_arg(value, name="since", hint=f"; {_DURATION_HINT}")
    return min(ns, MAX_SINCE_NS)


def beyond_max_since(value: object) -> bool:
    """Whether a valid `since` asks for more than 720h (and is answered for 720h)."""
    return isinstance(value, str) and parse_go_duration(value) > MAX_SINCE_NS


def limit_replaced(value: object) -> bool:
    """Whether a `limit` is not a whole number from 1 to 500 as given (and 50 stands in)."""
    return _spelled(value) != normalize_limit(value)


def _spelled(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and _DECIMAL.fullmatch(value)
    ):
        return int(value)
    return None


def normalize_limit(value: object) -> int:
    """An integer in 1..500, else 50 — silently, whatever the value (seed 003).

    Integral floats (10.0) and decimal strings ("10") count as the integer they spell, because
    JSON clients and language models send numbers in those forms too.
    """
    number = _spelled(value)
    if number is None or not 1 <= number <= MAX_LIMIT:
        return DEFAULT_LIMIT
    return number


def normalize_scope(value: object) -> Scope | None:
    """`impl`, `test` or `all` (None: both); None stands for an absent argument (impl)."""
    if value is None:
        value = DEFAULT_SCOPE
    if value == "all":
        return None
    if isinstance(value, str) and value in (Scope.IMPL.value, Scope.TEST.value):
        return Scope(value)
    raise InvalidArgs(
        f'scope must be "impl", "test" or "all", got {json.dumps(value, default=repr)}'
    )


def check_workspace(value: object) -> None:
    """The workspace argument: absent, "all", or a path (a string without NUL bytes)."""
    if value is None:
        return
    if not isinstance(value, str) or not value or "\0" in value:
        raise InvalidArgs(
            'workspace must be "all" or the root path of an indexed workspace, got '
            f"{json.dumps(value, default=repr)}"
        )




ORIGINS = tuple(o.value for o in Origin)


def normalize_origin(value: object) -> tuple[str, ...] | None:
    """One origin or a non-empty list of them; None (absent) means every origin."""
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    if (isinstance(values, list) and values
            and all(isinstance(v, str) and v in ORIGINS for v in values)):
        return tuple(dict.fromkeys(values))
    raise InvalidArgs(f"origin must be one of {', '.join(ORIGINS)} or a list of them, got "
                      f"{json.dumps(value, default=repr)}")


def normalize_path(value: object) -> PathFilter | None:
    """gitignore-style patterns (`src/auth/**`, `*.go`, `!vendor/`): a string or a list."""
    if value is None:
        return None
    patterns = [value] if isinstance(value, str) else value
    if not (isinstance(patterns, list) and patterns
            and all(isinstance(p, str) and p.strip() and "\0" not in p for p in patterns)):
        raise InvalidArgs("path must be a gitignore-style pattern or a list of them (e.g. "
                          f'"src/**", "*.go", "!vendor/"), got {json.dumps(value, default=repr)}')
    import pathspec  # only queries that filter by path pay for it

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    except Exception as exc:  # pathspec raises plain errors on a malformed pattern
        raise InvalidArgs(f"path: not a valid gitignore-style pattern: {exc}") from exc
    rules = [(p.regex.pattern, bool(p.include)) for p in spec.patterns
             if p.include is not None and p.regex is not None]  # fmt: skip
    return PathFilter(tuple(rules))


_READER = re.compile(r"[A-Za-z0-9._:@/+-]{1,200}")


def normalize_reader(value: object) -> str | None:
    """A reader's name: 1-200 letters, digits and `. _ : @ / + -`."""
    if value is None:
        return None
    if isinstance(value, str) and _READER.fullmatch(value):
        return value
    raise InvalidArgs("reader must be a name of 1-200 letters, digits or . _ : @ / + -, got "
                      f"{json.dumps(value, default=repr)}")


_CURSOR_PREFIX = "c1."


def encode_cursor(position: Position) -> str:
    """An opaque cursor string for a position in the reading order."""
    raw = f"{position.txid}:{position.id}".encode()
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: object) -> Position:
    """The position a cursor string stands for; InvalidArgs for anything else."""
    bad = InvalidArgs("cursor must be a cursor string from an earlier answer, got "
                      f"{json.dumps(value, default=repr)[:80]}")
    if not isinstance(value, str) or not value.startswith(_CURSOR_PREFIX) or len(value) > 64:
        raise bad
    body = value.removeprefix(_CURSOR_PREFIX)
    try:
        txid, id_ = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode().split(":")
        position = Position(int(txid), int(id_))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    if position.txid < -1 or position.id < 0:
        raise bad
    return position
