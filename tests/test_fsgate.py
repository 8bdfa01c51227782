"""The path gate: opening beneath a root without following symlinks, and the race it closes.

The race tests run a real attacker process that swaps a directory inside the root with a
symlink to a directory outside it (`renameat2(RENAME_EXCHANGE)`, in a tight loop) while
`text_diff` and `apply_edits` run hundreds of times: no outside content may ever come back and
no outside file may ever be written or created. Each runs with openat2 and with the fallback
walk (forced through the module flag).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import wait_until

from symdiff.diffs.textdiff import text_diff
from symdiff.edits import apply_edits
from symdiff.errors import FsDenied, ToolFailed
from symdiff.workspace import gate as fsgate
from symdiff.workspace.gate import Beneath

MODES = ["openat2", "walk"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once with openat2 (where the kernel has it) and once with the walk."""
    if request.param == "openat2" and not fsgate.openat2_available():
        pytest.skip("this kernel has no openat2")
    if request.param == "walk":
        monkeypatch.setattr(fsgate, "USE_OPENAT2", False)
        assert not fsgate.openat2_available()
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/a/b/f.txt, root/file.txt, root/up -> root/a (inside), root/out -> ../outside."""
    root = (tmp_path / "root").resolve()
    (root / "a/b").mkdir(parents=True)
    (root / "a/b/f.txt").write_text("f\n")
    (root / "file.txt").write_text("file\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/secret.txt").write_text("SECRET\n")
    (root / "up").symlink_to(root / "a")
    (root / "out").symlink_to(tmp_path / "outside")
    return root


def _read(root: Path, *parts: str) -> bytes:
    fd = fsgate.open_beneath(Beneath(root, parts), fsgate.READ_FLAGS)
    try:
        return fsgate.read_upto(fd, 1 << 20)
    finally:
        os.close(fd)


def test_opens_beneath_the_root_and_refuses_every_symlink(tree: Path, mode: str) -> None:
    assert _read(tree, "a", "b", "f.txt") == b"f\n"
    for parts in (("up", "b", "f.txt"), ("out", "secret.txt"), ("out",)):
        with pytest.raises(FsDenied, match="a symlink appeared"):
            _read(tree, *parts)
    with pytest.raises(FileNotFoundError):
        _read(tree, "a", "missing.txt")
    with pytest.raises(NotADirectoryError):
        _read(tree, "file.txt", "x")
    with pytest.raises(ValueError, match="not a resolved relative path"):
        _read(tree, "a", "..", "..", "outside")


def test_locate_picks_the_deepest_root(tree: Path) -> None:
    inner = tree / "a"
    where = fsgate.locate(tree / "a/b/f.txt", [tree, inner])
    assert where == Beneath(inner, ("b", "f.txt"))
    assert fsgate.locate(tree.parent / "outside/secret.txt", [tree, inner]) is None
    assert fsgate.locate(tree, [tree]) == Beneath(tree, ())


@pytest.mark.parametrize(("path", "part"), [
    (".git/config", ".git"), ("sub/.git", ".git"), ("x/.GIT/hooks/pre-commit", ".GIT"),
    (".hg/hgrc", ".hg"), (".svn/entries", ".svn"), (".symdiff/index.db", ".symdiff"),
    (".gitignore", None), (".github/workflows/ci.yml", None), ("src/git.py", None),
])
def test_protected_directories(tmp_path: Path, path: str, part: str | None) -> None:
    assert fsgate.protected_part(Beneath(tmp_path, tuple(path.split("/")))) == part


# -- the race --------------------------------------------------------------------------------

ATTACKER = r"""
import ctypes, os, sys
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]  # SYS_renameat2
syscall = ctypes.CDLL(None, use_errno=True).syscall
args = (ctypes.c_long(nr), ctypes.c_int(-100), ctypes.c_char_p(os.fsencode(sys.argv[1])),
        ctypes.c_int(-100), ctypes.c_char_p(os.fsencode(sys.argv[2])), ctypes.c_uint(2))
print("ready", flush=True)
while True:
    if syscall(*args) != 0:  # RENAME_EXCHANGE of the directory and the symlink
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    """root/d (a directory) and root/l (a symlink to `outside`), swapped by a live attacker.

    Yields (root, outside, a descriptor of the real directory, which follows it wherever the
    swaps put its name).
    """
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("the attacker knows renameat2's number on x86_64 and aarch64 only")
    root = (tmp_path / "root").resolve()
    (root / "d").mkdir(parents=True)
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    (root / "d/f.txt").write_text("a\n")
    (outside / "f.txt").write_text("a\n")  # the same text: a misdirected edit would fit it
    (outside / "secret.txt").write_text("SECRET\n")
    (root / "d/secret.txt").write_text("inside\n")
    (root / "same.txt").write_text("inside\n")
    (root / "l").symlink_to(outside)
    real_dir = os.open(root / "d", os.O_RDONLY | os.O_DIRECTORY)
    proc = subprocess.Popen([sys.executable, "-c", ATTACKER, str(root / "d"), str(root / "l")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        # Swapping: `d` has been seen as the symlink (it is one half the time).
        wait_until(lambda: (root / "d").is_symlink(), timeout=10, interval=0.001,
                   message="the attacker's first swap")
        yield root, outside, real_dir
        assert proc.poll() is None, "the attacker stopped swapping"
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        os.close(real_dir)


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt", "secret.txt"]
    assert (outside / "f.txt").read_text() == "a\n"
    assert (outside / "secret.txt").read_text() == "SECRET\n"


def test_text_diff_never_reads_outside_while_a_directory_is_swapped(
    arena: tuple[Path, Path, int], mode: str
) -> None:
    root, outside, _ = arena
    outcomes = {"read": 0, "refused": 0}
    for _ in range(600):
        try:
            out = text_diff(path_a=str(root / "d/secret.txt"), path_b=str(root / "same.txt"),
                            allowed_roots=[root])
        except (FsDenied, ToolFailed) as err:
            assert err.render().startswith(("fs_denied: ", "tool_failed: ")), err.render()
            outcomes["refused"] += 1
            continue
        assert "SECRET" not in str(out["diff"]) and out["identical"] is True, out["diff"]
        outcomes["read"] += 1
    print(mode, outcomes)
    assert outcomes["refused"] > 0, "the attacker never got in the way: the test proves nothing"
    assert outcomes["read"] > 0
    _outside_untouched(outside)


def test_apply_edits_never_writes_outside_while_a_directory_is_swapped(
    arena: tuple[Path, Path, int], mode: str
) -> None:
    root, outside, real_dir = arena
    outcomes = {"applied": 0, "refused": 0}
    for i in range(300):
        fd = os.open("f.txt", os.O_RDONLY, dir_fd=real_dir)
        now = os.read(fd, 100).decode()
        os.close(fd)
        then = "b\n" if now == "a\n" else "a\n"
        edits = [{"file": "d/f.txt", "blocks": [{"search": now, "replace": then}]}]
        if i % 2:  # every path is one more chance to be refused: half the runs take one
            edits += [
                {"file": f"d/new{i}.txt", "blocks": [{"search": "", "replace": "new\n"}]},
                {"file": f"d/sub{i}/deep/n.txt", "blocks": [{"search": "", "replace": "n\n"}]},
            ]
        try:
            result = apply_edits(edits, root=root, dry_run=False, backup=i % 4 == 0)
        except (FsDenied, ToolFailed) as err:
            assert err.render().startswith(("fs_denied: ", "tool_failed: ", "edit_failed: ")), (
                err.render())
            outcomes["refused"] += 1
            continue
        assert result["applied"]
        fd = os.open("f.txt", os.O_RDONLY, dir_fd=real_dir)
        assert os.read(fd, 100).decode() == then  # written in the real directory
        os.close(fd)
        if i % 2:
            assert os.stat(f"sub{i}/deep/n.txt", dir_fd=real_dir).st_size == 2
        outcomes["applied"] += 1
    print(mode, outcomes)
    assert outcomes["refused"] > 0, "the attacker never got in the way: the test proves nothing"
    assert outcomes["applied"] > 0
    _outside_untouched(outside)
    leftovers = [n for n in os.listdir(real_dir) if n.endswith(".symdiff-tmp")]
    assert leftovers == []
