"""gitstate against real repositories: each git command run for real between two snapshots."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pygit2
import pytest
from conftest import Templates, git

from symdiff.git.state import (
    UNKNOWN,
    GitOrigin,
    ReflogTip,
    Repo,
    RepoState,
    git_info,
    git_origin,
    open_repo,
    snapshot,
)


def _init(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "t")
    git(path, "config", "user.email", "t@t")
    return path


def _commit(repo: Path, name: str, text: str, message: str | None = None) -> str:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message or f"write {name}")
    return _sha(repo, "HEAD")


def _sha(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).strip()


def _open(root: Path) -> Repo:
    repo = open_repo(root)
    assert repo is not None
    return repo


def _build_base(where: Path) -> None:
    root = _init(where / "repo")
    _commit(root, "a.py", "A = 1\n", "one")
    _commit(root, "a.py", "A = 2\n", "two")
    git(root, "switch", "-q", "-c", "feature")
    _commit(root, "b.py", "B = 1\n", "feature work")
    git(root, "switch", "-q", "main")


@pytest.fixture
def base(templates: Templates, tmp_path: Path) -> Path:
    """A repository with two commits on main and a branch `feature` one commit ahead of it
    (built once per session; each test gets its own copy)."""
    return templates.copy("gitstate-base", _build_base, tmp_path / "t") / "repo"


def _conflicting_merge(root: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError):
        git(root, "merge", "-q", "feature")


def _around(root: Path, *args: str) -> GitOrigin | None:
    """git_origin of the snapshots taken just before and just after `git *args`."""
    repo = _open(root)
    before = snapshot(repo)
    git(root, *args)
    return git_origin(before, snapshot(repo))


def _expect(
    origin: GitOrigin | None, operation: str, before: str | None, after: str | None
) -> None:
    assert origin == {"operation": operation, "head_before": before, "head_after": after}


# --- each command, between two snapshots ---------------------------------------------------


def test_checkout_of_a_branch(base: Path) -> None:
    main, feature = _sha(base, "main"), _sha(base, "feature")
    _expect(_around(base, "checkout", "-q", "feature"), "checkout", main, feature)


def test_switch_of_a_branch_logs_as_checkout(base: Path) -> None:
    main, feature = _sha(base, "main"), _sha(base, "feature")
    _expect(_around(base, "switch", "-q", "feature"), "checkout", main, feature)


def test_switch_to_a_new_branch_at_the_same_commit(base: Path) -> None:
    main = _sha(base, "main")
    _expect(_around(base, "switch", "-q", "-c", "topic"), "checkout", main, main)


def test_reset_hard(base: Path) -> None:
    head, parent = _sha(base, "HEAD"), _sha(base, "HEAD~1")
    _expect(_around(base, "reset", "-q", "--hard", "HEAD~1"), "reset", head, parent)


def test_merge_fast_forward(base: Path) -> None:
    main, feature = _sha(base, "main"), _sha(base, "feature")
    _expect(_around(base, "merge", "-q", "feature"), "merge", main, feature)


def test_merge_made_by_a_merge_commit(base: Path) -> None:
    main = _commit(base, "c.py", "C = 1\n")
    origin = _around(base, "merge", "-q", "--no-edit", "feature")
    _expect(origin, "merge", main, _sha(base, "HEAD"))
    assert _sha(base, "HEAD^2") == _sha(base, "feature")


def test_rebase(base: Path) -> None:
    _commit(base, "c.py", "C = 1\n")
    git(base, "switch", "-q", "feature")
    feature = _sha(base, "HEAD")
    origin = _around(base, "rebase", "-q", "main")
    _expect(origin, "rebase", feature, _sha(base, "HEAD"))
    assert _sha(base, "HEAD~1") == _sha(base, "main")


def test_stash_push(base: Path) -> None:
    head = _sha(base, "HEAD")
    (base / "a.py").write_text("A = 3\n")
    _expect(_around(base, "stash", "-q"), "stash", head, head)
    assert (base / "a.py").read_text() == "A = 2\n"


def test_stash_pop_of_the_only_entry_removes_the_stash_reflog(base: Path) -> None:
    head = _sha(base, "HEAD")
    (base / "a.py").write_text("A = 3\n")
    git(base, "stash", "-q")
    _expect(_around(base, "stash", "pop", "-q"), "stash", head, head)
    assert not (base / ".git" / "logs" / "refs" / "stash").exists()
    assert (base / "a.py").read_text() == "A = 3\n"


def test_stash_pop_drops_an_entry_the_reflog_shrinks(base: Path) -> None:
    head = _sha(base, "HEAD")
    for text in ("A = 3\n", "A = 4\n"):
        (base / "a.py").write_text(text)
        git(base, "stash", "-q")
    repo = _open(base)
    before = snapshot(repo)
    git(base, "stash", "pop", "-q")
    after = snapshot(repo)
    assert 0 < after.stash_reflog.size < before.stash_reflog.size
    _expect(git_origin(before, after), "stash", head, head)


def test_cherry_pick(base: Path) -> None:
    main = _sha(base, "main")
    origin = _around(base, "cherry-pick", "feature")
    _expect(origin, "cherry-pick", main, _sha(base, "HEAD"))


def test_revert(base: Path) -> None:
    head = _sha(base, "HEAD")
    origin = _around(base, "revert", "--no-edit", "HEAD")
    _expect(origin, "revert", head, _sha(base, "HEAD"))
    assert (base / "a.py").read_text() == "A = 1\n"


def test_commit(base: Path) -> None:
    head = _sha(base, "HEAD")
    (base / "a.py").write_text("A = 3\n")
    origin = _around(base, "commit", "-q", "-am", "three")
    _expect(origin, "commit", head, _sha(base, "HEAD"))


def test_commit_amend(base: Path) -> None:
    head = _sha(base, "HEAD")
    origin = _around(base, "commit", "-q", "--amend", "-m", "two, amended")
    _expect(origin, "commit", head, _sha(base, "HEAD"))


def test_pull_from_a_local_clone(base: Path, tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", base.as_uri(), str(upstream))
    git(upstream, "config", "user.name", "u")
    git(upstream, "config", "user.email", "u@u")
    new = _commit(upstream, "a.py", "A = 5\n", "upstream work")
    head = _sha(base, "HEAD")
    _expect(_around(base, "pull", "-q", "--ff-only", upstream.as_uri(), "main"), "pull", head, new)
    assert (base / "a.py").read_text() == "A = 5\n"


def test_pull_with_rebase(base: Path, tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", base.as_uri(), str(upstream))
    _commit(upstream, "a.py", "A = 5\n", "upstream work")
    head = _commit(base, "c.py", "C = 1\n")
    origin = _around(base, "pull", "-q", "--rebase", upstream.as_uri(), "main")
    _expect(origin, "pull", head, _sha(base, "HEAD"))


def test_am(base: Path, tmp_path: Path) -> None:
    patch = git(base, "format-patch", "-1", "--stdout", "feature")
    (tmp_path / "0001.patch").write_text(patch)
    main = _sha(base, "main")
    origin = _around(base, "am", "-q", str(tmp_path / "0001.patch"))
    _expect(origin, "am", main, _sha(base, "HEAD"))
    assert (base / "b.py").read_text() == "B = 1\n"


def test_bisect_checkouts_are_bisect(base: Path) -> None:
    _commit(base, "c.py", "C = 1\n")
    head, first = _sha(base, "HEAD"), _sha(base, "HEAD~2")
    origin = _around(base, "bisect", "start", "HEAD", "HEAD~2")
    _expect(origin, "bisect", head, _sha(base, "HEAD"))
    assert _sha(base, "HEAD") not in (head, first)
    assert snapshot(_open(base)).operation == "bisect"


# --- operations that stop half-way, and what the user does meanwhile -------------------------


def test_a_conflicted_merge_editing_and_concluding_it(base: Path) -> None:
    _commit(base, "b.py", "B = 2\n")  # conflicts with feature's b.py
    main = _sha(base, "HEAD")
    repo = _open(base)
    s0 = snapshot(repo)
    _conflicting_merge(base)
    s1 = snapshot(repo)
    assert s1.operation == "merge"
    _expect(git_origin(s0, s1), "merge", main, main)
    (base / "b.py").write_text("B = 3\n")  # the user resolves the conflict in an editor
    s2 = snapshot(repo)
    assert git_origin(s1, s2) is None
    git(base, "commit", "-q", "-am", "merged")
    s3 = snapshot(repo)
    _expect(git_origin(s2, s3), "commit", main, _sha(base, "HEAD"))


def test_merge_abort_logs_as_reset(base: Path) -> None:
    main = _commit(base, "b.py", "B = 2\n")
    _conflicting_merge(base)
    _expect(_around(base, "merge", "--abort"), "reset", main, main)
    assert snapshot(_open(base)).operation is None


def test_a_command_holding_index_lock_is_git(base: Path, tmp_path: Path) -> None:
    """`git commit` holds index.lock while its editor runs: a real git command, caught writing."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    editor = tmp_path / "editor.sh"
    editor.write_text(f'#!/bin/sh\necho msg > "$1"\ncat {gate} > /dev/null\n')
    editor.chmod(0o755)
    repo = _open(base)
    before = snapshot(repo)
    (base / "a.py").write_text("A = 3\n")
    env = {
        **os.environ,
        "GIT_EDITOR": str(editor),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    proc = subprocess.Popen(["git", "commit", "-q", "-a"], cwd=base, env=env)
    try:
        deadline = time.monotonic() + 10
        while not (base / ".git" / "index.lock").exists():
            assert time.monotonic() < deadline, "git commit never took index.lock"
            time.sleep(0.005)
        during = snapshot(repo)
    finally:
        with open(gate, "w") as f:
            f.write("go\n")
        assert proc.wait(timeout=10) == 0
    head = _sha(base, "HEAD~1")
    assert during.locked
    _expect(git_origin(before, during), UNKNOWN, head, head)
    after = snapshot(repo)
    assert not after.locked
    _expect(git_origin(during, after), "commit", head, _sha(base, "HEAD"))


def test_a_snapshot_never_splits_a_ref_update(base: Path) -> None:
    """HEAD and its reflog disagree while git updates them; a snapshot waits that out.

    A real `git update-ref --stdin` moves main (and so HEAD) every 2 ms while the test reads.
    A naive read (HEAD, then the reflog's last line) is caught in between; a snapshot is not,
    or (git descheduled past its wait) says `locked`.
    """
    one, two = _sha(base, "HEAD~1"), _sha(base, "HEAD")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.Popen(
        ["git", "update-ref", "--stdin", "-m", "reset: moving"],
        cwd=base, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    stdin = proc.stdin

    def feed() -> None:
        for i in range(300):
            stdin.write(f"start\nupdate refs/heads/main {(one, two)[i % 2]}\ncommit\n")
            stdin.flush()
            time.sleep(0.002)
        stdin.close()

    feeder = threading.Thread(target=feed)
    feeder.start()
    repo = _open(base)
    log = base / ".git" / "logs" / "HEAD"
    naive_split = snapshot_split = in_flight = reads = 0
    while proc.poll() is None:
        head = str(pygit2.Repository(str(base)).head.target)
        if log.read_text().splitlines()[-1].split(" ")[1:2] != [head]:
            naive_split += 1
        state = snapshot(repo)
        if state.head_reflog.line.split(" ")[1] != state.head:
            snapshot_split += 1
            in_flight += state.locked
        reads += 1
    feeder.join()
    assert proc.returncode == 0
    assert snapshot_split == in_flight, f"{snapshot_split} of {reads} snapshots split an update"
    assert in_flight < reads / 100
    assert naive_split > 0, f"the race never showed in {reads} naive reads"


# --- not git --------------------------------------------------------------------------------


def test_an_editor_write_is_not_git(base: Path) -> None:
    repo = _open(base)
    before = snapshot(repo)
    (base / "a.py").write_text("A = 3\n")
    tmp = base / "b.py.tmp"
    tmp.write_text("B = 9\n")
    os.replace(tmp, base / "b.py")  # an atomic save
    (base / "new.py").write_text("N = 1\n")
    after = snapshot(repo)
    assert after == before
    assert git_origin(before, after) is None


def test_plain_git_apply_is_indistinguishable_from_an_editor(base: Path, tmp_path: Path) -> None:
    """Without --index, `git apply` writes neither a reflog nor the index: documented blind spot."""
    (tmp_path / "p.diff").write_text(git(base, "diff", "main", "feature"))
    assert _around(base, "apply", str(tmp_path / "p.diff")) is None
    assert (base / "b.py").read_text() == "B = 1\n"


def test_restoring_a_file_from_the_index_is_not_seen(base: Path) -> None:
    (base / "a.py").write_text("A = 3\n")
    assert _around(base, "checkout", "--", "a.py") is None
    assert (base / "a.py").read_text() == "A = 2\n"


def test_stash_apply_keeps_the_entry_and_is_not_seen(base: Path) -> None:
    (base / "a.py").write_text("A = 3\n")
    git(base, "stash", "-q")
    assert _around(base, "stash", "apply", "-q") is None
    assert (base / "a.py").read_text() == "A = 3\n"


def test_a_rewritten_reflog_with_the_same_newest_entry_has_not_moved(base: Path) -> None:
    repo = _open(base)
    before = snapshot(repo)
    git(base, "reflog", "delete", "HEAD@{2}")
    after = snapshot(repo)
    assert after.head_reflog.size < before.head_reflog.size
    assert git_origin(before, after) is None


# --- the repository's shapes ----------------------------------------------------------------


def test_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert open_repo(tmp_path / "plain") is None
    assert git_info(None) is None


def test_a_bare_repository_has_no_work_tree(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    assert open_repo(tmp_path / "bare.git") is None


@pytest.mark.parametrize(
    "layout",
    [
        {".git/": None},
        {".git/HEAD": "junk\n", ".git/objects/": None, ".git/refs/": None},
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            ".git/objects/": None,
            ".git/refs/": None,
            ".git/config": "[core\n\x00garbage",
        },
        {".git": "gitdir: /nonexistent/path\n"},
        {".git": "not a gitfile at all\n"},
    ],
    ids=["empty-dir", "garbage-head", "garbage-config", "dangling-gitfile", "garbage-gitfile"],
)
def test_a_garbage_git_is_no_repository(tmp_path: Path, layout: dict[str, str | None]) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    for name, text in layout.items():
        path = root / name
        if text is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    (root / "a.py").write_text("A = 1\n")
    assert open_repo(root) is None


def test_a_repository_format_libgit2_cannot_read(tmp_path: Path) -> None:
    root = _init(tmp_path / "reftable")
    git(root, "config", "core.repositoryformatversion", "1")
    git(root, "config", "extensions.refStorage", "reftable")  # what git >= 2.45 may write
    assert open_repo(root) is None


def test_a_subdirectory_of_the_work_tree(base: Path) -> None:
    (base / "pkg" / "sub").mkdir(parents=True)
    repo = _open(base / "pkg" / "sub")
    assert repo.workdir == base
    assert snapshot(repo).branch == "main"


def test_detached_head(base: Path) -> None:
    parent = _sha(base, "HEAD~1")
    git(base, "checkout", "-q", "--detach", "HEAD~1")
    state = snapshot(_open(base))
    assert (state.head, state.branch) == (parent, None)
    assert git_info(state) == {"branch": None, "head": parent}
    _expect(_around(base, "switch", "-q", "main"), "checkout", parent, _sha(base, "main"))


def test_an_unborn_branch(tmp_path: Path) -> None:
    root = _init(tmp_path / "fresh")
    repo = _open(root)
    state = snapshot(repo)
    assert state == RepoState(None, "main", ReflogTip(), ReflogTip(), False, None)
    assert git_info(state) == {"branch": "main", "head": None}
    (root / "a.py").write_text("A = 1\n")
    assert git_origin(state, snapshot(repo)) is None
    origin = _around(root, "commit", "-q", "--allow-empty", "-m", "first")
    _expect(origin, "commit", None, _sha(root, "HEAD"))


def test_a_linked_worktree_through_its_git_file(base: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(base, "worktree", "add", "-q", str(linked), "feature")
    assert (linked / ".git").is_file()
    repo = _open(linked)
    assert repo.workdir == linked
    assert repo.gitdir != repo.commondir == base / ".git"
    state = snapshot(repo)
    assert (state.head, state.branch) == (_sha(base, "feature"), "feature")
    feature = _sha(base, "feature")
    _expect(
        _around(linked, "reset", "-q", "--hard", "HEAD~1"), "reset", feature, _sha(base, "main")
    )
    # The main work tree's HEAD did not move; the stash is shared by both.
    main = _open(base)
    before, linked_before = snapshot(main), snapshot(repo)
    assert git_origin(before, snapshot(main)) is None
    (linked / "a.py").write_text("A = 9\n")
    git(linked, "stash", "-q")
    assert git_origin(linked_before, snapshot(repo)) == {
        "operation": "stash", "head_before": linked_before.head, "head_after": linked_before.head,
    }  # fmt: skip
    assert git_origin(before, snapshot(main)) == {
        "operation": "stash", "head_before": before.head, "head_after": before.head,
    }  # fmt: skip


def test_reflogs_switched_off_a_moved_head_is_still_git(base: Path) -> None:
    git(base, "config", "core.logAllRefUpdates", "false")
    for log in (base / ".git" / "logs").rglob("*"):
        if log.is_file():
            log.unlink()
    head, parent = _sha(base, "HEAD"), _sha(base, "HEAD~1")
    _expect(_around(base, "reset", "-q", "--hard", "HEAD~1"), UNKNOWN, head, parent)


def test_a_reflog_entry_longer_than_the_tail_window(base: Path) -> None:
    subject = "x" * 20_000
    head = _sha(base, "HEAD")
    origin = _around(base, "commit", "-q", "--allow-empty", "-m", subject)
    _expect(origin, "commit", head, _sha(base, "HEAD"))
    assert snapshot(_open(base)).head_reflog.line.endswith("commit: " + subject)


def test_a_packed_branch_resolves(base: Path) -> None:
    git(base, "pack-refs", "--all", "--prune")
    assert not (base / ".git" / "refs" / "heads" / "main").exists()
    state = snapshot(_open(base))
    assert (state.head, state.branch) == (_sha(base, "main"), "main")


def test_a_repository_deleted_under_the_daemon(base: Path) -> None:
    repo = _open(base)
    before = snapshot(repo)
    shutil.rmtree(base / ".git")
    after = snapshot(repo)  # never raises
    assert after.head is None
    assert git_origin(before, after) is not None


def test_the_benchmark_runs(base: Path) -> None:
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "gitstate_speed.py"
    out = subprocess.run([sys.executable, str(script), str(base), "--calls", "50", "--runs", "3"],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    assert "snapshot" in out and "git rev-parse HEAD" in out
