"""All-or-nothing writes of several files: stage each to a temporary file, then rename them all.

Each file is replaced by `rename(2)`, so a reader (or a crash) sees it wholly old or wholly new.
Across files, a failure before the first rename leaves nothing changed; a failure midway puts
back the files already renamed from the originals kept in memory. Only a crash (SIGKILL, power
loss) between two renames can leave some files new and others old — never a torn file — and
may leave `.<name>.<random>.symdiff-tmp` files behind.

Every operation goes through the descriptor of the target's parent directory, opened beneath
the target's root by fsgate (and created there, one `mkdir` at a time, when missing): the
directory written is the one that was opened, whatever its path points to by then.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.errors import EditError, FsDenied, ToolFailed
from symdiff.record.walk import TEMP_SUFFIX as TMP_SUFFIX
from symdiff.workspace import gate as fsgate
from symdiff.workspace.gate import Beneath

_NAME_ROOM = 180  # keeps `.<name>.<hex>.symdiff-tmp` under the usual 255-byte name limit


@dataclass(frozen=True, slots=True)
class Write:
    """One file to write: where (resolved, beneath its root), the bytes expected there now (None:
    the file must not exist), the new bytes, and the permission bits to keep (None: a new file,
    umask rules)."""

    where: Beneath
    old: bytes | None
    new: bytes
    mode: int | None

    @property
    def path(self) -> Path:
        """The absolute path, for messages."""
        return self.where.path

    @property
    def name(self) -> str:
        """The file's name in its directory."""
        return self.where.parts[-1]


class _Dirs:
    """The parent directories of a batch of writes, each opened once beneath its root."""

    def __init__(self) -> None:
        self._fds: dict[Path, int] = {}
        self.created: list[tuple[int, str]] = []  # (parent descriptor, name), in creation order

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def open(self, root: Path, parts: tuple[str, ...], *, create: bool) -> int:
        """The directory `root / parts`, made (one level at a time) when `create` says so."""
        key = root.joinpath(*parts)
        fd = self._fds.get(key)
        if fd is not None:
            return fd
        try:
            if not parts:
                fd = fsgate.open_root(root)
            else:
                parent = self.open(root, parts[:-1], create=create)
                try:
                    fd = fsgate.open_at(parent, parts[-1:], fsgate.DIR_FLAGS, shown=key)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(parts[-1], 0o777, dir_fd=parent)
                    self.created.append((parent, parts[-1]))
                    fd = fsgate.open_at(parent, parts[-1:], fsgate.DIR_FLAGS, shown=key)
        except OSError as exc:
            raise _named(exc, key) from exc
        self._fds[key] = fd
        return fd

    def of(self, w: Write) -> int:
        """The descriptor of `w`'s parent directory (opened by `make_parents`)."""
        return self.open(w.where.root, w.where.parts[:-1], create=False)

    def all(self) -> Iterator[int]:
        return iter(self._fds.values())


@contextlib.contextmanager
def _directories() -> Iterator[_Dirs]:
    dirs = _Dirs()
    try:
        yield dirs
    finally:
        dirs.close()


def _tmp_name(name: str) -> str:
    return f".{name[:_NAME_ROOM]}.{secrets.token_hex(4)}{TMP_SUFFIX}"


def stage(dir_fd: int, name: str, data: bytes, mode: int | None) -> str:
    """Write `data` to a new temporary file beside `name` in `dir_fd`, fsync it, return its
    name."""
    while True:
        tmp = _tmp_name(name)
        try:
            # 0o666 lets the umask decide a new file's mode, as an editor's save would.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o666, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    try:
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    return tmp


def _install(dir_fd: int, w: Write, tmp: str) -> None:
    """Move a staged file into place; a create never clobbers a file that appeared since."""
    try:
        if w.old is not None:
            os.replace(tmp, w.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        try:
            # Fails with EEXIST: creating is atomic and exclusive.
            os.link(tmp, w.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
                raise
            if _exists(dir_fd, w.name):  # no hard links here: check, then rename
                raise FileExistsError(errno.EEXIST, "File exists", w.name) from exc
            os.replace(tmp, w.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return
        os.unlink(tmp, dir_fd=dir_fd)
    except OSError as exc:
        raise _named(exc, w.path) from exc


def _named(exc: OSError, path: Path) -> OSError:
    """`exc` naming the absolute `path` (an operation relative to a descriptor names only the
    last component)."""
    return OSError(exc.errno, exc.strerror, str(path))


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def current(dir_fd: int, name: str, shown: object, *, limit: int) -> bytes | None:
    """Up to `limit` bytes of the regular file `name` in `dir_fd`; None when absent; a marker
    that never equals text (it holds a NUL) for anything else, a symlink included."""
    try:
        fd = fsgate.open_at(dir_fd, (name,), fsgate.READ_FLAGS, shown=shown)
    except FileNotFoundError:
        return None
    except FsDenied:  # a symlink now stands there
        return b"\0<a symlink>"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b"\0<not a regular file>"
        return fsgate.read_upto(fd, limit)
    finally:
        os.close(fd)


def _verify(dirs: _Dirs, writes: Iterable[Write]) -> None:
    """Refuse when a file to modify changed since it was read (a concurrent editor)."""
    for w in writes:
        if w.old is None:
            continue
        # One byte more than expected is enough to tell a file that grew.
        if current(dirs.of(w), w.name, w.path, limit=len(w.old) + 1) != w.old:
            raise EditError(f"{w.path} changed while the edit was being prepared; nothing written")


def _remove_dirs(created: Iterable[tuple[int, str]]) -> None:
    """Remove the directories made for the writes, deepest first."""
    for parent, name in reversed(list(created)):
        with contextlib.suppress(OSError):
            os.rmdir(name, dir_fd=parent)


def _fsync_dirs(dirs: _Dirs) -> None:
    """Make the renames durable: fsync each directory that got a new entry."""
    for dir_fd in dirs.all():
        with contextlib.suppress(OSError):
            fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _rollback(dirs: _Dirs, done: Sequence[Write]) -> list[str]:
    """Put back what the renamed writes replaced; return the paths that could not be restored."""
    failed = []
    for w in reversed(done):
        d = dirs.of(w)
        try:
            if w.old is None:
                os.unlink(w.name, dir_fd=d)
            else:
                os.replace(stage(d, w.name, w.old, w.mode), w.name, src_dir_fd=d, dst_dir_fd=d)
        except OSError:
            failed.append(str(w.path))
    return failed


def commit(writes: Sequence[Write]) -> None:
    """Write every file or none (see the module docstring); ToolFailed when the OS refuses,
    FsDenied when a directory on a path was swapped for a symlink meanwhile."""
    paths = [w.path for w in writes]
    if len(set(paths)) != len(paths):
        raise EditError("the same file would be written twice in one edit")
    with _directories() as dirs:
        staged: list[tuple[Write, str]] = []
        done: list[Write] = []
        try:
            for w in writes:
                d = dirs.open(w.where.root, w.where.parts[:-1], create=True)
                try:
                    staged.append((w, stage(d, w.name, w.new, w.mode)))
                except OSError as exc:
                    raise _named(exc, w.path) from exc
            _verify(dirs, writes)
            for w, tmp in staged:
                _install(dirs.of(w), w, tmp)
                done.append(w)
        except BaseException as exc:
            failed = _rollback(dirs, done)
            for w, tmp in staged:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dirs.of(w))
            _remove_dirs(dirs.created)
            if failed:
                raise ToolFailed(
                    f"writing failed ({exc}) and these files could not be restored: "
                    + ", ".join(failed)
                ) from exc
            if isinstance(exc, OSError):
                raise ToolFailed(f"writing failed, nothing changed: {exc}") from exc
            raise
        _fsync_dirs(dirs)
