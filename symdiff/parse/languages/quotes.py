"""One quote style for string literals in signatures, where the language does not tell them apart.

`@route('/x')` and `@route("/x")` are the same decorator in Python, and `'a' | 'b'` the same type
in TypeScript: a formatter that re-quotes them (black, prettier) must not change a signature.
A single-quoted literal becomes double-quoted when that needs no new escape (its text has no
`"`; an escaped `\\'` loses its backslash), which is what black and prettier do. Double-quoted
literals, JS template literals and Python triple-quoted strings keep their text.
"""

from __future__ import annotations

import re

# Leftmost literal wins, so a quote inside another kind of literal is never taken for one.
_PYTHON = re.compile(
    r"""(?<!\w)(?P<keep>[rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|"(?:[^"\\\n]|\\.)*"))"""
    r"""|(?<!\w)(?P<prefix>[rRbBuUfF]{0,2})'(?P<text>(?:[^'\\\n]|\\.)*)'"""
)
_ECMASCRIPT = re.compile(
    r"""(?P<keep>`(?:[^`\\]|\\[\s\S])*`|"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<prefix>)'(?P<text>(?:[^'\\\n]|\\.)*)'"""
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _requote(match: re.Match[str]) -> str:
    if match.group("keep") is not None:
        return match.group(0)
    prefix, body = match.group("prefix"), match.group("text")
    if '"' in body:
        return match.group(0)  # double quotes would need escapes: the formatters keep these
    if "r" not in prefix.lower():  # in a raw string a backslash is text, not an escape
        body = _ESCAPE.sub(lambda m: "'" if m.group(1) == "'" else m.group(0), body)
    return f'{prefix}"{body}"'


def python_quotes(header: str) -> str:
    """`header` with Python's single-quoted literals double-quoted."""
    return _PYTHON.sub(_requote, header) if "'" in header else header


def ecmascript_quotes(header: str) -> str:
    """`header` with JS/TS single-quoted literals double-quoted (template literals untouched)."""
    return _ECMASCRIPT.sub(_requote, header) if "'" in header else header
