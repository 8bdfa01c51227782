"""One definition's history: every recorded version of it, newest first, each with its
symbol-scoped diff, and its source text at any version (docs/symbol_history.md).

A *definition* is followed through the index by its qualified name (the `symbol_changes.name`
index), across symbol renames (`renamed_from`/`renamed_to`) and file renames (a record's
`old_path`, or a rename record between two versions). Versions are change ids. The texts come
from the stored snapshots, re-extracted (tree-sitter loads only then).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.model import Symbol
from symdiff.store import Store, Workspace
from symdiff.store.kept import reader
from symdiff.store.versions import (
    SymbolRow,
    file_renames,
    oldest_first,
    recorded_names,
    symbol_rows,
)
from symdiff.timestamps import format_us, to_us

if TYPE_CHECKING:
    from symdiff.linediff import LineDiff

__all__ = ["History", "Lineage", "Texts", "Version", "lineage", "symbol_history", "symbol_source"]

DEFAULT_LIMIT = 20
MAX_LIMIT = 500
_RENAME_DEPTH = 16  # symbol renames followed, each way
_PATH_PAIRS = 20  # same-named definitions in different files checked for a file rename
_SUGGESTION_POOL = 5_000  # names compared whole with an unknown one
_MOVE_US = 2_000_000  # a removal and an addition this close come from one reconcile pass
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded change to a definition: the symbol row that says what it did."""

    row: SymbolRow
    moved_from: SymbolRow | None = None  # its removal from another file, in the same pass

    @property
    def id(self) -> int:
        return self.row.change_id

    @property
    def removed(self) -> bool:
        return self.row.change_type == "removed"

    @property
    def old_name(self) -> str:
        """The definition's name before this change."""
        if self.moved_from is not None:
            return self.moved_from.name
        return self.row.renamed_from or self.row.name

    @property
    def old_path(self) -> str | None:
        """The file it was in before this change, when that is another file."""
        return self.row.old_path if self.moved_from is None else self.moved_from.path


@dataclass(frozen=True, slots=True)
class Lineage:
    """The versions of one definition, oldest first."""

    versions: tuple[Version, ...]

    @property
    def newest(self) -> Version:
        return self.versions[-1]

    def candidate(self) -> dict[str, object]:
        """How a list of candidates shows this definition."""
        r = self.newest.row
        return {"name": r.name, "path": r.path, "kind": r.kind, "versions": len(self.versions),
                "latest": format_us(r.ts_us), "start_line": r.start_line,
                "end_line": r.end_line}  # fmt: skip


@dataclass(frozen=True, slots=True)
class History:
    """What `symbol_history` answers.

    `status`: "found" (`versions`, newest first, at most the limit; `more` when older ones
    match), "ambiguous" (`candidates`: the definitions the name matches; pass a path), or
    "unknown" (`suggestions`: the closest recorded names).
    """

    name: str
    status: str
    versions: list[dict[str, object]]
    candidates: list[dict[str, object]]
    suggestions: list[str]
    more: bool = False

    def as_dict(self) -> dict[str, object]:
        """The JSON-ready answer the adapters print."""
        return {"name": self.name, "status": self.status, "versions": self.versions,
                "candidates": self.candidates, "suggestions": self.suggestions,
                "more": self.more}  # fmt: skip


# -- finding the definition ------------------------------------------------------------------


class _Keys:
    """Union-find over (path, name): the places one definition has had."""

    def __init__(self) -> None:
        self._parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(self, key: tuple[str, str]) -> tuple[str, str]:
        parent = self._parent.setdefault(key, key)
        while parent != self._parent[parent]:
            parent = self._parent[parent]
        self._parent[key] = parent
        return parent

    def union(self, a: tuple[str, str], b: tuple[str, str]) -> None:
        self._parent[self.find(a)] = self.find(b)


def _rows_with_renames(store: Store, name: str, ws_ids: Sequence[int] | None) -> list[SymbolRow]:
    """The rows of `name` and of every name it was renamed from or to, transitively."""
    names = {name}
    rows = symbol_rows(store, names, ws_ids)
    for _ in range(_RENAME_DEPTH):
        linked = {n for r in rows for n in (r.renamed_from, r.renamed_to) if n is not None}
        new = linked - names
        if not new:
            break
        names |= new
        rows.extend(symbol_rows(store, new, ws_ids))
    rows.sort(key=oldest_first)
    return rows


_Moves = dict[tuple[int, int], SymbolRow]  # an added row -> the removal it moved from


def _groups(store: Store, rows: Sequence[SymbolRow], ws_ids: Sequence[int] | None
            ) -> tuple[list[list[SymbolRow]], _Moves]:  # fmt: skip
    """The rows split by definition, each list oldest first, and the moves between files."""
    keys = _Keys()
    for r in rows:
        key = (r.path, r.name)
        keys.find(key)
        if r.old_path is not None and r.old_path != r.path:
            keys.union((r.old_path, r.name), key)
            if r.renamed_from is not None:
                keys.union((r.old_path, r.renamed_from), key)
        for other in (r.renamed_from, r.renamed_to):
            if other is not None:
                keys.union((r.path, other), key)
    moves = _link_moves(rows, keys)
    _link_moved_files(store, rows, keys, ws_ids)
    by_root: dict[tuple[str, str], list[SymbolRow]] = {}
    for r in rows:
        by_root.setdefault(keys.find((r.path, r.name)), []).append(r)
    return list(by_root.values()), moves


def _link_moves(rows: Sequence[SymbolRow], keys: _Keys) -> _Moves:
    """Join a definition removed from one file and added to another by one reconcile pass (a
    file renamed and edited between two passes is recorded as a delete and an add)."""
    removed = [r for r in rows if r.change_type == "removed" and r.renamed_to is None]
    moves: _Moves = {}
    for r in rows:
        if r.change_type != "added" or r.renamed_from is not None:
            continue
        near = [d for d in removed if d.name == r.name and d.path != r.path
                and abs(d.ts_us - r.ts_us) <= _MOVE_US]  # fmt: skip
        if len(near) == 1:
            keys.union((near[0].path, near[0].name), (r.path, r.name))
            moves[(r.change_id, r.ordinal)] = near[0]
    return moves


def _link_moved_files(store: Store, rows: Sequence[SymbolRow], keys: _Keys,
                      ws_ids: Sequence[int] | None) -> None:  # fmt: skip
    """Join a definition's rows in two files when the file was renamed (without a content
    change, so no symbol row says so) between the last version in one and the first in the
    other: only the records of that interval are read."""
    ends: dict[tuple[str, str], tuple[SymbolRow, SymbolRow]] = {}
    for r in rows:  # oldest first
        root = keys.find((r.path, r.name))
        ends[root] = (ends.get(root, (r, r))[0], r)
    checked = 0
    for a, (_, last) in ends.items():
        for b, (first, _) in ends.items():
            if (a == b or last.ts_us >= first.ts_us or last.path == first.path
                    or (first.renamed_from or first.name) != last.name):  # fmt: skip
                continue
            if checked >= _PATH_PAIRS:
                return
            checked += 1
            path = last.path
            for old, new in file_renames(store, ws_ids, last.ts_us, first.ts_us):
                if old == path:
                    path = new
            if path in (first.path, first.old_path):
                keys.union(a, b)


def _overloaded(rows: Sequence[SymbolRow]) -> bool:
    """Two definitions of one name in one file change: versions would mix them."""
    seen: set[tuple[int, str]] = set()
    for r in rows:
        if r.renamed_to is not None:
            continue  # the old side of a rename, shown by its new side
        if (r.change_id, r.name) in seen:
            return True
        seen.add((r.change_id, r.name))
    return False


def _versions(rows: Sequence[SymbolRow], moves: _Moves) -> tuple[Version, ...]:
    """One version per change: the new side of a symbol rename stands for both rows, and the
    addition of a moved definition for its removal from the other file."""
    moved = {id(d) for d in moves.values()}
    by_change: dict[int, SymbolRow] = {}
    for r in rows:
        if id(r) in moved:
            continue
        have = by_change.get(r.change_id)
        if have is None or have.renamed_to is not None:
            by_change[r.change_id] = r
    return tuple(Version(r, moves.get((r.change_id, r.ordinal)))
                 for r in by_change.values())  # fmt: skip


def _suggestions(store: Store, name: str) -> list[str]:
    """The recorded names that end in `.name`, then the closest by difflib: first among the
    last components (far fewer than the names), then among the names that end in those."""
    names = recorded_names(store)
    endings = sorted(n for n in names if n.endswith("." + name))
    by_tail: dict[str, list[str]] = {}
    for n in names:
        by_tail.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    tails = difflib.get_close_matches(name.rsplit(".", 1)[-1], list(by_tail), n=10, cutoff=0.6)
    pool = [n for tail in tails for n in by_tail[tail]][:_SUGGESTION_POOL]
    close = difflib.get_close_matches(name, pool, n=5, cutoff=0.6)
    return list(dict.fromkeys([*endings[:5], *close]))[:8]


@dataclass(frozen=True, slots=True)
class _Found:
    lineages: list[Lineage]
    suggestions: list[str]


def _clean_path(path: str | None, ws: Workspace | None) -> str | None:
    if path is None or path == "":
        return None
    if "\0" in path:
        raise InvalidArgs("path must not hold a NUL byte")
    p = Path(path)
    if p.is_absolute() and ws is not None:
        try:
            return p.resolve().relative_to(Path(ws.root)).as_posix()
        except ValueError:
            raise InvalidArgs(f"path {path!r} is outside the workspace {ws.root}") from None
    return p.as_posix().removeprefix("./")


def _find(store: Store, name: str, path: str | None, ws_ids: Sequence[int] | None) -> _Found:
    rows = _rows_with_renames(store, name, ws_ids)
    all_groups, moves = _groups(store, rows, ws_ids)
    groups = [g for g in all_groups if any(r.name == name for r in g)]
    if path is not None:
        groups = [g for g in groups if any(path in (r.path, r.old_path) for r in g)]
    lineages: list[Lineage] = []
    for g in groups:
        if _overloaded(g):
            # Each overload is a candidate of its own: told apart by where it stands.
            lineages.extend(Lineage((Version(r),)) for r in g if r.renamed_to is None)
        else:
            lineages.append(Lineage(_versions(g, moves)))
    return _Found(lineages, [] if lineages else _suggestions(store, name))


def _workspace(store: Store, settings: Settings) -> Workspace | None:
    from symdiff.query import select_workspaces

    workspaces = store.workspaces()
    ids = select_workspaces(workspaces, root=settings.root, host=settings.host, workspace=None)
    return next((w for w in workspaces if ids and w.id == ids[0]), None)


def lineage(store: Store, settings: Settings, name: str, *, path: str | None = None
            ) -> tuple[Workspace, Lineage]:  # fmt: skip
    """The one definition `name` (in `path`) names; InvalidArgs when it names several or none."""
    ws = _workspace(store, settings)
    if ws is None:
        raise ToolFailed(f"nothing is indexed at {settings.root}; run `symdiff index` first")
    found = _find(store, name, _clean_path(path, ws), [ws.id])
    if not found.lineages:
        hint = f"; did you mean {', '.join(found.suggestions)}?" if found.suggestions else ""
        where = f" in {path}" if path else ""
        raise InvalidArgs(f"no recorded version of {name}{where}{hint}")
    if len(found.lineages) > 1:
        shown = "; ".join(f"{c['name']} ({c['kind']}) in {c['path']} at lines "
                          f"{c['start_line']}-{c['end_line']}"
                          for c in (lin.candidate() for lin in found.lineages))  # fmt: skip
        raise InvalidArgs(f"{name} names {len(found.lineages)} definitions: {shown}; "
                          "pass a path to choose one")
    return ws, found.lineages[0]


# -- texts and diffs -------------------------------------------------------------------------


def split_lines(source: bytes) -> list[bytes]:
    """Lines split on `\\n` only (as git counts them), each with its newline."""
    parts = source.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def definition_text(source: bytes, sym: Symbol) -> bytes:
    """A definition's whole lines, decorators and comments it spans included."""
    return b"".join(split_lines(source)[sym.start_line - 1 : sym.end_line])


def find_symbol(symbols: Iterable[Symbol], name: str, line: int) -> Symbol | None:
    """The definition called `name` nearest to `line`."""
    named = [s for s in symbols if s.name == name]
    return min(named, key=lambda s: abs(s.start_line - line), default=None)


class Texts:
    """Snapshots and their definitions, each read and extracted once per answer."""

    def __init__(self, store: Store, root: str) -> None:
        self._store = store
        self._root = root
        self._blobs: dict[str, bytes | None] = {}
        self._git: Any = None  # the work tree's repository, opened on first need

    def blob(self, digest: str | None) -> bytes | None:
        if digest is None:
            return None
        if digest not in self._blobs:
            data = self._store.get_blob(digest)
            self._blobs[digest] = self._from_git(digest) if data is None else data
        return self._blobs[digest]

    def _from_git(self, digest: str) -> bytes | None:
        """An imported commit's content: its hash is the git blob id, and the repository keeps
        the bytes (the history import stores no snapshot of its own)."""
        import pygit2  # loaded only for imported commits' texts

        from symdiff.gitstate import open_repo

        if self._git is None:
            repo = open_repo(Path(self._root))
            self._git = False if repo is None else repo.handle
        if self._git is False:
            return None
        try:
            return bytes(self._git.odb.read(digest)[1])
        except (KeyError, ValueError, pygit2.GitError):
            return None  # not there: a shallow or partial clone, or another repository

    def side(self, v: Version, *, new: bool) -> tuple[bytes, Symbol] | None:
        """The definition's source and Symbol after (`new`) or before the change."""
        r = v.row
        if r.language is None:
            return None
        line = r.start_line
        if new:
            if v.removed or r.file_change_type == "delete":
                return None
            source, name = self.blob(r.new_hash), r.name
        elif v.moved_from is not None:
            source, name = self.blob(v.moved_from.old_hash), v.old_name
            line = v.moved_from.start_line
        else:
            if r.change_type == "added" and r.renamed_from is None:
                return None
            if r.file_change_type == "add":
                return None
            source, name = self.blob(r.old_hash), v.old_name
        if source is None:
            return None
        from symdiff.extract import extract  # tree-sitter: only when texts are asked for

        sym = find_symbol(extract(r.language, source), name, line)
        return None if sym is None else (source, sym)

    def text(self, v: Version) -> bytes | None:
        """The definition's text after the change (None: removed, or not kept)."""
        found = self.side(v, new=True)
        return None if found is None else definition_text(*found)

    def scoped_diff(self, v: Version) -> str | None:
        """The definition's old lines against its new ones, numbered as in the file."""
        old, new = self.side(v, new=False), self.side(v, new=True)
        if old is None and new is None:
            return None
        from symdiff.linediff import diff_lines, unified_diff

        r = v.row
        old_text = b"" if old is None else definition_text(*old)
        new_text = b"" if new is None else definition_text(*new)
        if old is not None and new is not None:
            shifts = (old[1].start_line - 1, new[1].start_line - 1)
        else:
            old_src = self.blob(r.old_hash) or b""
            new_src = self.blob(r.new_hash) or b""
            file_diff = diff_lines(old_src, new_src)
            if old is None:
                assert new is not None
                shifts = (_anchor(file_diff, new[1].start_line, new_side=True),
                          new[1].start_line - 1)  # fmt: skip
            else:
                shifts = (old[1].start_line - 1,
                          _anchor(file_diff, old[1].start_line, new_side=False))  # fmt: skip
        label_a = "/dev/null" if old is None else f"a/{v.old_path or r.path}"
        label_b = "/dev/null" if new is None else f"b/{r.path}"
        text = unified_diff(old_text, new_text, label_a=label_a, label_b=label_b)
        return _shift_hunks(text, *shifts)


def _anchor(diff: LineDiff, line: int, *, new_side: bool) -> int:
    """The line of the other side after which `line` of one side stands (0: the top)."""
    offset = 0
    for h in diff.hunks:
        start, count = (h.new_start, h.new_count) if new_side else (h.old_start, h.old_count)
        other_start, other_count = ((h.old_start, h.old_count) if new_side
                                    else (h.new_start, h.new_count))  # fmt: skip
        if count and start <= line <= start + count - 1:
            return other_start + other_count - 1 if other_count else other_start
        if start + max(count, 1) - 1 < line:
            offset += other_count - count
    return max(line - 1 + offset, 0)


def _shift_hunks(text: str, old_shift: int, new_shift: int) -> str:
    def shifted(m: re.Match[str]) -> str:
        return (f"@@ -{int(m[1]) + old_shift}{m[2] or ''} "
                f"+{int(m[3]) + new_shift}{m[4] or ''} @@")  # fmt: skip

    return _HUNK.sub(shifted, text)


# -- the answers -----------------------------------------------------------------------------


def _record(v: Version, texts: Texts, *, diffs: bool) -> dict[str, object]:
    r = v.row
    out: dict[str, object] = {
        "version": r.change_id, "timestamp": format_us(r.ts_us), "change_type": r.change_type,
        "file_change_type": r.file_change_type, "origin": r.origin,
        "origin_info": None if r.origin_info is None else json.loads(r.origin_info),
        "path": r.path, "old_path": v.old_path, "name": r.name, "kind": r.kind,
        "start_line": r.start_line, "end_line": r.end_line,
    }  # fmt: skip
    if r.renamed_from is not None:
        out["renamed_from"] = r.renamed_from
    if r.renamed_to is not None:
        out["renamed_to"] = r.renamed_to
    if diffs:
        out["diff"] = texts.scoped_diff(v)
    return out


def _since_us(since: str | None, now: datetime | None) -> int:
    if since is None:
        return 0
    from symdiff.duration import parse_go_duration
    from symdiff.errors import DurationError

    try:
        ns = parse_go_duration(since)
    except DurationError as err:
        raise DurationError(f"since: {err.reason}") from err
    if ns < 0:
        raise InvalidArgs(f"since must not be negative, got {since!r}")
    return to_us(now or datetime.now(UTC)) - ns // 1000


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgs(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def symbol_history(
    settings: Settings,
    name: str,
    *,
    path: str | None = None,
    since: str | None = None,
    limit: int | None = None,
    diffs: bool = True,
    store: Store | None = None,
    now: datetime | None = None,
) -> History:
    """Every recorded version of the definition `name`, newest first (docs/symbol_history.md).

    Args:
        path: the file (relative to the workspace root) when the name is in several.
        since: a Go duration: only versions recorded within it (default: all).
        diffs: False leaves out each version's diff (and reads no snapshot).
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgs("name must be a qualified symbol name, e.g. Session.refresh")
    first_us, wanted = _since_us(since, now), _limit(limit)
    store = store or reader(settings.db_url)  # kept open: a server pays no connection a call
    if store is None:  # no database yet: nothing is indexed
        return History(name, "unknown", [], [], [])
    return _history(store, settings, name, path, first_us, wanted, diffs)


def _history(store: Store, settings: Settings, name: str, path: str | None, first_us: int,
             limit: int, diffs: bool) -> History:  # fmt: skip
    ws = _workspace(store, settings)
    if ws is None:
        return History(name, "unknown", [], [], [])
    found = _find(store, name, _clean_path(path, ws), [ws.id])
    if not found.lineages:
        return History(name, "unknown", [], [], found.suggestions)
    if len(found.lineages) > 1:
        return History(name, "ambiguous", [], [lin.candidate() for lin in found.lineages], [])
    newest_first = [v for v in reversed(found.lineages[0].versions) if v.row.ts_us >= first_us]
    texts = Texts(store, ws.root)
    page = [_record(v, texts, diffs=diffs) for v in newest_first[:limit]]
    return History(name, "found", page, [], [], more=len(newest_first) > limit)


def _split_at(spec: str) -> tuple[str, int | None]:
    name, sep, version = spec.rpartition("@")
    if sep and version.isdigit() and name:
        return name, int(version)
    return spec, None


def symbol_source(
    settings: Settings,
    name: str,
    *,
    version: int | None = None,
    path: str | None = None,
    store: Store | None = None,
) -> dict[str, object]:
    """A definition's source text at a version (None: as the file is now on disk).

    `name` may carry the version as `NAME@VERSION`. Returns name, path, kind, version,
    start_line, end_line and source.
    """
    if version is None and isinstance(name, str):
        name, version = _split_at(name)
    store = store or reader(settings.db_url)
    if store is None:
        raise ToolFailed(f"nothing is indexed at {settings.root}; run `symdiff index` first")
    return _source(store, settings, name, version, path)


def version_of(lin: Lineage, version: int) -> Version:
    """The version with this id; InvalidArgs when the definition has none."""
    for v in lin.versions:
        if v.id == version:
            return v
    known = ", ".join(str(v.id) for v in reversed(lin.versions[-10:]))
    raise InvalidArgs(f"{lin.newest.row.name} has no version {version}; its newest are {known}")


def current(root: str, lin: Lineage) -> tuple[bytes, Symbol | None]:
    """The definition's file as it is now on disk, and the definition in it (None: gone)."""
    r = lin.newest.row
    try:
        source = (Path(root) / r.path).read_bytes()
    except OSError as err:
        raise ToolFailed(f"cannot read {r.path}: {err.strerror or err}") from None
    if r.language is None:
        return source, None
    from symdiff.extract import extract

    return source, find_symbol(extract(r.language, source), r.name, r.start_line)


def _source(store: Store, settings: Settings, name: str, version: int | None,
            path: str | None) -> dict[str, object]:  # fmt: skip
    try:
        ws, lin = lineage(store, settings, name, path=path)
    except InvalidArgs:
        # A definition that never changed since the baseline has no version; in a named
        # file, it is still shown as it is now.
        unchanged = None if version is not None or path is None else _on_disk(
            store, settings, name, path)  # fmt: skip
        if unchanged is None:
            raise
        return unchanged
    if version is None:
        newest = lin.newest.row
        if lin.newest.removed:
            raise ToolFailed(f"{newest.name} was removed from {newest.path} at version "
                             f"{newest.change_id}; ask for an earlier version")
        source, sym = current(ws.root, lin)
        if sym is None:
            raise ToolFailed(f"{newest.name} is not in {newest.path} now; it was last recorded "
                             f"at version {newest.change_id}")
        where = newest.path
    else:
        v = version_of(lin, version)
        found = Texts(store, ws.root).side(v, new=True)
        if found is None:
            why = "removed it" if v.removed else "kept no text of it"
            raise ToolFailed(f"version {version} of {v.row.name} {why}")
        source, sym = found
        where = v.row.path
    return {"name": sym.name, "path": where, "kind": sym.kind, "version": version,
            "start_line": sym.start_line, "end_line": sym.end_line,
            "source": definition_text(source, sym).decode("utf-8", "replace")}  # fmt: skip


def _on_disk(store: Store, settings: Settings, name: str, path: str) -> dict[str, object] | None:
    """The definition `name` in the file `path` as it is now, if it is there exactly once."""
    from symdiff.extract import extract
    from symdiff.languages import language_for

    ws = _workspace(store, settings)
    rel = _clean_path(path, ws)
    if ws is None or rel is None or (language := language_for(rel)) is None:
        return None
    try:
        source = (Path(ws.root) / rel).read_bytes()
    except OSError:
        return None
    found = [s for s in extract(language, source) if s.name == name]
    if len(found) != 1:
        return None
    sym = found[0]
    return {"name": sym.name, "path": rel, "kind": sym.kind, "version": None,
            "start_line": sym.start_line, "end_line": sym.end_line,
            "source": definition_text(source, sym).decode("utf-8", "replace")}  # fmt: skip
