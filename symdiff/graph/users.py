"""Who uses a node: its reverse edges, resolved and by name, cached across queries.

The keys come from `edges.py`; here they become users (`dict` of node → the edge's RANK), with
fixture users, name joins under the policy, a dead-end method's class users and a package's
hidden aliases. An edit that changed only uses drops only the cached nodes whose keys' last
parts (or names) those uses touched (`Index.dirty_keys`).
"""

from __future__ import annotations

import posixpath

from symdiff.graph.edges import (
    INFERRED,
    NAME,
    RANK,
    RESOLVED,
    definition_keys,
    name_ok,
    reach_keys,
    subclasses,
)
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.keys.python import module_names
from symdiff.graph.maps import Index, Node, last_name
from symdiff.graph.policy import Policy
from symdiff.parse.languages import FAMILIES

Users = dict[Node, int]  # user -> RANK of the edge's confidence
SHARED_AT = 16  # users from which equal dicts are one object


class Edges:
    """The reverse edges of each node, computed once per version of the index."""

    def __init__(self, ix: Index, policy: Policy) -> None:
        self.ix = ix
        self.policy = policy
        self._version = -1
        self._named: dict[Node, Users] = {}  # with name edges
        self._plain: dict[Node, Users] = {}  # resolved edges only
        # Which cached nodes read keys ending in which name part, and which name: an edit's uses
        # drop only those.
        self._by_key: dict[str, set[Node]] = {}
        self._by_name: dict[str, set[Node]] = {}
        self._same: dict[int, list[Users]] = {}  # equal users' one dict, by their hash

    def fresh(self) -> set[Node]:
        """Drop what the index's changes made stale; the nodes whose users an edit of uses
        may have changed (of those worked out since the version began)."""
        ix = self.ix
        stale: set[Node] = set()
        if self._version != ix.version:
            for table in (self._named, self._plain, self._by_key, self._by_name, self._same):
                table.clear()
            self._version = ix.version
        if ix.dirty_keys or ix.dirty_names:
            for tail in {_tail(key) for key in ix.dirty_keys}:
                stale.update(self._by_key.pop(tail, ()))
            for name in ix.dirty_names:
                stale.update(self._by_name.pop(name, ()))
            for node in stale:
                self._named.pop(node, None)
                self._plain.pop(node, None)
            ix.dirty_keys.clear()
            ix.dirty_names.clear()
        return stale

    def users(self, node: Node, *, by_name: bool) -> Users:
        """Who uses `node`: resolved uses, fixture users, and name joins when allowed (call
        `fresh` first, once per walk)."""
        cache = self._named if by_name else self._plain
        cached = cache.get(node)
        if cached is None:
            # In the nodes' order, not the maps' sets' (which follows the hash seed): the walk
            # meets users in this order, and its ties (which node is a test's `via`, which
            # nodes fit in the budget) must come out the same in every process.
            found = self._compute(node, by_name)
            cached = cache[node] = self._shared(found) if len(found) > 1 else found
        return cached

    def computed(self, node: Node) -> Users:
        """`users(node, by_name=True)` worked out afresh and not kept (the numbered graph
        keeps them as arrays), in the nodes' order; its keys are still tracked for `fresh`."""
        return dict(sorted(self._compute(node, True, keep=False).items()))

    def _shared(self, found: Users) -> Users:
        """`found` in the nodes' order, as the one dict every node with these users holds:
        the methods of a class reached through its users all have its users (5,213 nodes for
        Django's `Model`), and the walk skips a dict it has already taken in (`walk._walk`)."""
        ordered = dict(sorted(found.items()))
        if len(ordered) < SHARED_AT:
            return ordered
        same = self._same.setdefault(hash(tuple(ordered.items())), [])
        for known in same:
            if known == ordered:
                return known
        same.append(ordered)
        return ordered

    def _compute(self, node: Node, by_name: bool, *, keep: bool = True) -> Users:
        path, name = node
        if not name:
            return self._package_aliases(path)
        ix = self.ix
        out: Users = {}
        resolved = RANK[RESOLVED]
        keys = reach_keys(ix, path, name, self.policy, keep=keep)
        by_key = ix.by_key
        for key in keys:
            users = by_key.get(key)
            if users:
                out.update(dict.fromkeys(users, resolved))  # type: ignore[arg-type]
        for tail in {_tail(key) for key in keys}:
            self._by_key.setdefault(tail, set()).add(node)
        for user in self._fixture_users(node):
            out[user] = resolved
        last = last_name(name)
        self._by_name.setdefault(last, set()).add(node)
        if by_name and name_ok(ix, last, self.policy):
            named = RANK[NAME]
            family = _family(ix, path)
            for user_path, source, anchor in ix.by_name.get(last, ()):
                if anchor and anchor not in ix.py_modules:
                    continue  # a chain through a module outside the workspace
                if _family(ix, user_path) != family:
                    continue  # a name joins one language family only: JS never calls Python
                out.setdefault((user_path, source), named)
        out.pop(node, None)
        if not out and self.policy.dead_end_methods:
            self._through_class(node, out)
        return out

    def _package_aliases(self, path: str) -> Users:
        """Module-level code that uses a definition may bind it under a name no definition
        shows (`s = attributes = attrs` in a package's `__init__`, `FILTERS = {"first":
        do_first}`): the uses of that module's names which it does not define reach it, by
        name (in a package's `__init__`, nor import: those re-exports resolve already)."""
        ix = self.ix
        entry = ix.files.get(path)
        if entry is None or entry.facts.language != "python" or not self.policy.module_aliases:
            return {}
        known = set(entry.symbols)
        if path.endswith("__init__.py"):
            known.update(i.local for i in entry.facts.refs.imports)
        named = INFERRED
        out: Users = {}
        for module in module_names(path, ix.init_dirs):
            for attribute, user_path, source in ix.module_attrs.get(module, ()):
                if attribute not in known:
                    self._by_key.setdefault(attribute, set()).add((path, ""))
                    out.setdefault((user_path, source), named)
        out.pop((path, ""), None)
        return out

    def _through_class(self, node: Node, out: Users) -> None:
        """A method nothing names (called through `getattr(self, "visit_" + kind)`, a dict of
        handlers): reached, by name, by whoever uses its class or a class below it."""
        ix = self.ix
        entry = ix.files.get(node[0])
        owner = node[1].rpartition(".")[0]
        symbol = entry.symbols.get(owner) if entry is not None and owner else None
        if symbol is None or symbol.kind not in CLASS_KINDS:
            return
        named = INFERRED
        for p, c in ((node[0], owner), *subclasses(ix, node[0], owner, self.policy)):
            for key in definition_keys(ix, p, c):
                self._by_key.setdefault(_tail(key), set()).add(node)
                for user in ix.by_key.get(key, ()):
                    out.setdefault((user[0], user[1]), named)
        out.pop(node, None)

    def in_tests(self, node: Node) -> bool:
        """Whether a node is test code (a test file's definition)."""
        entry = self.ix.files.get(node[0])
        return entry is not None and entry.test_scope

    def _fixture_users(self, node: Node) -> list[Node]:
        """The tests and fixtures that ask for `node` as a fixture and see this definition."""
        path, name = node
        entry = self.ix.files.get(path)
        if entry is None or not entry.compiled.fixtures:
            return []
        out: list[Node] = []
        for fixture in entry.compiled.fixtures:
            if fixture.symbol != name:
                continue
            defs = [(d[0], d[1]) for d in self.ix.fixture_defs.get(fixture.name, ())]
            for user_path, source in self.ix.fixture_users.get(fixture.name, ()):
                if node in _visible(defs, user_path):
                    out.append((user_path, source))
        return out


def _family(ix: Index, path: str) -> str | None:
    """The language family of an indexed file (JavaScript and TypeScript are one; C and C++)."""
    entry = ix.files.get(path)
    return None if entry is None else FAMILIES.get(entry.facts.language, entry.facts.language)


def _tail(key: str) -> str:
    """A key's last name part (`m` of `py:a.C.m`, `F` of `go:dir:F`)."""
    return key[max(key.rfind("."), key.rfind(":")) + 1 :]


def _visible(defs: list[Node], user_path: str) -> list[Node]:
    """The fixture definitions a test at `user_path` sees: its file, the nearest conftest, any."""
    here = [d for d in defs if d[0] == user_path]
    if here:
        return here
    folder = posixpath.dirname(user_path)
    while True:
        conftest = posixpath.join(folder, "conftest.py") if folder else "conftest.py"
        near = [d for d in defs if d[0] == conftest]
        if near:
            return near
        if not folder:
            return defs
        folder = posixpath.dirname(folder)
