"""Agent Trace export: which lines of a commit (or of the uncommitted work) an agent wrote.

For each file the commit changed against its first parent (renames as `git diff -M` pairs
them), the lines of the commit's version that the commit added, owned as blame owns them from
the records made up to the commit (docs/agents.md, "Agent Trace"). The record follows the
Agent Trace RFC 0.1.0 (tests/fixtures/agent-trace/trace-record.schema.json).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symdiff.agents.blame import FileBlame, contributor, file_lines, history_reader
from symdiff.errors import InvalidArgs
from symdiff.store.filehistory import FileRow

VERSION = "0.1.0"
VENDOR = "dev.symdiff"
_MODEL_VENDORS = (("claude", "anthropic"), ("gpt", "openai"), ("o1", "openai"),
                  ("o3", "openai"), ("o4", "openai"), ("codex", "openai"),
                  ("gemini", "google"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Version:
    """One file of the revision: its path (relative to the workspace), its text and the
    numbers of the lines the revision added (1-based)."""

    path: str
    text: bytes
    added: tuple[int, ...]


def model_id(model: str | None) -> str | None:
    """A model name as the RFC wants it (models.dev: `provider/model`), at most 250 chars."""
    if not model:
        return None
    if "/" not in model:
        for prefix, vendor in _MODEL_VENDORS:
            if model.lower().startswith(prefix):
                model = f"{vendor}/{model}"
                break
    return model[:250]


def line_kinds(found: FileBlame, lines: tuple[int, ...], since_us: int
               ) -> list[tuple[int, str, str | None]]:  # fmt: skip
    """(line, contributor type, session) of each of `lines`. A line is `mixed` when its writer
    (an agent or a person) replaced lines the other had written since `since_us` (the parent
    commit): a person's edit of the agent's fresh lines, or the reverse."""
    out = []
    rows = found.versions
    for n in lines:
        owner = found.lines.owners[n - 1]
        row = rows[owner] if owner >= 0 else None
        kind = "unknown" if row is None else contributor(row.origin, row.origin_info)
        session = None
        if row is not None and kind == "ai":
            session = (row.origin_info or {}).get("session")
        if kind in ("ai", "human"):
            for gone in found.lines.replaced[n - 1]:
                prior = rows[gone] if gone >= 0 else None
                if prior is None or prior.ts_us < since_us:
                    continue
                other = contributor(prior.origin, prior.origin_info)
                if other in ("ai", "human") and other != kind:
                    kind, session = "mixed", None
                    break
        out.append((n, kind, session))
    return out


def file_entry(path: str, kinds: list[tuple[int, str, str | None]],
               models: dict[str, str | None]) -> dict[str, Any]:  # fmt: skip
    """One `files[]` item: a conversation per (contributor, session), each with its ranges."""
    groups: dict[tuple[str, str | None], list[list[int]]] = {}
    for n, kind, session in kinds:
        runs = groups.setdefault((kind, session), [])
        if runs and runs[-1][1] == n - 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    conversations = []
    for (kind, session), runs in sorted(groups.items(), key=lambda g: g[1][0][0]):
        who: dict[str, Any] = {"type": kind}
        model = model_id(models.get(session)) if session is not None else None
        if model is not None:
            who["model_id"] = model
        conversations.append({"contributor": who, "ranges": [
            {"start_line": a, "end_line": b} for a, b in runs]})  # fmt: skip
    return {"path": path, "conversations": conversations}


def _sessions(found: FileBlame, kinds: list[tuple[int, str, str | None]],
              into: dict[str, dict[str, Any]]) -> None:
    """Collect, per session, the agent and the turns whose lines the trace shows as `ai`."""
    for n, kind, session in kinds:
        if kind != "ai" or session is None:
            continue
        info = found.versions[found.lines.owners[n - 1]].origin_info or {}
        seen = into.setdefault(session, {"agent": info.get("agent"), "turns": set()})
        if isinstance(info.get("turn"), int):
            seen["turns"].add(info["turn"])


def build_record(versions: list[Version], lines_of: Callable[[Version], FileBlame], *,
                 since_us: int, models: dict[str, str | None], revision: str | None,
                 parent: str | None, tool_version: str, now: str, record_id: str
                 ) -> dict[str, Any]:  # fmt: skip
    """The Agent Trace record of these file versions."""
    files, sessions = [], {}  # type: ignore[var-annotated]
    for v in versions:
        found = lines_of(v)
        kinds = line_kinds(found, v.added, since_us)
        files.append(file_entry(v.path, kinds, models))
        _sessions(found, kinds, sessions)
    vendor: dict[str, Any] = {"parent": parent, "sessions": {
        s: {"agent": d["agent"], "model": models.get(s), "turns": sorted(d["turns"])}
        for s, d in sorted(sessions.items())}}  # fmt: skip
    record: dict[str, Any] = {"version": VERSION, "id": record_id, "timestamp": now}
    if revision is not None:
        record["vcs"] = {"type": "git", "revision": revision}
    record["tool"] = {"name": "symdiff", "version": tool_version}
    record["files"] = files
    record["metadata"] = {VENDOR: vendor}
    return record


def trace(settings: Any, rev: str | None = None, *, worktree: bool = False) -> dict[str, Any]:
    """The Agent Trace record of commit `rev` (default HEAD), or with `worktree` of the
    uncommitted work against HEAD (no `vcs`)."""
    import time
    from importlib.metadata import PackageNotFoundError, version

    from symdiff.diffs.blobid import blob_id
    from symdiff.timestamps import format_us

    if worktree and rev is not None:
        raise InvalidArgs("give a revision or --worktree, not both")
    root = settings.root
    changed = _worktree_files(root) if worktree else _commit_files(root, rev or "HEAD")
    rows_of, read, _ = history_reader(settings, root)
    cutoff = changed.cutoff_us

    def lines_of(v: Version) -> FileBlame:
        digest = blob_id(v.text)
        return file_lines(lambda p: _before(rows_of(p), p, digest, cutoff, changed.own),
                          read, v.path, v.text, digest)  # fmt: skip

    try:
        tool_version = version("symdiff")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        tool_version = "0"
    return build_record(changed.files, lines_of, since_us=changed.since_us,
                        models=session_models(settings, root), revision=changed.revision,
                        parent=changed.parent, tool_version=tool_version,
                        now=format_us(time.time_ns() // 1000),
                        record_id=str(uuid.uuid4()))  # fmt: skip


def session_models(settings: Any, root: Path) -> dict[str, str | None]:
    """The model each session said it runs (SessionStart's `model`), from the database and the
    hooks' journals (newer)."""
    from symdiff.agents.reader import Journals
    from symdiff.store.kept import reader

    out: dict[str, str | None] = {}
    store = reader(settings.db_url)
    ws = None if store is None else store.find_workspace(str(root), settings.host)
    if store is not None and ws is not None:
        out.update({s.session: s.model for s in store.sessions([ws.id])})
    journals = Journals(str(root))
    journals.refresh()
    out.update({s.id: s.model or out.get(s.id) for s in journals.sessions.values()})
    return out


@dataclass(frozen=True, slots=True)
class Changed:
    """The files a trace covers, and what bounds the records that own their lines."""

    files: list[Version]
    revision: str | None
    parent: str | None
    since_us: int  # the parent's commit time: lines written before it are not this work
    cutoff_us: int | None  # records made before this count (None: all of them)
    # The commit and its ancestors committed in its second (by sha): of the imported commits
    # whose records share that second, the others are its descendants, not its history.
    own: frozenset[str] = frozenset()


def _before(rows: list[FileRow], path: str, digest: str, cutoff: int | None,
            own: frozenset[str] = frozenset()) -> list[FileRow]:  # fmt: skip
    """The records of `path` made before the commit whose version of the file is `digest`.

    A committer time is a whole second (`cutoff` is the end of it): records made before that
    second precede the commit; of those made within it, only those up to the last that wrote
    the committed content at this path do (a move or an edit a moment after the commit, in
    the same second, is not its history), and of the imported commits' records only those of
    the commits in `own` (the commit and its ancestors: a later commit in the same second,
    such as a move committed a moment after, is not its history either, though its record
    takes the second's first moment as its time)."""
    if cutoff is None:
        return rows
    second = cutoff - 1_000_000
    rows = [r for r in rows if r.ts_us < second or (r.ts_us < cutoff and (
        r.origin != "commit" or (r.origin_info or {}).get("sha") in own))]  # fmt: skip
    late = {i for i, r in enumerate(rows) if r.ts_us >= second}
    last = max((i for i in late if rows[i].path == path and rows[i].new_hash == digest),
               default=-1)
    return [r for i, r in enumerate(rows) if i not in late or i <= last]


def _repo(root: Path) -> tuple[Any, str]:
    from symdiff.git.state import open_repo

    repo = open_repo(root)
    if repo is None:
        raise InvalidArgs(f"trace needs a git work tree: {root} is not in one")
    rel = os.path.relpath(root.resolve(), repo.workdir.resolve())
    return repo.handle, "" if rel == "." else rel.replace(os.sep, "/") + "/"


def _commit_files(root: Path, rev: str) -> Changed:
    import pygit2

    handle, prefix = _repo(root)
    try:
        commit = handle.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise InvalidArgs(f"no commit {rev!r} in {root}") from None
    parent = commit.parents[0] if commit.parents else None
    diff = (parent.tree.diff_to_tree(commit.tree) if parent is not None
            else commit.tree.diff_to_tree(swap=True))  # fmt: skip
    files = list(_versions(handle, diff, prefix, lambda f: _blob(handle, f.id)))
    # Committer times are whole seconds: a record made in the commit's second may precede it.
    return Changed(files, str(commit.id), None if parent is None else str(parent.id),
                   0 if parent is None else parent.commit_time * 1_000_000,
                   (commit.commit_time + 1) * 1_000_000, _same_second(commit))  # fmt: skip


def _same_second(commit: Any) -> frozenset[str]:
    """The shas of `commit` and of its ancestors committed in its second (or later: a clock
    that ran back), through any parent."""
    out: set[str] = set()
    todo = [commit]
    while todo:
        c = todo.pop()
        sha = str(c.id)
        if sha in out or c.commit_time < commit.commit_time:
            continue
        out.add(sha)
        todo.extend(c.parents)
    return frozenset(out)


def _worktree_files(root: Path) -> Changed:
    import pygit2
    from pygit2.enums import DiffOption

    handle, prefix = _repo(root)
    head = None if handle.head_is_unborn else handle.head.peel(pygit2.Commit)
    flags = DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
    # An unborn branch has no tree: the index against the work tree then.
    diff = (head.tree.diff_to_workdir(flags=flags) if head is not None
            else handle.diff(flags=flags))  # fmt: skip
    workdir = Path(handle.workdir)

    def read_new(f: pygit2.DiffFile) -> bytes | None:
        try:
            return (workdir / f.path).read_bytes()
        except OSError:
            return None

    files = list(_versions(handle, diff, prefix, read_new))
    return Changed(files, None, None if head is None else str(head.id),
                   0 if head is None else head.commit_time * 1_000_000, None)


def _blob(handle: Any, oid: Any) -> bytes | None:
    import pygit2

    try:
        return bytes(handle.odb.read(oid)[1])
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _versions(handle: Any, diff: Any, prefix: str, read_new: Callable[[Any], bytes | None]
              ) -> Iterator[Version]:  # fmt: skip
    """The new side of each changed text file under the workspace, with its added lines."""
    from symdiff.diffs.linediff import count_lines, diff_lines, is_binary

    diff.find_similar()
    for delta in diff.deltas:
        status = delta.status_char()
        if status not in "AMRTC?" or 0o160000 in (delta.old_file.mode, delta.new_file.mode):
            continue  # deleted, unmodified, or a submodule
        path = delta.new_file.path
        if not path.startswith(prefix):
            continue
        new = read_new(delta.new_file)
        if new is None or is_binary(new):
            continue
        old = b"" if status in "A?" else _blob(handle, delta.old_file.id)
        if old is None or is_binary(old):
            old = b""
        added = (tuple(range(1, count_lines(new) + 1)) if not old
                 else tuple(n for h in diff_lines(old, new).hunks for n in h.added))  # fmt: skip
        yield Version(path.removeprefix(prefix), new, added)
