"""The impact walk: callers breadth first to a depth, tests at any depth, the mention fallback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from symdiff.graph.edges import (
    INFERRED,
    MENTION,
    NAME,
    RANK,
    RESOLVED,
    definition_keys,
    reach_keys,
)
from symdiff.graph.facts import CallerHit, Changed, Impact, TestHit, TestId
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.maps import Index, Node, last_name
from symdiff.graph.policy import Policy
from symdiff.graph.testing import (
    file_tests,
    fixture_scope_tests,
    is_test,
    run_commands,
    tests_of,
)
from symdiff.graph.users import Edges
from symdiff.parse.refs import RefKind

CONFIDENCE = {rank: name for name, rank in RANK.items()} | {INFERRED: NAME}
FALLBACK_BUDGET = 5_000  # nodes the per-start check for a test may visit


@dataclass(slots=True)
class _Walk:
    """What the walk found: per node its first depth, the node before, the best confidence (a
    RANK) over paths of that depth, and a bit per start that reached it first."""

    depth: dict[Node, int] = field(default_factory=dict)
    via: dict[Node, str] = field(default_factory=dict)
    rank: dict[Node, int] = field(default_factory=dict)
    starts: dict[Node, int] = field(default_factory=dict)


def _by_name(policy: Policy, level: int) -> bool:
    return policy.name_max_depth is None or level <= policy.name_max_depth


def _walk(edges: Edges, starts: Sequence[Node]) -> _Walk:
    """Every node reaching a start, breadth first from all of them at once, within the budget."""
    policy = edges.policy
    out = _Walk()
    depth, via, rank, bits = out.depth, out.via, out.rank, out.starts
    for bit, start in enumerate(starts):
        if start not in depth:
            depth[start], via[start], rank[start], bits[start] = 0, "", RANK[RESOLVED], 0
        bits[start] |= 1 << bit
    frontier = list(depth)
    level = 0
    named, into_tests = RANK[NAME], policy.name_edges_into_tests
    while frontier and len(depth) < policy.node_budget:
        level += 1
        by_name = _by_name(policy, level)
        found = []
        for node in frontier:
            here_rank, here_bits, name = rank[node], bits[node], node[1]
            for user, edge_rank in edges.users(node, by_name=by_name or into_tests).items():
                if edge_rank == named and not by_name and not edges.in_tests(user):
                    continue
                path_rank = here_rank if here_rank < edge_rank else edge_rank
                seen = depth.get(user)
                if seen is None:
                    depth[user], via[user] = level, name
                    rank[user], bits[user] = path_rank, here_bits
                    found.append((user, node))
                elif seen == level:
                    bits[user] |= here_bits
                    if path_rank > rank[user]:
                        via[user], rank[user] = name, path_rank
        frontier = [n for n, before in found if _goes_on(edges, n, before)]
    return out


def _goes_on(edges: Edges, node: Node, before: Node) -> bool:
    """Whether the walk continues past `node`, reached from `before`: not past a test, and not
    past a class whose body uses `before` only as a base, a decorator or a call (that runs when
    the module is imported, not when the class's users use it; a value stored in the class,
    `generator_class = CodeGenerator`, is used later) unless the policy says so."""
    way = edges.ix.memo.goes.get(node)
    if way is None:
        way = edges.ix.memo.goes[node] = _way(edges, node)
    if way != CLASS_BODY:
        return way == GO
    stored_names, stored_keys = _stored(edges.ix, node)
    if not stored_names:
        return False
    # What `before` may have been reached as: itself, or (a dead-end method) its class.
    if last_name(before[1]) in stored_names or not stored_keys.isdisjoint(
        reach_keys(edges.ix, before[0], before[1], edges.policy)
    ):
        return True
    owner = before[1].rpartition(".")[0]
    return bool(owner) and (
        last_name(owner) in stored_names
        or not stored_keys.isdisjoint(definition_keys(edges.ix, before[0], owner))
    )


STOP, GO, CLASS_BODY = 0, 1, 2


def _way(edges: Edges, node: Node) -> int:
    """Whether the walk stops at a node, goes on, or asks what reached its class body."""
    if is_test(edges.ix, node):
        return STOP
    if edges.policy.expand_classes:
        return GO
    entry = edges.ix.files.get(node[0])
    symbol = entry.symbols.get(node[1]) if entry is not None else None
    if entry is None or symbol is None or symbol.kind not in CLASS_KINDS:
        return GO
    # A class made inside a function: its body runs when that function runs.
    parent = entry.symbols.get(symbol.parent) if symbol.parent else None
    return GO if parent is not None and parent.kind not in CLASS_KINDS else CLASS_BODY


def _stored(ix: Index, node: Node) -> tuple[frozenset[str], frozenset[str]]:
    """The names and keys a class's body stores as values (`generator = CodeGenerator`)."""
    found = ix.memo.stored.get(node)
    if found is None:
        entry = ix.files[node[0]]
        uses = [u for u in entry.compiled.uses if u.source == node[1] and u.kind in STORED]
        found = ix.memo.stored[node] = (
            frozenset(u.last for u in uses), frozenset(k for u in uses for k in u.keys))
    return found


STORED = frozenset({RefKind.NAME, RefKind.ATTR})


def _reaches_a_test(edges: Edges, start: Node) -> bool:
    """Whether some test reaches `start` (the walk's first-reach bits can hide it)."""
    ix, policy = edges.ix, edges.policy
    seen = {start}
    frontier = [start]
    level = 0
    while frontier and len(seen) < min(policy.node_budget, FALLBACK_BUDGET):
        level += 1
        found = []
        for node in frontier:
            by_name = _by_name(policy, level)
            users = edges.users(node, by_name=by_name or policy.name_edges_into_tests)
            for user, edge_rank in users.items():
                if user in seen or (edge_rank == RANK[NAME] and not by_name
                                    and not edges.in_tests(user)):  # fmt: skip
                    continue
                seen.add(user)
                if _tests_at(ix, user, policy, edge_rank == RANK[RESOLVED]):
                    return True
                if _goes_on(edges, user, node):
                    found.append(user)
        frontier = found
    return False


def impact(
    ix: Index, edges: Edges, changed: Sequence[Changed], *, depth: int, policy: Policy
) -> Impact:
    """The callers to `depth`, the tests at any depth, and the fallback to tests that name."""
    starts = [(c.path, c.name) for c in changed]
    edges.fresh()
    walk = _walk(edges, starts)
    callers: list[tuple[Node, int]] = []
    tests: dict[tuple[str, str], TestHit] = {}  # (path, node id): Go's ids are bare names
    tested = 0  # the starts some test reaches
    start_set = set(starts)
    resolved = RANK[RESOLVED]
    for node, level in walk.depth.items():
        if 0 < level <= depth and node not in start_set and walk.rank[node] != INFERRED:
            callers.append((node, level))
        entry = ix.files.get(node[0])
        if entry is None or not entry.test_scope:
            continue
        rank = walk.rank[node]
        itself = is_test(ix, node)
        if not itself and policy.expand_needs_resolved and rank != resolved:
            continue
        found = tests_of(ix, node, policy)
        if not itself:
            found += tuple(fixture_scope_tests(ix, node))
        if not found:
            continue
        tested |= walk.starts[node]
        at, via, confidence = (level, walk.via[node], CONFIDENCE[rank]) if itself else (
            level + 1, node[1], CONFIDENCE[rank])
        for test in found:
            seen = tests.get((test.path, test.node_id))
            if seen is None or (at, -rank) < (seen.depth, -RANK[seen.confidence]):
                tests[test.path, test.node_id] = TestHit(
                    test.path, test.name, test.node_id, at, via, confidence)
    for bit, change in enumerate(changed):
        if tested & (1 << bit) or _reaches_a_test(edges, starts[bit]):
            continue
        for test in _mentions(ix, change):
            _keep_test(tests, test, 1, change.name, MENTION)
    return Impact(
        changed=tuple(changed),
        callers=tuple(_caller_hits(ix, walk, callers)),
        tests=tuple(sorted(tests.values(), key=lambda t: (t.depth, t.path, t.node_id))),
        run=run_commands(
            (TestId(t.path, t.name, t.node_id) for t in tests.values()),
            {t.path: ix.files[t.path].facts.language for t in tests.values()},
            lambda path: file_tests(ix, path, policy),
        ),
    )


def _tests_at(ix: Index, node: Node, policy: Policy, resolved: bool) -> list[tuple[TestId, int]]:
    """The tests a reached node is (0 more steps) or runs before (1 more: setUp, autouse)."""
    entry = ix.files.get(node[0])
    if entry is None or not entry.test_scope:
        return []
    if is_test(ix, node):
        return [(t, 0) for t in tests_of(ix, node, policy)]
    if policy.expand_needs_resolved and not resolved:
        return []
    out = [(t, 1) for t in tests_of(ix, node, policy)]
    out.extend((t, 1) for t in fixture_scope_tests(ix, node))
    return out


def _keep_test(
    table: dict[tuple[str, str], TestHit], test: TestId, depth: int, via: str, confidence: str
) -> None:
    seen = table.get((test.path, test.node_id))
    if seen is None or (depth, -RANK[confidence]) < (seen.depth, -RANK[seen.confidence]):
        table[test.path, test.node_id] = TestHit(test.path, test.name, test.node_id, depth, via,
                                                 confidence)  # fmt: skip


def _mentions(ix: Index, change: Changed) -> list[TestId]:
    """The tests that name a changed symbol's last name part anywhere in their code."""
    out: list[TestId] = []
    for path, source in ix.mentions.get(last_name(change.name), ()):
        node = (path, source)
        if is_test(ix, node):
            out.extend(tests_of(ix, node, Policy(name_max_definitions=0)))
    return out


def _caller_hits(ix: Index, walk: _Walk, callers: list[tuple[Node, int]]) -> list[CallerHit]:
    out = []
    for (path, name), level in callers:
        entry = ix.files.get(path)
        symbol = entry.symbols.get(name) if entry is not None else None
        kind = symbol.kind if symbol is not None else ("module" if not name else "")
        line = symbol.start_line if symbol is not None else 1
        confidence = CONFIDENCE[walk.rank[(path, name)]]
        out.append(CallerHit(name, path, kind, line, level, walk.via[(path, name)], confidence))
    out.sort(key=lambda c: (c.depth, c.path, c.start_line, c.name))
    return out


__all__ = ["impact"]
