"""Same-named definitions in one file (a conditional `def`, a `.pyi` beside its `.py`): picked
by `PATH:NAME`, by a version, by `#N` and by `:LINE`, through the CLI over a real git history
imported with `symdiff history import`, and through the Python API."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from symdiff.cli.main import cli
from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.symbols.history import symbol_history, symbol_source
from symdiff.symbols.select import Selector, parse_selector

COMPAT = """import sys

if sys.version_info >= (3, 12):
    def batched(it, n):
        return list(it)[:{one}]
else:
    def batched(it, n):
        out = list(it)
        return out[:{two}]


def other():
    return 0
"""
STUB = "def batched(it: list[int], n: int) -> list[int]: ...\n"
START = datetime(2026, 1, 5, 12, tzinfo=UTC)


def _commit(repo: Path, files: dict[str, str], hours: int) -> None:
    for name, text in files.items():
        (repo / name).write_text(text)
    when = (START + timedelta(hours=hours)).isoformat()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_DATE": when}  # fmt: skip
    for args in (["add", "-A"], ["commit", "-qm", f"at {hours}h"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def history(repo: Path) -> tuple[Path, str]:
    """compat.py's two conditional `batched` changed one at a time, then both at once;
    compat.pyi's stub changed once; imported with `symdiff history import`."""
    _commit(repo, {"compat.py": COMPAT.format(one="n", two="n"), "compat.pyi": STUB}, 0)
    _commit(repo, {"compat.py": COMPAT.format(one="n + 0", two="n")}, 1)  # the first
    _commit(repo, {"compat.py": COMPAT.format(one="n + 0", two="n - 0")}, 2)  # the second
    _commit(repo, {"compat.py": COMPAT.format(one="n * 1", two="n // 1")}, 3)  # both
    _commit(repo, {"compat.pyi": STUB.replace("n: int", "n: int = 2")}, 4)
    db = f"sqlite:///{repo.parent / 'db' / 'index.db'}"
    res = CliRunner().invoke(cli, ["history", "import", str(repo), "--db", db])
    assert res.exit_code == 0, res.output
    return repo, db


def _run(history: tuple[Path, str], *args: str) -> Result:
    repo, db = history
    return CliRunner().invoke(cli, [*args, "--root", str(repo), "--db", db])


def _versions(history: tuple[Path, str], selector: str) -> list[tuple[int, str]]:
    """(version, change type) of each version `log` lists, newest first."""
    res = _run(history, "log", selector, "--limit", "50")
    assert res.exit_code == 0, res.output
    return [(int(m[1]), m[2]) for m in re.finditer(
        r"^version (\d+) .*\n  (\w+) function batched", res.stdout, re.MULTILINE)]  # fmt: skip


def _listed(stderr: str) -> list[str]:
    """The selectors an ambiguity lists: the first word of each indented line."""
    return [line.split()[0] for line in stderr.splitlines() if line.startswith("  ")]


def test_the_ambiguity_lists_selectors_that_each_name_one(history: tuple[Path, str]) -> None:
    res = _run(history, "log", "batched")
    assert res.exit_code == 1
    assert res.stderr.startswith("symdiff: batched names 3 definitions; name one of them:")
    assert sorted(_listed(res.stderr)) == [
        "compat.py:batched#1", "compat.py:batched#2", "compat.pyi:batched"]
    shown = _run(history, "show", "batched")
    assert shown.exit_code == 2 and "invalid_args: batched names 3 definitions" in shown.stderr
    assert sorted(_listed(shown.stderr)) == sorted(_listed(res.stderr))
    # Pasted back, each selector names one definition.
    first, second = _versions(history, "compat.py:batched#1"), _versions(
        history, "compat.py:batched#2")  # fmt: skip
    assert [t for _, t in first] == ["modified", "modified", "added"]
    assert [t for _, t in second] == ["modified", "modified", "added"]
    assert first[0][0] == second[0][0]  # the commit that changed both
    assert first[1][0] != second[1][0]  # each changed alone once
    assert [t for _, t in _versions(history, "compat.pyi:batched")] == ["signature_changed",
                                                                        "added"]
    # Occurrences, lines and a version that only one of them has.
    now_one = "    def batched(it, n):\n        return list(it)[:n * 1]\n"
    now_two = "    def batched(it, n):\n        out = list(it)\n        return out[:n // 1]\n"
    for selector, text in [("compat.py:batched#1", now_one), ("batched#2", now_two),
                           ("compat.py:batched:L5", now_one), ("batched:L9", now_two),
                           ("compat.py:batched:8", now_two)]:
        res = _run(history, "show", selector)
        assert (res.exit_code, res.stdout) == (0, text), (selector, res.output)
    only_second = second[1][0]
    at = _run(history, "show", f"batched@{only_second}")
    assert at.exit_code == 0, at.output
    assert at.stdout == now_two.replace("n // 1", "n - 0")
    both = _run(history, "show", f"batched@{first[0][0]}")
    assert both.exit_code == 2
    assert sorted(_listed(both.stderr)) == [f"compat.py:batched#1@{first[0][0]}",
                                            f"compat.py:batched#2@{first[0][0]}"]


def test_restore_one_of_two_same_named_definitions(history: tuple[Path, str]) -> None:
    repo = history[0]
    [_, _, (added, _)] = _versions(history, "compat.py:batched#2")
    res = _run(history, "restore", "compat.py:batched#2", "--to", str(added))
    assert res.exit_code == 0, res.output
    assert (repo / "compat.py").read_text() == COMPAT.format(one="n * 1", two="n")
    # A version alone tells them apart; and a line that no definition of the name holds.
    [_, (alone, _), _] = _versions(history, "compat.py:batched#1")
    res = _run(history, "restore", "batched", "--to", str(alone), "--dry-run")
    assert res.exit_code == 0, res.output
    assert "batched in compat.py as at version" in res.stdout
    res = _run(history, "show", "compat.py:batched:L12")
    assert res.exit_code == 2 and "holds line 12" in res.stderr
    assert "in compat.py at lines 4-5, 7-9" in res.stderr


def test_the_python_api_takes_the_same_selectors(history: tuple[Path, str]) -> None:
    repo, db = history
    settings = Settings.resolve(str(repo), db=db)
    answer = symbol_history(settings, "batched")
    assert answer.status == "ambiguous"
    assert {c["selector"] for c in answer.candidates} == {
        "compat.py:batched#1", "compat.py:batched#2", "compat.pyi:batched"}
    assert symbol_history(settings, "batched#2", path="compat.py").status == "found"
    assert symbol_history(settings, "compat.pyi:batched").status == "found"
    stub = symbol_source(settings, "batched", path="compat.pyi")
    assert stub["source"] == "def batched(it: list[int], n: int = 2) -> list[int]: ...\n"
    with pytest.raises(InvalidArgs, match="no file has a definition #3 of batched"):
        symbol_source(settings, "compat.py:batched#3")
    with pytest.raises(InvalidArgs, match="no definition of batched has version 99999"):
        symbol_source(settings, "batched@99999")


@pytest.mark.parametrize(("spec", "want"), [
    ("Session.refresh", Selector("Session.refresh")),
    ("pkg/io.py:load#2@17", Selector("load", "pkg/io.py", occurrence=2, version=17)),
    ("io.py:Box.load:L120", Selector("Box.load", "io.py", line=120)),
    ("load:9", Selector("load", line=9)),
    ("mod::Type::method", Selector("mod::Type::method")),  # Rust, C++
    ("M:greet", Selector("M:greet")),  # Lua: M is no file
    ("lib/m.lua:M:greet", Selector("M:greet", "lib/m.lua")),
    ("Klass#method", Selector("Klass#method")),  # Ruby
    ("Klass#method#2", Selector("Klass#method", occurrence=2)),
])
def test_selectors_parse(spec: str, want: Selector) -> None:
    assert parse_selector(spec) == want


@pytest.mark.parametrize(("spec", "kwargs", "words"), [
    ("f#0", {}, "count from 1"),
    ("a.py:f", {"path": "b.py"}, "names the file a.py"),
    ("f@3", {"version": 4}, "names version 3"),
    (" ", {}, "qualified symbol name"),
])
def test_selector_errors(spec: str, kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(InvalidArgs, match=words):
        parse_selector(spec, **kwargs)  # type: ignore[arg-type]
