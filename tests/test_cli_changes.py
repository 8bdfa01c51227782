"""`symdiff changes`: the diff query on the command line, end to end through `index`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import cli_group, symdiff_cli


def symdiff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`symdiff ARGS` in `root`, in this process (test_cli.py runs the real console script)."""
    return symdiff_cli(*args, cwd=root,
                       env={"SYMDIFF_HOST": "cli-test", "COLUMNS": "200", "SYMDIFF_DB": None})


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree indexed twice: a baseline, then one impl and one test modification."""
    root = tmp_path_factory.mktemp("cli").resolve()
    (root / "app.py").write_text("def f():\n    return 1\n\n\nclass A:\n    def m(self, x):\n"
                                 "        pass\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_f():\n    pass\n")
    assert symdiff(root, "index", "--json").returncode == 0
    (root / "app.py").write_text("def f():\n    return 2\n\n\nclass A:\n    def m(self, x, y):\n"
                                 "        pass\n")
    (root / "tests" / "test_app.py").write_text("def test_f():\n    assert True\n")
    assert symdiff(root, "index", "--json").returncode == 0
    return root


def test_json_output(tree: Path) -> None:
    proc = symdiff(tree, "changes", "--json")
    assert proc.returncode == 0, proc.stderr
    [record] = json.loads(proc.stdout)
    assert record["path"] == "app.py" and record["scope"] == "impl"
    assert [(s["name"], s["change_type"]) for s in record["symbols"]] == [
        ("f", "modified"), ("A.m", "signature_changed")]
    both = json.loads(symdiff(tree, "changes", "--json", "--scope", "all").stdout)
    # Both were recorded by one pass: only their newest-first order is promised.
    assert {r["path"] for r in both} == {"tests/test_app.py", "app.py"}
    assert [r["timestamp"] for r in both] == sorted((r["timestamp"] for r in both), reverse=True)
    assert [r["path"] for r in json.loads(symdiff(tree, "changes", "--json", "--scope",
                                                  "test").stdout)] == ["tests/test_app.py"]
    assert json.loads(symdiff(tree, "changes", "--json", "--since", "0s").stdout) == []
    assert len(json.loads(symdiff(tree, "changes", "--json", "--scope", "all", "--limit",
                                  "1").stdout)) == 1
    assert len(json.loads(symdiff(tree, "changes", "--json", "--scope", "all", "--limit",
                                  "ten").stdout)) == 2


def test_patch_applies(tree: Path, tmp_path: Path) -> None:
    [record] = json.loads(symdiff(tree, "changes", "--json", "--patch").stdout)
    patch = record["acp"]["patch"]["text"]
    assert patch.startswith(f"diff --git {tree / 'app.py'} ")
    assert "-    def m(self, x):\n+    def m(self, x, y):\n" in patch


def test_human_table(tree: Path) -> None:
    proc = symdiff(tree, "changes", "--scope", "all")
    assert proc.returncode == 0, proc.stderr
    for text in ("app.py", "tests/test_app.py", "A.m", "signature_changed", "+2 -2"):
        assert text in proc.stdout
    assert "no test changes in the last 1ns" in symdiff(tree, "changes", "--scope", "test",
                                                        "--since", "1ns").stdout
    with_patch = symdiff(tree, "changes", "--patch").stdout
    assert "+    return 2\n" in with_patch


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "1 day"], 'invalid_args: since: time: unknown unit " day" in duration'),
        (["--since", "7d"], 'invalid_args: since: time: unknown unit "d" in duration "7d"'),
        (["--since", "-5m"], 'invalid_args: since must not be negative, got "-5m"'),
        (["--scope", "everything"], 'invalid_args: scope must be "impl", "test" or "all"'),
    ],
)
def test_bad_arguments_exit_2(tree: Path, args: list[str], message: str) -> None:
    proc = symdiff(tree, "changes", *args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"symdiff: {message}")


def test_never_indexed_tree_has_no_changes_and_stays_clean(tmp_path: Path) -> None:
    result = symdiff_cli("changes", "--root", str(tmp_path), "--json", env={"SYMDIFF_DB": None})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert result.stderr == (f"symdiff: nothing indexed under {tmp_path}: run `symdiff watch` "
                             "or `symdiff index` there first\n")
    assert not (tmp_path / ".symdiff").exists()


def test_every_option_has_help() -> None:
    for name in ("changes", "serve"):
        command = cli_group().commands[name]
        assert command.help
        for param in command.params:
            assert getattr(param, "help", None), f"{name} {param.name}"


def test_changes_answers_from_a_read_only_state_folder(tree: Path) -> None:
    """`.symdiff/` on a read-only mount (or another user's): the query only reads, so it answers."""
    state = tree / ".symdiff"
    expected = json.loads(symdiff(tree, "changes", "--json", "--scope", "all").stdout)
    bind = subprocess.run(["mount", "--bind", str(state), str(state)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here: {bind.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(state)], check=True)
        proc = symdiff(tree, "changes", "--json", "--scope", "all")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == expected
    finally:
        subprocess.run(["umount", str(state)], check=True)


def test_a_script_reads_a_busy_history_page_by_page(tmp_path: Path) -> None:
    """120 files changed at once; a script follows `--cursor` through pages of 50 and gets each
    record once, then a named reader sees only what came after."""
    for i in range(120):
        (tmp_path / f"m{i:03}.py").write_text(f"def f{i}():\n    return 0\n")
    assert symdiff(tmp_path, "index").returncode == 0
    for i in range(120):
        (tmp_path / f"m{i:03}.py").write_text(f"def f{i}():\n    return 1\n")
    assert symdiff(tmp_path, "index").returncode == 0
    first = symdiff(tmp_path, "changes", "--json", "--limit", "10")
    assert "symdiff: more records match; continue with --cursor c1." in first.stderr
    seen: list[str] = []
    cursor = "c1.LTE6MA"  # before everything
    while True:
        proc = symdiff(tmp_path, "changes", "--json", "--envelope", "--limit", "50",
                       "--cursor", cursor)
        assert proc.returncode == 0, proc.stderr
        page = json.loads(proc.stdout)
        assert len(page["result"]) <= 50
        seen += [r["path"] for r in page["result"]]
        cursor = page["cursor"]
        if not page["more"]:
            break
    assert sorted(seen) == [f"m{i:03}.py" for i in range(120)] and len(seen) == 120
    assert {r["origin"] for r in json.loads(first.stdout)} == {"scan"}
    assert json.loads(symdiff(tmp_path, "changes", "--json", "--origin", "edit").stdout) == []
    assert len(json.loads(symdiff(tmp_path, "changes", "--json", "--path", "m11*.py",
                                  "--path", "!m119.py").stdout)) == 9
    assert len(json.loads(symdiff(tmp_path, "changes", "--json", "--reader", "r",
                                  "--limit", "500").stdout)) == 120
    (tmp_path / "m000.py").write_text("def f0():\n    return 2\n")
    assert symdiff(tmp_path, "index").returncode == 0
    [latest] = json.loads(symdiff(tmp_path, "changes", "--json", "--reader", "r").stdout)
    assert latest["path"] == "m000.py"


def test_without_a_daemon_the_answer_says_up_to_when_and_refresh_catches_up(
        tmp_path: Path) -> None:  # fmt: skip
    from symdiff.cli.display import when

    (tmp_path / "app.py").write_text("def f():\n    return 1\n")
    fresh = symdiff(tmp_path, "changes", "--json", "--refresh")
    assert fresh.returncode == 0 and json.loads(fresh.stdout) == []
    assert fresh.stderr == (f"symdiff: took the baseline of 1 file under {tmp_path}: what "
                            "changes from now on shows once recorded (`symdiff watch`, or "
                            "--refresh)\n")
    (tmp_path / "app.py").write_text("def f():\n    return 2\n")
    assert symdiff(tmp_path, "index").returncode == 0
    (tmp_path / "app.py").write_text("def f(x):\n    return 2\n")  # nobody records this one
    proc = symdiff(tmp_path, "changes", "--json")
    [record] = json.loads(proc.stdout)  # stdout holds the JSON and nothing else
    assert proc.stderr == (f"symdiff: no daemon watches {tmp_path}: this is what was recorded "
                           f"up to {when(record['timestamp'])}; run `symdiff watch` to keep it "
                           "current, or add --refresh\n")
    proc = symdiff(tmp_path, "changes", "--json", "--refresh")
    assert proc.returncode == 0 and proc.stderr == ""
    assert [s["change_type"] for r in json.loads(proc.stdout) for s in r["symbols"]] == [
        "signature_changed", "modified"]


def test_a_since_beyond_720h_says_it_was_cut(tree: Path) -> None:
    """720h is the longest window (docs/spec.md): a longer --since answers for 720h and says so,
    and the empty answer names the window it looked in, not the one asked for."""
    cut = ("symdiff: --since 4000h is longer than 720h, the longest window: showing the last "
           "720h (`symdiff log SYMBOL` follows a symbol through older records)\n")
    proc = symdiff(tree, "changes", "--since", "4000h")
    assert proc.returncode == 0 and proc.stderr.startswith(cut)
    assert proc.stdout != "" and "4000h" not in proc.stdout
    assert symdiff(tree, "changes", "--since", "4000h", "--json").stdout == symdiff(
        tree, "changes", "--since", "720h", "--json").stdout
    for within in ("720h", "720h0m0s", "1h"):
        assert "longest window" not in symdiff(tree, "changes", "--since", within).stderr
    none = symdiff(tree, "changes", "--since", "4000h", "--path", "nothing/*")
    assert none.stdout == "no impl changes in the last 720h\n" and none.stderr.startswith(cut)


def test_refresh_checks_the_arguments_before_it_writes(tmp_path: Path) -> None:
    proc = symdiff(tmp_path, "changes", "--refresh", "--since", "7d")
    assert proc.returncode == 2 and "unknown unit" in proc.stderr
    assert not (tmp_path / ".symdiff").exists()


def test_a_hint_when_the_scope_hid_records(tree: Path) -> None:
    proc = symdiff(tree, "changes")
    assert "symdiff: 1 test change hidden: --scope all shows them\n" in proc.stderr
    assert "hidden" not in symdiff(tree, "changes", "--scope", "all").stderr
    assert "1 impl change hidden" in symdiff(tree, "changes", "--scope", "test").stderr
    assert "hidden" not in symdiff(tree, "changes", "--limit", "1").stderr  # a full answer


@pytest.mark.parametrize("limit", ["1000", "0", "ten"])
def test_a_limit_outside_1_to_500_is_named_on_stderr(tree: Path, limit: str) -> None:
    proc = symdiff(tree, "changes", "--json", "--limit", limit)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)) == 1
    assert (f"symdiff: --limit is a whole number from 1 to 500, got '{limit}': showing at most "
            "50; page on with --cursor\n") in proc.stderr
    assert "--limit" not in symdiff(tree, "changes", "--json", "--limit", "500").stderr


def test_asked_from_a_subdirectory_the_workspace_answers(tree: Path) -> None:
    proc = symdiff(tree / "tests", "changes", "--json", "--scope", "all")
    assert proc.returncode == 0, proc.stderr
    assert {r["path"] for r in json.loads(proc.stdout)} == {"app.py", "tests/test_app.py"}
    status = json.loads(symdiff(tree / "tests", "status", "--json").stdout)
    assert status["root"] == str(tree) and status["changes"] == 2


def test_a_never_indexed_folder_says_so_and_prints_no_table(tmp_path: Path) -> None:
    proc = symdiff(tmp_path, "changes")
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == (f"symdiff: nothing indexed under {tmp_path}: run `symdiff watch` or "
                           "`symdiff index` there first\n")
    assert not (tmp_path / ".symdiff").exists()


def test_a_daemon_still_making_its_baseline_says_so(tmp_path: Path) -> None:
    from symdiff.config import Settings
    from symdiff.workspace.layout import COOKIE_DIR
    from symdiff.workspace.lock import workspace_lock

    (tmp_path / "a.py").write_text("x = 1\n")
    assert symdiff(tmp_path, "index").returncode == 0
    (tmp_path / COOKIE_DIR).mkdir(parents=True)
    (tmp_path / ".symdiff" / "daemon.json").write_text(json.dumps(
        {"progress": {"pass": "baseline", "done": 512, "total": 30000}}))
    with workspace_lock(tmp_path, Settings.resolve(tmp_path).host):  # it answers no cookie
        proc = symdiff(tmp_path, "changes", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == []
    assert proc.stderr == (f"symdiff: warning: the daemon watching {tmp_path} is still making "
                           "its baseline (512/30000 files read); the answer may miss changes "
                           "until it is done (`symdiff status` shows its progress)\n")
