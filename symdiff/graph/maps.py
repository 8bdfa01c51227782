"""The reverse maps: who uses each key, each name, each fixture; kept per file.

Each file's entries are computed from that file alone (`keys.compile_file`), so `update` and
`remove` touch only its own entries. Resolution happens at query time, from the definition's
side (`edges.py`).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from symdiff.graph.facts import FileFacts, TestId
from symdiff.graph.keys import Compiled, compile_file
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.keys.python import module_names
from symdiff.model import Scope, Symbol
from symdiff.parse.refs import RefKind
from symdiff.parse.testpaths import classify

User = tuple[str, str]  # (path, the using definition's Symbol.name; "" at module level)
Node = tuple[str, str]  # (path, Symbol.name)


@dataclass(frozen=True, slots=True)
class Entry:
    """One file as the index holds it."""

    facts: FileFacts
    compiled: Compiled
    symbols: Mapping[str, Symbol]
    test_scope: bool
    children: Mapping[str, tuple[str, ...]]  # Symbol.name -> the names defined right inside it


def last_name(name: str) -> str:
    """A Symbol.name's last part (`f` of `A.f`, `new` of `S::new`)."""
    return name.replace("::", ".").rpartition(".")[2]


_Table = defaultdict[str, set[tuple[str, ...]]]
_Op = Callable[[_Table, str, tuple[str, ...]], None]


def _add(table: _Table, key: str, value: tuple[str, ...]) -> None:
    table[key].add(value)


def _drop(table: _Table, key: str, value: tuple[str, ...]) -> None:
    bucket = table.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del table[key]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a stretch that makes many objects and no
    cycles (a build, a walk): each of its passes would walk them, and the ones older than them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Memo:
    """The query side's caches: each a pure function of the maps, dropped on every change."""

    def __init__(self) -> None:
        self.module_keys: dict[str, tuple[str, ...]] = {}
        self.definition_keys: dict[Node, frozenset[str]] = {}
        self.reach_keys: dict[Node, frozenset[str]] = {}
        self.subclasses: dict[Node, tuple[Node, ...]] = {}
        self.bases: dict[Node, tuple[Node, ...]] = {}
        self.tests: dict[Node, tuple[TestId, ...]] = {}
        self.resolved: dict[str, tuple[Node, ...]] = {}
        self.is_test: dict[Node, bool] = {}
        self.stored: dict[Node, tuple[frozenset[str], frozenset[str]]] = {}
        self.goes: dict[Node, int] = {}  # walk.way_of
        self.bindings: dict[str, dict[str, list[str]]] = {}
        self.file_tests: dict[str, frozenset[str]] = {}  # testing.file_tests
        # Whether a reached node is a test, and the tests it stands for as numbers of one
        # numbering of the tests (walk.stands_for); None: none.
        self.stands_for: dict[Node, tuple[bool, tuple[int, ...]] | None] = {}
        self.test_number: dict[tuple[str, str], int] = {}  # (path, node id) -> number
        self.numbered: list[TestId] = []  # number -> the test

    def clear(self) -> None:
        """Forget everything."""
        tables = (self.module_keys, self.definition_keys, self.reach_keys, self.subclasses,
                  self.bases, self.tests, self.resolved, self.bindings, self.is_test,
                  self.stored, self.goes, self.file_tests, self.stands_for, self.test_number,
                  self.numbered)  # fmt: skip
        for table in tables:
            table.clear()


# What a class body may store as a value (`walk.stored_by`).
STORED = frozenset({RefKind.NAME, RefKind.ATTR})


def _is_class(entry: Entry, name: str) -> bool:
    symbol = entry.symbols.get(name)
    return symbol is not None and symbol.kind in CLASS_KINDS


def _same_shape(old: Entry, new: Entry) -> bool:
    """Whether a file kept what the query side's caches depend on besides its uses: its
    definitions' names, kinds and nesting, re-exports, bases, fixtures and scope."""
    a, b = old.compiled, new.compiled
    return (
        old.test_scope == new.test_scope
        and old.children == new.children
        and [(s.name, s.kind) for s in old.facts.symbols]
        == [(s.name, s.kind) for s in new.facts.symbols]
        and a.exports == b.exports and a.bases == b.bases and a.fixtures == b.fixtures
        and a.fixture_uses == b.fixture_uses and a.module_lifecycle == b.module_lifecycle
        and a.fixture_types == b.fixture_types and a.test_imports == b.test_imports
        and old.facts.refs.imports == new.facts.refs.imports
        and old.facts.refs.package == new.facts.refs.package
    )  # fmt: skip


class Index:
    """The files and the reverse maps built from them."""

    def __init__(self, *, test_patterns: Sequence[str], go_modules: Mapping[str, str]) -> None:
        self.test_patterns = tuple(test_patterns)
        self.go_modules = dict(go_modules)
        self.files: dict[str, Entry] = {}
        self.by_key: _Table = defaultdict(set)  # key -> users
        self.by_name: _Table = defaultdict(set)  # last part -> (path, source, anchor)
        self.mentions: _Table = defaultdict(set)  # test files' uses by last part
        self.exports: _Table = defaultdict(set)  # module key + member -> (path, member, local)
        self.subclasses: _Table = defaultdict(set)  # base key -> (path, class)
        self.subclasses_by_name: _Table = defaultdict(set)
        self.fixture_defs: _Table = defaultdict(set)  # name -> (path, symbol)
        self.fixture_users: _Table = defaultdict(set)  # name -> (path, source)
        self.fixture_types: _Table = defaultdict(set)  # class key -> (fixture name,)
        self.test_imports: _Table = defaultdict(set)  # class key -> (test file, local name)
        self.module_attrs: _Table = defaultdict(set)  # module -> (attribute, path, source)
        self.defs_by_last: _Table = defaultdict(set)  # last part -> (path, name)
        self.py_modules: _Table = defaultdict(set)  # any dotted suffix -> (path,)
        self.init_dirs: set[str] = set()
        self.version = 0  # bumped on every change of a file's shape: every cache is dropped
        # An edit that changed only uses: the keys and names whose users changed, until the
        # walk's edge cache has dropped the nodes that depend on them.
        self.dirty_keys: set[str] = set()
        self.dirty_names: set[str] = set()
        self.memo = Memo()  # what queries worked out from the maps, until the next change

    def add_all(self, files: Iterable[FileFacts]) -> None:
        """Index many files (the initial build)."""
        # Hundreds of thousands of small tuples and sets, none of them garbage: the collector's
        # passes over them cost the build ~40% (1.4 s against 2.4 s on Django).
        with collector_paused():
            for facts in files:
                self.update(facts)

    def update(self, facts: FileFacts) -> None:
        """Index one file, replacing what it held."""
        old = self.files.pop(facts.path, None)
        if old is not None:
            self._apply(old, _drop)
        test_scope = classify(facts.path, self.test_patterns) is Scope.TEST
        compiled = compile_file(facts, self.go_modules, test_scope=test_scope)
        symbols = {s.name: s for s in facts.symbols}
        children: dict[str, list[str]] = {}
        for symbol in facts.symbols:
            if symbol.parent is not None:
                children.setdefault(symbol.parent, []).append(symbol.name)
        entry = Entry(facts, compiled, symbols, test_scope,
                      {k: tuple(v) for k, v in children.items()})  # fmt: skip
        self.files[facts.path] = entry
        self._apply(entry, _add)
        if old is not None and _same_shape(old, entry):
            self._uses_changed(old, entry)
        else:
            self.changed()

    def remove(self, path: str) -> None:
        """Forget one file."""
        entry = self.files.pop(path, None)
        if entry is not None:
            self._apply(entry, _drop)
            self.changed()

    def changed(self) -> None:
        """Forget everything queries worked out from the maps (a file's shape changed)."""
        self.version += 1
        self.memo.clear()
        self.dirty_keys.clear()
        self.dirty_names.clear()

    def _uses_changed(self, old: Entry, new: Entry) -> None:
        """Only a file's uses changed (an edit inside bodies): queries forget only the nodes
        whose users those uses' keys and names were (`walk.Edges` reads these sets)."""
        before, after = set(old.compiled.uses), set(new.compiled.uses)
        moved = before ^ after
        if any(use.kind in STORED and _is_class(new, use.source) for use in moved):
            # What a class body stores as a value decides whether the walk goes past the
            # class (`walk.class_goes_on`), worked out once per version: a new version.
            self.changed()
            return
        for use in moved:
            self.dirty_keys.update(use.keys)
            if use.fallback:
                self.dirty_names.add(use.last)

    def _apply(self, entry: Entry, op: _Op) -> None:
        self._apply_uses(entry, op)
        path = entry.facts.path
        compiled = entry.compiled
        for module, member, local in compiled.exports:
            op(self.exports, module + member, (path, member, local))
        for cls, base in compiled.bases:
            for key in base.keys:
                op(self.subclasses, key, (path, cls))
            if base.fallback:
                op(self.subclasses_by_name, base.last, (path, cls))
        self._apply_pytest(entry, op)
        for module, attribute, source in compiled.module_attrs:
            op(self.module_attrs, module, (attribute, path, source))
        for name in entry.symbols:
            op(self.defs_by_last, last_name(name), (path, name))
        if entry.facts.language == "python":
            for module in module_names(path, frozenset()):
                op(self.py_modules, module, (path,))
            if path.rpartition("/")[2] == "__init__.py":
                folder = path.rpartition("/")[0]
                if op is _add:
                    self.init_dirs.add(folder)
                else:
                    self.init_dirs.discard(folder)

    def _apply_pytest(self, entry: Entry, op: _Op) -> None:
        path = entry.facts.path
        compiled = entry.compiled
        for fixture in compiled.fixtures:
            op(self.fixture_defs, fixture.name, (path, fixture.symbol))
        for source, name in compiled.fixture_uses:
            op(self.fixture_users, name, (path, source))
        for key, name in compiled.fixture_types:
            op(self.fixture_types, key, (name,))
        for key, local in compiled.test_imports:
            op(self.test_imports, key, (path, local))

    def _apply_uses(self, entry: Entry, op: _Op) -> None:
        path = entry.facts.path
        if op is _add:  # the build's hot loop, without a call per entry
            by_key, by_name, mentions = self.by_key, self.by_name, self.mentions
            for use in entry.compiled.uses:
                user = (path, use.source)
                for key in use.keys:
                    by_key[key].add(user)
                if use.fallback:
                    by_name[use.last].add((path, use.source, use.anchor))
                if entry.test_scope:
                    mentions[use.last].add(user)
            return
        for use in entry.compiled.uses:
            user = (path, use.source)
            for key in use.keys:
                op(self.by_key, key, user)
            if use.fallback:
                op(self.by_name, use.last, (path, use.source, use.anchor))
            if entry.test_scope:
                op(self.mentions, use.last, user)


