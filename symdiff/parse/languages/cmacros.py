"""Blank out the decoration macros that hide C/C++ declarations from a preprocessor-less parser.

tree-sitter sees `extern int f (int) __THROW __nonnull ((1));` or zlib's
`ZEXTERN int ZEXPORT f OF((int));` as syntax errors, because it cannot expand the macros. The
mask replaces such macros with spaces of the same length, so every byte offset and line of the
masked text is the original's: the tree of the masked text names and places definitions, and
signatures are still cut from the original text (the macros stay part of them).

Only tokens that cannot start or name a definition are blanked: reserved identifiers (`__x`,
`_X`) after a parameter list, lines holding nothing but a `*_BEGIN_DECLS`-style bracket (or
libstdc++'s `_GLIBCXX_BEGIN_NAMESPACE_VERSION`), a reserved macro between a namespace's name and
its `{` (`namespace std _GLIBCXX_VISIBILITY(default)`), K&R prototype wrappers (`OF((…))`,
`__P((…))`, `PARAMS((…))`) and the export macros of zlib-style headers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A parenthesised group nested up to three deep.
GROUP = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
# After a parameter list's `)`: a run of reserved identifiers, each maybe with an argument group,
# up to the `;` or `{` that ends the declaration (`__THROW __nonnull ((1)) __wur`).
_TRAILING = re.compile(
    rb"(?<=\))((?:\s*(?<!\w)(?:__\w+|_[A-Z]\w*)\b(?:\s*" + GROUP + rb")?)+)(?=\s*[;{])"
)
# A line holding nothing but a macro that opens or closes an `extern "C"` block or a namespace
# (`__BEGIN_DECLS`, `G_END_DECLS`, `_GLIBCXX_BEGIN_NAMESPACE_VERSION`). Other lone macros
# (`_GLIBCXX20_CONSTEXPR`) stay: the parser folds them into the definition they lead.
_DECLS = re.compile(
    rb"^[ \t]*(?:__BEGIN_DECLS|__END_DECLS|[A-Z][A-Z0-9_]*_(?:BEGIN|END)_DECLS"
    rb"|(?:BEGIN|END)_C_DECLS|_[A-Z_][A-Z0-9_]*_(?:BEGIN|END)(?:_[A-Z0-9_]+)?)[ \t]*$",
    re.MULTILINE,
)
# A reserved macro between a namespace's name and its `{`: `namespace std _GLIBCXX_VISIBILITY(x)`.
_NAMESPACE = re.compile(rb"(?<=\bnamespace)(\s+\w+)(\s+_[A-Z_]\w*\s*" + GROUP + rb")?")
# K&R-compatibility wrappers around a parameter list: `OF((int a))` is `(int a)`.
_KR = re.compile(rb"\b(?:OF|Z_ARG|_PROTO|__P|PARAMS|_ARGS)\s*\((" + GROUP + rb")\)")
# Export macros that stand before or between a declaration's specifiers.
_EXPORTS = re.compile(rb"\b(?:ZEXTERN|ZEXPORT|ZEXPORTVA)\b")
_TRIGGERS = (b"_", b"((", b"ZEXTERN", b"ZEXPORT")


def _blank(match: re.Match[bytes]) -> bytes:
    return re.sub(rb"[^\n]", b" ", match.group(0))


def _blank_after_name(match: re.Match[bytes]) -> bytes:
    macro = match.group(2)
    return match.group(0) if macro is None else match.group(1) + re.sub(rb"[^\n]", b" ", macro)


def _unwrap(match: re.Match[bytes]) -> bytes:
    """`OF((args))` -> `   (args) `: the wrapper and its outer parentheses become spaces."""
    inner = match.group(1)
    lead = match.start(1) - match.start(0)
    return b" " * lead + inner + b" "


def _outside_directives(
    pattern: re.Pattern[bytes], replace: Callable[[re.Match[bytes]], bytes], source: bytes
) -> bytes:
    """`pattern.sub(replace, source)`, leaving preprocessor lines (`#define OF(a) a`) alone."""

    def apply(match: re.Match[bytes]) -> bytes:
        line_start = source.rfind(b"\n", 0, match.start()) + 1
        if source[line_start : match.start()].lstrip().startswith(b"#"):
            return match.group(0)
        return replace(match)

    return pattern.sub(apply, source)


def mask(source: bytes) -> bytes:
    """`source` with decoration macros replaced by spaces; same length, same lines."""
    if not any(t in source for t in _TRIGGERS):
        return source
    masked = _DECLS.sub(_blank, source)
    masked = _NAMESPACE.sub(_blank_after_name, masked)
    masked = _outside_directives(_TRAILING, _blank, masked)
    masked = _outside_directives(_KR, _unwrap, masked)
    return _outside_directives(_EXPORTS, _blank, masked)
