"""A provenance text as it is stored (revision 0011): compact JSON with its git object ids as
their 20 bytes and its usual keys as one byte each: a checkout's pair, 202 bytes of text, is
stored in 77.

A record's `origin_info` and `git` are compact JSON (`changes._json`), and a checkout's are
mostly three commit ids in hex (`head_before`, `head_after`, `head`): 120 of its 200 bytes.
JSON text never holds a byte below 0x20 (json.dumps escapes them), so those bytes are free to
stand for something else:

- 0x00 and the 20 bytes after it: a quoted 40-digit lowercase hex id, `"<hex>"`;
- 0x01 to 0x1e: one of the fragments of `_FRAGMENTS`, in its order;
- 0x1f first: the rest is the text itself, unchanged (a text that holds a byte below 0x20,
  which no writer of ours makes, is stored so).

The fragment table is part of the stored format: never change or reorder an entry, only add
one in a free byte (a new revision's reader must read every row written before it).
"""

from __future__ import annotations

import re
from functools import lru_cache

_FRAGMENTS = (
    '"head_after":', '"head_before":', '"operation":', '"branch":', '"head":', '"checkout"',
    "null", '"agent":', '"session":', '"turn":', '"tool":', '"tool_use_id":', '"subagent":',
    '"also":', '"git":', '"client":', '"undo":', '"commit"', "true", "false", '"model":',
)
assert len(_FRAGMENTS) <= 0x1E
_ID, _VERBATIM = 0x00, 0x1F
_TOKEN = {f.encode(): bytes([i]) for i, f in enumerate(_FRAGMENTS, start=1)}
_TEXT = {i: f.encode() for i, f in enumerate(_FRAGMENTS, start=1)}
_FIND = re.compile(rb'"([0-9a-f]{40})"|'
                   + b"|".join(re.escape(f) for f in sorted(_TOKEN, key=len, reverse=True)))
_CONTROL = re.compile(rb"[\x00-\x1f]")
_STORED = re.compile(rb"\x00(.{20})|[\x00-\x1f]", re.DOTALL)


class CompactError(ValueError):
    """A stored value that is not this format (it cannot have been written by it)."""


def _token(m: re.Match[bytes]) -> bytes:
    hex_id = m.group(1)
    return b"\x00" + bytes.fromhex(hex_id.decode()) if hex_id is not None else _TOKEN[m.group(0)]


def encode(text: str) -> bytes:
    """The stored form of a text (any text: JSON or not, it reads back the same)."""
    raw = text.encode()
    if _CONTROL.search(raw):
        return bytes([_VERBATIM]) + raw
    return _FIND.sub(_token, raw)


@lru_cache(maxsize=4096)  # a page's records mostly share a few rows (a batch's, a turn's)
def decode(data: bytes) -> str:
    """The text a stored form stands for."""
    if data[:1] == bytes([_VERBATIM]):
        return data[1:].decode()
    return _STORED.sub(_text, data).decode()


def _text(m: re.Match[bytes]) -> bytes:
    raw_id = m.group(1)
    if raw_id is not None:
        return b'"' + raw_id.hex().encode() + b'"'
    byte = m.group(0)[0]
    if byte not in _TEXT:
        raise CompactError("a git id cut short" if byte == _ID else
                           f"byte {byte:#04x} stands for nothing")  # fmt: skip
    return _TEXT[byte]
