"""The path gate: a file read or written for a caller stays beneath an allowed root, races included.

A path is resolved (symlinks, `..`) and checked against the roots once; then it is opened again
*beneath the root's directory descriptor*, refusing every symlink met on the way, so a directory
swapped for a symlink between the check and the open (`renameat2(RENAME_EXCHANGE)`) cannot carry
the open outside:

- openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS (Linux 5.6+),
  one system call, through ctypes;
- else a walk from the root's descriptor, one component at a time, each opened with O_NOFOLLOW.

The checked path is already resolved, so a symlink met at open time can only be a concurrent
change: it is refused with FsDenied. Writers open the target's parent directory this way and
then work relative to that descriptor (`dir_fd=`), so the directory written is the one opened,
whatever its name points to afterwards. docs/edits.md has the rules and their limits.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.errors import FsDenied, InvalidArgs, ToolFailed
from symdiff.workspace.layout import STATE_DIR

# Set to False (or SYMDIFF_OPENAT2=0 in the environment) to use the component walk even where
# the kernel has openat2; the tests force the walk this way.
USE_OPENAT2 = os.environ.get("SYMDIFF_OPENAT2", "1") != "0"

# openat2 has the same number on every architecture of the unified syscall table.
_OPENAT2_NR = {"x86_64": 437, "aarch64": 437, "arm64": 437, "i686": 437, "riscv64": 437,
               "ppc64le": 437, "s390x": 437}
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS

# Directories are opened for lookups only (O_PATH needs no read permission).
DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC
# Reads never block on a FIFO or take a terminal.
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

_CHUNK = 1 << 20

# Directories whose content runs code or holds symdiff's own state: never written for a caller
# (a planted `.git/hooks/*` or `core.fsmonitor` in `.git/config` runs at the next git command).
PROTECTED = (".git", ".hg", ".svn", STATE_DIR)


@dataclass(frozen=True, slots=True)
class Beneath:
    """A resolved path and the allowed root it lies in: `root / parts`."""

    root: Path
    parts: tuple[str, ...]

    @property
    def path(self) -> Path:
        """The absolute path."""
        return self.root.joinpath(*self.parts)


def resolve(path: Path, shown: object) -> Path:
    """`path` with symlinks and `..` resolved (like `realpath`); InvalidArgs for a name no file
    can have (a NUL byte), ToolFailed on a loop."""
    if "\0" in str(path):
        raise InvalidArgs(f"path {str(shown)!r} contains a NUL byte")
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolFailed(f"cannot resolve {shown}: {exc}") from exc


def locate(real: Path, roots: Sequence[Path]) -> Beneath | None:
    """`real` (resolved) under the deepest of the resolved `roots` that holds it; None outside."""
    inside = [r for r in roots if real.is_relative_to(r)]
    if not inside:
        return None
    root = max(inside, key=lambda r: len(r.parts))
    return Beneath(root, real.relative_to(root).parts)


def protected_part(where: Beneath) -> str | None:
    """The first component of the path under its root naming a PROTECTED directory (or file:
    a `.git` file points to a repository elsewhere), compared without regard to case."""
    for part in where.parts:
        if part.casefold() in PROTECTED:
            return part
    return None


def raced(path: object) -> FsDenied:
    """The error for a symlink met where the checked path had none."""
    return FsDenied(f"{path} changed while it was being opened (a symlink appeared on its "
                    "resolved path, e.g. a directory swapped for a link); refused")


# --- opening beneath a directory descriptor ---------------------------------------------------


class _OpenHow(ctypes.Structure):
    _fields_ = (("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64))


@functools.cache
def _syscall() -> tuple[int, Callable[..., int]] | None:
    """openat2's number and libc's `syscall`, when this kernel and architecture have them."""
    nr = _OPENAT2_NR.get(os.uname().machine)
    if nr is None or not hasattr(os, "O_PATH"):
        return None
    libc_syscall = ctypes.CDLL(None, use_errno=True).syscall
    libc_syscall.restype = ctypes.c_long
    func: Callable[..., int] = libc_syscall
    root_fd = os.open("/", DIR_FLAGS)
    try:
        os.close(_openat2(func, nr, root_fd, ".", DIR_FLAGS, 0))
    except OSError:  # ENOSYS (before 5.6), or EPERM from a seccomp filter
        return None
    finally:
        os.close(root_fd)
    return nr, func


def _openat2(func: Callable[..., int], nr: int, dir_fd: int, path: str, flags: int,
             mode: int) -> int:
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = func(ctypes.c_long(nr), ctypes.c_int(dir_fd), ctypes.c_char_p(os.fsencode(path)),
              ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return fd


def openat2_available() -> bool:
    """Whether opens use openat2 (else the component walk)."""
    return USE_OPENAT2 and _syscall() is not None


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _walk(dir_fd: int, parts: Sequence[str], flags: int, mode: int) -> int:
    """Open `parts` beneath `dir_fd` one component at a time, never following a symlink."""
    fd = dir_fd
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            try:
                nxt = os.open(name, (flags if last else DIR_FLAGS) | os.O_NOFOLLOW, mode,
                              dir_fd=fd)
            except OSError as exc:
                # O_PATH | O_NOFOLLOW on a link to a directory says ENOTDIR, not ELOOP.
                if exc.errno == errno.ENOTDIR and _is_link(fd, name):
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from exc
                raise
            if fd != dir_fd:
                os.close(fd)
            fd = nxt
    except BaseException:
        if fd != dir_fd:
            os.close(fd)
        raise
    return fd if parts else os.open(".", flags, mode, dir_fd=dir_fd)


def open_at(dir_fd: int, parts: Sequence[str], flags: int, *, mode: int = 0o666,
            shown: object) -> int:
    """Open `parts` beneath the directory `dir_fd`, following no symlink.

    A symlink met on the way is a concurrent change of a resolved path: FsDenied naming
    `shown`. Every other failure is the OSError the system call gave.
    """
    if any(p in ("", ".", "..") or "/" in p for p in parts):
        raise ValueError(f"not a resolved relative path: {parts!r}")
    found = _syscall() if USE_OPENAT2 else None
    try:
        if found is None:
            return _walk(dir_fd, parts, flags | os.O_CLOEXEC, mode)
        nr, func = found
        for _ in range(8):  # EAGAIN: a rename elsewhere raced the lookup; the kernel asks to retry
            try:
                return _openat2(func, nr, dir_fd, "/".join(parts) or ".",
                                flags | os.O_CLOEXEC, mode)
            except BlockingIOError:
                continue
        raise OSError(errno.EAGAIN, "lookup kept racing with renames", str(shown))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EXDEV):
            raise raced(shown) from exc
        raise


def open_root(root: Path) -> int:
    """A descriptor of an allowed root (resolved by the caller; trusted, so followed)."""
    return os.open(root, DIR_FLAGS)


def open_beneath(where: Beneath, flags: int, *, mode: int = 0o666) -> int:
    """Open `where` beneath its root (see `open_at`)."""
    root_fd = open_root(where.root)
    try:
        return open_at(root_fd, where.parts, flags, mode=mode, shown=where.path)
    finally:
        os.close(root_fd)


def read_upto(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`, until end of file."""
    chunks = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class NotRegular(Exception):
    """`read_regular` opened something other than a regular file; `mode` is its `st_mode`."""

    def __init__(self, mode: int) -> None:
        super().__init__(mode)
        self.mode = mode


def _read_whole(fd: int, limit: int) -> bytes:
    """At most `limit` bytes from `fd`: one read for a whole regular file, no joined copy."""
    data = os.read(fd, limit)
    if not data or len(data) == limit:
        return data
    rest = read_upto(fd, limit - len(data))  # a short read: the file grew meanwhile
    return data + rest if rest else data


def read_regular(where: Beneath, cap: int, shown: str) -> tuple[bytes, os.stat_result]:
    """The first `cap + 1` bytes of the regular file `where` (more than `cap` means it is over
    the cap) and its status at the open, read without blocking on a FIFO or a device.

    The file is opened beneath its root, so a directory swapped for a symlink since the path
    was checked is refused (FsDenied), never followed. The caller words the rest: the open's
    FileNotFoundError and NotRegular pass through; any other OSError is ToolFailed
    `cannot read <shown>: <reason>`.
    """
    try:
        fd = open_beneath(where, READ_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ToolFailed(f"cannot read {shown}: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(st.st_mode)
        return _read_whole(fd, cap + 1), st
    except OSError as exc:
        raise ToolFailed(f"cannot read {shown}: {exc.strerror}") from exc
    finally:
        os.close(fd)
