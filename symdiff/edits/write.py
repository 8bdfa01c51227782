"""All-or-nothing writes of several files: stage each to a temporary file, then rename them all.

Each file is replaced by `rename(2)`, so a reader (or a crash) sees it wholly old or wholly new.
Across files, a failure before the first rename leaves nothing changed; a failure midway puts
back the files already renamed from the originals kept in memory. Only a crash (SIGKILL, power
loss) between two renames can leave some files new and others old — never a torn file — and
may leave `.<name>.<random>.symdiff-tmp` files behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.errors import EditError, ToolFailed
from symdiff.ignore import TEMP_SUFFIX as TMP_SUFFIX

_NAME_ROOM = 180  # keeps `.<name>.<hex>.symdiff-tmp` under the usual 255-byte name limit


@dataclass(frozen=True, slots=True)
class Write:
    """One file to write: its resolved path, the bytes expected there now (None: the file must
    not exist), the new bytes, and the permission bits to keep (None: a new file, umask rules)."""

    path: Path
    old: bytes | None
    new: bytes
    mode: int | None


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name[:_NAME_ROOM]}.{secrets.token_hex(4)}{TMP_SUFFIX}")


def stage(path: Path, data: bytes, mode: int | None) -> Path:
    """Write `data` to a new temporary file beside `path`, fsync it, and return its path."""
    while True:
        tmp = _tmp_name(path)
        try:
            # 0o666 lets the umask decide a new file's mode, as an editor's save would.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
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
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def _install(w: Write, tmp: Path) -> None:
    """Move a staged file into place; a create never clobbers a file that appeared since."""
    if w.old is not None:
        os.replace(tmp, w.path)
        return
    try:
        os.link(tmp, w.path)  # fails with EEXIST: creating is atomic and exclusive
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
            raise
        if os.path.lexists(w.path):  # no hard links here: check, then rename
            raise FileExistsError(errno.EEXIST, "File exists", str(w.path)) from exc
        os.replace(tmp, w.path)
        return
    tmp.unlink()


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _verify(writes: Iterable[Write]) -> None:
    """Refuse when a file to modify changed since it was read (a concurrent editor)."""
    for w in writes:
        if w.old is not None and _current(w.path) != w.old:
            raise EditError(f"{w.path} changed while the edit was being prepared; nothing written")


def _make_parents(writes: Iterable[Write]) -> list[Path]:
    """Create missing parent directories; return the ones created, deepest first."""
    created: list[Path] = []
    for w in writes:
        missing = []
        parent = w.path.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
    return list(reversed(created))


def _remove_dirs(dirs: Iterable[Path]) -> None:
    for d in dirs:
        with contextlib.suppress(OSError):
            d.rmdir()


def _fsync_dirs(paths: Iterable[Path]) -> None:
    """Make the renames durable: fsync each directory that got a new entry."""
    for d in {p.parent for p in paths}:
        with contextlib.suppress(OSError):
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _rollback(done: Sequence[Write]) -> list[str]:
    """Put back what the renamed writes replaced; return the paths that could not be restored."""
    failed = []
    for w in reversed(done):
        try:
            if w.old is None:
                w.path.unlink()
            else:
                os.replace(stage(w.path, w.old, w.mode), w.path)
        except OSError:
            failed.append(str(w.path))
    return failed


def commit(writes: Sequence[Write]) -> None:
    """Write every file or none (see the module docstring); ToolFailed when the OS refuses."""
    paths = [w.path for w in writes]
    if len(set(paths)) != len(paths):
        raise EditError("the same file would be written twice in one edit")
    created = _make_parents(writes)
    staged: list[tuple[Write, Path]] = []
    done: list[Write] = []
    try:
        for w in writes:
            staged.append((w, stage(w.path, w.new, w.mode)))
        _verify(writes)
        for w, tmp in staged:
            _install(w, tmp)
            done.append(w)
    except BaseException as exc:
        failed = _rollback(done)
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
        _remove_dirs(created)
        if failed:
            raise ToolFailed(
                f"writing failed ({exc}) and these files could not be restored: "
                + ", ".join(failed)
            ) from exc
        if isinstance(exc, OSError):
            raise ToolFailed(f"writing failed, nothing changed: {exc}") from exc
        raise
    _fsync_dirs(paths)
