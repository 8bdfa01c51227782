"""Trees the indexer cannot fully see: names that are not UTF-8, directories it cannot list,
a file replaced by a directory. Real files, real SQLite and PostgreSQL, real file modes."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
from conftest import make_settings, symdiff_cli
from unprivileged import python, symdiff

from symdiff.record.indexer import Notices, Report, reconcile
from symdiff.store import Store

HOST = "test-host"


def _kinds(report: Report) -> list[tuple[str, str]]:
    return sorted((c.change_type.value, c.path) for c in report.changes)


def _bytes_path(root: Path, name: bytes) -> bytes:
    return os.fsencode(root) + b"/" + name


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest) -> str:
    name = "sqlite_url" if request.param == "sqlite" else "pg_head_url"
    return str(request.getfixturevalue(name))


# -- names that are not UTF-8 -----------------------------------------------------------------


def test_a_name_that_is_not_utf8_is_skipped_and_the_rest_recorded(
    repo: Path, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    (repo / "ok.py").write_text("x = 1\n")
    settings = make_settings(repo, url, host=HOST)
    notices = Notices()
    with Store(url) as store:
        reconcile(store, settings, notices=notices)
        with open(_bytes_path(repo, b"bad\xff.py"), "wb") as f:
            f.write(b"x")
        os.mkdir(_bytes_path(repo, b"dir\xfe"))
        with open(_bytes_path(repo, b"dir\xfe/inside.py"), "wb") as f:
            f.write(b"y = 1\n")
        with open(_bytes_path(repo, b"skip\xff.log"), "wb") as f:  # ignored: not even a warning
            f.write(b"z")
        (repo / ".gitignore").write_text("*.log\n")
        (repo / "ok.py").write_text("x = 2\n")
        with caplog.at_level(logging.WARNING, logger="symdiff.record.indexer"):
            full = reconcile(store, settings, notices=notices)
            again = reconcile(store, settings, notices=notices)
            # The event path: the watcher hands over the name as Python decodes it.
            (repo / "ok.py").write_text("x = 3\n")
            paths = [os.fsdecode(b"bad\xff.py"), os.fsdecode(b"dir\xfe/inside.py"), "ok.py"]
            events = reconcile(store, settings, paths=paths, notices=notices)
    assert _kinds(full) == [("add", ".gitignore"), ("modify", "ok.py")]
    assert full.skipped == ("bad\\xff.py", "dir\\xfe")
    assert again.changes == () and again.skipped == full.skipped
    assert _kinds(events) == [("modify", "ok.py")]
    assert events.skipped == ("bad\\xff.py", "dir\\xfe")
    warnings = [r.getMessage() for r in caplog.records]
    assert sorted(warnings) == ["skipping bad\\xff.py: the name is not valid UTF-8",
                                "skipping dir\\xfe: the name is not valid UTF-8"]


def test_symdiff_index_exits_0_beside_a_name_that_is_not_utf8(repo: Path, url: str) -> None:
    (repo / "ok.py").write_text("x = 1\n")
    with open(_bytes_path(repo, b"bad\xff.py"), "wb") as f:
        f.write(b"x")
    args = ["index", str(repo), "--db", url, "--json"]
    first = symdiff(*args, env={"SYMDIFF_HOST": HOST})
    assert first.returncode == 0, first.stderr
    (repo / "ok.py").write_text("x = 2\n")
    second = symdiff(*args, env={"SYMDIFF_HOST": HOST})
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert [(c["change_type"], c["path"]) for c in report["changes"]] == [("modify", "ok.py")]
    assert report["skipped"] == ["bad\\xff.py"]
    assert second.stderr.count("skipping bad\\xff.py: the name is not valid UTF-8") == 1
    assert "Traceback" not in second.stderr


# -- directories that cannot be listed ---------------------------------------------------------


def _tree_with_a_private_dir(repo: Path) -> None:
    (repo / "private" / "deep").mkdir(parents=True)
    (repo / "private" / "a.py").write_text("a = 1\n")
    (repo / "private" / "deep" / "b.py").write_text("b = 1\n")
    (repo / "open.py").write_text("o = 1\n")


@pytest.mark.parametrize("mode", [0o000, 0o444, 0o111])
def test_files_under_an_unlistable_directory_keep_their_state(
    repo: Path, url: str, mode: int
) -> None:
    """chmod 000 (cannot list), 444 (cannot stat what it lists), 111 (cannot list, can enter):
    no false deletes while it is unreadable, no false adds once it is readable again."""
    _tree_with_a_private_dir(repo)
    args = ["index", str(repo), "--db", url, "--json"]
    env = {"SYMDIFF_HOST": HOST}
    assert symdiff_cli(*args, env=env).returncode == 0  # the baseline, readable: in-process
    (repo / "open.py").write_text("o = 2\n")
    (repo / "private").chmod(mode)
    try:
        blind = symdiff(*args, env=env)  # a process the modes bind (see unprivileged.py)
    finally:
        (repo / "private").chmod(0o755)
    assert blind.returncode == 0, blind.stderr
    report = json.loads(blind.stdout)
    assert [(c["change_type"], c["path"]) for c in report["changes"]] == [("modify", "open.py")]
    if mode == 0o444:  # listed, but nothing in it can be looked at
        assert report["skipped"] == ["private/a.py", "private/deep"]
        assert "cannot stat private/a.py: Permission denied" in blind.stderr
    else:
        assert report["skipped"] == ["private"]
        assert f"cannot list {repo / 'private'}: Permission denied" in blind.stderr
    back = json.loads(symdiff_cli(*args, env=env).stdout)
    assert back["changes"] == [] and back["skipped"] == []


# Subtree passes, as the daemon runs them for events: [changes..., skipped] per pass.
_PASSES = """
import json, sys
from symdiff.config import Settings
from symdiff.record.indexer import reconcile
from symdiff.store import Store
settings = Settings.resolve(sys.argv[1], db=sys.argv[2], host=sys.argv[3])
out = []
with Store(settings.db_url) as store:
    for paths in (["private"], ["private/a.py", "private/deep/b.py"], [""]):
        r = reconcile(store, settings, paths=paths)
        out.append([[c.change_type.value, c.path] for c in r.changes] + [list(r.skipped)])
print(json.dumps(out))
"""


def test_an_unlistable_directory_on_the_event_path_deletes_nothing(repo: Path, url: str) -> None:
    """`reconcile(paths=...)` for the directory, for a file in it, and for the tree's root."""
    _tree_with_a_private_dir(repo)
    settings = make_settings(repo, url, host=HOST)
    with Store(url) as store:
        reconcile(store, settings)
    (repo / "private").chmod(0)
    try:
        run = python("-c", _PASSES, str(repo), url, HOST)
    finally:
        (repo / "private").chmod(0o755)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [[["private"]],
                                      [["private/a.py", "private/deep/b.py"]],
                                      [["private"]]]


# -- a file replaced by a directory -----------------------------------------------------------


def test_a_file_replaced_by_a_directory_is_deleted(repo: Path, url: str) -> None:
    (repo / "f").write_text("was a file\n")
    (repo / "g").write_text("also a file\n")
    (repo / "keep.py").write_text("k = 1\n")
    settings = make_settings(repo, url, host=HOST)
    with Store(url) as store:
        reconcile(store, settings)
        (repo / "f").unlink()
        (repo / "f").mkdir()
        (repo / "f" / "x").write_text("new\n")
        full = reconcile(store, settings)
        (repo / "g").unlink()
        (repo / "g").mkdir()
        (repo / "g" / "y").write_text("new too\n")
        events = reconcile(store, settings, paths=["g"])  # what the watcher hands over
        # And back: the directory replaced by a file again.
        shutil.rmtree(repo / "f")
        (repo / "f").write_text("a file again\n")
        back = reconcile(store, settings, paths=["f"])
    assert _kinds(full) == [("add", "f/x"), ("delete", "f")]
    assert _kinds(events) == [("add", "g/y"), ("delete", "g")]
    assert _kinds(back) == [("add", "f"), ("delete", "f/x")]


def test_the_python_api_refuses_a_root_no_record_can_name(tmp_path: Path) -> None:
    """`symdiff.index` on a root whose name is not UTF-8: ToolFailed, not a UnicodeEncodeError
    from the database URL."""
    import symdiff
    from symdiff.config import Settings
    from symdiff.errors import ToolFailed

    bad = tmp_path / os.fsdecode(b"bad\xff")
    bad.mkdir()
    with pytest.raises(ToolFailed):
        symdiff.index(Settings.resolve(bad))
