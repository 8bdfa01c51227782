"""Which definition a qualified name means, and its versions: the rows of the name (and of
the names it was renamed from or to) grouped by definition, across symbol renames, file renames
and moves between files (docs/symbol_history.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.store import Store, Workspace
from symdiff.store.versions import (
    SymbolRow,
    file_renames,
    oldest_first,
    recorded_names,
    symbol_rows,
)
from symdiff.timestamps import format_us

__all__ = ["Found", "Group", "Lineage", "Version", "clean_path", "find", "version_of", "workspace"]

_RENAME_DEPTH = 16  # symbol renames followed, each way
_PATH_PAIRS = 20  # same-named definitions in different files checked for a file rename
_SUGGESTION_POOL = 5_000  # names compared whole with an unknown one
_MOVE_US = 2_000_000  # a removal and an addition this close come from one reconcile pass


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
    """The versions of one definition, oldest first; `occurrence` is its place among the
    definitions of its name in its file (1: the first), when the file has several."""

    versions: tuple[Version, ...]
    occurrence: int | None = None

    @property
    def newest(self) -> Version:
        return self.versions[-1]

    def selector(self, version: int | None = None) -> str:
        """The selector that names this definition alone: `PATH:NAME[#N][@VERSION]`."""
        r = self.newest.row
        occurrence = "" if self.occurrence is None else f"#{self.occurrence}"
        at = "" if version is None else f"@{version}"
        return f"{r.path}:{r.name}{occurrence}{at}"

    def candidate(self, version: int | None = None) -> dict[str, object]:
        """How a list of candidates shows this definition, with the selector to type."""
        r = self.newest.row
        return {"selector": self.selector(version), "name": r.name, "path": r.path,
                "kind": r.kind, "occurrence": self.occurrence, "versions": len(self.versions),
                "latest": format_us(r.ts_us), "newest_version": r.change_id,
                "start_line": r.start_line, "end_line": r.end_line}  # fmt: skip


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
class Group:
    """The rows of one definition's places (its paths and names), before same-named
    definitions in one file are told apart; `overloaded` when one change touched two."""

    rows: tuple[SymbolRow, ...]
    moves: _Moves

    @property
    def overloaded(self) -> bool:
        return _overloaded(self.rows)

    @property
    def newest(self) -> SymbolRow:
        return self.rows[-1]

    def lineage(self, rows: Sequence[SymbolRow] | None = None,
                occurrence: int | None = None) -> Lineage:  # fmt: skip
        """The versions of all its rows (or of `rows`, one definition's share of them)."""
        return Lineage(_versions(self.rows if rows is None else rows, self.moves), occurrence)


@dataclass(frozen=True, slots=True)
class Found:
    """The definitions a name (in a path) names; the closest recorded names when none."""

    groups: list[Group]
    suggestions: list[str]


def clean_path(path: str | None, ws: Workspace | None) -> str | None:
    """A path argument relative to the workspace root (an absolute one is made so)."""
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


def _in(path: str, rows: Sequence[SymbolRow]) -> bool:
    """Whether the rows were ever in `path`: the whole relative path, or its tail from a `/`
    (`recipes.py` for `more_itertools/recipes.py`)."""
    tail = "/" + path
    return any(p is not None and (p == path or p.endswith(tail))
               for r in rows for p in (r.path, r.old_path))  # fmt: skip


def find(store: Store, name: str, path: str | None, ws_ids: Sequence[int] | None) -> Found:
    """Every definition `name` (in `path`) names, each with its rows."""
    rows = _rows_with_renames(store, name, ws_ids)
    all_groups, moves = _groups(store, rows, ws_ids)
    groups = [g for g in all_groups if any(r.name == name for r in g)]
    if path is not None:
        exact = [g for g in groups if any(path in (r.path, r.old_path) for r in g)]
        groups = exact or [g for g in groups if _in(path, g)]
    found = [Group(tuple(g), moves) for g in groups]
    return Found(found, [] if found else _suggestions(store, name))


def workspace(store: Store, settings: Settings) -> Workspace | None:
    """The workspace the caller is in (the nearest indexed root at or above it)."""
    from symdiff.query.workspaces import select_workspaces

    workspaces = store.workspaces()
    ids = select_workspaces(workspaces, root=settings.root, host=settings.host, workspace=None)
    return next((w for w in workspaces if ids and w.id == ids[0]), None)


def version_of(lin: Lineage, version: int) -> Version:
    """The version with this id; InvalidArgs when the definition has none."""
    for v in lin.versions:
        if v.id == version:
            return v
    known = ", ".join(str(v.id) for v in reversed(lin.versions[-10:]))
    raise InvalidArgs(f"{lin.newest.row.name} has no version {version}; its newest are {known}")
