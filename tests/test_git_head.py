"""Which blobs HEAD holds at a work tree's paths (git/head.py): what the daemon's records keep
the symbols of (docs/storage.md, "Symbols by content")."""

from __future__ import annotations

from pathlib import Path

from conftest import git

from symdiff.diffs.blobid import blob_id
from symdiff.git.head import blobs_at_head


def test_heads_blobs_at_paths_of_a_folder_inside_the_work_tree(repo: Path) -> None:
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_bytes(b"one\n")
    (repo / "pkg" / "sub" / "b.py").write_bytes(b"two\n")
    (repo / "top.py").write_bytes(b"three\n")
    assert blobs_at_head(repo, ["top.py"]) == {}  # no commit yet
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "pkg" / "a.py").write_bytes(b"edited\n")  # the work tree's version is not HEAD's
    asked = ["a.py", "sub/b.py", "sub", "missing.py", "../top.py"]
    assert blobs_at_head(repo / "pkg", asked) == {"a.py": blob_id(b"one\n"),
                                                  "sub/b.py": blob_id(b"two\n")}
    assert blobs_at_head(repo, ["top.py", "pkg/a.py"]) == {"top.py": blob_id(b"three\n"),
                                                           "pkg/a.py": blob_id(b"one\n")}


def test_no_repository_no_blobs(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"one\n")
    assert blobs_at_head(tmp_path, ["a.py"]) == {}
