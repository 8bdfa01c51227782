"""ACP v2 Diff objects: schema-valid, and their git patches apply with the real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import git

from symdiff.diffs.acp import PATCH_CAP, FilePatch, build_diff
from symdiff.diffs.linediff import EXECUTABLE_MODE, SYMLINK_MODE
from symdiff.errors import InvalidArgs

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures/acp/v2_schema.toolcallcontent.json").read_text()
)
BLOB = bytes(range(256)) * 16


def _valid(diff: dict[str, object]) -> dict[str, Any]:
    jsonschema.validate(diff, SCHEMA)
    return diff


def _repo(tmp: Path, files: dict[str, bytes]) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    return repo


def _apply(cwd: Path, text: str) -> None:
    patch = cwd.parent / "acp.patch"
    patch.write_text(text, encoding="utf-8")
    for extra in (["--check"], []):
        res = subprocess.run(
            ["git", "apply", *extra, "--unsafe-paths", "-p0", str(patch)],
            cwd=cwd,
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr + text


def test_every_operation_validates_and_applies(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "src/app.py": b"def f():\n    return 1\n",
            "gone.md": b"# bye\n",
            "old.json": b"{}\n",
            "tmpl.txt": b"template\n",
            "logo.png": b"\x89PNG\0old",
            "run.sh": b"echo hi\n",
        },
    )
    files = [
        FilePatch(
            "modify",
            "src/app.py",
            old_bytes=b"def f():\n    return 1\n",
            new_bytes=b"def f():\n    return 2",
        ),
        FilePatch("delete", "gone.md", old_bytes=b"# bye\n"),
        FilePatch("add", "new dir/ünï code.txt", new_bytes="héllo\r\n".encode()),
        FilePatch("move", "new.json", old_path="old.json", old_bytes=b"{}\n", new_bytes=b"{}\n"),
        FilePatch(
            "copy",
            "copy.txt",
            old_path="tmpl.txt",
            old_bytes=b"template\n",
            new_bytes=b"template!\n",
        ),
        FilePatch("modify", "logo.png", old_bytes=b"\x89PNG\0old", new_bytes=BLOB),
        FilePatch(
            "modify",
            "run.sh",
            old_bytes=b"echo hi\n",
            new_bytes=b"echo hi\n",
            old_mode=0o100644,
            mode=EXECUTABLE_MODE,
        ),
        FilePatch("add", "empty.txt", new_bytes=b""),
    ]
    diff = _valid(build_diff(files, root=str(repo)))
    assert diff["type"] == "diff"
    ops = [(c["operation"], c["path"], c.get("oldPath")) for c in diff["changes"]]
    assert ops[3] == ("move", f"{repo}/new.json", f"{repo}/old.json")
    assert all(Path(c["path"]).is_absolute() for c in diff["changes"])
    assert diff["changes"][0]["mimeType"] == "text/x-python"
    assert diff["changes"][5]["fileType"] == "binary"
    assert diff["changes"][5]["mimeType"] == "image/png"
    text = diff["patch"]["text"]
    assert f"diff --git {repo}/src/app.py {repo}/src/app.py\n" in text
    assert "new file mode 100644\n" in text and "deleted file mode 100644\n" in text
    assert f"rename from {repo}/old.json\n" in text and "GIT binary patch\n" in text
    _apply(repo, text)
    assert (repo / "src/app.py").read_bytes() == b"def f():\n    return 2"
    assert not (repo / "gone.md").exists() and not (repo / "old.json").exists()
    assert (repo / "new dir/ünï code.txt").read_bytes() == "héllo\r\n".encode()
    assert (repo / "copy.txt").read_bytes() == b"template!\n"
    assert (repo / "logo.png").read_bytes() == BLOB
    assert (repo / "run.sh").stat().st_mode & 0o111
    assert (repo / "empty.txt").read_bytes() == b""


def test_patch_applies_from_any_directory(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"a.txt": b"1\n2\n"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fp = FilePatch("modify", "a.txt", old_bytes=b"1\n2\n", new_bytes=b"1\n3\n")
    _apply(elsewhere, _valid(build_diff([fp], root=str(repo)))["patch"]["text"])
    assert (repo / "a.txt").read_bytes() == b"1\n3\n"


def test_unknown_content_is_listed_but_not_patched() -> None:
    diff = _valid(build_diff([FilePatch("modify", "big.bin")], root="/w"))
    assert diff["changes"] == [
        {"operation": "modify", "path": "/w/big.bin", "mimeType": "application/octet-stream"}
    ]
    assert "patch" not in diff


def test_oversized_patch_is_omitted_not_cut() -> None:
    big = b"".join(b"line %d\n" % i for i in range(300_000))
    diff = _valid(build_diff([FilePatch("add", "big.txt", new_bytes=big)], root="/w"))
    assert len(big) > PATCH_CAP and "patch" not in diff
    small = _valid(build_diff([FilePatch("add", "s.txt", new_bytes=b"x\n")], root="/w"))
    assert small["patch"]["text"].endswith("+x\n")


def test_symlink_and_absolute_paths() -> None:
    fp = FilePatch("add", "/abs/link", new_bytes=b"target", mode=SYMLINK_MODE)
    diff = _valid(build_diff([fp], root="/w"))
    assert diff["changes"][0]["path"] == "/abs/link"
    assert diff["changes"][0]["fileType"] == "symlink"
    assert "new file mode 120000\n" in diff["patch"]["text"]


def test_identical_modify_has_no_patch() -> None:
    diff = _valid(build_diff([FilePatch("modify", "a", old_bytes=b"x", new_bytes=b"x")], root="/"))
    assert "patch" not in diff and diff["changes"][0]["path"] == "/a"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"operation": "rename", "path": "a"},
        {"operation": "move", "path": "a"},
        {"operation": "modify", "path": "a", "old_path": "b"},
        {"operation": "add", "path": "a", "old_bytes": b"x"},
        {"operation": "delete", "path": "a", "new_bytes": b"x"},
    ],
)
def test_file_patch_rejects_inconsistent_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgs):
        FilePatch(**kwargs)


def test_root_must_be_absolute() -> None:
    with pytest.raises(InvalidArgs):
        build_diff([], root="relative")
    assert _valid(build_diff([], root="/")) == {"type": "diff", "changes": []}


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "diff"},
        {"type": "diff", "changes": [], "patch": {"format": "git_patch"}},
        {"type": "diff", "changes": [{"operation": "move", "path": "/a"}]},
    ],
)
def test_schema_fixture_has_teeth(bad: dict[str, object]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
