"""Parsing search/replace edits: the marker text form and the equivalent JSON form.

The text form is docs/seeds/004-search-replace-edits.txt's; docs/edits.md has the decisions.

Text form::

    FILE: src/auth/session.ts
    <<<<<<< SEARCH
    const timeout = 3600000;
    =======
    const timeout = config.session.timeout ?? 3600000;
    >>>>>>> REPLACE

Rules (docs/edits.md has the reasons):

- CRLF in the message is read as LF. A marker is a whole line, at column 0, trailing
  whitespace allowed: `<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE`. `FILE: path` may be
  indented; the path may be wrapped in backticks or quotes.
- Outside blocks, code fences and prose are ignored; inside a block every line is text.
- A block with several `=======` lines (a git conflict, an RST underline) keeps every possible
  split; validation picks the one whose search text fits the file (`Block.splits`).
- A text block is whole lines: its search and replace texts end with a newline (unless empty)
  and the search may only match at the start of a line. A JSON block is a plain substring.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from symdiff.errors import InvalidArgs

SEARCH = "<<<<<<< SEARCH"
DIVIDER = "======="
REPLACE = ">>>>>>> REPLACE"
_FILE = re.compile(r"^\s*FILE:\s*(.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_QUOTES = ("`", '"', "'")


@dataclass(frozen=True, slots=True)
class Block:
    """One search/replace pair; `splits` lists every (search, replace) reading, best first."""

    search: str
    replace: str
    where: str
    whole_lines: bool = True
    splits: tuple[tuple[str, str], ...] = ()

    def readings(self) -> tuple[tuple[str, str], ...]:
        """The (search, replace) readings to try, preferred first."""
        return self.splits or ((self.search, self.replace),)


@dataclass(frozen=True, slots=True)
class FileEdit:
    """The blocks for one file, in the order they apply."""

    path: str
    blocks: tuple[Block, ...]
    where: str


def decode_edits(data: bytes) -> str:
    """The edits message as text; InvalidArgs naming the line and column of the first byte
    that is not UTF-8 (a file name or search text in another encoding cannot be matched)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        lineno = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start:exc.start].decode("utf-8", "replace")) + 1
        shown = data[line_start:line_start + 60].split(b"\n")[0]
        raise InvalidArgs(
            f"line {lineno}: not UTF-8 text: byte 0x{data[exc.start]:02x} at column {column} "
            f"of {str(shown)[1:]}; edits must be UTF-8"
        ) from None


def _check_unicode(text: str) -> None:
    """InvalidArgs naming the line of the first lone surrogate: a str that no UTF-8 can hold
    (a Python caller's `surrogateescape` text), refused as the bytes it stands for would be."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        lineno = text.count("\n", 0, exc.start) + 1
        raise InvalidArgs(
            f"line {lineno}: not Unicode text: a lone surrogate U+{ord(text[exc.start]):04X}, "
            "which no UTF-8 text can hold; edits must be UTF-8"
        ) from None


def parse_edits(edits: object) -> list[FileEdit]:
    """Parse either form: bytes or a string (text form, or JSON when it starts with `[` or
    `{`) or already-decoded JSON (a list of `{file, blocks}` objects, or one such object)."""
    if isinstance(edits, bytes):
        edits = decode_edits(edits)
    if isinstance(edits, str):
        _check_unicode(edits)
        stripped = edits.lstrip("\ufeff \t\r\n")
        if stripped.startswith(("[", "{")):
            try:
                data = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise InvalidArgs(
                    f"edits look like JSON but do not parse: {exc.msg} at line {exc.lineno} "
                    f"column {exc.colno}"
                ) from exc
            return parse_json(data)
        return parse_text(edits)
    return parse_json(edits)


def _marker(line: str, marker: str) -> bool:
    return line.rstrip() == marker


def _file_path(raw: str, lineno: int) -> str:
    path = raw
    for q in _QUOTES:
        if len(path) >= 2 and path.startswith(q) and path.endswith(q):
            path = path[1:-1].strip()
    if not path:
        raise InvalidArgs(f"line {lineno}: FILE: line without a path")
    return path


def _joined(lines: Sequence[str]) -> str:
    """Whole lines as one text: each line ends with a newline; no lines is the empty text."""
    return "".join(line + "\n" for line in lines)


def _split_order(dividers: list[int]) -> list[int]:
    """Dividers in the order to try: the middle one for an odd count (search and replace hold
    as many marker-like lines each), else the last (a conflict resolved away), then the rest."""
    n = len(dividers)
    first = dividers[n // 2] if n % 2 else dividers[-1]
    return [first, *(d for d in reversed(dividers) if d != first)]


def _block(body: list[str], dividers: list[int], where: str, start: int, end: int) -> Block:
    if not dividers:
        raise InvalidArgs(
            f"line {start}: block has no `{DIVIDER}` line before `{REPLACE}` at line {end}"
        )
    splits = tuple((_joined(body[:d]), _joined(body[d + 1:])) for d in _split_order(dividers))
    search, replace = splits[0]
    return Block(search, replace, where, True, splits if len(splits) > 1 else ())


def parse_text(text: str) -> list[FileEdit]:
    """Parse the marker text form; InvalidArgs with the message line number on any mistake."""
    lines = text.replace("\r\n", "\n").split("\n")
    files: list[tuple[str, int, list[Block]]] = []
    i = 0
    while i < len(lines):
        line, lineno = lines[i], i + 1
        m = _FILE.match(line)
        if m:
            files.append((_file_path(m.group(1), lineno), lineno, []))
        elif _marker(line, SEARCH):
            if not files:
                raise InvalidArgs(f"line {lineno}: `{SEARCH}` before any `FILE: path` line")
            i = _read_block(lines, i, files[-1][2])
        elif _marker(line, DIVIDER) or _marker(line, REPLACE):
            raise InvalidArgs(f"line {lineno}: `{line.rstrip()}` outside a block")
        # Anything else outside a block (prose, code fences, blank lines) is not ours.
        i += 1
    if not files:
        raise InvalidArgs(f"no `FILE: path` line and no `{SEARCH}` block found")
    for path, lineno, blocks in files:
        if not blocks:
            raise InvalidArgs(f"line {lineno}: FILE: {path} has no `{SEARCH}` block")
    return [FileEdit(path, tuple(blocks), f"FILE: {path} (line {lineno})")
            for path, lineno, blocks in files]


def _read_block(lines: list[str], i: int, out: list[Block]) -> int:
    """Read the block opened at `lines[i]`; append it to `out`; return its last line index."""
    start = i + 1
    body: list[str] = []
    dividers: list[int] = []
    for j in range(i + 1, len(lines)):
        line = lines[j]
        if _marker(line, REPLACE):
            where = f"block {len(out) + 1} (line {start})"
            out.append(_block(body, dividers, where, start, j + 1))
            return j
        if _marker(line, SEARCH):
            raise InvalidArgs(
                f"line {j + 1}: `{SEARCH}` inside the block opened at line {start} "
                f"(missing `{REPLACE}`?)"
            )
        if _marker(line, DIVIDER):
            dividers.append(len(body))
        body.append(line)
    raise InvalidArgs(f"line {start}: block has no `{REPLACE}` line (the message ends first)")


def _text_field(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise InvalidArgs(f"{where}.{key} must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgs(f"{where}.{key} must be Unicode text: it holds a lone surrogate, "
                          "which no UTF-8 text can hold") from None
    return value


def _json_file(item: object, where: str) -> FileEdit:
    if not isinstance(item, Mapping):
        raise InvalidArgs(f"{where} must be an object with `file` and `blocks`")
    unknown = set(item) - {"file", "blocks"}
    if unknown:
        raise InvalidArgs(f"{where} has unknown keys: {', '.join(sorted(map(str, unknown)))}")
    path = _text_field(item, "file", where)
    if not path.strip():
        raise InvalidArgs(f"{where}.file is empty")
    raw_blocks = item.get("blocks")
    if not isinstance(raw_blocks, list) or not raw_blocks:
        raise InvalidArgs(f"{where}.blocks must be a non-empty array")
    blocks = []
    for k, raw in enumerate(raw_blocks):
        bw = f"{where}.blocks[{k}]"
        if not isinstance(raw, Mapping):
            raise InvalidArgs(f"{bw} must be an object with `search` and `replace`")
        extra = set(raw) - {"search", "replace"}
        if extra:
            raise InvalidArgs(f"{bw} has unknown keys: {', '.join(sorted(map(str, extra)))}")
        search = _text_field(raw, "search", bw).replace("\r\n", "\n")
        replace = _text_field(raw, "replace", bw).replace("\r\n", "\n")
        blocks.append(Block(search, replace, bw, whole_lines=False))
    return FileEdit(path, tuple(blocks), f"{where} ({path})")


def parse_json(data: object) -> list[FileEdit]:
    """Parse decoded JSON `[{file, blocks: [{search, replace}]}]` (one object is accepted too)."""
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list) or not data:
        raise InvalidArgs("edits must be a non-empty array of {file, blocks} objects")
    return [_json_file(item, f"edits[{n}]") for n, item in enumerate(data)]
