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
# or of upper-case names with an `_` without one (`G_GNUC_DEPRECATED`; with one it may be the
# name after a macro: `NCURSES_EXPORT(int) COLOR_PAIR (int);`), up to the `;` or `{` that ends
# the declaration (`__THROW __nonnull ((1)) __wur`), or the `:` of
# a constructor's member initialisers (`A(const A&) _GLIBCXX_NOTHROW : B() { }`).
_TRAILING = re.compile(
    rb"(?<=\))((?:\s*(?<!\w)(?:(?:__\w+|_[A-Z]\w*)\b(?:\s*" + GROUP + rb")?"
    rb"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b(?!\s*\()))+)(?=\s*(?:[;{]|:(?!:)))"
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
# An all-caps reserved macro standing where a declaration's specifiers go: at a line's start,
# after `inline`, `static`, `friend`, `constexpr`, `virtual`, `explicit`, `extern` or `const`, or
# between `class` and the class's name; maybe with an argument group, maybe several in a row, and
# followed by a name or `{`: libstdc++'s `_GLIBCXX20_CONSTEXPR bool`, `_GLIBCXX_NODISCARD
# _GLIBCXX14_CONSTEXPR pair<…>`, `) const _GLIBCXX_NOEXCEPT {`, `class _GLIBCXX17_DEPRECATED
# unary_negate`, `using t _GLIBCXX20_DEPRECATED_SUGGEST("…") = u;`. tree-sitter reads such a
# macro as the type, and the real type as part of the name (`_ForwardIterator rotate`). Mixed-case
# reserved names are template parameters (`_Tp`); one followed by `::`, `(…);`, `,` or `=` is a
# namespace, a call or a constant, and `struct _IO_FILE {` names the struct.
_MACRO = rb"_[A-Z][A-Z0-9_]{2,}\b(?:\s*" + GROUP + rb")?"
_SPECIFIER = re.compile(  # a literal `_` first, for speed; where it stands is `_specifier`'s
    rb"_(?<!\w_)[A-Z][A-Z0-9_]{2,}\b(?:\s*" + GROUP + rb")?(?:\s+" + _MACRO + rb")*"
    rb"(?=\s*(?:[A-Za-z_{~]|=(?!=)))"
)
_LEAD = re.compile(
    rb"(?:^|\b(?:inline|static|friend|constexpr|virtual|explicit|extern|const|class|struct|union"
    rb"|using[ \t]+\w+))[ \t]*$"
)
# An export macro between `class` or `struct` and the name of a class being defined:
# `class YG_EXPORT Config : public ::YGConfig {`, `struct IMGUI_API ImGuiStyle {`.
_CLASS_MACRO = re.compile(
    rb"(?:class|struct)[ \t]+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
    rb"(?=\s+[A-Za-z_]\w*\s*(?:final\b|:(?!:)|\{))"
)
# A macro call that is a statement of its own at a line's start, outside any definition's head:
# `ABSL_FLAG(int, regexp_stack_limit, 256 << 10, "…");`. Its arguments (a type, an expression)
# are no declaration tree-sitter can read, and the ERROR it makes swallowed the functions after it.
# The `;` stays: it may end the declaration before (`f (int, …)\n    GCC_PRINTFLIKE(3,4);`).
_STATEMENT_MACRO = re.compile(
    rb"^[ \t]*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\s*" + GROUP + rb"(?=[ \t]*;[ \t]*$)", re.MULTILINE
)
_NAME_START = re.compile(rb"[A-Za-z_]")
_USING_NAME = re.compile(rb"\busing\s+\w+\s*$")
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


def _specifier(match: re.Match[bytes]) -> bytes:
    """A `_SPECIFIER` match blanked where it stands for specifiers: alone on its line so far, or
    after a specifier keyword, `class`, or `using name`; before `=` only in `using name MACRO =`."""
    text, start = match.string, match.start()
    line = text[text.rfind(b"\n", 0, start) + 1 : start]
    lead = _LEAD.search(line)
    if lead is None:
        return match.group(0)
    follows = text[match.end() : match.end() + 256].lstrip()[:1]
    if line.rstrip().endswith((b"class", b"struct", b"union")) and not _NAME_START.match(follows):
        return match.group(0)  # `struct _IO_FILE {`: the macro is the name
    using = b"using" in lead.group(0) or _USING_NAME.search(text[max(0, start - 256) : start])
    if follows == b"=" and not using:
        return match.group(0)  # `_SC_ARG_MAX = 0` in an enum
    return _blank(match)


def _class_macro(match: re.Match[bytes]) -> bytes:
    start = match.start()
    if start and (match.string[start - 1 : start].isalnum() or match.string[start - 1] == 95):
        return match.group(0)  # `subclass FOO_BAR x {`: not the keyword
    macro = match.start(1) - start
    return match.group(0)[:macro] + b" " * (match.end(1) - match.start(1))


def _unwrap(match: re.Match[bytes]) -> bytes:
    """`OF((args))` -> `   (args) `: the wrapper and its outer parentheses become spaces."""
    inner = match.group(1)
    lead = match.start(1) - match.start(0)
    return b" " * lead + inner + b" "


def _outside_directives(
    pattern: re.Pattern[bytes], replace: Callable[[re.Match[bytes]], bytes], source: bytes
) -> bytes:
    """`pattern.sub(replace, source)`, leaving preprocessor lines (`#define OF(a) a`, and the
    lines a `\\` continues it on) alone."""

    def apply(match: re.Match[bytes]) -> bytes:
        line_start = source.rfind(b"\n", 0, match.start()) + 1
        while line_start > 1 and source[line_start - 2 : line_start - 1] == b"\\":
            line_start = source.rfind(b"\n", 0, line_start - 1) + 1  # a `#define`'s next line
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
    masked = _outside_directives(_SPECIFIER, _specifier, masked)
    masked = _outside_directives(_CLASS_MACRO, _class_macro, masked)
    masked = _outside_directives(_STATEMENT_MACRO, _blank, masked)
    masked = _outside_directives(_KR, _unwrap, masked)
    return _outside_directives(_EXPORTS, _blank, masked)
