"""What a person sees in a real terminal: `symdiff changes` and `symdiff watch` run in tmux at
80 columns, and the pane read back as text (`capture-pane`). Real files, real processes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git


@pytest.fixture(autouse=True)
def _tmux() -> None:
    """tmux is there; .ci/run installs it, so under CI its absence is a failure."""
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed under CI (.ci/run installs it)")
        pytest.skip("tmux is not installed (.ci/run installs it)")


# The console script beside this interpreter (a venv), else the module.
_SCRIPT = Path(sys.executable).parent / "symdiff"
SYMDIFF = str(_SCRIPT) if _SCRIPT.exists() else f"{sys.executable} -m symdiff"


class Pane:
    """A tmux session of its own (its own server socket), 80 columns wide, running bash."""

    def __init__(self, cwd: Path, *, width: int = 80, height: int = 40) -> None:
        self.socket = f"symdiff-test-{uuid.uuid4().hex[:8]}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "SYMDIFF_"))}
        env["TERM"] = "xterm-256color"
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd),
                   "bash --norc --noprofile", env=env)

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, text=True,
                              capture_output=True, env=env).stdout

    def type(self, line: str) -> None:
        """Type a command line and press Enter."""
        self._tmux("send-keys", "-t", "0", "-l", line)
        self._tmux("send-keys", "-t", "0", "Enter")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "0", *keys)

    def text(self) -> str:
        """What the pane shows now; a line the terminal wrapped is joined again (-J)."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "0", "-S", "-200")

    def wait(self, cond: Callable[[str], bool], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if cond(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"the pane never showed what was awaited:\n{shown}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def _prompt(shown: str) -> bool:
    """The shell's prompt is back (the command ended)."""
    return shown.rstrip().endswith(("$", "#"))


@pytest.fixture
def pane_at(request: pytest.FixtureRequest) -> Iterator[Callable[[Path], Pane]]:
    panes: list[Pane] = []

    def make(cwd: Path) -> Pane:
        panes.append(Pane(cwd))
        return panes[-1]

    yield make
    for p in panes:
        p.close()


def save(path: Path, text: str) -> None:
    """Save as editors do: write a temporary file, rename it over the old one (a test process
    descheduled between a plain write's truncate and its write would record the empty file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def symdiff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    return subprocess.run([*shlex.split(SYMDIFF), *args], cwd=root, env=env, text=True,
                          capture_output=True, timeout=120)


OLD = ("def progress_bar(label):\n    pass\n\n\nclass SymdiffError:\n"
       "    def render(self):\n        pass\n")
NEW = ("def progress_bar(label, total):\n    pass\n\n\nclass SymdiffError:\n"
       "    def render_for_humans(self):\n        pass\n")


@pytest.fixture
def project(repo: Path) -> Path:
    """A git repository with a package and a test, committed, then indexed (the baseline)."""
    (repo / "symdiff").mkdir()
    (repo / "symdiff" / "progress.py").write_text(OLD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_progress.py").write_text("def test_bar():\n    pass\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    return repo


def test_the_table_shows_whole_names_and_renames_at_80_columns(project: Path,
                                                                pane_at: Callable[[Path], Pane]
                                                                ) -> None:  # fmt: skip
    assert symdiff(project, "index").returncode == 0
    save(project / "symdiff" / "progress.py", NEW)
    save(project / "tests" / "test_progress.py", "def test_bar():\n    assert 1\n")
    assert symdiff(project, "index").returncode == 0
    pane = pane_at(project)
    pane.type(f"{SYMDIFF} changes")
    shown = pane.wait(lambda t: "1 test change hidden: --scope all shows them" in t)
    lines = shown.splitlines()
    assert "…" not in shown
    row = next(i for i, line in enumerate(lines) if "symdiff/progress.py" in line)
    assert "modify" in lines[row] and "progress_bar signature_changed" in lines[row]
    assert "+2 -2  scan" in lines[row + 1]
    # The rename, old → new, wraps at the arrow but cuts neither name.
    assert "SymdiffError.render →" in lines[row + 1]
    assert "SymdiffError.render_for_humans" in lines[row + 2]
    assert "no daemon watches" in shown and "--refresh" in shown
    pane.type("clear")
    pane.type(f"{SYMDIFF} changes --scope all --patch | cat")
    shown = pane.wait(lambda t: "+    def render_for_humans(self):" in t)
    assert "tests/test_progress.py" in shown
    assert "diff --git a/symdiff/progress.py b/" in shown


def test_the_table_off_a_terminal_is_as_wide_as_its_content(project: Path) -> None:
    assert symdiff(project, "index").returncode == 0
    save(project / "symdiff" / "progress.py", NEW)
    assert symdiff(project, "index").returncode == 0
    proc = symdiff(project, "changes")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines)
    assert any("SymdiffError.render → SymdiffError.render_for_humans renamed" in line
               for line in lines)
    # The patches apply with plain `git apply`, from the root: here, undone with -R.
    patch = symdiff(project, "changes", "--patch").stdout
    subprocess.run(["git", "apply", "-R", "-"], cwd=project, input=patch, text=True, check=True)
    assert (project / "symdiff" / "progress.py").read_text() == OLD


def test_watch_prints_a_line_per_change_in_a_terminal(project: Path,
                                                      pane_at: Callable[[Path], Pane]) -> None:
    pane = pane_at(project)
    pane.type(f"{SYMDIFF} watch")
    pane.wait(lambda t: "watching " in t)
    save(project / "symdiff" / "progress.py", NEW)
    shown = pane.wait(lambda t: "(watch)" in t)
    # Wider than 80 columns: continued on an indented line, no name cut.
    lines = shown.splitlines()
    row = next(i for i, ln in enumerate(lines) if " modify symdiff/progress.py " in ln)
    assert re.fullmatch(r"\d\d:\d\d:\d\d modify symdiff/progress\.py  \+2 -2  progress_bar "
                        r"signature_changed,", lines[row]), lines[row]
    assert lines[row + 1] == (
        "         SymdiffError.render → SymdiffError.render_for_humans renamed  (watch)")
    git(project, "stash")  # a git operation: its origin says so
    shown = pane.wait(lambda t: "(git stash)" in t)
    assert re.search(r"modify symdiff/progress\.py [^(]*\n +\(git stash\)", shown)  # whole
    save(project / "tests" / "new_test.py", "def test_x():\n    pass\n")
    pane.wait(lambda t: "add    tests/new_test.py  +2 -0  test_x added  (watch)" in t)
    pane.keys("C-c")
    shown = pane.wait(lambda t: "flushing and stopping" in t and _prompt(t))
    assert "Traceback" not in shown


def test_watch_quiet_prints_nothing_per_change(project: Path,
                                               pane_at: Callable[[Path], Pane]) -> None:
    pane = pane_at(project)
    pane.type(f"{SYMDIFF} watch -q --no-history")  # only what this test writes
    time.sleep(0.5)
    for _ in range(300):  # until the start pass is done (no line says so under -q)
        status = json.loads(symdiff(project, "status", "--json").stdout)
        if status["running"] and status["last_reconcile"] and status["progress"] is None:
            break
        time.sleep(0.1)
    save(project / "symdiff" / "progress.py", NEW)
    recorded = json.loads(symdiff(project, "changes", "--json").stdout)  # waits for the daemon
    assert "symdiff/progress.py" in {r["path"] for r in recorded}
    assert "progress.py" not in pane.text()
    pane.keys("C-c")
    pane.wait(lambda t: _prompt(t))


def test_watch_piped_prints_plain_lines_as_they_happen(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMDIFF_")}
    p = subprocess.Popen([*shlex.split(SYMDIFF), "watch"], cwd=project, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while json.loads(symdiff(project, "status", "--json").stdout)["last_reconcile"] is None:
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.1)
        save(project / "symdiff" / "progress.py", NEW)
        assert p.stdout is not None
        line = p.stdout.readline()  # flushed at once, though stdout is a pipe
        while " modify symdiff/progress.py " not in line:  # (a save split by a busy machine)
            line = p.stdout.readline()
    finally:
        p.send_signal(2)
        _, err = p.communicate(timeout=30)
    assert "\x1b" not in line
    assert line.endswith("SymdiffError.render → SymdiffError.render_for_humans renamed  (watch)\n")
    assert " modify symdiff/progress.py  +2 -2  progress_bar signature_changed, " in line
    assert p.returncode == 0, err


LONG = "symdiff/porting/progress_reporting_helpers_for_legacy.py"


def test_long_names_at_80_columns_break_only_between_their_parts(
        repo: Path, pane_at: Callable[[Path], Pane]) -> None:  # fmt: skip
    (repo / "symdiff" / "porting").mkdir(parents=True)
    body = ("class ProgressReportingHelpers:\n"
            "    def render_the_progress_report_for_a_terminal_that_is_narrow(self):\n")
    (repo / LONG).write_text(body + "        return 1\n\n\ndef porting_helpers():\n    pass\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "start")
    pane = pane_at(repo)
    pane.type(f"{SYMDIFF} watch")
    pane.wait(lambda t: "watching " in t)
    save(repo / LONG, body + "        return 2\n\n\ndef porting_helpers():\n    return 0\n")
    shown = pane.wait(lambda t: "(watch)" in t)
    lines = shown.splitlines()
    row = next(i for i, ln in enumerate(lines) if f" modify {LONG} " in ln)
    assert lines[row].endswith(f"{LONG}  +2 -2")
    end = next(i for i in range(row, len(lines)) if lines[i].endswith("(watch)"))
    rest = [line.removeprefix(" " * 9) for line in lines[row + 1 : end + 1]]
    assert all(len(line) <= 80 and line.startswith(" " * 9) for line in lines[row + 1 : end])
    method = "ProgressReportingHelpers.render_the_progress_report_for_a_terminal_that_is_narrow"
    assert len(method) > 71 and rest[0].startswith("ProgressReportingHelpers.")  # its own line
    assert "".join(rest[:2]).startswith(method + " modified,")
    assert rest[0][-1] in "/._"  # the one name wider than a line, broken between its parts
    assert rest[-1].endswith("porting_helpers modified  (watch)")
    pane.keys("C-c")
    pane.wait(lambda t: "flushing and stopping" in t and _prompt(t))
    pane.type("clear")
    pane.type(f"{SYMDIFF} changes")
    shown = pane.wait(lambda t: "porting_helpers modified" in t and _prompt(t))
    lines = shown.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("when"))
    table = lines[head : next(i for i, ln in enumerate(lines) if ln.startswith("symdiff: "))]
    assert "…" not in shown and all(len(line) <= 80 for line in table), shown
    left, right = table[0].index("path"), table[0].index("symbols")
    first = table[2 : next(i for i in range(3, len(table)) if table[i][:left].strip())]
    cells = [(ln[left:right].rstrip(), ln[right:].rstrip()) for ln in first]
    paths = [p for p, _ in cells if p][:-1]  # then `+2 -2  watch`
    symbols = [s for _, s in cells if s]
    assert "".join(paths) == LONG and all(p.endswith(("/", ".", "_")) for p in paths[:-1])
    assert "".join(symbols[:-1]) == method + " modified"
    assert all(s.endswith(("/", ".", "_")) for s in symbols[:-2]), symbols
    assert symbols[-1] == "porting_helpers modified"  # it fits: never cut
