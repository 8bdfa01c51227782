"""Content addressing and compression of snapshots."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import zstandard

from symdiff.blobid import blob_id

CODEC_ZSTD = "zstd"
CODEC_RAW = "raw"
CODEC_NONE = "none"  # hash only: binary or over the size cap

_local = threading.local()


def git_binary(data: bytes) -> bool:
    """Git's rule for what it diffs and counts: a NUL byte in the first 8000 bytes.

    The index keeps such content by hash only and counts its changes 0/0, as `git diff
    --numstat` does. (Patches and text diffs use `linediff.is_binary`, which also takes
    non-UTF-8 content as binary, because they must round-trip as text.)
    """
    return b"\0" in data[:8000]


@dataclass(frozen=True, slots=True)
class Blob:
    """A snapshot ready to store: `data` is None for hash-only content."""

    hash: str
    size: int
    binary: bool
    codec: str
    data: bytes | None


def _compressor() -> zstandard.ZstdCompressor:
    c = getattr(_local, "c", None)
    if c is None:
        c = _local.c = zstandard.ZstdCompressor(level=3)
    return c


def _decompressor() -> zstandard.ZstdDecompressor:
    d = getattr(_local, "d", None)
    if d is None:
        d = _local.d = zstandard.ZstdDecompressor()
    return d


def pack(content: bytes, *, content_hash: str | None = None) -> Blob:
    """Hash, classify and compress text content (kept raw when compression does not pay)."""
    digest = content_hash or blob_id(content)
    binary = git_binary(content)
    if binary:
        return Blob(digest, len(content), True, CODEC_NONE, None)
    packed = _compressor().compress(content)
    if len(packed) < len(content):
        return Blob(digest, len(content), False, CODEC_ZSTD, packed)
    return Blob(digest, len(content), False, CODEC_RAW, content)


def hash_only(digest: str, size: int, *, binary: bool) -> Blob:
    """A blob known by its hash alone (binary, or over the size cap)."""
    return Blob(digest, size, binary, CODEC_NONE, None)


def unpack(codec: str, data: bytes | None) -> bytes | None:
    """The original bytes of a stored blob, or None when only its hash is kept."""
    if data is None or codec == CODEC_NONE:
        return None
    if codec == CODEC_ZSTD:
        return _decompressor().decompress(data)
    return bytes(data)
