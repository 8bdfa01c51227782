"""The text_diff tool: the acceptance criteria of docs/seeds/000-text-diff-tool.txt and the
decisions of docs/spec.md and docs/textdiff.md."""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import symdiff_cli

from symdiff.diffs.textdiff import OUTPUT_CAP, READ_CAP, text_diff
from symdiff.errors import FsDenied, InvalidArgs, ToolFailed

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures/acp/v2_schema.toolcallcontent.json").read_text()
)
FIELDS = {"diff", "label_a", "label_b", "lines_a", "lines_b", "identical", "diff_lines"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    return allowed


def _write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _paths(root: Path, a: bytes | str, b: bytes | str, **kw: Any) -> dict[str, object]:
    pa, pb = _write(root / "a.txt", a), _write(root / "b.txt", b)
    return text_diff(path_a=str(pa), path_b=str(pb), allowed_roots=[root], **kw)


def test_path_mode_identical_files(root: Path) -> None:
    out = _paths(root, "same\n", "same\n")
    assert out["identical"] is True and out["diff"] == "" and out["diff_lines"] == 0
    assert out["truncated"] is False


def test_path_mode_different_files_show_old_and_new_lines(root: Path) -> None:
    out = _paths(root, "keep\nold line\n", "keep\nnew line\n")
    assert out["identical"] is False
    diff = str(out["diff"])
    assert "-old line\n" in diff and "+new line\n" in diff
    assert out["label_a"] == str(root / "a.txt") and out["label_b"] == str(root / "b.txt")
    assert diff.startswith(f"--- {root / 'a.txt'}\n+++ {root / 'b.txt'}\n")
    assert out["lines_a"] == 2 and out["lines_b"] == 2
    assert out["diff_lines"] == diff.count("\n") == 6


def test_text_mode_has_the_same_shape_and_touches_no_file() -> None:
    out = text_diff(text_a="hello\nworld\n", text_b="hello\nthere\n", allowed_roots=[])
    assert set(out) == FIELDS | {"truncated"}
    assert out["label_a"] == "a" and out["label_b"] == "b"
    assert out["diff"] == "--- a\n+++ b\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"
    same = text_diff(text_a="x", text_b="x", label_a="before", label_b="after")
    assert same["identical"] is True and same["diff"] == ""
    assert same["label_a"] == "before" and same["label_b"] == "after"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"path_a": "/x", "path_b": "/y", "text_a": "a", "text_b": "b"},
        {"path_a": "/x", "text_b": "b"},
        {"path_a": "/x"},
        {"text_b": "b"},
        {},
        {"text_a": 1, "text_b": "b"},
        {"text_a": "a", "text_b": "b", "label_a": "two\nlines"},
        {"path_a": "relative.txt", "path_b": "/y"},
    ],
)
def test_invalid_mode_combinations(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgs) as info:
        text_diff(allowed_roots=[Path("/")], **kwargs)
    assert info.value.code == "invalid_args"


@pytest.mark.parametrize("context", [-1, 21, 100, True, 2.5, "3", None])
def test_context_lines_outside_range_is_invalid(context: object) -> None:
    with pytest.raises(InvalidArgs):
        text_diff(text_a="a", text_b="b", context_lines=context)  # type: ignore[arg-type]


@pytest.mark.parametrize("context", [0, 1, 20])
def test_context_lines_is_passed_through(context: int) -> None:
    old = "".join(f"{i}\n" for i in range(60))
    new = old.replace("30\n", "thirty\n")
    diff = str(text_diff(text_a=old, text_b=new, context_lines=context)["diff"])
    assert diff.count("\n ") == min(2 * context, 59)


def test_path_outside_allowed_roots_is_denied(root: Path, tmp_path: Path) -> None:
    outside = _write(tmp_path / "secret.txt", "s\n")
    inside = _write(root / "in.txt", "i\n")
    with pytest.raises(FsDenied) as info:
        text_diff(path_a=str(inside), path_b=str(outside), allowed_roots=[root])
    assert info.value.code == "fs_denied"
    with pytest.raises(FsDenied):
        text_diff(path_a=str(inside), path_b=str(inside), allowed_roots=[])
    dotdot = f"{root}/../secret.txt"
    with pytest.raises(FsDenied):
        text_diff(path_a=str(inside), path_b=dotdot, allowed_roots=[root])
    link = root / "link.txt"
    link.symlink_to(outside)
    with pytest.raises(FsDenied):
        text_diff(path_a=str(inside), path_b=str(link), allowed_roots=[root])


def test_symlink_inside_roots_is_followed(root: Path) -> None:
    target = _write(root / "t.txt", "t\n")
    (root / "l.txt").symlink_to(target)
    out = text_diff(path_a=str(target), path_b=str(root / "l.txt"), allowed_roots=[root])
    assert out["identical"] is True


def test_directory_missing_and_oversized_fail(root: Path) -> None:
    ok = _write(root / "ok.txt", "ok\n")
    (root / "dir").mkdir()
    big = _write(root / "big.txt", b"x" * (READ_CAP + 1))
    _write(root / "cap.txt", b"y\n" * (READ_CAP // 2))
    for bad in (root / "dir", root / "missing.txt", big):
        with pytest.raises(ToolFailed) as info:
            text_diff(path_a=str(ok), path_b=str(bad), allowed_roots=[root])
        assert info.value.code == "tool_failed"
    at_cap = text_diff(path_a=str(ok), path_b=str(root / "cap.txt"), allowed_roots=[root])
    assert at_cap["lines_b"] == READ_CAP // 2


def test_path_a_fails_first_though_path_b_is_read_beside_it(root: Path) -> None:
    ok = _write(root / "ok.txt", "ok\n")
    missing_a, missing_b = root / "missing-a.txt", root / "missing-b.txt"
    cases = ((missing_a, missing_b, f"{missing_a}: no such file"), (root, missing_b, "directory"))
    for a, b, message in (*cases, (ok, missing_b, f"{missing_b}: no such file")):
        with pytest.raises(ToolFailed) as info:
            text_diff(path_a=str(a), path_b=str(b), allowed_roots=[root])
        assert message in str(info.value)


def test_calls_from_several_threads_at_once_answer_as_one_at_a_time(root: Path) -> None:
    """Large pairs share the threads that read and hash them (textdiff, blobid)."""
    pairs = []
    for i in range(6):
        old = b"".join(b"line %d of pair %d\n" % (n, i) for n in range(5000))
        new = old.replace(b"line 4%d" % i, b"LINE 4%d" % i)
        a, b = _write(root / f"{i}a.txt", old), _write(root / f"{i}b.txt", new)
        pairs.append({"path_a": str(a), "path_b": str(b), "allowed_roots": [root]})
    alone = [text_diff(**kw) for kw in pairs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda kw: text_diff(**kw), pairs * 4))
    assert together == alone * 4


def test_fifo_fails_without_blocking(root: Path) -> None:
    ok = _write(root / "ok.txt", "ok\n")
    os.mkfifo(root / "fifo")
    with pytest.raises(ToolFailed):
        text_diff(path_a=str(ok), path_b=str(root / "fifo"), allowed_roots=[root])


def test_huge_diff_is_truncated_with_marker() -> None:
    old = "".join(f"old line {i}\n" for i in range(200_000))
    new = "".join(f"new line {i}\n" for i in range(200_000))
    out = text_diff(text_a=old, text_b=new)
    diff = str(out["diff"])
    assert out["truncated"] is True
    assert len(diff.encode()) <= OUTPUT_CAP
    last = diff.rstrip("\n").rsplit("\n", 1)[1]
    kept = int(last.removeprefix("[diff truncated at ").removesuffix(" bytes]"))
    assert diff.encode()[:kept].endswith(b"\n") and len(diff.encode()) > kept
    assert out["diff_lines"] == diff.count("\n")


def test_one_giant_line_is_cut_on_a_character_boundary() -> None:
    out = text_diff(text_a="", text_b="é" * (OUTPUT_CAP // 2 + 10))
    diff = str(out["diff"])
    assert out["truncated"] is True and diff.endswith(" bytes]\n")
    assert len(diff.encode()) <= OUTPUT_CAP


def test_small_diff_is_not_truncated() -> None:
    assert text_diff(text_a="a\n", text_b="b\n")["truncated"] is False


def test_binary_files_are_compared_by_bytes(root: Path) -> None:
    out = _paths(root, b"\x00\x01", b"\x00\x02")
    assert out["identical"] is False
    assert out["diff"] == f"Binary files {root / 'a.txt'} and {root / 'b.txt'} differ\n"
    assert out["lines_a"] == 0
    assert _paths(root, b"\xff\xfe", b"\xff\xfe")["identical"] is True
    latin1 = text_diff(text_a="caf\udce9", text_b="cafe")
    assert str(latin1["diff"]).startswith("Binary files a and b differ")


def test_diff_round_trips_with_gnu_patch(root: Path, tmp_path: Path) -> None:
    old, new = b"a\r\nb\rc\nno newline", "a\r\nB\rc\nünïcode\n".encode()
    out = _paths(root, old, new, context_lines=1)
    (tmp_path / "change.patch").write_text(str(out["diff"]), encoding="utf-8")
    subprocess.run(
        ["patch", "--quiet", str(root / "a.txt"), "-i", str(tmp_path / "change.patch")],
        check=True,
    )
    assert (root / "a.txt").read_bytes() == new


def test_path_mode_returns_a_valid_acp_diff(root: Path) -> None:
    out = _paths(root, "x = 1\n", "x = 2\n")
    acp: Any = out["acp"]
    jsonschema.validate(acp, SCHEMA)
    assert acp["changes"] == [
        {
            "operation": "modify",
            "path": str((root / "a.txt").resolve()),
            "fileType": "text",
            "mimeType": "text/plain",
        }
    ]
    assert "-x = 1\n+x = 2\n" in acp["patch"]["text"]
    assert acp["patch"]["format"] == "git_patch"
    assert "acp" not in text_diff(text_a="a", text_b="b")


def test_cli_textdiff(root: Path) -> None:
    a, b = _write(root / "a.txt", "1\n"), _write(root / "b.txt", "2\n")
    res = symdiff_cli("textdiff", str(a), str(b))
    assert res.returncode == 0 and "-1\n+2\n" in res.stdout
    res = symdiff_cli("textdiff", str(a), str(b), "--json", "--context", "0")
    assert res.returncode == 0 and json.loads(res.stdout)["diff_lines"] == 5
    res = symdiff_cli("textdiff", str(a), str(b), "--context", "21")
    assert res.returncode == 2 and "invalid_args" in res.stderr and res.stdout == ""
    res = symdiff_cli("textdiff", str(a), str(root))
    assert res.returncode == 1 and "tool_failed" in res.stderr and res.stdout == ""


def test_a_nul_byte_in_a_path_is_invalid_args(tmp_path: Path) -> None:
    from symdiff.errors import InvalidArgs

    (tmp_path / "b.txt").write_text("b\n")
    with pytest.raises(InvalidArgs, match="contains a NUL byte"):
        text_diff(path_a=f"{tmp_path}/a\0.txt", path_b=str(tmp_path / "b.txt"),
                  allowed_roots=[tmp_path])  # fmt: skip
