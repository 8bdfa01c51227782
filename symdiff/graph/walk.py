"""The impact walk: callers breadth first to a depth, tests at any depth, the mention fallback."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from symdiff.graph.edges import MENTION, NAME, RANK, RESOLVED, reach_keys
from symdiff.graph.facts import CallerHit, Changed, Impact, TestHit
from symdiff.graph.maps import Index, Node, last_name
from symdiff.graph.policy import Policy
from symdiff.graph.testing import TestId, fixture_scope_tests, is_test, run_commands, tests_of

Users = dict[Node, str]  # user -> confidence


class Edges:
    """The reverse edges of each node, computed once per version of the index."""

    def __init__(self, ix: Index, policy: Policy) -> None:
        self.ix = ix
        self.policy = policy
        self._version = -1
        self._cache: dict[tuple[Node, bool], Users] = {}

    def users(self, node: Node, *, by_name: bool) -> Users:
        """Who uses `node`: resolved uses, fixture users, and name joins when allowed."""
        if self._version != self.ix.version:
            self._cache.clear()
            self._version = self.ix.version
        cached = self._cache.get((node, by_name))
        if cached is None:
            cached = self._compute(node, by_name)
            self._cache[(node, by_name)] = cached
        return cached

    def _compute(self, node: Node, by_name: bool) -> Users:
        path, name = node
        if not name:
            return {}
        ix = self.ix
        out: Users = {}
        for key in reach_keys(ix, path, name, self.policy):
            for user in ix.by_key.get(key, ()):
                out[(user[0], user[1])] = RESOLVED
        for user in self._fixture_users(node):
            out[user] = RESOLVED
        last = last_name(name)
        if by_name and self._name_ok(last):
            for user_path, source, anchor in ix.by_name.get(last, ()):
                if anchor and anchor not in ix.py_modules:
                    continue  # a chain through a module outside the workspace
                out.setdefault((user_path, source), NAME)
        out.pop(node, None)
        return out

    def _name_ok(self, last: str) -> bool:
        policy = self.policy
        if len(last) < policy.name_min_length or policy.name_max_definitions <= 0:
            return False
        return len(self.ix.defs_by_last.get(last, ())) <= policy.name_max_definitions

    def _fixture_users(self, node: Node) -> list[Node]:
        """The tests and fixtures that ask for `node` as a fixture and see this definition."""
        path, name = node
        entry = self.ix.files.get(path)
        if entry is None:
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


def _weaker(a: str, b: str) -> str:
    return a if RANK[a] <= RANK[b] else b


class _Reach:
    """How the walk reached a node: first depth, the node before, best confidence, which starts."""

    __slots__ = ("confidence", "depth", "starts", "via")

    def __init__(self, depth: int, via: str, confidence: str, starts: int) -> None:
        self.depth = depth
        self.via = via
        self.confidence = confidence
        self.starts = starts  # a bit per changed symbol that reaches this node


def _by_name(policy: Policy, level: int) -> bool:
    return policy.name_max_depth is None or level <= policy.name_max_depth


def _walk(edges: Edges, starts: Sequence[Node]) -> dict[Node, _Reach]:
    """Every node reaching a start, breadth first from all of them at once, within the budget."""
    policy = edges.policy
    reached: dict[Node, _Reach] = {}
    for bit, start in enumerate(starts):
        if start in reached:
            reached[start].starts |= 1 << bit
        else:
            reached[start] = _Reach(0, "", RESOLVED, 1 << bit)
    frontier = list(reached)
    level = 0
    while frontier and len(reached) < policy.node_budget:
        level += 1
        by_name = _by_name(policy, level)
        found = []
        for node in frontier:
            here = reached[node]
            for user, confidence in edges.users(node, by_name=by_name).items():
                path_confidence = _weaker(here.confidence, confidence)
                seen = reached.get(user)
                if seen is None:
                    reached[user] = _Reach(level, node[1], path_confidence, here.starts)
                    found.append(user)
                elif seen.depth == level:
                    seen.starts |= here.starts
                    if RANK[path_confidence] > RANK[seen.confidence]:
                        seen.via, seen.confidence = node[1], path_confidence
        frontier = [n for n in found if not is_test(edges.ix, n)]
    _spread_starts(edges, reached)
    return reached


def _spread_starts(edges: Edges, reached: dict[Node, _Reach]) -> None:
    """Which starts reach each node by any path the walk saw, not only by its shortest."""
    if len({r.starts for r in reached.values()}) <= 1:
        return
    work = [n for n in reached if not is_test(edges.ix, n)]
    while work:
        node = work.pop()
        here = reached[node]
        for user in edges.users(node, by_name=_by_name(edges.policy, here.depth + 1)):
            seen = reached.get(user)
            if seen is not None and here.starts & ~seen.starts:
                seen.starts |= here.starts
                if not is_test(edges.ix, user):
                    work.append(user)


def impact(
    ix: Index, edges: Edges, changed: Sequence[Changed], *, depth: int, policy: Policy
) -> Impact:
    """The callers to `depth`, the tests at any depth, and the fallback to tests that name."""
    starts = [(c.path, c.name) for c in changed]
    reached = _walk(edges, starts)
    callers: dict[Node, tuple[int, str, str]] = {}
    tests: dict[str, TestHit] = {}
    tested = 0  # the starts some test reaches
    start_set = set(starts)
    for node, reach in reached.items():
        if 0 < reach.depth <= depth and node not in start_set:
            callers[node] = (reach.depth, reach.via, reach.confidence)
        for test, extra in _tests_at(ix, node, policy):
            if extra and policy.expand_needs_resolved and reach.confidence != RESOLVED:
                continue
            tested |= reach.starts
            via = node[1] if extra else reach.via
            _keep_test(tests, test, reach.depth + extra, via, reach.confidence)
    for bit, change in enumerate(changed):
        if not tested & (1 << bit):
            for test in _mentions(ix, change):
                _keep_test(tests, test, 1, change.name, MENTION)
    return Impact(
        changed=tuple(changed),
        callers=tuple(_caller_hits(ix, callers)),
        tests=tuple(sorted(tests.values(), key=lambda t: (t.depth, t.path, t.node_id))),
        run=run_commands(
            (TestId(t.path, t.name, t.node_id) for t in tests.values()),
            {t.path: ix.files[t.path].facts.language for t in tests.values()},
        ),
    )


def _tests_at(ix: Index, node: Node, policy: Policy) -> list[tuple[TestId, int]]:
    """The tests a reached node is (0 more steps) or runs before (1 more: setUp, autouse)."""
    own = tests_of(ix, node, policy)
    extra = 0 if is_test(ix, node) else 1
    out = [(t, extra) for t in own]
    out.extend((t, 1) for t in fixture_scope_tests(ix, node))
    return out


def _keep_test(
    table: dict[str, TestHit], test: TestId, depth: int, via: str, confidence: str
) -> None:
    seen = table.get(test.node_id)
    if seen is None or (depth, -RANK[confidence]) < (seen.depth, -RANK[seen.confidence]):
        table[test.node_id] = TestHit(test.path, test.name, test.node_id, depth, via, confidence)


def _mentions(ix: Index, change: Changed) -> list[TestId]:
    """The tests that name a changed symbol's last name part anywhere in their code."""
    out = []
    for path, source in ix.mentions.get(last_name(change.name), ()):
        node = (path, source)
        if is_test(ix, node):
            out.extend(tests_of(ix, node, Policy(name_max_definitions=0)))
    return out


def _caller_hits(ix: Index, callers: dict[Node, tuple[int, str, str]]) -> list[CallerHit]:
    out = []
    for (path, name), (level, via, confidence) in callers.items():
        entry = ix.files.get(path)
        symbol = entry.symbols.get(name) if entry is not None else None
        kind = symbol.kind if symbol is not None else ("module" if not name else "")
        line = symbol.start_line if symbol is not None else 1
        out.append(CallerHit(name, path, kind, line, level, via, confidence))
    out.sort(key=lambda c: (c.depth, c.path, c.start_line, c.name))
    return out


__all__ = ["NAME", "Edges", "impact"]
