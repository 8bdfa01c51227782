"""A blob's symbols as stored bytes, and back; pure and lossless.

A pair of blobs' change (`encode_pair`: the line counts and symbol changes from one to the
other) is stored the same way, as plain JSON lists.

The symbols of a file are stored once per blob (`store/facts.py`), so their form is chosen for
room: one table of the distinct strings (names, kinds, parents, signatures), the numbers as
small differences (a start from the previous start, an end from its own start), the whole as
compact JSON compressed with zstd. `decode(encode(s)) == s` for any sequence of Symbols.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import zstandard

from symdiff.model import Symbol, SymbolChange, SymbolChangeType

FORMAT = 1  # the first number of every symbols payload; a payload of another format is not read
PAIR_FORMAT = 2  # the first number of a pair's payload (its line counts and symbol changes)
_LEVEL = 9
_FIELDS = 8  # numbers per symbol


class CodecError(ValueError):
    """Stored bytes that are not a payload of this format (the caller extracts afresh)."""


def encode(symbols: Sequence[Symbol]) -> bytes:
    """The stored form of `symbols` (in their order)."""
    strings: dict[str, int] = {}

    def ref(text: str | None) -> int:
        if text is None:
            return -1
        return strings.setdefault(text, len(strings))

    numbers: list[int | None] = [FORMAT]
    line = byte = 0
    for s in symbols:
        numbers += (ref(s.name), ref(s.kind), ref(s.signature), ref(s.parent),
                    s.start_line - line, s.end_line - s.start_line,
                    s.header_end_line - s.start_line)  # fmt: skip
        line = s.start_line
        if s.start_byte is None:
            numbers.append(None)
        else:
            numbers.append(s.start_byte - byte)
            byte = s.start_byte
        numbers.append(None if s.end_byte is None or s.start_byte is None
                       else s.end_byte - s.start_byte)  # fmt: skip
    text = json.dumps([list(strings), numbers], separators=(",", ":"), ensure_ascii=False)
    return zstandard.ZstdCompressor(level=_LEVEL).compress(text.encode())


def decode(data: bytes) -> tuple[Symbol, ...]:
    """The symbols `encode` stored; CodecError when `data` is not such a payload."""
    try:
        strings, numbers = json.loads(zstandard.ZstdDecompressor().decompress(data))
    except (zstandard.ZstdError, ValueError, TypeError) as exc:
        raise CodecError(f"not a stored symbol payload: {exc}") from None
    if not numbers or numbers[0] != FORMAT or (len(numbers) - 1) % (_FIELDS + 1):
        raise CodecError("not a stored symbol payload of format 1")
    out = []
    line = byte = 0
    try:
        for i in range(1, len(numbers), _FIELDS + 1):
            name, kind, sig, parent, dline, span, header, dbyte, width = numbers[i : i + 9]
            line += dline
            start_byte = end_byte = None
            if dbyte is not None:
                byte += dbyte
                start_byte = byte
                end_byte = None if width is None else byte + width
            out.append(Symbol(strings[name], strings[kind], line, line + span, line + header,
                              strings[sig], None if parent < 0 else strings[parent],
                              start_byte, end_byte))  # fmt: skip
    except (IndexError, TypeError, ValueError) as exc:
        raise CodecError(f"a stored symbol payload does not read back: {exc}") from None
    return tuple(out)


Pair = tuple[int, int, tuple[SymbolChange, ...]]  # lines added, lines removed, symbol changes


def encode_pair(added: int, removed: int, changes: Sequence[SymbolChange]) -> bytes:
    """The stored form of one change between two blobs: its line counts and symbol changes."""
    rows = [[c.name, c.kind, c.change_type.value, c.start_line, c.end_line, c.renamed_from,
             c.renamed_to] for c in changes]  # fmt: skip
    text = json.dumps([PAIR_FORMAT, added, removed, rows], separators=(",", ":"),
                      ensure_ascii=False)  # fmt: skip
    return zstandard.ZstdCompressor(level=_LEVEL).compress(text.encode())


def decode_pair(data: bytes) -> Pair:
    """What `encode_pair` stored; CodecError when `data` is not such a payload."""
    try:
        form, added, removed, rows = json.loads(zstandard.ZstdDecompressor().decompress(data))
        if form != PAIR_FORMAT or not isinstance(added, int) or not isinstance(removed, int):
            raise CodecError("not a stored pair payload of format 2")
        changes = tuple(SymbolChange(name, kind, SymbolChangeType(change), start, end, old, new)
                        for name, kind, change, start, end, old, new in rows)  # fmt: skip
    except (zstandard.ZstdError, ValueError, TypeError) as exc:
        raise CodecError(f"not a stored pair payload: {exc}") from None
    return added, removed, changes
