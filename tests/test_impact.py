"""`impact`: the callers and the tests a change reaches, end to end (docs/impact.md).

A real Python project in a real git repository; the changes come from real edits recorded by
`index`, by the daemon, and by an agent's hooks as Claude Code calls them; the answer's
`run.pytest` command is then run with the real pytest, which must select exactly the tests
named and pass them.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import (
    daemon_settings,
    daemon_thread,
    git,
    make_settings,
    symdiff_cli,
    wait_until,
)
from mcp.client.session import ClientSession
from mcp_servers import call, env, http_server, run_http, run_stdio, text_of
from mcp_servers import index as serve_index

from symdiff import api
from symdiff.impact.index import current, forget, keep_numbered, wait_numbered
from symdiff.parse.extract import extract_with_refs
from symdiff.parse.version import extractor_version
from symdiff.store import Store

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def helper(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "class Thing:\n"
        "    def __init__(self, n):\n"
        "        self.n = n\n"
        "\n"
        "    def grow(self):\n"
        "        return helper(self.n)\n"
    ),
    "pkg/api.py": (
        "from pkg import core\n"
        "\n"
        "from .core import helper as h\n"
        "\n"
        "\n"
        "def run(x):\n"
        "    return h(x) * 2\n"
        "\n"
        "\n"
        "def make():\n"
        "    t = core.Thing(3)\n"
        "    return t.grow()\n"
        "\n"
        "\n"
        "def unrelated():\n"
        "    return 0\n"
    ),
    "tests/conftest.py": (
        "import pytest\n"
        "\n"
        "from pkg.core import Thing\n"
        "\n"
        "\n"
        "@pytest.fixture\n"
        "def thing():\n"
        "    return Thing(5)\n"
    ),
    "tests/test_api.py": (
        "import pytest\n"
        "\n"
        "from pkg.api import make, run, unrelated\n"
        "\n"
        "\n"
        "def test_run():\n"
        "    assert run(1) == 4\n"
        "\n"
        "\n"
        "class TestMake:\n"
        "    def test_make(self):\n"
        "        assert make() == 4\n"
        "\n"
        "\n"
        "@pytest.mark.parametrize('v', [1, 2])\n"
        "def test_unrelated(v):\n"
        "    assert unrelated() == 0\n"
    ),
    "tests/test_thing.py": (
        "def test_thing(thing):\n"
        "    assert thing.n == 5\n"
    ),
    "tests/test_helper.py": (
        "from pkg.core import helper\n"
        "\n"
        "\n"
        "def test_one():\n"
        "    assert helper(0) == 1\n"
        "\n"
        "\n"
        "def test_two():\n"
        "    assert helper(1) == 2\n"
    ),
}


def _project(root: Path) -> Path:
    root.mkdir(parents=True)
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "project")
    return root.resolve()


def _edit(root: Path, path: str, old: str, new: str) -> None:
    text = (root / path).read_text()
    assert old in text
    (root / path).write_text(text.replace(old, new))


def _pytest_runs(root: Path, command: str) -> list[str]:
    """Run an answer's `run.pytest` with the real pytest; the node ids it ran, all passed."""
    words = shlex.split(command)
    assert words[0] == "pytest"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rA", "-n", "0", *words[1:]], cwd=root, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted({line.split()[1].split("[")[0] for line in done.stdout.splitlines()
                   if line.startswith("PASSED ")})  # fmt: skip


def _callers(found: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(c["path"], c["name"], c["depth"]) for c in found["callers"]}


def test_given_names_reach_callers_and_tests_and_pytest_runs_them(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    settings = make_settings(root)
    api.index(settings)
    forget()
    found = api.impact(settings, symbols=["pkg/core.py:helper"])
    assert found["changed"] == [{"name": "helper", "path": "pkg/core.py", "change_type": "given"}]
    callers = _callers(found)
    assert {("pkg/api.py", "run", 1), ("pkg/core.py", "Thing.grow", 1),
            ("pkg/api.py", "make", 2), ("tests/test_api.py", "test_run", 2)} <= callers
    assert not any(name == "unrelated" for _, name, _ in callers)
    nodes = sorted(t["node_id"] for t in found["tests"])
    assert nodes == ["tests/test_api.py::TestMake::test_make", "tests/test_api.py::test_run",
                     "tests/test_helper.py::test_one", "tests/test_helper.py::test_two"]
    # a file whose every test is selected is named by its path
    assert shlex.split(found["run"]["pytest"])[1:] == [
        "tests/test_api.py::TestMake::test_make", "tests/test_api.py::test_run",
        "tests/test_helper.py"]
    assert _pytest_runs(root, found["run"]["pytest"]) == nodes
    # the text form lists the nearest, says how many more, and keeps the whole command
    from symdiff.cli.impact import lines

    text = lines(found, shown=1)
    assert "  ... and 3 more tests, farther away (--json lists them all)" in text
    assert f"run (pytest): {found['run']['pytest']}" in text
    # depth 1: only the direct callers
    assert {d for _, _, d in _callers(api.impact(settings, symbols=["helper"], depth=1))} == {1}


def test_a_held_graph_numbered_in_the_background_gives_the_same_answers(tmp_path: Path
                                                                        ) -> None:  # fmt: skip
    root = _project(tmp_path / "p")
    settings = make_settings(root)
    api.index(settings)
    forget()
    asked = [(["pkg/core.py:helper"], 2), (["Thing.__init__"], 1), (["Thing", "make"], 3)]
    before = [api.impact(settings, symbols=s, depth=d) for s, d in asked]
    keep_numbered()
    try:
        api.impact(settings, symbols=["helper"])  # the held graph is numbered after this
        wait_numbered(60)
        with Store(settings.db_url) as store:
            ws = store.find_workspace(str(settings.root), settings.host)
            assert ws is not None
            assert current(settings, store, ws.id).warmed
        assert [api.impact(settings, symbols=s, depth=d) for s, d in asked] == before
        # an edit inside a body: the numbered graph works out that node's users again
        _edit(root, "pkg/api.py", "    return h(x) * 2\n", "    return x * 2\n")
        api.index(settings)
        found = api.impact(settings, symbols=["pkg/core.py:helper"])
        forget()
        keep_numbered(False)
        assert found == api.impact(settings, symbols=["pkg/core.py:helper"])
        assert ("pkg/api.py", "run", 1) not in _callers(found)
    finally:
        keep_numbered(False)
        forget()


def test_against_head_and_a_fixture_reach_the_tests(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    settings = make_settings(root)
    api.index(settings)
    _edit(root, "pkg/core.py", "        self.n = n\n", "        self.n = n + 0\n")
    found = api.impact(settings, against="HEAD")
    assert [(c["path"], c["name"], c["change_type"]) for c in found["changed"]] == [
        ("pkg/core.py", "Thing.__init__", "modified")]
    nodes = sorted(t["node_id"] for t in found["tests"])
    # make() builds a Thing; the fixture `thing` of conftest.py builds one for test_thing
    assert nodes == ["tests/test_api.py::TestMake::test_make", "tests/test_thing.py::test_thing"]
    assert _pytest_runs(root, found["run"]["pytest"]) == nodes


def test_the_daemon_keeps_the_index_current(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    settings = daemon_settings(root)
    with daemon_thread(settings) as d:
        status = wait_until(lambda: (found := api.status(settings))["refindex"] is not None
                            and found["refindex"]["state"] == "built" and found, timeout=60)
        assert status["refindex"] == {"state": "built", "done": 7, "total": 7}
        # the build stored what the workers encoded: it reads back as a fresh extraction
        with api.open_store(settings) as store:
            ws = store.find_workspace(str(settings.root), settings.host)
            assert ws is not None
            keys = {("python", state.blob_hash): path
                    for path, state in store.file_states(ws.id).items()}
            version = extractor_version()
            fresh = {key: extract_with_refs("python", (root / path).read_bytes())
                     for key, path in keys.items()}
            assert store.load_facts(version, list(keys)) == {
                key: (tuple(symbols), refs) for key, (symbols, refs) in fresh.items()}
        shown = symdiff_cli("status", str(root))
        assert "reference index built (7 files extracted at start)" in shown.stdout, shown
        (root / "tests" / "test_new.py").write_text(
            "from pkg.core import helper\n\n\ndef test_new():\n    assert helper(1) == 2\n")
        d.wait_until(lambda s: s.changes >= 1, 30)
        found = api.impact(settings, symbols=["helper"])
        assert "tests/test_new.py::test_new" in {t["node_id"] for t in found["tests"]}
        # the daemon stored the new file's references as it recorded it: nothing is parsed
        with api.open_store(settings) as store:
            ws = store.find_workspace(str(settings.root), settings.host)
            assert ws is not None
            blob = store.file_states(ws.id)["tests/test_new.py"].blob_hash
            assert list(store.load_facts(version, [("python", blob)])) == [("python", blob)]


def test_an_agent_turn_reaches_its_tests_by_the_cli(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    assert symdiff_cli("index", str(root)).returncode == 0
    symdiff = str(Path(sys.executable).parent / "symdiff")

    def hook(**event: object) -> None:
        body = {"session_id": "S", "transcript_path": "/t", "cwd": str(root), **event}
        subprocess.run([symdiff, "hook", "claude-code", "--root", str(root)], check=True,
                       input=json.dumps(body).encode(), env=env(), timeout=60)  # fmt: skip

    tool = {"tool_name": "Edit", "tool_use_id": "t1",
            "tool_input": {"file_path": str(root / "pkg/api.py")}}
    hook(hook_event_name="UserPromptSubmit", prompt="make run triple")
    hook(hook_event_name="PreToolUse", **tool)
    _edit(root, "pkg/api.py", "return h(x) * 2", "return h(x) * 3")
    hook(hook_event_name="PostToolUse", **tool)
    hook(hook_event_name="Stop")
    _edit(root, "tests/test_api.py", "run(1) == 4", "run(1) == 6")  # the person's fix
    done = subprocess.run([symdiff, "impact", "--root", str(root), "--session", "S", "--turn",
                           "1", "--json"], capture_output=True, text=True, env=env(),
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["changed"] == [{"name": "run", "path": "pkg/api.py", "change_type": "modified"}]
    assert [t["node_id"] for t in found["tests"]] == ["tests/test_api.py::test_run"]
    assert _pytest_runs(root, found["run"]["pytest"]) == ["tests/test_api.py::test_run"]
    # a person's edit that nothing recorded yet: --refresh records it first
    _edit(root, "pkg/core.py", "    return helper(self.n)", "    return helper(self.n) + 0")
    stale = symdiff_cli("impact", "--root", str(root), "--since", "1h", "--json")
    assert "Thing.grow" not in {c["name"] for c in json.loads(stale.stdout)["changed"]}
    fresh = symdiff_cli("impact", "--root", str(root), "--since", "1h", "--refresh", "--json")
    assert fresh.returncode == 0, fresh.stderr
    assert {"name": "Thing.grow", "path": "pkg/core.py", "change_type": "modified"} in json.loads(
        fresh.stdout)["changed"]
    text = symdiff_cli("impact", "--root", str(root), "helper")
    assert text.returncode == 0, text.stderr
    assert "tests/test_api.py::test_run" in text.stdout and "run (pytest): pytest " in text.stdout
    bad = symdiff_cli("impact", "--root", str(root), "--since", "1h", "helper")
    assert bad.returncode != 0 and "invalid_args" in bad.stderr
    unknown = symdiff_cli("impact", "--root", str(root), "no_such_name")
    assert unknown.returncode != 0 and "no definition named 'no_such_name'" in unknown.stderr


def test_the_mcp_tool_over_stdio_and_diff_include_impact_over_http(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    serve_index(root)  # as `symdiff index` does, on the servers' host
    _edit(root, "pkg/core.py", "return x + 1", "return x + 2")
    serve_index(root)

    async def tool(session: ClientSession) -> None:
        got = await call(session, "impact", {"symbols": ["Thing.grow"]})
        assert not got.is_error, text_of(got)
        assert got.structured_content is not None
        assert [t["node_id"] for t in got.structured_content["tests"]] == [
            "tests/test_api.py::TestMake::test_make"]
        bad = await call(session, "impact", {"depth": 11})
        assert bad.is_error and "depth" in text_of(bad)

    run_stdio(["--root", str(root)], tool, cwd=root)

    async def with_diff(session: ClientSession) -> None:
        got = await call(session, "diff", {"include_impact": True})
        assert not got.is_error, text_of(got)
        assert got.structured_content is not None
        impact = got.structured_content["impact"]
        assert impact["changed"] == [{"name": "helper", "path": "pkg/core.py",
                                      "change_type": "modified"}]
        assert sorted(t["node_id"] for t in impact["tests"]) == [
            "tests/test_api.py::TestMake::test_make", "tests/test_api.py::test_run",
            "tests/test_helper.py::test_one", "tests/test_helper.py::test_two"]

    with http_server(["--root", str(root)], tmp_path) as served:
        run_http(served.url, with_diff)


def test_retention_drops_the_references_of_replaced_versions(tmp_path: Path) -> None:
    from symdiff.parse.version import extractor_version

    root = _project(tmp_path / "p")
    settings = make_settings(root)
    api.index(settings)
    api.impact(settings, symbols=["helper"])  # builds the index: every file's references
    with api.open_store(settings) as store:
        ws = store.find_workspace(str(settings.root), settings.host)
        assert ws is not None
        old = store.file_states(ws.id)["pkg/core.py"].blob_hash
        version = extractor_version()
        old_facts = store.load_facts(version, [("python", old)])
        assert set(old_facts) == {("python", old)}
    _edit(root, "pkg/core.py", "return x + 1", "return x + 2")
    api.index(settings)  # records the change: the new version's references are stored with it
    with api.open_store(settings) as store:
        new = store.file_states(ws.id)["pkg/core.py"].blob_hash
        # and the replaced version's go at once (the record knows no file holds it now)
        assert set(store.load_facts(version, [("python", old), ("python", new)])) == {
            ("python", new)}
        # stored again by someone who met that version (an `impact` of an older tree)
        assert store.keep_facts(version, old_facts) == 1
        assert set(store.load_facts(version, [("python", old)])) == {("python", old)}
    report = api.collect(settings)
    assert report.facts >= 1
    with api.open_store(settings) as store:
        # the old version's symbols stay (a record names its blob); its references go
        assert store.load_facts(version, [("python", old)]) == {}
        assert set(store.load_facts(version, [("python", new)])) == {("python", new)}


def test_a_store_that_refuses_the_cache_still_answers(tmp_path: Path,
                                                      caplog: Any) -> None:
    """The index's facts are a cache: a read-only store costs a warning, not the answer."""
    from symdiff.store import Store

    root = _project(tmp_path / "p")
    settings = make_settings(root)
    api.index(settings)
    forget()
    with Store(settings.db_url, read_only=True) as store:
        found = api.impact(settings, symbols=["Thing.grow"], store=store)
    assert [t["node_id"] for t in found["tests"]] == ["tests/test_api.py::TestMake::test_make"]
    assert "cannot store the reference index's facts" in caplog.text
