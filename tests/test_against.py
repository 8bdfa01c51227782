"""`against`: the work tree compared with a revision, checked against `git diff --numstat -M`
over an index holding the whole work tree (what a commit of it would show) as the oracle."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Templates, git, head_starts, symdiff_cli

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.query.answer import DiffQuery, diff
from symdiff.records import ChangeRecord

Numstat = dict[str, tuple[int, int, str | None]]


def oracle(root: Path, ref: str) -> Numstat:
    """git's answer: the work tree (untracked files in, ignored out) against `ref`."""
    index = root.parent / "oracle-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index), "GIT_CONFIG_GLOBAL": "/dev/null"}
    if (root / ".git" / "index").exists():
        shutil.copy2(root / ".git" / "index", index)  # its mtime too: git's racy-clean rule
    run = {"cwd": root, "env": env, "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    if ref.endswith("..."):
        ref = git(root, "merge-base", ref[:-3], "HEAD").strip()
    out = subprocess.run(["git", "diff", "--cached", "--numstat", "-M", ref],
                         **run).stdout  # type: ignore[call-overload]
    index.unlink()
    found: Numstat = {}
    for line in out.splitlines():
        added, removed, name = line.split("\t")
        old = None
        if " => " in name:
            old, name = _rename(name)
        found[name] = (0 if added == "-" else int(added), 0 if removed == "-" else int(removed),
                       old)  # fmt: skip
    return found


def _rename(name: str) -> tuple[str, str]:
    """git's `a/{x => y}/b` or `x => y` numstat names."""
    if "{" in name:
        head, rest = name.split("{", 1)
        middle, tail = rest.split("}", 1)
        old_mid, new_mid = middle.split(" => ")
        join = lambda mid: (head + mid + tail).replace("//", "/")  # noqa: E731
        return join(old_mid), join(new_mid)
    old, new = name.split(" => ")
    return old, new


def ours(root: Path, ref: str, **args: Any) -> list[ChangeRecord]:
    return diff(Settings.resolve(str(root)), DiffQuery(against=ref, scope="all", limit=500,
                                                       **args)).records  # fmt: skip


def as_numstat(records: list[ChangeRecord]) -> Numstat:
    return {r["path"]: (r["lines_added"], r["lines_removed"], r["old_path"]) for r in records}


PY_V1 = "def f():\n    return 1\n\n\ndef g(x):\n    return x\n"
BIG = "".join(f"def h{i}(a):\n    return a + {i}\n\n\n" for i in range(30))


@pytest.fixture
def project(templates: Templates, tmp_path: Path) -> Path:
    """Two commits on main, a tag, a side branch; then a work tree with every kind of change
    (built once per session; each test gets its own copy)."""
    return templates.copy("against-project", _build_project, tmp_path / "repo")


def _build_project(repo: Path) -> None:
    git(repo, "init", "-q")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text(PY_V1)
    (repo / "src" / "big.py").write_text(BIG)
    (repo / "data.txt").write_text("".join(f"{i}\n" for i in range(50)))
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 100)
    (repo / "gone.py").write_text("def bye():\n    return 0\n")
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "tag", "v1")
    (repo / "src" / "a.py").write_text(PY_V1 + "\n\ndef k():\n    return 3\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "branch", "side", "HEAD~1")
    # the work tree: modified, renamed-and-edited (staged and unstaged), deleted, untracked,
    # ignored, binary
    (repo / "src" / "a.py").write_text(PY_V1.replace("return 1", "return 2")
                                       .replace("g(x)", "g(x, y)"))  # fmt: skip
    git(repo, "mv", "src/big.py", "src/moved.py")
    (repo / "src" / "moved.py").write_text(BIG.replace("return a + 7\n", "return a * 7\n"))
    (repo / "data.txt").rename(repo / "numbers.txt")
    (repo / "gone.py").unlink()
    (repo / "blob.bin").write_bytes(b"\0\3" * 100)
    (repo / "new").mkdir()
    (repo / "new" / "fresh.py").write_text("class C:\n    def m(self):\n        pass\n")
    (repo / "x.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("ignored = 1\n")


@pytest.mark.parametrize("ref", ["HEAD", "HEAD~1", "main", "v1", "side...", "main..."])
def test_every_record_agrees_with_git(project: Path, ref: str) -> None:
    records = ours(project, ref)
    assert as_numstat(records) == oracle(project, ref)
    assert [r["path"] for r in records] == sorted(r["path"] for r in records)
    assert not any(p.endswith(".log") or p.startswith("build/") for p in as_numstat(records))


def test_asked_again_after_edits_agrees_with_git(project: Path) -> None:
    """A second call in the process meets the blobs, rename scores and paths the first one held
    (by content): after a renamed file is rewritten past git's 50% and another file moves, it
    answers as git does, and again the same."""
    assert as_numstat(ours(project, "HEAD")) == oracle(project, "HEAD")
    (project / "src" / "moved.py").write_text(BIG[: len(BIG) // 3] + "x = 1\n" * 80)
    (project / "numbers.txt").rename(project / "digits.txt")
    expected = oracle(project, "HEAD")
    assert expected["src/moved.py"][2] is None and expected["digits.txt"][2] == "data.txt"
    assert as_numstat(ours(project, "HEAD")) == expected
    assert as_numstat(ours(project, "HEAD")) == expected


def test_a_sha_and_the_record_shape(project: Path) -> None:
    sha = git(project, "rev-parse", "HEAD~1").strip()
    records = ours(project, sha)
    assert as_numstat(records) == oracle(project, sha)
    by_path = {r["path"]: r for r in records}
    a = by_path["src/a.py"]
    assert a["change_type"] == "modify" and a["origin"] == "scan"
    assert a["origin_info"] == {"against": sha, "commit": sha}
    assert a["git"] == {"branch": "main", "head": git(project, "rev-parse", "HEAD").strip()}
    assert {(s["name"], s["change_type"]) for s in a["symbols"]} == {
        ("f", "modified"), ("g", "signature_changed")}
    assert by_path["new/fresh.py"]["change_type"] == "add"
    assert {s["name"] for s in by_path["new/fresh.py"]["symbols"]} == {"C", "C.m"}
    assert by_path["gone.py"]["change_type"] == "delete"
    assert by_path["gone.py"]["symbols"][0]["change_type"] == "removed"
    assert (by_path["blob.bin"]["lines_added"], by_path["blob.bin"]["lines_removed"]) == (0, 0)


def test_a_renamed_and_edited_file_is_one_rename_with_its_symbols(project: Path) -> None:
    by_path = {r["path"]: r for r in ours(project, "HEAD")}
    moved = by_path["src/moved.py"]
    assert moved["change_type"] == "rename" and moved["old_path"] == "src/big.py"
    assert [(s["name"], s["change_type"]) for s in moved["symbols"]] == [("h7", "modified")]
    assert "src/big.py" not in by_path
    numbers = by_path["numbers.txt"]  # moved without git: found by content all the same
    assert (numbers["change_type"], numbers["old_path"]) == ("rename", "data.txt")
    assert (numbers["lines_added"], numbers["lines_removed"]) == (0, 0)


def test_scope_path_origin_and_limit_apply(project: Path) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    settings = Settings.resolve(str(project))
    paths = lambda **a: [r["path"] for r in diff(settings, DiffQuery(against="HEAD", **a))  # noqa: E731
                         .records]  # fmt: skip
    assert paths(scope="test") == ["tests/test_x.py"]
    assert "tests/test_x.py" not in paths()
    assert paths(scope="all", path="src/**") == ["src/a.py", "src/moved.py"]
    assert paths(scope="all", path=["*.py", "!src/"]) == ["gone.py", "new/fresh.py",
                                                           "tests/test_x.py"]
    assert paths(scope="all", origin="watch") == []
    first = diff(settings, DiffQuery(against="HEAD", scope="all", limit=2))
    assert [r["path"] for r in first.records] == ["blob.bin", "gone.py"] and first.more
    # since does not apply: a comparison has no window
    assert paths(since="1ns", scope="all") == paths(since="720h", scope="all")


def test_only_the_records_answered_are_built(project: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A large difference asked for a few files parses those few: the filters and the limit
    apply before line counts and symbols, and the answer is the same as building them all."""
    from symdiff.attribute import filechange
    settings = Settings.resolve(str(project))
    every = diff(settings, DiffQuery(against="HEAD", scope="all", limit=500)).records
    built: list[str] = []
    real = filechange.build_change

    def counting(kind: Any, path: str, **kw: Any) -> Any:
        built.append(path)
        return real(kind, path, **kw)

    monkeypatch.setattr("symdiff.query.against.build_change", counting)
    first = diff(settings, DiffQuery(against="HEAD", scope="all", limit=2))
    assert built == [r["path"] for r in every[:2]] and first.more
    untimed = lambda records: [{**r, "timestamp": None} for r in records]  # noqa: E731
    assert untimed(first.records) == untimed(every[:2])
    built.clear()
    some = diff(settings, DiffQuery(against="HEAD", scope="all", path="src/**"))
    assert built == ["src/a.py", "src/moved.py"] and not some.more
    assert len(every) > 4


def test_a_clean_tree_has_no_differences(repo: Path) -> None:
    (repo / "a.py").write_text(PY_V1)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    assert ours(repo, "HEAD") == []
    os.utime(repo / "a.py", (1, 1))  # a touched file is not a changed one
    assert ours(repo, "HEAD") == []


def test_detached_head_and_a_subdirectory_root(project: Path) -> None:
    git(project, "stash", "-u", "-q")
    git(project, "checkout", "-q", "--detach", "HEAD~1")
    (project / "src" / "a.py").write_text(PY_V1 + "# more\n")
    records = ours(project / "src", "main")  # paths are the work tree's, as git prints them
    assert as_numstat(records) == oracle(project, "main")
    assert records[0]["git"] is not None and records[0]["git"]["branch"] is None


@pytest.mark.parametrize("ref, says", [
    ("nope", 'unknown revision "nope"'),
    ("HEAD~99", 'unknown revision "HEAD~99"'),
    ("main..side", "not a range"),
    ("", "against must be a git revision"),
    (" HEAD", "against must be a git revision"),
    (5, "against must be a git revision"),
])
def test_bad_refs_are_invalid_args(project: Path, ref: object, says: str) -> None:
    with pytest.raises(InvalidArgs, match=says.replace("(", r"\(")):
        diff(Settings.resolve(str(project)), DiffQuery(against=ref))


def test_arguments_a_comparison_does_not_take(project: Path) -> None:
    for arg in ({"cursor": "c1.MDow"}, {"reader": "me"}, {"workspace": "all"}):
        with pytest.raises(InvalidArgs, match="against compares this work tree"):
            diff(Settings.resolve(str(project)), DiffQuery(against="HEAD", **arg))  # type: ignore[arg-type]


def test_not_a_git_work_tree(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(InvalidArgs, match="against needs a git work tree"):
        ours(tmp_path / "plain", "HEAD")
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    with pytest.raises(InvalidArgs, match="against needs a git work tree"):
        ours(tmp_path / "bare.git", "HEAD")


def test_an_unborn_branch(repo: Path) -> None:
    (repo / "a.py").write_text(PY_V1)
    with pytest.raises(InvalidArgs, match="unborn branch"):
        ours(repo, "HEAD")
    with pytest.raises(InvalidArgs, match="unborn branch"):
        ours(repo, "HEAD...")


def test_a_shallow_clone_says_why(project: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    assert ours(clone, "HEAD") == []
    with pytest.raises(InvalidArgs, match="shallow clone"):
        ours(clone, "HEAD~1")
    with pytest.raises(InvalidArgs, match="shallow clone"):
        ours(clone, git(project, "rev-parse", "HEAD~1").strip())


def test_a_submodule(project: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "l.py").write_text(PY_V1)
    git(lib, "add", "-A")
    git(lib, "commit", "-qm", "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(project, "commit", "-qm", "sub", "--", ".gitmodules", "lib")
    (project / "lib" / "l.py").write_text(PY_V1 + "# edit\n")
    # the superproject lists no entry for the submodule (its own tree answers for it) ...
    assert "lib" not in as_numstat(ours(project, "HEAD"))
    # ... and inside the submodule, against compares the submodule's own work tree
    assert as_numstat(ours(project / "lib", "HEAD")) == {"l.py": (1, 0, None)}


def test_include_patch_gives_a_patch_git_applies(project: Path, tmp_path: Path) -> None:
    records = ours(project, "HEAD", include_patch=True, path="src/a.py")
    [record] = records
    text = record["acp"]["patch"]["text"]
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", str(project), str(copy))
    abs_a = str(project / "src" / "a.py")
    patch = text.replace(abs_a, "src/a.py")
    subprocess.run(["git", "apply", "-p0", "-"], cwd=copy, input=patch, text=True, check=True)
    assert (copy / "src" / "a.py").read_text() == (project / "src" / "a.py").read_text()


def test_the_cli(project: Path) -> None:
    run = symdiff_cli("changes", "--root", str(project), "--against", "HEAD", "--scope", "all",
                      "--json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert as_numstat(json.loads(run.stdout)) == oracle(project, "HEAD")
    table = symdiff_cli("changes", "--root", str(project), "--against", "HEAD")
    assert table.returncode == 0 and "src/big.py → src/moved.py" in table.stdout
    bad = symdiff_cli("changes", "--root", str(project), "--against", "nope")
    assert bad.returncode == 2 and 'invalid_args: unknown revision "nope"' in bad.stderr


def test_the_mcp_tool(project: Path) -> None:
    from symdiff.mcp.server import build_server

    server = build_server(Settings.resolve(str(project)))

    async def call(args: dict[str, Any]) -> Any:
        return await server.call_tool("diff", args)

    found = asyncio.run(call({"against": "HEAD", "scope": "all"}))
    result = found.structured_content["result"]
    assert as_numstat(result) == oracle(project, "HEAD")
    bad = asyncio.run(call({"against": "no/such/ref"}))
    assert bad.is_error and bad.content[0].text.startswith("invalid_args: unknown revision")


def test_the_read_side_loads_pygit2_only_for_against(project: Path) -> None:
    probe = ("import sys\nfrom symdiff.config import Settings\nfrom symdiff.query.answer import "
             "DiffQuery, diff\n{}\nprint('pygit2' in sys.modules)")
    plain = probe.format("")
    with_against = probe.format(f"diff(Settings.resolve({str(project)!r}), "
                                "DiffQuery(against='HEAD'))")
    check = lambda code: subprocess.run([sys.executable, "-c", code], check=True,  # noqa: E731
                                        capture_output=True, text=True).stdout.strip()
    assert (check(plain), check(with_against)) == ("False", "True")


def test_against_writes_nothing_into_the_repository(project: Path) -> None:
    def state() -> tuple[set[str], bytes]:
        objects = {str(p) for p in (project / ".git" / "objects").rglob("*")}
        return objects, (project / ".git" / "index").read_bytes()

    before = state()
    assert ours(project, "HEAD")
    assert state() == before


def test_the_edited_files_parse_while_renames_are_paired(repo: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The edited files go to one parse worker before renames are paired (a head start); the
    answer is git's, and the same as without the head start. Under a limit that leaves files
    out, nothing starts early (which files the answer holds is known only after renames)."""
    from symdiff.parse.pool import ParsePool

    files = {f"pkg/m{k}.py": "".join(f"def f{k}_{i}(a, b):\n    x = a * {i}\n    return x + b\n"
                                     f"\n\n" for i in range(900)) for k in range(6)}  # fmt: skip
    files["pkg/old_name.py"] = BIG
    for name, text in files.items():
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for k in range(6):
        path = repo / f"pkg/m{k}.py"
        path.write_text(path.read_text().replace(f"return x + b\n\n\ndef f{k}_40(",
                                                 f"return x - b\n\n\ndef f{k}_40(", 1)
                        .replace(f"def f{k}_700(a, b)", f"def f{k}_700(a, b, c=1)"))  # fmt: skip
    git(repo, "mv", "pkg/old_name.py", "pkg/new_name.py")
    (repo / "pkg" / "new_name.py").write_text(BIG.replace("a + 3\n", "a + 33\n"))
    started = head_starts(monkeypatch)
    untimed = lambda records: [{**r, "timestamp": None} for r in records]  # noqa: E731
    records = ours(repo, "HEAD")
    assert started == [True]
    assert as_numstat(records) == oracle(repo, "HEAD")
    assert records[-1]["old_path"] == "pkg/old_name.py"
    changed = {s["name"]: s["change_type"] for r in records for s in r["symbols"]}
    assert changed["f3_700"] == "signature_changed" and changed["f3_39"] == "modified"
    monkeypatch.setattr(ParsePool, "head_start", lambda *_: None)
    from symdiff.parse import extract, reparse

    extract._cache.clear()
    reparse.forget()
    assert untimed(ours(repo, "HEAD")) == untimed(records)
    monkeypatch.undo()  # the real method back under a new spy
    started = head_starts(monkeypatch)
    few = diff(Settings.resolve(str(repo)), DiffQuery(against="HEAD", scope="all", limit=3))
    assert untimed(few.records) == untimed(records[:3]) and few.more
    assert started == []


def test_an_answer_that_fails_after_its_head_start_lets_the_pool_go(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A failure between the head start and its batch (here the batch's own step raising)
    must not leave the process's parse pool held, nor a worker's answer unread."""
    from symdiff.parse import pool as parse_pool
    from symdiff.query import against

    for k in range(6):
        (repo / f"m{k}.py").write_text("".join(f"def f{k}_{i}(a):\n    return a + {i}\n\n\n"
                                               for i in range(1500)))  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for k in range(6):
        path = repo / f"m{k}.py"
        path.write_text(path.read_text().replace("a + 7\n", "a - 7\n"))
    (repo / "m0.py").rename(repo / "renamed.py")

    def broken(*_: Any) -> None:
        raise RuntimeError("the batch failed")

    real_parse = against._parse
    monkeypatch.setattr(against, "_parse", broken)
    with pytest.raises(RuntimeError, match="the batch failed"):
        ours(repo, "HEAD")
    shared = parse_pool.shared()
    assert shared.pids(), "the head start ran on the shared pool's worker"
    let_go = shared._lock.acquire(blocking=False)
    shared._lock.release()  # (when held, released all the same: the pool closes at exit)
    assert let_go, "the pool is still held by the failed answer's head start"
    monkeypatch.setattr(against, "_parse", real_parse)
    before = shared.worker_jobs
    records = ours(repo, "HEAD")
    assert as_numstat(records) == oracle(repo, "HEAD")
    assert shared.worker_jobs > before  # the workers answered, in step
