"""Heap tuning for the long-running processes (the MCP server, the daemon): the garbage
collector, and for the server glibc's malloc."""

from __future__ import annotations

import ctypes
import gc
import os

# mallopt's parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# Where glibc's own sliding thresholds end up: 32 MiB (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
# systems) for mapping a block apart, twice that for trimming the top of the heap.
_MMAP_THRESHOLD = 32 << 20
_TRIM_THRESHOLD = 2 * _MMAP_THRESHOLD


def settle_heap(*, keep_freed_memory: bool = False) -> None:
    """Move the objects made at start-up out of the garbage collector's reach.

    A long-running process calls this once, when it is ready: afterwards a full collection
    walks only objects made since, instead of the ~130,000 that importing SQLAlchemy, pydantic
    and the MCP SDK leaves behind — that walk cost a 40 ms pause every few hundred `diff`
    queries. With `keep_freed_memory`, malloc also keeps what a call frees for the next call
    (see `_keep_freed_memory`).
    """
    gc.collect()
    gc.freeze()
    if keep_freed_memory:
        _keep_freed_memory()


def _keep_freed_memory() -> bool:
    """Pin glibc's malloc thresholds where its sliding rule ends up; False off glibc.

    By default glibc maps each block over 128 KiB afresh (that threshold slides up to the size
    of the largest such block freed, at most 32 MiB) and gives the free top of its heap back to
    the kernel once it passes twice the threshold. A `text_diff` of two 4 MiB files allocates
    about 30 MiB (both texts, libgit2's copies of them, xdiff's tables) and frees it all by the
    next call, so every call had the kernel fault in and zero some 2,500 fresh pages: 2-3 ms,
    a tenth of its CPU time. Pinned at 32 and 64 MiB from the start, the next call reuses those
    pages instead. The price: up to 64 MiB of freed heap stays with the process.
    """
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (ValueError, OSError):  # not a name this C library knows
        return False
    if not libc.startswith("glibc"):
        return False
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    pinned = int(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) == 1
    return int(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)) == 1 and pinned
