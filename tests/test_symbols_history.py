"""Symbol history through the real indexer: versions of files replayed into a tree and
reconciled between them, checked against an `ast` oracle; show and restore on top."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path

import pytest
from conftest import make_settings, symdiff_cli

from symdiff.api import index
from symdiff.config import Settings
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.symbols.history import symbol_history, symbol_source
from symdiff.symbols.restore import restore_symbol


def _settings(root: Path) -> Settings:
    return make_settings(root, host="test-host")


def _replay(root: Path, path: str, versions: list[str]) -> Settings:
    """Write each version of `path` and reconcile after each (the first is the baseline)."""
    root.mkdir(parents=True, exist_ok=True)
    settings = _settings(root)
    for text in versions:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
        index(settings)
    return settings


def _definitions(source: str) -> dict[str, str]:
    """The oracle: each top-level function and method (qualified) -> its whole lines,
    decorators included, as `ast` places them."""
    lines = source.splitlines(keepends=True)
    out: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                assert node.end_lineno is not None
                out[prefix + node.name] = "".join(lines[first - 1 : node.end_lineno])
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return out


def _random_release(rng: random.Random, previous: dict[str, int]) -> tuple[str, dict[str, int]]:
    """A module of functions and methods; each release changes some bodies at random."""
    values = {k: (v + 1 if rng.random() < 0.35 else v) for k, v in previous.items()}
    parts = ["import os\n"]
    for i in range(4):
        parts.append(f"\n\ndef fn{i}(x):\n    y = x + {values[f'fn{i}']}\n    return y\n")
    parts.append("\n\nclass Box:\n    size = 1\n")
    for i in range(3):
        deco = "    @staticmethod\n" if i == 1 else ""
        arg = "" if i == 1 else "self"
        parts.append(f"\n{deco}    def m{i}({arg}):\n        return {values[f'Box.m{i}']}\n")
    return "".join(parts), values


def test_versions_agree_with_an_ast_oracle(tmp_path: Path) -> None:
    rng = random.Random(7)
    values = {**{f"fn{i}": 0 for i in range(4)}, **{f"Box.m{i}": 0 for i in range(3)}}
    releases = []
    for _ in range(12):
        text, values = _random_release(rng, values)
        releases.append(text)
    settings = _replay(tmp_path / "ws", "pkg/mod.py", releases)
    defs = [_definitions(text) for text in releases]
    for name in defs[0]:
        changed = [k for k in range(1, len(defs)) if defs[k][name] != defs[k - 1][name]]
        answer = symbol_history(settings, name, limit=500)
        assert answer.status == "found" or not changed, name
        versions = list(reversed(answer.versions))  # oldest first
        assert len(versions) == len(changed), name
        for k, v in zip(changed, versions, strict=True):
            assert v["change_type"] == "modified" and v["path"] == "pkg/mod.py"
            assert v["name"] == name
            shown = symbol_source(settings, name, version=int(str(v["version"])))
            assert shown["source"] == defs[k][name], (name, k)
            first = releases[k].splitlines().index(defs[k][name].splitlines()[0]) + 1
            assert (v["start_line"], shown["start_line"]) == (first, first)
    now = symbol_source(settings, "Box.m1")
    assert now["version"] is None and now["source"] == defs[-1]["Box.m1"]


def test_the_scoped_diff_has_the_files_line_numbers(tmp_path: Path) -> None:
    head = "".join(f"X{i} = {i}\n" for i in range(30))
    one = head + "\n\ndef target(a):\n    b = a\n    return b\n\n\ndef other():\n    return 0\n"
    two = one.replace("    b = a\n", "    b = a * 2\n    b += 1\n").replace(
        "return 0", "return 9")
    settings = _replay(tmp_path / "ws", "m.py", [one, two])
    [v] = symbol_history(settings, "target").versions
    assert v["start_line"] == 33 and v["end_line"] == 36
    assert v["diff"] == ("--- a/m.py\n+++ b/m.py\n@@ -33,3 +33,4 @@\n def target(a):\n"
                         "-    b = a\n+    b = a * 2\n+    b += 1\n     return b\n")
    # The other function's change is not in it; its own diff is numbered where it stands.
    [o] = symbol_history(settings, "other").versions
    assert o["diff"] == ("--- a/m.py\n+++ b/m.py\n@@ -38,2 +39,2 @@\n def other():\n"
                         "-    return 0\n+    return 9\n")


def test_added_and_removed_definitions_are_anchored_in_the_other_side(tmp_path: Path) -> None:
    one = "def a():\n    return 1\n\n\ndef c():\n    return 3\n"
    two = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
    settings = _replay(tmp_path / "ws", "m.py", [one, two, one])
    removed, added = symbol_history(settings, "b").versions
    assert added["change_type"] == "added" and removed["change_type"] == "removed"
    assert added["diff"] == "--- /dev/null\n+++ b/m.py\n@@ -4,0 +5,2 @@\n+def b():\n+    return 2\n"
    assert removed["diff"] == ("--- a/m.py\n+++ /dev/null\n@@ -5,2 +4,0 @@\n-def b():\n"
                               "-    return 2\n")
    with pytest.raises(ToolFailed, match=r"removed from m\.py"):
        symbol_source(settings, "b")
    assert symbol_source(settings, f"b@{added['version']}")["source"] == (
        "def b():\n    return 2\n")


def test_history_follows_symbol_renames_and_file_renames(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    v1 = "import os\n\n\ndef load(p):\n    return open(p).read()\n"
    v2 = v1.replace("return open(p).read()", "with open(p) as f:\n        return f.read()")
    v3 = v2.replace("def load(", "def read_file(")
    settings = _replay(root, "io_util.py", [v1, v2, v3])
    (root / "io_util.py").rename(root / "files.py")  # a pure move: no symbol row says so
    index(settings)
    (root / "files.py").write_text(v3.replace("f.read()", "f.read().strip()"))
    index(settings)
    answer = symbol_history(settings, "read_file")
    assert answer.status == "found"
    got = [(v["name"], v["path"], v["change_type"], v.get("renamed_from"))
           for v in answer.versions]
    assert got == [("read_file", "files.py", "modified", None),
                   ("read_file", "io_util.py", "added", "load"),
                   ("load", "io_util.py", "modified", None)]
    # Asked by its old name, the same definition (its newest name is read_file).
    assert [v["version"] for v in symbol_history(settings, "load").versions] == [
        v["version"] for v in answer.versions]
    assert "+def read_file(p):" in str(answer.versions[1]["diff"])
    assert "-def load(p):" in str(answer.versions[1]["diff"])


def test_a_file_renamed_with_changes_is_followed_by_its_old_path(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    body = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(8))
    settings = _replay(root, "a.py", [body, body.replace("return 3", "return 33")])
    (root / "a.py").unlink()
    (root / "b.py").write_text(body.replace("return 3", "return 333"))
    index(settings)
    answer = symbol_history(settings, "f3")
    assert [(v["path"], v["old_path"]) for v in answer.versions] == [("b.py", "a.py"),
                                                                     ("a.py", None)]
    assert "-    return 33\n+    return 333\n" in str(answer.versions[0]["diff"])


def test_ambiguous_and_unknown_names(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    method = "class Session:\n    def refresh(self):\n        return {}\n"
    for name in ("a.py", "b.py"):
        (root / "pkg" / name).write_text(method.format(1))
    settings = _settings(root)
    index(settings)
    for name in ("a.py", "b.py"):
        (root / "pkg" / name).write_text(method.format(2))
    index(settings)
    both = symbol_history(settings, "Session.refresh")
    assert both.status == "ambiguous" and both.versions == []
    assert sorted(c["path"] for c in both.candidates) == ["pkg/a.py", "pkg/b.py"]
    one = symbol_history(settings, "Session.refresh", path="pkg/b.py")
    assert one.status == "found" and [v["path"] for v in one.versions] == ["pkg/b.py"]
    assert symbol_history(settings, "Session.refresh", path=str(root / "pkg/a.py")).status == (
        "found")
    unknown = symbol_history(settings, "refresh")
    assert unknown.status == "unknown" and unknown.suggestions[0] == "Session.refresh"
    assert symbol_history(settings, "Sesion.refresh").suggestions == ["Session.refresh"]
    with pytest.raises(InvalidArgs, match="names 2 definitions"):
        symbol_source(settings, "Session.refresh")
    with pytest.raises(InvalidArgs, match=r"did you mean Session\.refresh"):
        symbol_source(settings, "Session.refrsh")


def test_a_definition_unchanged_since_the_baseline_is_shown_from_disk(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "still.py").write_text("X = 1\n\n\ndef same():\n    return 1\n")
    settings = _replay(root, "m.py", ["def f():\n    return 1\n", "def f():\n    return 2\n"])
    with pytest.raises(InvalidArgs, match="no recorded version"):
        symbol_source(settings, "same")
    shown = symbol_source(settings, "same", path="still.py")
    assert shown["source"] == "def same():\n    return 1\n" and shown["start_line"] == 4
    with pytest.raises(InvalidArgs, match="no recorded version"):
        symbol_source(settings, "gone", path="still.py")


def test_since_and_limit(tmp_path: Path) -> None:
    texts = [f"def f():\n    return {i}\n" for i in range(6)]
    settings = _replay(tmp_path / "ws", "m.py", texts)
    page = symbol_history(settings, "f", limit=2)
    assert len(page.versions) == 2 and page.more
    assert "diff" not in symbol_history(settings, "f", diffs=False).versions[0]
    assert symbol_history(settings, "f", since="1ns").versions == []
    assert len(symbol_history(settings, "f", since="1h").versions) == 5
    with pytest.raises(InvalidArgs):
        symbol_history(settings, "f", limit=0)
    with pytest.raises(InvalidArgs, match="since"):
        symbol_history(settings, "f", since="1d")


def test_go_methods_have_versions(tmp_path: Path) -> None:
    one = ("package shop\n\ntype Cart struct{ n int }\n\nfunc (c *Cart) Add(k int) {\n"
           "\tc.n += k\n}\n\nfunc Total(c Cart) int {\n\treturn c.n\n}\n")
    two = one.replace("\tc.n += k\n", "\tif k > 0 {\n\t\tc.n += k\n\t}\n")
    three = two.replace("return c.n", "return c.n * 2")
    settings = _replay(tmp_path / "ws", "shop/cart.go", [one, two, three])
    [add] = symbol_history(settings, "shop.Cart.Add").versions
    assert add["name"] == "shop.Cart.Add" and add["kind"] == "method"
    assert add["diff"] == ("--- a/shop/cart.go\n+++ b/shop/cart.go\n@@ -5,3 +5,5 @@\n"
                           " func (c *Cart) Add(k int) {\n-\tc.n += k\n+\tif k > 0 {\n"
                           "+\t\tc.n += k\n+\t}\n }\n")
    assert len(symbol_history(settings, "shop.Total").versions) == 1
    assert symbol_history(settings, "Cart.Add").suggestions[0] == "shop.Cart.Add"


# -- restore -----------------------------------------------------------------------------------


def test_restore_puts_one_function_back_and_leaves_the_rest(tmp_path: Path) -> None:
    rng = random.Random(3)
    values = {**{f"fn{i}": 0 for i in range(4)}, **{f"Box.m{i}": 0 for i in range(3)}}
    releases = []
    for _ in range(6):
        text, values = _random_release(rng, values)
        releases.append(text)
    root = tmp_path / "ws"
    settings = _replay(root, "mod.py", releases)
    target = next(n for n in _definitions(releases[0])
                  if len(symbol_history(settings, n).versions) >= 2)
    oldest = symbol_history(settings, target).versions[-1]
    old_text = symbol_source(settings, target, version=int(str(oldest["version"])))["source"]
    before = (root / "mod.py").read_text()

    preview = restore_symbol(settings, target, to=int(str(oldest["version"])))
    assert preview["dry_run"] is True and preview["applied"] is False
    assert (root / "mod.py").read_text() == before  # a dry run by default
    assert "acp" in preview

    done = restore_symbol(settings, target, to=int(str(oldest["version"])), dry_run=False)
    assert done["applied"] is True and done["restored"] == {
        "name": target, "path": "mod.py", "version": oldest["version"]}
    after = (root / "mod.py").read_text()
    ast.parse(after)
    now, then = _definitions(after), _definitions(before)
    assert now[target] == old_text
    assert {k: v for k, v in now.items() if k != target} == {
        k: v for k, v in then.items() if k != target}
    outside = re.sub(re.escape(old_text), "", after)
    assert outside == re.sub(re.escape(then[target]), "", before)
    newest = symbol_history(settings, target).versions[0]
    assert newest["origin"] == "edit" and newest["origin_info"] == {"client": "cli"}
    assert symbol_source(settings, target)["source"] == old_text


def test_restore_a_removed_definition_beside_its_former_neighbour(tmp_path: Path) -> None:
    one = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"
    two = "def a():\n    return 1\n\n\ndef b():\n    return 22\n\n\ndef c():\n    return 3\n"
    gone = "def a():\n    return 10\n\n\ndef c():\n    return 3\n"
    root = tmp_path / "ws"
    settings = _replay(root, "m.py", [one, two, gone])
    history = symbol_history(settings, "b").versions
    assert [v["change_type"] for v in history] == ["removed", "modified"]
    result = restore_symbol(settings, "b", to=int(str(history[1]["version"])), dry_run=False)
    assert result["applied"] is True
    assert (root / "m.py").read_text() == (
        "def a():\n    return 10\n\n\ndef b():\n    return 22\n\n\ndef c():\n    return 3\n")
    with pytest.raises(ToolFailed, match="removed the definition"):
        restore_symbol(settings, "b", to=int(str(history[0]["version"])))
    with pytest.raises(InvalidArgs, match="has no version 999"):
        restore_symbol(settings, "b", to=999)


def test_restore_refuses_what_it_cannot_place(tmp_path: Path) -> None:
    one = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    two = "def a():\n    return 1\n\n\ndef b():\n    return 3\n"
    root = tmp_path / "ws"
    settings = _replay(root, "m.py", [one, two, "X = 1\n"])
    version = int(str(symbol_history(settings, "b").versions[-1]["version"]))
    with pytest.raises(ToolFailed, match="neither of its former neighbours"):
        restore_symbol(settings, "b", to=version)


def test_cli_log_show_restore(tmp_path: Path) -> None:
    import subprocess

    root = tmp_path / "ws"
    settings = _replay(root, "m.py", ["def f():\n    return 1\n", "def f():\n    return 2\n"])
    db = ["--root", str(root), "--db", settings.db_url]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return symdiff_cli(*args, *db, cwd=root, env={"SYMDIFF_HOST": "test-host"})

    log = run("log", "f", "--json")
    assert log.returncode == 0, log.stderr
    [v] = json.loads(log.stdout)["versions"]
    text = run("log", "f")
    assert f"version {v['version']}" in text.stdout and "-    return 1\n+    return 2\n" in (
        text.stdout)
    missing = run("log", "g")
    assert missing.returncode == 1 and "no recorded version of g" in missing.stderr
    assert run("show", f"f@{v['version']}").stdout == "def f():\n    return 2\n"
    assert run("show", "f").stdout == "def f():\n    return 2\n"
    (root / "m.py").write_text("def f():\n    return 3\n")
    index(settings)
    dry = run("restore", "f", "--to", str(v["version"]), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "dry run, nothing written" in dry.stdout
    assert (root / "m.py").read_text() == "def f():\n    return 3\n"
    real = run("restore", "f", "--to", str(v["version"]), "--json")
    assert json.loads(real.stdout)["applied"] is True
    assert (root / "m.py").read_text() == "def f():\n    return 2\n"
    bad = run("show", "f@12345")
    assert bad.returncode == 2 and "has no version 12345" in bad.stderr
