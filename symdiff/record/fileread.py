"""Reading a file safely: no link following, no blocking on FIFOs, re-read while it changes."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

from symdiff.diffs.blobid import blob_id

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CHUNK = 1 << 20


class NotRegular(Exception):
    """The path is not a regular file (directory, FIFO, socket, symlink)."""


@dataclass(frozen=True, slots=True)
class ReadResult:
    """A file's content (None when over the cap), its git blob hash and its stat at read time."""

    content: bytes | None
    digest: str
    size: int
    mtime_ns: int


def _hash_stream(fd: int, size: int) -> tuple[str, int]:
    h = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
    n = 0
    while chunk := os.read(fd, _CHUNK):
        h.update(chunk)
        n += len(chunk)
    return h.hexdigest(), n


def _read_all(fd: int, size: int) -> bytes:
    parts = []
    want = size + 1  # one more byte tells us the file grew under us
    while want > 0 and (chunk := os.read(fd, max(want, 65536))):
        parts.append(chunk)
        want -= len(chunk)
    return b"".join(parts)


def read_regular(path: str | os.PathLike[str], *, max_size: int, attempts: int = 3) -> ReadResult:
    """Read and hash a regular file; raise OSError (vanished, denied) or NotRegular.

    A file that changes while it is read (size or mtime differs before and after) is read
    again, up to `attempts` times; the last read is returned as it is.
    """
    fd = os.open(path, _FLAGS)
    try:
        result: ReadResult | None = None
        for _ in range(attempts):
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise NotRegular(str(path))
            os.lseek(fd, 0, os.SEEK_SET)
            if before.st_size > max_size:
                digest, n = _hash_stream(fd, before.st_size)
                content = None
            else:
                content = _read_all(fd, before.st_size)
                n = len(content)
                digest = blob_id(content)
            after = os.fstat(fd)
            result = ReadResult(content, digest, n, after.st_mtime_ns)
            if n == before.st_size == after.st_size and before.st_mtime_ns == after.st_mtime_ns:
                return result
        assert result is not None
        return result
    finally:
        os.close(fd)
