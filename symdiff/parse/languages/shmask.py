"""Mask the Bash constructs tree-sitter-bash cannot parse, so the definitions around them are found.

tree-sitter-bash turns a whole region into an ERROR node when it meets an extended glob
(`@(a|b)`, `!(*.bak)`, `+([0-9])`, in words, `case` patterns and `[[ … ]]`), a regular expression
after `=~` (`[[ $x =~ ^\\$\\{[#!]?… ]]`), or a parameter expansion whose pattern holds brackets
or braces (`${opt%%[<{().[]*}`); in bash-completion's own `bash_completion` that is the whole
file. The mask overwrites each such construct with `_` — one byte for one byte, newlines kept —
so the masked text parses as plain words and every offset and line is the original's. Names,
lines and signatures are still cut from the original text.

The mask is a recovery: `extract` parses the masked text only when the source itself has syntax
errors (Family.recover), and a text that parses is never touched.
"""

from __future__ import annotations

import re

# `?(…)`, `*(…)`, `+(…)`, `@(…)`, `!(…)`; not `$(…)` (a command) nor an escaped `\(`.
_EXTGLOB = re.compile(rb"(?<![$\\])[?*+@!]\(")
_REGEX = re.compile(rb"=~[ \t]+")
_REGEX_END = re.compile(rb"[ \t]+\]\]")
_EXPANSION = re.compile(
    rb"\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?(%%|%|##|#|//|/|\^\^|\^|,,|,)"
)
_AWKWARD = frozenset(b"(){}<>[]|;&")
_BLANK = ord("_")


def recover(source: bytes) -> bytes:
    """`source` with extended globs, `=~` regexes and awkward expansion patterns blanked."""
    text = bytearray(source)
    for match in _EXTGLOB.finditer(source):
        end = _closing(source, match.end(), b"(", b")")
        if end is not None:
            _blank(text, match.start(), end + 1)
    for match in _REGEX.finditer(source):
        stop = _REGEX_END.search(source, match.end())
        if stop is not None and b"\n" not in _logical(source[match.end() : stop.start()]):
            _blank(text, match.end(), stop.start())
    for match in _EXPANSION.finditer(source):
        for i in _pattern_brackets(source, match.end()):
            text[i] = _BLANK
    return bytes(text)


def _logical(chunk: bytes) -> bytes:
    """A chunk with its backslash-newline continuations joined."""
    return chunk.replace(b"\\\n", b"  ")


def _blank(text: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if text[i] == ord("\n") or (text[i] == ord("\\") and text[i + 1 : i + 2] == b"\n"):
            continue
        text[i] = _BLANK


def _closing(source: bytes, start: int, opening: bytes, closing: bytes) -> int | None:
    """The offset of the bracket closing the group opened just before `start`, on its line."""
    depth, i = 1, start
    while i < len(source):
        char = source[i : i + 1]
        if char == b"\\":
            i += 2
            continue
        if char == b"\n":
            return None
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _pattern_brackets(source: bytes, start: int) -> list[int]:
    """The awkward bytes of an expansion's pattern (from `start` to its closing `}`), outside
    nested `${…}`/`$(…)` and quotes; none when the expansion does not close on its line."""
    found: list[int] = []
    closers: list[bytes] = []
    quote, i = b"", start
    while i < len(source):
        char = source[i : i + 1]
        if char == b"\\":
            i += 2
            continue
        if char == b"\n":
            return []
        if quote:
            quote = b"" if char == quote else quote
        elif char in (b"'", b'"'):
            quote = char
        elif source[i : i + 2] in (b"${", b"$("):
            closers.append(b"}" if source[i + 1 : i + 2] == b"{" else b")")
            i += 1
        elif closers and char == closers[-1]:
            closers.pop()
        elif not closers and char == b"}":
            return found
        elif not closers and source[i] in _AWKWARD:
            found.append(i)
        i += 1
    return []
