"""Content identity: git's blob object id, shared by the store, the reader and patches."""

from __future__ import annotations

import hashlib


def blob_id(data: bytes) -> str:
    """Git's blob object id (SHA-1 of `blob <size>\\0` + bytes), as `git hash-object` prints it."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)  # no concatenation: a 4 MiB input is not copied to be hashed
    return h.hexdigest()
