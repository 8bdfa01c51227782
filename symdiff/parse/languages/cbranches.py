"""Preprocessor conditionals that split a declaration, read as ctags reads them: the first branch.

iOS and macOS code writes one declaration for two platforms by splitting it:

    #if !TARGET_OS_OSX
    - (UIView *)view
    #else
    - (RCTUIView *)view
    #endif
    {

and C and C++ do the same with a class head (`class A : public B {`), a parameter list or a
protocol list. tree-sitter cannot parse either branch alone, so the whole class around it can
become one ERROR node. ctags reads past the directives and keeps the first branch; so does this
module, but only where it helps: `splitting` takes a text and its tree, and names the spans to
blank: for each conditional that overlaps a syntax error and *splits* a declaration or a
statement (a branch that leaves a bracket or an `@interface … @end` open, ends mid-way, not at a
`;` or `}`, or starts with the `else` of an `if` or a head's `requires`), its directive lines and
every branch after the first. The parse blanks them keeping the text's length and lines
(`extract.py`), so the tree of the blanked text places definitions in the original. A
conditional whose branches are each whole (a method for iOS, another for macOS) is left alone,
so both branches' definitions stay, as ctags finds them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from tree_sitter import Node

from symdiff.parse.languages.engine import error_spans

# A directive line, continuation lines included.
_DIRECTIVE = re.compile(
    rb"^[ \t]*#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b(?:[^\n]*\\\n)*[^\n]*",
    re.MULTILINE,
)
# What a scan for brackets and the last token skips: comments, strings, character literals, and
# other directive lines (`#define`, `#import`).
_SKIP = re.compile(
    rb"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
    rb"|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*",
    re.MULTILINE | re.DOTALL,
)
_OPENS, _CLOSES = (b"(", b"[", b"{"), (b")", b"]", b"}")
# Objective-C blocks that `@end` closes; `@protocol Name;` is a forward declaration.
_AT_OPEN = re.compile(rb"@(?:interface|implementation)\b|@protocol\b(?!\s*\w+(?:\s*,\s*\w+)*\s*;)")
_AT_END = re.compile(rb"@end\b")
# A branch that continues what comes before the conditional: an `if` (`#if X  else if (…) …;
# #endif`) or a function's head (`f() const  #if X  requires C<T>  #endif  {`).
_CONTINUES = re.compile(rb"\s*(?:else|requires)\b")


@dataclass(slots=True)
class Conditional:
    """One `#if … #endif`: its directive lines' spans and its branches' spans (between them)."""

    directives: list[tuple[int, int]] = field(default_factory=list)
    branches: list[tuple[int, int]] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int]:
        return self.directives[0][0], self.directives[-1][1]


def conditionals(text: bytes) -> list[Conditional]:
    """Every closed conditional of the text, nested ones included."""
    found: list[Conditional] = []
    open_: list[Conditional] = []
    for m in _DIRECTIVE.finditer(text):
        word = m.group(1)
        if word.startswith(b"if"):
            open_.append(Conditional([(m.start(), m.end())]))
            continue
        if not open_:
            continue  # an #else or #endif whose #if is not in this text
        top = open_[-1]
        top.branches.append((top.directives[-1][1], m.start()))
        top.directives.append((m.start(), m.end()))
        if word == b"endif":
            found.append(open_.pop())
    return found


def _code(text: bytes) -> bytes:
    """`text` with comments, literals and directive lines blanked (same length)."""
    return _SKIP.sub(lambda m: b" " * (m.end() - m.start()), text)


def _whole(code: bytes, after: int) -> bool:
    """Whether a branch's code is whole declarations: brackets and `@interface … @end` closed,
    ending at a `;`, a `}`, an `@end`, or a `)` that no `{` or `:` continues after the
    conditional (`after`: that next character; a macro call such as `RCT_EXPORT_MODULE()` is a
    whole statement, a function's head before its body is not)."""
    depth = sum(map(code.count, _OPENS)) - sum(map(code.count, _CLOSES))
    if depth or (b"@" in code and len(_AT_OPEN.findall(code)) != len(_AT_END.findall(code))):
        return False
    last = code.rstrip()
    if _CONTINUES.match(code):
        return False  # `else if (…) x;`, `requires C<T>`: the branch continues a statement
    if not last or last.endswith((b";", b"}", b"@end")):
        return True
    return last.endswith(b")") and after not in b"{:"


def _first_view(code: bytes, start: int, end: int, conds: Sequence[Conditional],
                starts: Sequence[int]) -> bytes:  # fmt: skip
    """`code[start:end]` with the conditionals inside it read as their first branch."""
    inside = conds[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, end)]
    if not inside:
        return code[start:end]
    out = bytearray(code[start:end])
    for inner in inside:
        if inner.span[1] <= end:
            for a, b in inner.branches[1:]:
                out[a - start : b - start] = b" " * (b - a)
    return bytes(out)


def splits(code: bytes, cond: Conditional, conds: Sequence[Conditional],
           starts: Sequence[int]) -> bool:  # fmt: skip
    """Whether a branch of the conditional is not whole on its own (`_whole`), the conditionals
    nested in it read as their first branch. `code` is the text with comments, literals and
    directives blanked; `conds` every conditional, by start (`starts`)."""
    rest = code[cond.span[1] : cond.span[1] + 4096].lstrip()
    after = rest[0] if rest else 0
    return not all(_whole(_first_view(code, a, b, conds, starts), after)
                   for a, b in cond.branches)  # fmt: skip


def _overlapping(conds: Sequence[Conditional], errors: Sequence[tuple[int, int]]
                 ) -> Iterator[Conditional]:  # fmt: skip
    for cond in conds:
        start, end = cond.span
        if any(a <= end and start <= b for a, b in errors):
            yield cond


def splitting(text: bytes, root: Node) -> list[tuple[int, int]]:
    """The spans to blank so that every conditional that overlaps a syntax error of the tree
    and splits a declaration reads as its first branch: its directive lines and its later
    branches. Errors inside a function's body count too: libstdc++ splits an `if … else if`
    chain inside a body (`#if …  else if constexpr (…) return x;  #endif`), and the error it
    makes can end the namespace around the function early, so what follows loses its scope."""
    if b"#" not in text:
        return []
    errors = error_spans(root)
    if not errors:
        return []
    conds = sorted(conditionals(text), key=lambda c: c.span[0])
    near = list(_overlapping(conds, errors))
    if not near:
        return []
    code, starts = _code(text), [c.span[0] for c in conds]
    spans: list[tuple[int, int]] = []
    for cond in near:
        if splits(code, cond, conds, starts):
            spans.extend(cond.directives)
            spans.extend(cond.branches[1:])
    return spans
