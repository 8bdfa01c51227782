"""apply_edits: parsing, validation against real source files, atomic apply, index recording."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest
from conftest import git, make_settings, stored

from symdiff.api import apply_edits, index, open_store
from symdiff.attribute import spans as attribute_module
from symdiff.edits import apply_edits as apply_core
from symdiff.edits import plan_edits
from symdiff.edits.parse import parse_edits, parse_text
from symdiff.edits.write import TMP_SUFFIX, Write, commit
from symdiff.errors import EditError, FsDenied, InvalidArgs, StoreError, ToolFailed
from symdiff.workspace.gate import Beneath, locate

SCHEMA = json.loads(
    (Path(__file__).parent / "fixtures/acp/v2_schema.toolcallcontent.json").read_text()
)
# Real, sizeable Python sources from the installed packages.
REAL = {
    "core.py": Path(click.__file__).parent / "core.py",
    "utils.py": Path(click.__file__).parent / "utils.py",
    "validators.py": Path(jsonschema.__file__).parent / "validators.py",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace root holding copies of real source files."""
    root = (tmp_path / "ws").resolve()
    (root / "pkg").mkdir(parents=True)
    for name, src in REAL.items():
        shutil.copyfile(src, root / "pkg" / name)
    return root


def block(path: str, search: str, replace: str) -> str:
    return f"FILE: {path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def at(root: Path, path: Path) -> Beneath:
    """`path` beneath `root`, as the gate hands it to the writer."""
    where = locate(path, [root])
    assert where is not None
    return where


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root (outside .symdiff), with its bytes and mode."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode)
            for p in sorted(root.rglob("*")) if p.is_file() and ".symdiff" not in p.parts}


def run(root: Path, edits: object, **kw: Any) -> dict[str, Any]:
    return apply_edits(edits, settings=make_settings(root), **kw)


# -- parsing ---------------------------------------------------------------------------------

def test_text_form_several_files_blocks_fences_prose_and_crlf() -> None:
    msg = (
        "Here are the changes.\r\n\r\nFILE: `src/a.py`\r\n```python\r\n<<<<<<< SEARCH\r\n"
        "x = 1\r\n=======\r\nx = 2\r\n>>>>>>> REPLACE\r\n```\r\n"
        "<<<<<<< SEARCH   \r\ny = 1\r\n=======\r\n>>>>>>> REPLACE\r\n"
        "  FILE: b.txt\r\n<<<<<<< SEARCH\r\n=======\r\nnew\r\n>>>>>>> REPLACE\r\nThanks!\r\n"
    )
    a, b = parse_text(msg)
    assert a.path == "src/a.py" and b.path == "b.txt"
    assert [(x.search, x.replace) for x in a.blocks] == [("x = 1\n", "x = 2\n"), ("y = 1\n", "")]
    assert [(x.search, x.replace) for x in b.blocks] == [("", "new\n")]
    assert all(x.whole_lines for x in a.blocks)


def test_seed_example_parses() -> None:
    seed = Path(__file__).parents[1] / "docs" / "seeds" / "004-search-replace-edits.txt"
    text = seed.read_text()
    start = text.index("FILE: src/auth/session.ts")
    [fe] = parse_text(text[start:text.index(">>>>>>> REPLACE", start) + 16])
    assert fe.path == "src/auth/session.ts"
    assert fe.blocks[0].search == "const timeout = 3600000;\n"
    assert fe.blocks[0].replace == "const timeout = config.session.timeout ?? 3600000;\n"


def test_divider_inside_search_of_a_conflicted_file() -> None:
    msg = block("f.txt", "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n", "b\n")
    [fe] = parse_text(msg)
    assert fe.blocks[0].search == "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"
    assert fe.blocks[0].replace == "b\n"


@pytest.mark.parametrize(("msg", "line", "words"), [
    ("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", 1, "before any `FILE: path`"),
    ("FILE: a\n<<<<<<< SEARCH\na\n=======\nb\n", 2, "no `>>>>>>> REPLACE`"),
    ("FILE: a\n<<<<<<< SEARCH\na\nb\n>>>>>>> REPLACE\n", 2, "no `=======` line"),
    ("FILE: a\n<<<<<<< SEARCH\na\n<<<<<<< SEARCH\n", 4, "inside the block opened at line 2"),
    ("FILE: a\nb\n>>>>>>> REPLACE\n", 3, "outside a block"),
    ("FILE: a\n\nFILE: b\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\n", 1, "has no `<<<"),
    ("FILE:  \n", 1, "without a path"),
])
def test_text_parse_errors_name_the_line(msg: str, line: int, words: str) -> None:
    with pytest.raises(InvalidArgs) as err:
        parse_text(msg)
    assert f"line {line}" in str(err.value) and words in str(err.value)


def test_json_form_and_auto_detection() -> None:
    data = [{"file": "a.py", "blocks": [{"search": "x", "replace": "y"},
                                         {"search": "", "replace": "z"}]}]
    for given in (data, json.dumps(data), "\n  " + json.dumps(data[0])):
        [fe] = parse_edits(given)
        assert fe.path == "a.py" and [b.search for b in fe.blocks] == ["x", ""]
        assert not fe.blocks[0].whole_lines


@pytest.mark.parametrize(("given", "words"), [
    ('[{"file": "a", "blocks": [}]', "line 1 column 27"),
    ([], "non-empty array"),
    ([{"file": "a", "blocks": []}], "edits[0].blocks must be a non-empty"),
    ([{"file": "a", "blocks": [{"search": 1, "replace": ""}]}], "edits[0].blocks[0].search"),
    ([{"file": "a", "blocks": [{"search": "", "replace": "", "x": 1}]}], "unknown keys: x"),
    ([{"path": "a", "blocks": []}], "unknown keys: path"),
    ("FILE: a\n", "has no `<<<<<<< SEARCH` block"),
    (b"FILE: a\n<<<<<<< SEARCH\n=======\n>>>>>>> REPLACE\nFILE: \xc3(\n",
     "line 5: not UTF-8 text: byte 0xc3 at column 7"),
    ("x\nFILE: caf\udce9.py\n", "line 2: not Unicode text: a lone surrogate U+DCE9"),
    ([{"file": "caf\udce9", "blocks": [{"search": "", "replace": ""}]}],
     "edits[0].file must be Unicode text"),
])
def test_json_parse_errors(given: object, words: str) -> None:
    with pytest.raises(InvalidArgs, match=None) as err:
        parse_edits(given)
    assert words in str(err.value)


# -- validation on real files ----------------------------------------------------------------

def _function(source: str, name: str) -> tuple[str, int]:
    """The text of `def name` (first occurrence, whole lines) and its 1-based first line."""
    lines = source.splitlines(keepends=True)
    start = next(i for i, x in enumerate(lines) if x.lstrip().startswith(f"def {name}("))
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip()
                                or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    return "".join(lines[start:end]), start + 1


def test_whitespace_drift_names_the_near_match_and_its_lines(ws: Path) -> None:
    source = (ws / "pkg/core.py").read_text()
    text, line = _function(source, "invoke")  # a method: indented in the file
    drifted = textwrap.dedent(text)
    assert drifted != text
    before = snapshot(ws)
    with pytest.raises(EditError) as err:
        run(ws, block("pkg/core.py", drifted, "pass\n"))
    msg = str(err.value)
    assert err.value.code == "edit_failed"
    assert "not found" in msg and "indentation" in msg and f"line {line}" in msg
    assert snapshot(ws) == before


def test_retyped_line_points_to_the_most_similar_region(ws: Path) -> None:
    source = (ws / "pkg/utils.py").read_text()
    text, line = _function(source, "make_str")
    typo = text.replace("return", "retrun", 1)
    with pytest.raises(EditError) as err:
        run(ws, block("pkg/utils.py", typo, "x\n"))
    n = text.count("\n")
    assert f"most similar region: lines {line}-{line + n - 1}" in str(err.value)
    assert "+" in str(err.value) and "retrun" in str(err.value)


def test_nothing_similar(ws: Path) -> None:
    with pytest.raises(EditError, match="nothing in the file resembles it"):
        run(ws, block("pkg/utils.py", "zzqq wwxx\n", "x\n"))


def test_duplicated_snippet_is_ambiguous_with_count_and_lines(ws: Path) -> None:
    source = (ws / "pkg/core.py").read_text()
    snippet = "        return rv\n"
    lines = [i + 1 for i, x in enumerate(source.splitlines(keepends=True)) if x == snippet]
    assert len(lines) >= 2
    with pytest.raises(EditError) as err:
        run(ws, block("pkg/core.py", snippet, "        return rv  # x\n"))
    msg = str(err.value)
    assert f"occurs {len(lines)} times" in msg
    assert ", ".join(map(str, lines[:4])) in msg


def test_whole_line_search_does_not_match_inside_a_deeper_line(ws: Path) -> None:
    # "    return rv" is a substring of the deeper "        return rv" lines, not a line of its
    # own at that depth; the text form matches whole lines only.
    source = (ws / "pkg/core.py").read_text()
    shallow = [i for i, x in enumerate(source.splitlines()) if x == "    return rv"]
    with pytest.raises(EditError) as err:
        run(ws, block("pkg/core.py", "    return rv\n", "    return None\n"))
    assert ("not found" in str(err.value)) == (not shallow)


def test_blocks_depend_on_earlier_blocks(ws: Path) -> None:
    src = (ws / "pkg/utils.py").read_text()
    text, _ = _function(src, "make_str")
    edited = text.replace("def make_str(", "def make_text(", 1)
    msg = (block("pkg/utils.py", text, edited)
           + "<<<<<<< SEARCH\ndef make_text(\n=======\ndef make_text2(\n>>>>>>> REPLACE\n")
    # Block 2 is whole-line; make it a JSON substring edit instead.
    data = [{"file": "pkg/utils.py", "blocks": [
        {"search": text, "replace": edited},
        {"search": "def make_text(", "replace": "def make_text2("},
    ]}]
    result = run(ws, data, dry_run=False, record=False)
    assert "def make_text2(" in (ws / "pkg/utils.py").read_text()
    assert "def make_str(" not in (ws / "pkg/utils.py").read_text()
    [f] = result["files"]
    assert f["blocks"] == 2 and f["operation"] == "modify"
    names = {(s["name"], s["change_type"]) for s in f["symbols"]}
    assert ("make_str", "removed") in names and ("make_text2", "added") in names
    with pytest.raises(EditError, match="not found"):
        run(ws, msg)  # the whole-line block 2 finds no line that is exactly `def make_text(`


def test_create_file_and_refuse_create_over_existing(ws: Path) -> None:
    result = run(ws, block("pkg/sub/dir/new.py", "", "def hello():\n    return 1\n"),
                 dry_run=False, record=False)
    assert (ws / "pkg/sub/dir/new.py").read_text() == "def hello():\n    return 1\n"
    [f] = result["files"]
    assert f["operation"] == "add" and f["lines_added"] == 2
    assert f["symbols"][0]["name"] == "hello" and f["symbols"][0]["change_type"] == "added"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((ws / "pkg/sub/dir/new.py").stat().st_mode) == 0o666 & ~umask
    before = snapshot(ws)
    exists = r"an empty SEARCH creates a file, but pkg/utils\.py exists"
    with pytest.raises(EditError, match=exists):
        run(ws, block("pkg/utils.py", "", "x\n"), dry_run=False)
    assert snapshot(ws) == before


def test_missing_file(ws: Path) -> None:
    with pytest.raises(EditError, match=r"pkg/nope.py, block 1 \(line 2\): no such file"):
        run(ws, block("pkg/nope.py", "x\n", "y\n"))


def test_multi_file_failure_leaves_every_file_byte_identical(ws: Path) -> None:
    os.chmod(ws / "pkg/utils.py", 0o755)
    src = (ws / "pkg/core.py").read_text()
    good, _ = _function(src, "invoke")
    msg = (block("pkg/core.py", good, "    pass\n")
           + block("pkg/new_file.py", "", "x = 1\n")
           + block("pkg/utils.py", "def make_str(value: t.Any) -> str:\n", "def f():\n")
           + block("pkg/validators.py", "no such line\n", "x\n"))
    before = snapshot(ws)
    with pytest.raises(EditError) as err:
        run(ws, msg, dry_run=False, backup=True)
    assert "pkg/validators.py" in str(err.value) and "nothing was written" in str(err.value)
    assert snapshot(ws) == before
    assert not (ws / "pkg/new_file.py").exists()


def test_every_failing_file_is_reported_at_once(ws: Path) -> None:
    msg = block("pkg/core.py", "no such\n", "x\n") + block("pkg/utils.py", "nor this\n", "y\n")
    with pytest.raises(EditError, match="2 files have blocks that do not fit") as err:
        run(ws, msg)
    assert "pkg/core.py, block 1" in str(err.value) and "pkg/utils.py, block 1" in str(err.value)


def test_binary_and_directory_targets_are_refused(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\xff")
    with pytest.raises(EditError, match="not UTF-8"):
        run(ws, block("blob.bin", "x\n", "y\n"))
    with pytest.raises(EditError, match="not a regular file"):
        run(ws, block("pkg", "x\n", "y\n"))


def test_unchanged_edit_writes_nothing(ws: Path) -> None:
    before = (ws / "pkg/utils.py").stat().st_mtime_ns
    data = [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                 "replace": "def make_str("}]}]
    result = run(ws, data, dry_run=False, record=False)
    assert result["files"][0]["operation"] == "unchanged"
    assert result["acp"]["changes"] == []
    assert (ws / "pkg/utils.py").stat().st_mtime_ns == before


def test_conflicted_file_with_divider_in_the_search(ws: Path) -> None:
    (ws / "c.txt").write_text("top\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b\nend\n")
    msg = block("c.txt", "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b\n", "merged\n")
    run(ws, msg, dry_run=False, record=False)
    assert (ws / "c.txt").read_text() == "top\nmerged\nend\n"


def test_rst_underlines_in_search_and_replace(ws: Path) -> None:
    (ws / "doc.rst").write_text("Intro\n=======\n\ntext\n")
    msg = block("doc.rst", "Intro\n=======\n", "Preface\n=======\n")
    run(ws, msg, dry_run=False, record=False)
    assert (ws / "doc.rst").read_text() == "Preface\n=======\n\ntext\n"


# -- line endings ----------------------------------------------------------------------------

def test_crlf_file_edited_with_lf_blocks_stays_crlf(ws: Path) -> None:
    (ws / "w.py").write_bytes(b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2")
    msg = block("w.py", "def g():\n    return 2\n", "def g():\n    return 3\n    # two\n")
    run(ws, msg, dry_run=False, record=False)
    # CRLF kept, and the missing final newline stays missing.
    assert (ws / "w.py").read_bytes() == (
        b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 3\r\n    # two")


def test_lf_search_in_a_mixed_file_reports_line_endings(ws: Path) -> None:
    (ws / "m.txt").write_bytes(b"a\nb\r\nc\r\nd\n")
    run(ws, block("m.txt", "b\nc\n", "B\nC\n"), dry_run=False, record=False)
    assert (ws / "m.txt").read_bytes() == b"a\nB\r\nC\r\nd\n"
    with pytest.raises(EditError, match="differ only in"):
        run(ws, block("m.txt", "a\nB\nC\n", "x\n"))


# -- byte order mark -------------------------------------------------------------------------

BOM = "\ufeff".encode()


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_a_bom_file_first_line_matches_without_the_bom_and_keeps_it(ws: Path, eol: bytes) -> None:
    target = ws / "bom.py"
    target.write_bytes(BOM + b"import os" + eol + b"def f():" + eol + b"    return os.sep" + eol)
    result = run(ws, block("bom.py", "import os\n", "import os\nimport sys\n"),
                 dry_run=False, record=False)
    assert target.read_bytes() == (BOM + b"import os" + eol + b"import sys" + eol + b"def f():"
                                   + eol + b"    return os.sep" + eol)
    assert result["files"][0]["lines_added"] == 1 and result["files"][0]["lines_removed"] == 0
    # The search may carry the BOM too (copied with the file), and JSON substrings fit as well.
    run(ws, block("bom.py", "\ufeffimport os\n", "import pathlib\n"), dry_run=False, record=False)
    run(ws, [{"file": "bom.py", "blocks": [{"search": "import pathlib", "replace": "import re"}]}],
        dry_run=False, record=False)
    assert target.read_bytes().startswith(BOM + b"import re" + eol + b"import sys" + eol)
    assert target.read_bytes().count(BOM) == 1


def test_a_bom_in_the_search_of_a_file_without_one_is_named(ws: Path) -> None:
    (ws / "plain.py").write_text("import os\n")
    with pytest.raises(EditError, match=r"starts with a UTF-8 byte order mark \(U\+FEFF\)"):
        run(ws, block("plain.py", "\ufeffimport os\n", "import sys\n"))


# -- paths -----------------------------------------------------------------------------------

def test_paths_escaping_the_root_are_fs_denied(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "t.py").write_text("x = 1\n")
    (ws / "link").symlink_to(outside)
    (ws / "flink.py").symlink_to(outside / "t.py")
    for path in ("../outside/t.py", str(outside / "t.py"), "link/t.py", "flink.py",
                 "pkg/../../outside/t.py", "link/new.py", ".symdiff/index.db"):
        with pytest.raises(FsDenied) as err:
            run(ws, block(path, "x = 1\n", "x = 2\n"), dry_run=False)
        assert err.value.render().startswith("fs_denied: ")
    assert (outside / "t.py").read_text() == "x = 1\n"
    assert not (outside / "new.py").exists()


def test_allow_root_and_a_symlink_inside_the_root(ws: Path, tmp_path: Path) -> None:
    extra = (tmp_path / "extra").resolve()
    extra.mkdir()
    (extra / "t.py").write_text("x = 1\n")
    result = run(ws, block(str(extra / "t.py"), "x = 1\n", "x = 2\n"), dry_run=False,
                 allow_write=[extra])
    assert (extra / "t.py").read_text() == "x = 2\n"
    assert result["files"][0]["path"] == str(extra / "t.py")
    (ws / "alias.py").symlink_to(ws / "pkg/utils.py")
    run(ws, [{"file": "alias.py", "blocks": [{"search": "def make_str(",
                                               "replace": "def make_str2("}]}],
        dry_run=False, record=False)
    assert (ws / "alias.py").is_symlink()  # the link stays a link; its target was edited
    assert "def make_str2(" in (ws / "pkg/utils.py").read_text()


def test_version_control_directories_are_never_written(ws: Path) -> None:
    git(ws, "init", "-q")
    config = (ws / ".git/config").read_text()
    (ws / "wt").mkdir()
    (ws / "wt/.git").write_text("gitdir: ../.git\n")  # a worktree's .git is a file
    (ws / ".hg").mkdir()
    (ws / ".hg/hgrc").write_text("[hooks]\n")
    (ws / "cfg").symlink_to(ws / ".git/config")
    plant = "[core]\n\tfsmonitor = touch /tmp/pwned\n"
    before = snapshot(ws)
    for path, search in ((".git/config", "[core]\n"), ("cfg", "[core]\n"),
                         (".git/hooks/pre-commit", ""), ("wt/.git", "gitdir: ../.git\n"),
                         (".hg/hgrc", "[hooks]\n"), ("pkg/.GIT/config", ""),
                         ("sub/.svn/entries", "")):
        for dry_run in (True, False):
            with pytest.raises(FsDenied) as err:
                run(ws, [{"file": path, "blocks": [{"search": search, "replace": plant}]}],
                    dry_run=dry_run)
            assert "a version-control directory that apply_edits never writes" in str(err.value)
    assert snapshot(ws) == before
    assert (ws / ".git/config").read_text() == config
    assert not (ws / ".git/hooks/pre-commit").exists() and not (ws / "pkg/.GIT").exists()
    got = subprocess.run(["git", "-C", str(ws), "config", "--get", "core.fsmonitor"],
                         capture_output=True, text=True)
    assert got.returncode == 1 and got.stdout == ""
    # Names that only look alike are ordinary files.
    run(ws, block(".gitignore", "", "*.pyc\n") + block(".github/ci.yml", "", "on: push\n"),
        dry_run=False, record=False)
    assert (ws / ".gitignore").read_text() == "*.pyc\n"


# -- apply: mode, backup, atomicity ----------------------------------------------------------

def test_mode_kept_and_backup(ws: Path) -> None:
    target = ws / "pkg/validators.py"
    target.chmod(0o750)
    old = target.read_bytes()
    src = old.decode()
    text, _ = _function(src, "validates")
    result = run(ws, block("pkg/validators.py", text, text.replace("def validates(",
                                                                     "def validates_v2(")),
                 dry_run=False, backup=True, record=False)
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    backup = ws / "pkg/validators.py.backup"
    assert backup.read_bytes() == old and stat.S_IMODE(backup.stat().st_mode) == 0o750
    assert result["files"][0]["backup"] == "pkg/validators.py.backup"
    assert b"def validates_v2(" in target.read_bytes()
    assert not list(ws.rglob(f"*{TMP_SUFFIX}"))


def test_rename_failing_midway_rolls_back_the_renamed_files(ws: Path) -> None:
    a, b, c = ws / "pkg/core.py", ws / "pkg/utils.py", ws / "pkg/late.py"
    a.chmod(0o744)
    before = snapshot(ws)
    c.write_text("appeared after validation\n")  # a create whose target appeared meanwhile
    writes = [Write(at(ws, a), a.read_bytes(), b"A\n", a.stat().st_mode),
              Write(at(ws, b), b.read_bytes(), b"B\n", b.stat().st_mode),
              Write(at(ws, c), None, b"C\n", None)]
    with pytest.raises(ToolFailed, match="nothing changed"):
        commit(writes)
    c.unlink()
    assert snapshot(ws) == before
    assert not list(ws.rglob(f"*{TMP_SUFFIX}"))


def test_file_changed_since_read_is_refused(ws: Path) -> None:
    a = ws / "pkg/core.py"
    stale = Write(at(ws, a), b"what it was\n", b"new\n", a.stat().st_mode)
    before = snapshot(ws)
    with pytest.raises(EditError, match="changed while the edit was being prepared"):
        commit([Write(at(ws, ws / "n.txt"), None, b"n\n", None), stale])
    assert snapshot(ws) == before


ATTEMPTS = 16
KILLER = """
import sys
from pathlib import Path
from symdiff.config import Settings
from symdiff.api import apply_edits
root = Path(sys.argv[1])
apply_edits(Path(sys.argv[2]).read_text(), settings=Settings.resolve(root, db="sqlite://"),
            dry_run=False, record=False)
"""


def _wait_for_staging(root: Path, proc: subprocess.Popen[bytes]) -> None:
    """Return once the applier has begun writing temporary files (validation is over)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return
        with os.scandir(root) as entries:
            if any(e.name.endswith(TMP_SUFFIX) for e in entries):
                return
    raise AssertionError("the applier never started writing")


@pytest.mark.scale
def test_sigkill_mid_apply_leaves_each_file_wholly_old_or_new(tmp_path: Path) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    # Plain text (no symbol extraction) and large, so most of a run is the write phase.
    names = [f"m{i}.txt" for i in range(30)]
    old = {n: "".join(f"line {k} of {n}: return {k}\n" for k in range(20000)) for n in names}
    new = {n: text.replace(f"line 10000 of {n}: return", f"line 10000 of {n}: yield")
           for n, text in old.items()}
    msg = "".join(block(n, f"line 10000 of {n}: return 10000\n",
                        f"line 10000 of {n}: yield 10000\n") for n in names)
    edits = tmp_path / "edits.txt"
    edits.write_text(msg)
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    outcomes: list[str] = []
    interrupted = 0  # kills that left temporary files: they landed mid-write
    for attempt in range(ATTEMPTS):
        for n in names:
            (root / n).write_text(old[n])
        proc = subprocess.Popen([sys.executable, str(script), str(root), str(edits)])
        _wait_for_staging(root, proc)
        # Somewhere in the stage/rename phase: it lasts ~45 ms here, and the applier exits
        # ~110 ms after it began staging (measured); a kill after that would find it gone.
        time.sleep(random.uniform(0, 0.05))
        proc.send_signal(signal.SIGKILL)
        # Killed, not finished or failed: an applier that ends before the kill (or crashes at
        # start) would leave every file old or new and prove nothing.
        assert proc.wait() == -signal.SIGKILL, f"the applier was not killed (attempt {attempt})"
        states = []
        for n in names:
            data = (root / n).read_text()
            assert data in (old[n], new[n]), f"{n} is torn after a kill (attempt {attempt})"
            states.append(data == new[n])
        outcomes.append("new" if all(states) else "old" if not any(states) else "mixed")
        left = 0
        for stray in root.iterdir():
            assert stray.name in names or stray.name.endswith(TMP_SUFFIX), stray.name
            if stray.name.endswith(TMP_SUFFIX):
                stray.unlink()
                left += 1
        interrupted += left > 0
    print("outcomes of the kills:", {k: outcomes.count(k) for k in set(outcomes)},
          "interrupted mid-write:", interrupted)
    assert len(outcomes) == ATTEMPTS
    assert interrupted + outcomes.count("mixed") >= 1, "no kill landed while files were written"


# -- dry run, ACP, symbols, index ------------------------------------------------------------

def test_dry_run_writes_nothing_and_its_patch_applies_with_git(ws: Path) -> None:
    src = (ws / "pkg/utils.py").read_text()
    text, _ = _function(src, "make_str")
    msg = (block("pkg/utils.py", text, text.replace("(value: t.Any)", "(value: t.Any, x=1)"))
           + block("pkg/fresh.py", "", "class Fresh:\n    def go(self):\n        pass\n"))
    before = snapshot(ws)
    result = run(ws, msg)
    assert snapshot(ws) == before
    assert result["dry_run"] and not result["applied"]
    acp = result["acp"]
    jsonschema.validate(acp, SCHEMA)
    assert {c["path"] for c in acp["changes"]} == {str(ws / "pkg/utils.py"),
                                                    str(ws / "pkg/fresh.py")}
    by_path = {f["path"]: f for f in result["files"]}
    assert by_path["pkg/utils.py"]["symbols"] == [{
        "name": "make_str", "kind": "function", "change_type": "signature_changed",
        "start_line": _function(src, "make_str")[1],
        "end_line": _function(src, "make_str")[1] + text.count("\n") - 1}]
    assert {s["name"] for s in by_path["pkg/fresh.py"]["symbols"]} == {"Fresh", "Fresh.go"}
    expected = {p.path: p.new for p in plan_edits(parse_text(msg), root=ws)}
    patch = ws.parent / "edit.patch"
    patch.write_text(acp["patch"]["text"])
    for extra in (["--check"], []):
        res = subprocess.run(["git", "apply", *extra, "--unsafe-paths", "-p0", str(patch)],
                             cwd=ws, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    for path, data in expected.items():
        assert (ws / path).read_bytes() == data


def test_real_apply_is_recorded_in_the_index_at_once(ws: Path) -> None:
    settings = make_settings(ws)
    index(settings)  # the baseline
    src = (ws / "pkg/utils.py").read_text()
    text, line = _function(src, "make_str")
    msg = (block("pkg/utils.py", text, text.replace("    ", "    # touched\n    ", 1))
           + block("pkg/added.py", "", "def brand_new():\n    return 0\n"))
    result = apply_edits(msg, settings=settings, dry_run=False)
    assert result["applied"] and "record_error" not in result
    assert {r["path"] for r in result["recorded"]} == {"pkg/utils.py", "pkg/added.py"}
    with open_store(settings) as store:
        changes = stored(store, since=datetime.now(UTC) - timedelta(minutes=5), limit=10)
    by_path = {c.path: c for c in changes}
    modified = by_path["pkg/utils.py"]
    assert modified.change_type.value == "modify" and modified.lines_added == 1
    assert [(s.name, s.change_type.value, s.start_line) for s in modified.symbols] == [
        ("make_str", "modified", line)]
    assert by_path["pkg/added.py"].change_type.value == "add"
    assert by_path["pkg/added.py"].symbols[0].name == "brand_new"


def test_store_failure_does_not_undo_the_apply(ws: Path) -> None:
    blocker = ws.parent / "db"
    blocker.write_text("a file where the database directory should be")
    result = run(ws, [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                             "replace": "def make_str3("}]}],
                 dry_run=False)
    assert result["applied"] and "record_error" in result
    assert "def make_str3(" in (ws / "pkg/utils.py").read_text()


def test_an_edit_in_a_never_indexed_workspace_is_still_recorded(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "other.py").write_text("x = 1\n")
    settings = make_settings(root)
    edits = ("FILE: a.py\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n"
             "FILE: b.py\n<<<<<<< SEARCH\n=======\ndef g():\n    pass\n>>>>>>> REPLACE\n")
    result = apply_edits(edits, settings=settings, dry_run=False)
    got = [(c["change_type"], c["path"]) for c in result["recorded"]]
    assert sorted(got) == [("add", "b.py"), ("modify", "a.py")]
    with open_store(settings) as store:
        found = stored(store, limit=10)
    assert sorted((c.change_type.value, c.path) for c in found) == sorted(got)
    assert index(settings).changes == ()  # the first full pass is still the baseline


# -- the recording seam ----------------------------------------------------------------------

class _Witness:
    """A Recorder that notes what each step saw on disk, and can fail a step."""

    def __init__(self, root: Path, fail: str | None = None) -> None:
        self.root, self.fail = root, fail
        self.calls: list[tuple[str, list[str], list[bytes]]] = []

    def _note(self, step: str, paths: Sequence[str]) -> None:
        self.calls.append((step, list(paths), [(self.root / p).read_bytes() for p in paths]))
        if self.fail == step:
            raise StoreError(f"{step} failed")

    def before(self, writes: Mapping[str, bytes]) -> None:
        self._note("before", list(writes))

    def after(self, paths: Sequence[str]) -> list[dict[str, object]]:
        self._note("after", paths)
        return [{"path": p} for p in paths]


def test_the_core_records_through_the_recorder_it_is_given(ws: Path) -> None:
    old = (ws / "pkg/utils.py").read_bytes()
    witness = _Witness(ws)
    edit = [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                   "replace": "def make_str4("}]}]
    assert apply_core(edit, root=ws, recorder=_Witness(ws, fail="before"))["dry_run"]
    result = apply_core(edit, root=ws, dry_run=False, recorder=witness)
    new = (ws / "pkg/utils.py").read_bytes()
    assert new != old
    assert witness.calls == [("before", ["pkg/utils.py"], [old]),
                             ("after", ["pkg/utils.py"], [new])]
    assert result["recorded"] == [{"path": "pkg/utils.py"}] and "record_error" not in result


@pytest.mark.parametrize("step", ["before", "after"])
def test_a_recorder_error_does_not_undo_the_apply(ws: Path, step: str) -> None:
    witness = _Witness(ws, fail=step)
    edit = [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                   "replace": "def make_str5("}]}]
    result = apply_core(edit, root=ws, dry_run=False, recorder=witness)
    assert result["applied"] and result["record_error"] == f"store_error: {step} failed"
    assert "recorded" not in result
    assert "def make_str5(" in (ws / "pkg/utils.py").read_text()
    assert [c[0] for c in witness.calls] == (["before"] if step == "before" else
                                             ["before", "after"])


CORE_ONLY = """
import sys
from pathlib import Path
from symdiff.edits import apply_edits
root = Path(sys.argv[1])
edit = "FILE: a.py\\n<<<<<<< SEARCH\\nx = 1\\n=======\\nx = 2\\n>>>>>>> REPLACE\\n"
assert apply_edits(edit, root=root)["dry_run"]
assert apply_edits(edit, root=root, dry_run=False)["applied"]
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] == "sqlalchemy"
               or m in ("symdiff.store", "symdiff.record.indexer"))
print(heavy)
"""


def test_the_core_loads_neither_the_store_nor_the_indexer(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    res = subprocess.run([sys.executable, "-c", CORE_ONLY, str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


def test_a_dry_run_and_an_unrecorded_apply_never_open_the_index(ws: Path) -> None:
    blocker = ws.parent / "db"
    blocker.write_text("a file where the database directory should be")
    edit = [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                   "replace": "def make_str6("}]}]
    assert "record_error" not in run(ws, edit)
    done = run(ws, edit, dry_run=False, record=False)
    assert done["applied"] and "record_error" not in done and "recorded" not in done


def test_the_record_reuses_the_previews_attribution(ws: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    settings = make_settings(ws)
    index(settings)
    runs: list[int] = []
    real = attribute_module.attribute

    def counted(*args: Any) -> Any:
        runs.append(1)
        return real(*args)

    monkeypatch.setattr(attribute_module, "attribute", counted)
    edit = [{"file": "pkg/utils.py", "blocks": [{"search": "def make_str(",
                                                   "replace": "def make_str7("}]}]
    result = apply_edits(edit, settings=settings, dry_run=False)
    [record] = result["recorded"]
    assert record["symbols"] == result["files"][0]["symbols"] != []
    assert len(runs) == 1  # the preview's; the index's record of the same pair reused it
