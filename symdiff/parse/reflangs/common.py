"""What every language's reference reader shares: who encloses a byte, and Refs made cheaply."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import cast

from symdiff.model import Symbol
from symdiff.parse.refs import Ref, RefKind


class Unfrozen:
    """Ref's slots without its frozen `__setattr__` (see engine._Unfrozen: a frozen dataclass's
    __init__ costs more than the rest of a reference's reading)."""

    __slots__ = Ref.__slots__
    source: str
    target: str
    kind: RefKind
    line: int


def ref(source: str, target: str, kind: RefKind, line: int) -> Ref:
    """`Ref(source, target, kind, line)`, built without the frozen class's __init__."""
    made = Unfrozen()
    made.source, made.target, made.kind, made.line = source, target, kind, line
    made.__class__ = Ref  # type: ignore[assignment]
    return cast(Ref, made)


Segment = tuple[int, int, str, Symbol | None]  # [lo, hi) bytes, the enclosing name, its symbol


def segments(symbols: Sequence[Symbol], size: int) -> list[Segment]:
    """The file cut into runs of bytes that each belong to one innermost definition ("" for
    module level), in order; a definition's runs are its span less its children's spans."""
    spans = sorted(
        (s.start_byte, -s.end_byte, i) for i, s in enumerate(symbols)
        if s.start_byte is not None and s.end_byte is not None
    )  # fmt: skip
    out: list[Segment] = []
    stack: list[tuple[int, str, Symbol | None]] = [(size, "", None)]
    top_end, top_name, top = stack[-1]
    pos = 0
    for start, neg_end, i in spans:
        while start >= top_end and len(stack) > 1:  # close what ends before this one
            if pos < top_end:
                out.append((pos, top_end, top_name, top))
                pos = top_end
            stack.pop()
            top_end, top_name, top = stack[-1]
        if pos < start:
            out.append((pos, start, top_name, top))
            pos = start
        symbol = symbols[i]
        stack.append((min(-neg_end, top_end), symbol.name, symbol))
        top_end, top_name, top = stack[-1]
    while stack:
        top_end, top_name, top = stack.pop()
        if pos < top_end:
            out.append((pos, top_end, top_name, top))
            pos = top_end
    return out


class Enclosing:
    """Which definition encloses a byte: the innermost symbol whose span holds it."""

    def __init__(self, symbols: Sequence[Symbol], size: int) -> None:
        self.runs = segments(symbols, size)
        self.starts = [lo for lo, _, _, _ in self.runs]

    def name(self, at: int) -> str:
        """The enclosing definition's name at byte `at` ("" at module level)."""
        i = bisect.bisect_right(self.starts, at) - 1
        return self.runs[i][2] if i >= 0 else ""

    def symbol(self, at: int) -> Symbol | None:
        """The enclosing definition at byte `at` (None at module level)."""
        i = bisect.bisect_right(self.starts, at) - 1
        return self.runs[i][3] if i >= 0 else None
