"""The reverse maps: who uses each key, each name, each fixture; kept per file.

Each file's entries are computed from that file alone (`keys.compile_file`), so `update` and
`remove` touch only its own entries. Resolution happens at query time, from the definition's
side (`edges.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from symdiff.graph.facts import FileFacts
from symdiff.graph.keys import Compiled, compile_file
from symdiff.graph.keys.python import module_names
from symdiff.model import Scope, Symbol
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


def last_name(name: str) -> str:
    """A Symbol.name's last part (`f` of `A.f`, `new` of `S::new`)."""
    return name.replace("::", ".").rpartition(".")[2]


_Table = dict[str, set[tuple[str, ...]]]
_Op = Callable[[_Table, str, tuple[str, ...]], None]


def _add(table: dict[str, set[tuple[str, ...]]], key: str, value: tuple[str, ...]) -> None:
    bucket = table.get(key)
    if bucket is None:
        table[key] = {value}
    else:
        bucket.add(value)


def _drop(table: dict[str, set[tuple[str, ...]]], key: str, value: tuple[str, ...]) -> None:
    bucket = table.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del table[key]


class Index:
    """The files and the reverse maps built from them."""

    def __init__(self, *, test_patterns: Sequence[str], go_modules: Mapping[str, str]) -> None:
        self.test_patterns = tuple(test_patterns)
        self.go_modules = dict(go_modules)
        self.files: dict[str, Entry] = {}
        self.by_key: dict[str, set[tuple[str, ...]]] = {}  # key -> users
        self.by_name: dict[str, set[tuple[str, ...]]] = {}  # last part -> (path, source, anchor)
        self.mentions: dict[str, set[tuple[str, ...]]] = {}  # test files' uses by last part
        self.exports: dict[str, set[tuple[str, ...]]] = {}  # module key -> (path, member, local)
        self.subclasses: dict[str, set[tuple[str, ...]]] = {}  # base key -> (path, class)
        self.subclasses_by_name: dict[str, set[tuple[str, ...]]] = {}
        self.fixture_defs: dict[str, set[tuple[str, ...]]] = {}  # name -> (path, symbol)
        self.fixture_users: dict[str, set[tuple[str, ...]]] = {}  # name -> (path, source)
        self.defs_by_last: dict[str, set[tuple[str, ...]]] = {}  # last part -> (path, name)
        self.py_modules: dict[str, set[tuple[str, ...]]] = {}  # any dotted suffix -> (path,)
        self.init_dirs: set[str] = set()
        self.version = 0  # bumped on every change: the edges' caches key on it

    def add_all(self, files: Iterable[FileFacts]) -> None:
        """Index many files (the initial build)."""
        for facts in files:
            self.update(facts)

    def update(self, facts: FileFacts) -> None:
        """Index one file, replacing what it held."""
        if facts.path in self.files:
            self.remove(facts.path)
        compiled = compile_file(facts, self.go_modules)
        symbols = {s.name: s for s in facts.symbols}
        test_scope = classify(facts.path, self.test_patterns) is Scope.TEST
        entry = Entry(facts, compiled, symbols, test_scope)
        self.files[facts.path] = entry
        self._apply(entry, _add)
        self.version += 1

    def remove(self, path: str) -> None:
        """Forget one file."""
        entry = self.files.pop(path, None)
        if entry is not None:
            self._apply(entry, _drop)
            self.version += 1

    def _apply(self, entry: Entry, op: _Op) -> None:
        self._apply_uses(entry, op)
        path = entry.facts.path
        compiled = entry.compiled
        for module, member, local in compiled.exports:
            op(self.exports, module, (path, member, local))
        for cls, base in compiled.bases:
            for key in base.keys:
                op(self.subclasses, key, (path, cls))
            if base.fallback:
                op(self.subclasses_by_name, base.last, (path, cls))
        for fixture in compiled.fixtures:
            op(self.fixture_defs, fixture.name, (path, fixture.symbol))
        for source, name in compiled.fixture_uses:
            op(self.fixture_users, name, (path, source))
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

    def _apply_uses(self, entry: Entry, op: _Op) -> None:
        path = entry.facts.path
        for use in entry.compiled.uses:
            user = (path, use.source)
            for key in use.keys:
                op(self.by_key, key, user)
            if use.fallback:
                op(self.by_name, use.last, (path, use.source, use.anchor))
            if entry.test_scope:
                op(self.mentions, use.last, user)


