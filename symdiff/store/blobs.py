"""Content addressing and compression of snapshots."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import zstandard

from symdiff.diffs.blobid import blob_id

CODEC_ZSTD = "zstd"
CODEC_RAW = "raw"
CODEC_NONE = "none"  # hash only: binary or over the size cap
CODEC_DELTA = "zdelta"  # zstd with the base blob's bytes as a raw-content dictionary
LEVEL = 3  # whole snapshots (docs/performance.md: higher levels do not pay for their time)
# Deltas: level 5's hash tables still find matches across a dictionary of 4 MiB, level 3's not.
DELTA_LEVEL = 5

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
    """A snapshot ready to store: `data` is None for hash-only content.

    A delta (`codec` zdelta) names its `base` and carries its `whole` form, which the store
    writes instead when the base is no longer in the database.
    """

    hash: str
    size: int
    binary: bool
    codec: str
    data: bytes | None
    base: str | None = None
    whole: Blob | None = None


def _compressor() -> zstandard.ZstdCompressor:
    c = getattr(_local, "c", None)
    if c is None:
        c = _local.c = zstandard.ZstdCompressor(level=LEVEL)
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


def delta(whole: Blob, content: bytes, base_hash: str, base_content: bytes) -> Blob:
    """`content` (whose whole form is `whole`) as a delta against `base_content`, when that is
    smaller than the whole form; else `whole`.

    The frame keeps zstd's checksum of the output, so a delta decoded against any bytes but its
    base's fails instead of yielding wrong bytes.
    """
    if whole.data is None or whole.base is not None:
        return whole
    sizes = {"source_size": len(content), "dict_size": len(base_content)}
    default = zstandard.ZstdCompressionParameters.from_level(DELTA_LEVEL, **sizes)
    # The window must reach back over the whole base: zstd's level defaults size it for the
    # content alone, and a match further back than the window is not found.
    window = max(default.window_log, min((len(base_content) + len(content)).bit_length(), 27))
    params = zstandard.ZstdCompressionParameters.from_level(
        DELTA_LEVEL, window_log=window, write_checksum=1, **sizes)
    compressor = zstandard.ZstdCompressor(compression_params=params,
                                          dict_data=_raw_dict(base_content))  # fmt: skip
    packed = compressor.compress(content)
    if len(packed) >= len(whole.data):
        return whole
    return Blob(whole.hash, whole.size, False, CODEC_DELTA, packed, base_hash, whole)


def _raw_dict(content: bytes) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(content, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def hash_only(digest: str, size: int, *, binary: bool) -> Blob:
    """A blob known by its hash alone (binary, or over the size cap)."""
    return Blob(digest, size, binary, CODEC_NONE, None)


def unpack(codec: str, data: bytes | None, base: bytes | None = None) -> bytes | None:
    """The original bytes of a stored blob, or None when only its hash is kept.

    A delta needs its base's bytes (`base`). Raises `zstandard.ZstdError` when the data does not
    decode (for a delta: decoded against bytes that are not its base's), ValueError for an
    unknown codec or a delta without its base.
    """
    if data is None or codec == CODEC_NONE:
        return None
    if codec == CODEC_ZSTD:
        return _decompressor().decompress(data)
    if codec == CODEC_DELTA:
        if base is None:
            raise ValueError("a delta cannot be read without its base")
        return zstandard.ZstdDecompressor(dict_data=_raw_dict(base)).decompress(data)
    if codec == CODEC_RAW:
        return bytes(data)
    raise ValueError(f"unknown snapshot codec {codec!r}")
