"""A blob's symbols as stored bytes, and back; pure and lossless.

A file's references (`pack_refs`: its package, imports and refs, `symdiff.parse.refs`) are
stored the same way, their names interned in one table.
A pair of blobs' change (`raw_pair`: the line counts and symbol changes from one to the
other) is stored the same way, as plain JSON lists.

The symbols of a file are stored once per blob (`store/facts.py`), so their form is chosen for
room: the numbers as small differences (a start from the previous start, an end from its own
start), each symbol one list with its strings, the whole as compact JSON (`raw`), compressed
with zstd (`pack`) — or, for a new version of a file, as a zstd delta against the raw form of
the version it replaced: an edit changes only the lists at the edit (later starts are
differences), so a delta is ~100 bytes where the whole is kilobytes.
`from_raw(unpack(pack(raw(s)))) == s` and `from_raw(unpack(pack(raw(s), b), b)) == s` for any
Symbols.
"""

from __future__ import annotations

import itertools
import json
import operator
import sys
import threading
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

import zstandard

from symdiff.model import Symbol, SymbolChange, SymbolChangeType
from symdiff.parse.reflangs.common import ref
from symdiff.parse.refs import FileRefs, Import, RefKind

FORMAT = 1  # the first number of every symbols payload; a payload of another format is not read
PAIR_FORMAT = 2  # the first number of a pair's payload (its line counts and symbol changes)
REFS_FORMAT = 3  # the first number of a file's references' payload
_LEVEL = 9


class CodecError(ValueError):
    """Stored bytes that are not a payload of this format (the caller extracts afresh)."""


def raw(symbols: Sequence[Symbol]) -> bytes:
    """The uncompressed form of `symbols` (in their order): compact JSON, deterministic. Each
    symbol is one list holding its own strings (no shared table: an inserted definition would
    renumber every later reference, and a delta would carry them all)."""
    rows: list[object] = [FORMAT]
    line = byte = 0
    for s in symbols:
        start_byte = width = None
        if s.start_byte is not None:
            start_byte = s.start_byte - byte
            byte = s.start_byte
            width = None if s.end_byte is None else s.end_byte - s.start_byte
        rows.append([s.name, s.kind, s.signature, s.parent, s.start_line - line,
                     s.end_line - s.start_line, s.header_end_line - s.start_line, start_byte,
                     width])  # fmt: skip
        line = s.start_line
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False).encode()


def from_raw(data: bytes) -> tuple[Symbol, ...]:
    """The symbols of `raw`'s form; CodecError when `data` is not such a form."""
    try:
        rows = json.loads(data)
    except (ValueError, TypeError) as exc:
        raise CodecError(f"not a stored symbol payload: {exc}") from None
    if not isinstance(rows, list) or not rows or rows[0] != FORMAT:
        raise CodecError(f"not a stored symbol payload of format {FORMAT}")
    out = []
    line = byte = 0
    try:
        for name, kind, sig, parent, dline, span, header, dbyte, width in rows[1:]:
            line += dline
            start_byte = end_byte = None
            if dbyte is not None:
                byte += dbyte
                start_byte = byte
                end_byte = None if width is None else byte + width
            out.append(Symbol(name, kind, line, line + span, line + header, sig, parent,
                              start_byte, end_byte))  # fmt: skip
    except (TypeError, ValueError) as exc:
        raise CodecError(f"a stored symbol payload does not read back: {exc}") from None
    return tuple(out)


def pack(data: bytes, base: bytes | None = None, *, level: int = _LEVEL) -> bytes:
    """`data` (a raw form) as stored: zstd, or itself when that is no longer (a short form);
    with `base` (another raw form, typically the symbols of the version this one replaced),
    a zstd delta that reads back only with that base. `level`: zstd's, for a whole payload."""
    if base is not None:
        shared = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        return zstandard.ZstdCompressor(level=_LEVEL, dict_data=shared,
                                        write_checksum=True).compress(data)  # fmt: skip
    packed = _compressor(level).compress(data)
    return packed if len(packed) < len(data) else data


_local = threading.local()  # a (de)compressor is not safe to share between threads


def _decompressor() -> zstandard.ZstdDecompressor:
    made: zstandard.ZstdDecompressor | None = getattr(_local, "decompressor", None)
    if made is None:
        made = _local.decompressor = zstandard.ZstdDecompressor()
    return made


def _compressor(level: int) -> zstandard.ZstdCompressor:
    """This thread's compressor at `level`: one made per call cost a third of the packing of
    Django's symbols and half of its references' (its context set up for each payload)."""
    made: dict[int, zstandard.ZstdCompressor] | None = getattr(_local, "compressors", None)
    if made is None:
        made = _local.compressors = {}
    compressor = made.get(level)
    if compressor is None:
        compressor = made[level] = zstandard.ZstdCompressor(level=level)
    return compressor


def unpack(data: bytes, base: bytes | None = None) -> bytes:
    """The raw form `pack` stored (given the same `base`); CodecError when it is not one."""
    if base is None and data[:1] == b"[":
        return data
    try:
        if base is None:
            return _decompressor().decompress(data)
        shared = zstandard.ZstdCompressionDict(base, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        return zstandard.ZstdDecompressor(dict_data=shared).decompress(data)
    except zstandard.ZstdError as exc:
        raise CodecError(f"not a stored payload: {exc}") from None


Pair = tuple[int, int, tuple[SymbolChange, ...]]  # lines added, lines removed, symbol changes


def change_rows(changes: Sequence[SymbolChange]) -> list[tuple[Any, ...]]:
    """Symbol changes as rows of plain values (stored pairs; the parse pool's pipe)."""
    return [(c.name, c.kind, c.change_type.value, c.start_line, c.end_line, c.renamed_from,
             c.renamed_to) for c in changes]  # fmt: skip


def changes_of_rows(rows: Iterable[Sequence[Any]]) -> tuple[SymbolChange, ...]:
    """`change_rows` read back; KeyError or ValueError for a row that is not one."""
    return tuple(SymbolChange(name, kind, _CHANGE_TYPES[change], start, end, old, new)
                 for name, kind, change, start, end, old, new in rows)  # fmt: skip


_CHANGE_TYPES = {t.value: t for t in SymbolChangeType}


def raw_pair(added: int, removed: int, changes: Sequence[SymbolChange]) -> bytes:
    """The uncompressed form of one change between two blobs: line counts, symbol changes."""
    text = json.dumps([PAIR_FORMAT, added, removed, change_rows(changes)], separators=(",", ":"),
                      ensure_ascii=False)  # fmt: skip
    return text.encode()


def decode_pair(data: bytes) -> Pair:
    """The change `pack(raw_pair(...))` stored; CodecError when `data` is not such a payload."""
    try:
        form, added, removed, rows = json.loads(unpack(data))
        if form != PAIR_FORMAT or not isinstance(added, int) or not isinstance(removed, int):
            raise CodecError("not a stored pair payload of format 2")
        changes = changes_of_rows(rows)
    except (ValueError, TypeError, KeyError) as exc:
        raise CodecError(f"not a stored pair payload: {exc}") from None
    return added, removed, changes


_KINDS = tuple(RefKind)
_KIND_CODES = {kind: i for i, kind in enumerate(_KINDS)}
REFS_LEVEL = 3  # a file's references: level 9 took 4x the time for 7% less room (Django)
_SOURCE, _TARGET = attrgetter("source"), attrgetter("target")
_KIND, _LINE = attrgetter("kind"), attrgetter("line")


def raw_refs(refs: FileRefs) -> bytes:
    """The uncompressed form of a file's references: compact JSON, deterministic, by columns
    (each a list made in C, not a loop per ref): the refs' names once each in one table (the
    sources in order, then the targets not among them), then the refs' source indices, target
    indices, kind codes and lines as differences from the previous ref's; the imports as
    `[local, module, name, line - previous line]`."""
    rows = refs.refs
    sources = list(map(_SOURCE, rows))
    targets = list(map(_TARGET, rows))
    table: dict[str, int | None] = dict.fromkeys(sources)
    table.update(dict.fromkeys(targets))
    for index, name in enumerate(table):
        table[name] = index
    lines = list(map(_LINE, rows))
    imports: list[list[object]] = []
    line = 0
    for i in refs.imports:
        imports.append([i.local, i.module, i.name, i.line - line])
        line = i.line
    payload = [
        REFS_FORMAT, refs.package, imports, list(table),
        list(map(table.__getitem__, sources)), list(map(table.__getitem__, targets)),
        list(map(_KIND_CODES.__getitem__, map(_KIND, rows))),
        list(map(operator.sub, lines, [0, *lines[:-1]])),
    ]  # fmt: skip
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def from_raw_refs(data: bytes) -> FileRefs:
    """The references of `raw_refs`'s form; CodecError when `data` is not such a form."""
    try:
        form, package, imports, names, sources, targets, kinds, dlines = json.loads(data)
        if form != REFS_FORMAT or not isinstance(package, str):
            raise CodecError(f"not a stored references payload of format {REFS_FORMAT}")
        if not len(sources) == len(targets) == len(kinds) == len(dlines):
            raise CodecError("a stored references payload's columns differ in length")
        out_imports = []
        line = 0
        for local, module, name, dline in imports:
            line += dline
            out_imports.append(Import(local, module, name, line))
        names = [sys.intern(n) for n in names]  # shared with every other file's refs
        out_refs = tuple(map(ref, map(names.__getitem__, sources),
                             map(names.__getitem__, targets), map(_KINDS.__getitem__, kinds),
                             itertools.accumulate(dlines)))  # fmt: skip
    except (ValueError, TypeError, IndexError) as exc:
        raise CodecError(f"not a stored references payload: {exc}") from None
    return FileRefs(package, tuple(out_imports), out_refs)


def pack_refs(refs: FileRefs) -> bytes:
    """A file's references as stored: `raw_refs`'s form, zstd-compressed when that is shorter."""
    return pack(raw_refs(refs), level=REFS_LEVEL)


def unpack_refs(data: bytes) -> FileRefs:
    """The references `pack_refs` stored; CodecError when `data` is not such a payload."""
    return from_raw_refs(unpack(data))
