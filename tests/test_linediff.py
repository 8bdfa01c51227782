"""The line diff engine against the real tools: GNU patch, git diff --numstat, git apply."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import git

from symdiff.diffs.linediff import (
    EXECUTABLE_MODE,
    blob_id,
    count_lines,
    diff_lines,
    git_patch,
    is_binary,
    line_counts,
    quote_path,
    unified_diff,
)

EDGE_PAIRS: dict[str, tuple[bytes, bytes]] = {
    "identical": (b"a\nb\n", b"a\nb\n"),
    "both empty": (b"", b""),
    "from empty": (b"", b"one\ntwo\n"),
    "to empty": (b"one\ntwo\n", b""),
    "empty to no newline": (b"", b"x"),
    "no newline to empty": (b"x", b""),
    "no final newline both": (b"a\nb", b"a\nc"),
    "newline added at end": (b"a\nb", b"a\nb\n"),
    "newline removed at end": (b"a\nb\n", b"a\nb"),
    "crlf": (b"a\r\nb\r\nc\r\n", b"a\r\nB\r\nc\r\n"),
    "crlf to lf": (b"a\r\nb\r\n", b"a\nb\n"),
    "lone cr": (b"a\rb\rc\n", b"a\rB\rc\n"),
    "cr at end": (b"a\nb\r", b"a\nc\r"),
    "unicode": ("héllo\nwörld\n日本語\n".encode(), "héllo\nwelt\n日本語\n😀\n".encode()),
    "very long line": (b"x" * 200_000 + b"\n", b"x" * 199_999 + b"y\n"),
    "blank lines": (b"a\n\n\nb\n", b"a\n\nb\n\n"),
    "patch-like content": (b"--- a\n+++ b\n@@ -1 +1 @@\n", b"--- a\n+++ c\n@@ -1 +1 @@\n\\ x\n"),
    "whitespace only": (b"  a\n\tb\n", b"\ta\n  b \n"),
}


def _gnu_patch(tmp: Path, old: bytes, diff: str) -> bytes:
    """Apply `diff` to `old` with GNU patch and return the result."""
    src, patch, out = tmp / "src", tmp / "change.patch", tmp / "out"
    src.write_bytes(old)
    patch.write_bytes(diff.encode("utf-8"))
    out.unlink(missing_ok=True)
    subprocess.run(
        ["patch", "--quiet", "--force", "-o", str(out), str(src), "-i", str(patch)],
        check=True,
        capture_output=True,
    )
    return out.read_bytes()


def _assert_round_trip(tmp: Path, old: bytes, new: bytes, context: int = 3) -> None:
    diff = unified_diff(old, new, label_a="old", label_b="new", context=context)
    if old == new:
        assert diff == ""
        return
    assert _gnu_patch(tmp, old, diff) == new


def _git_numstat(tmp: Path, old: bytes, new: bytes) -> tuple[int, int]:
    (tmp / "a").write_bytes(old)
    (tmp / "b").write_bytes(new)
    res = subprocess.run(
        ["git", "diff", "--no-index", "--numstat", "a", "b"],
        cwd=tmp,
        capture_output=True,
        text=True,
    )
    if not res.stdout:
        return 0, 0
    added, removed, _ = res.stdout.split("\t", 2)
    return int(added), int(removed)


def _mutate(rng: random.Random, lines: list[bytes]) -> list[bytes]:
    out = list(lines)
    for _ in range(rng.randint(1, 8)):
        pos = rng.randint(0, len(out))
        op = rng.random()
        if op < 0.4 and out:
            del out[min(pos, len(out) - 1)]
        elif op < 0.8:
            out.insert(pos, b"inserted %d\n" % rng.randint(0, 10**6))
        elif out:
            i = min(pos, len(out) - 1)
            out[i] = out[i].rstrip(b"\n") + b" changed\n"
    return out


def _site_files(limit: int) -> list[Path]:
    """Real source files from the installed standard library and site-packages."""
    roots = [Path(sysconfig.get_paths()["purelib"]), Path(sys.prefix)]
    found: list[Path] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if path.is_file() and 200 < path.stat().st_size < 200_000:
                found.append(path)
            if len(found) >= limit:
                return found
    return found


@pytest.mark.parametrize("name", sorted(EDGE_PAIRS))
def test_edge_cases_round_trip_with_gnu_patch(tmp_path: Path, name: str) -> None:
    old, new = EDGE_PAIRS[name]
    for context in (0, 3):
        _assert_round_trip(tmp_path, old, new, context)


@pytest.mark.parametrize("name", sorted(EDGE_PAIRS))
def test_numstat_matches_git(tmp_path: Path, name: str) -> None:
    old, new = EDGE_PAIRS[name]
    ld = diff_lines(old, new)
    assert (ld.lines_added, ld.lines_removed) == _git_numstat(tmp_path, old, new)


def test_no_newline_marker_is_written() -> None:
    diff = unified_diff(b"a\nb", b"a\nc", label_a="x", label_b="y")
    assert diff.count("\\ No newline at end of file\n") == 2
    assert diff.startswith("--- x\n+++ y\n@@ -1,2 +1,2 @@\n")


def test_identical_inputs_give_empty_diff() -> None:
    assert unified_diff("same\n", "same\n") == ""
    assert diff_lines(b"same\n", b"same\n").hunks == ()


def test_binary_inputs_give_one_line() -> None:
    assert unified_diff(b"a\0b", b"a\0c", label_a="A", label_b="B") == (
        "Binary files A and B differ\n"
    )
    assert unified_diff(b"\xff\xfe", b"ok\n", label_a="A", label_b="B").startswith("Binary")
    assert is_binary(b"\0") and is_binary(b"\xc3") and not is_binary("é".encode())


def test_str_and_bytes_inputs_agree() -> None:
    assert unified_diff("a\nb\n", "a\nc\n") == unified_diff(b"a\nb\n", b"a\nc\n")


def test_hunks_report_changed_line_numbers() -> None:
    ld = diff_lines(b"1\n2\n3\n4\n5\n", b"1\nTWO\n3\n4\n5\nsix\n")
    assert [(h.removed, h.added) for h in ld.hunks] == [((2,), (2,)), ((), (6,))]
    assert (ld.lines_added, ld.lines_removed) == (2, 1)


def test_generated_pairs_round_trip(tmp_path: Path) -> None:
    rng = random.Random(1234)
    for _ in range(60):
        lines = [b"line %d %s\n" % (i, rng.choice([b"", b"\r", b"x" * 50])) for i in range(40)]
        mutated = _mutate(rng, lines)
        old, new = b"".join(lines), b"".join(mutated)
        if rng.random() < 0.3:
            new = new.rstrip(b"\n")
        _assert_round_trip(tmp_path, old, new, context=rng.randint(0, 5))
        ld = diff_lines(old, new)
        assert (ld.lines_added, ld.lines_removed) == _git_numstat(tmp_path, old, new)


def test_real_files_round_trip(tmp_path: Path) -> None:
    files = _site_files(40)
    assert len(files) >= 20
    rng = random.Random(99)
    for a, b in itertools.pairwise(files):
        old = a.read_bytes()
        mutated = b"".join(_mutate(rng, old.splitlines(keepends=True)))
        _assert_round_trip(tmp_path, old, mutated)
        _assert_round_trip(tmp_path, old, b.read_bytes())  # two unrelated files


def test_line_counts_are_each_sides_count_lines() -> None:
    """The new side's count, taken from the patch, is the one `count_lines` gives."""
    rng = random.Random(5)
    pairs = [*EDGE_PAIRS.values(), (b"a\0b\n", b"a\nb\n"), (b"x\n", b"\xff\n")]
    for _ in range(40):
        lines = [b"%d%s\n" % (rng.randrange(30), rng.choice([b"", b"\r"])) for _ in range(300)]
        old, new = b"".join(lines), b"".join(_mutate(rng, lines))
        pairs.append((old * rng.choice([1, 100]), new.rstrip(b"\n") if rng.random() < 0.3 else new))
    for old, new in pairs:
        for context in (0, 3):
            unified_diff(old, new, context=context)
            expected = tuple(0 if is_binary(t) else count_lines(t) for t in (old, new))
            assert line_counts(old, new, context=context) == expected


def test_line_counts_wherever_the_last_change_falls() -> None:
    """Counts read off the last change (see `_counts_by_patch`): at the start, the middle or the
    end of a text, an addition or a removal, with or without a final newline, large or small."""
    body = [b"line %d\n" % i for i in range(20_000)]
    edits = {
        "first line changed": lambda ls: [b"new first\n", *ls[1:]],
        "first line removed": lambda ls: ls[1:],
        "line added at the start": lambda ls: [b"zero\n", *ls],
        "middle line removed": lambda ls: ls[:900] + ls[901:],
        "last line changed": lambda ls: [*ls[:-1], b"new last\n"],
        "last line removed": lambda ls: ls[:-1],
        "line added at the end": lambda ls: [*ls, b"one more\n"],
        "crlf line added at the end": lambda ls: [*ls, b"one more\r\n"],
    }
    for size in (30, 20_000):
        old = b"".join(body[:size])
        for name, edit in edits.items():
            new = b"".join(edit(body[:size]))
            for a, b in ((old, new), (new, old), (old.rstrip(b"\n"), new), (old, new[:-1])):
                for context in (0, 3, 20):
                    expected = (count_lines(a), count_lines(b))
                    assert line_counts(a, b, context=context) == expected, (name, size, context)


def test_count_lines_and_blob_id(tmp_path: Path) -> None:
    assert [count_lines(x) for x in (b"", b"a", b"a\n", b"a\nb", b"\n\n")] == [0, 1, 1, 2, 2]
    (tmp_path / "f").write_bytes(b"hello\n")
    git_id = subprocess.run(
        ["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert blob_id(b"hello\n") == git_id


def test_quote_path_follows_git() -> None:
    assert quote_path("plain name.txt") == "plain name.txt"
    assert quote_path('q"t\\n\t.txt') == '"q\\"t\\\\n\\t.txt"'
    assert quote_path("é.txt") == "é.txt"


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


def _git_apply(repo: Path, patch: str, *extra: str) -> None:
    (repo.parent / "p.patch").write_text(patch, encoding="utf-8")
    res = subprocess.run(
        ["git", "apply", *extra, str(repo.parent / "p.patch")],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr + patch


def test_git_patch_applies_for_every_kind_of_change(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    files = {
        "mod.txt": b"a\nb\nc",
        "del.txt": b"bye\n",
        "old name.txt": b"same\n",
        "src.txt": b"copy me\n",
        "bin.dat": b"\0\1\2",
        "empty": b"",
        "run.sh": b"echo\n",
    }
    for name, data in files.items():
        (repo / name).write_bytes(data)
    blob = bytes(range(256)) * 40
    patch = "".join(
        [
            git_patch(b"a\nb\nc", b"a\nB\nc\n", old_name="mod.txt"),
            git_patch(b"bye\n", None, old_name="del.txt"),
            git_patch(None, "new ✓\r\n", new_name="dir/new.txt"),
            git_patch(b"same\n", b"same\n", old_name="old name.txt", new_name="new name.txt"),
            git_patch(b"copy me\n", b"copied\n", old_name="src.txt", new_name="dst.txt", copy=True),
            git_patch(b"\0\1\2", blob, old_name="bin.dat"),
            git_patch(b"", None, old_name="empty"),
            git_patch(None, b"", new_name="created-empty"),
            git_patch(b"echo\n", b"echo\n", old_name="run.sh", new_mode=EXECUTABLE_MODE),
        ]
    )
    _git_apply(repo, patch, "--check")
    _git_apply(repo, patch)
    assert (repo / "mod.txt").read_bytes() == b"a\nB\nc\n"
    assert not (repo / "del.txt").exists() and not (repo / "empty").exists()
    assert (repo / "dir/new.txt").read_bytes() == "new ✓\r\n".encode()
    assert (repo / "new name.txt").read_bytes() == b"same\n"
    assert not (repo / "old name.txt").exists()
    assert (repo / "dst.txt").read_bytes() == b"copied\n"
    assert (repo / "src.txt").read_bytes() == b"copy me\n"
    assert (repo / "bin.dat").read_bytes() == blob
    assert (repo / "created-empty").read_bytes() == b""
    assert (repo / "run.sh").stat().st_mode & 0o111


def test_git_patch_matches_git_diff_for_a_modification(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"1\n2\n3\n4\n5\n6\n7\n8\n9\n")
    (tmp_path / "b").write_bytes(b"1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n")
    res = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "a", "b"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    ours = git_patch(
        (tmp_path / "a").read_bytes(), (tmp_path / "b").read_bytes(), old_name="a", new_name="b"
    )
    # Different names make our section a rename; from the ---/+++ lines on, it is git's text.
    assert ours[ours.index("--- a/a") :] == res.stdout[res.stdout.index("--- a/a") :]


def test_unchanged_file_has_no_section() -> None:
    assert git_patch(b"x\n", b"x\n", old_name="f") == ""
