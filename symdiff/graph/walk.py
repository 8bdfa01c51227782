"""The impact walk: callers breadth first to a depth, tests at any depth, the mention fallback."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

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
from symdiff.graph.maps import STORED, Index, Node, last_name
from symdiff.graph.policy import Policy
from symdiff.graph.testing import (
    file_tests,
    fixture_scope_tests,
    is_test,
    run_commands,
    tests_of,
)
from symdiff.graph.users import SHARED_AT, Edges, Users

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
    out = _Walk()
    depth, via, rank, bits = out.depth, out.via, out.rank, out.starts
    for bit, start in enumerate(starts):
        if start not in depth:
            depth[start], via[start], rank[start], bits[start] = 0, "", RANK[RESOLVED], 0
        bits[start] |= 1 << bit
    frontier = list(depth)
    level = 0
    taken: dict[int, tuple[int, int, int]] = {}  # a shared users dict: (level, starts, rank)
    while frontier and len(depth) < edges.policy.node_budget:
        level += 1
        frontier = _onward(edges, _step(edges, out, frontier, level, taken))
    return out


def _step(edges: Edges, out: _Walk, frontier: list[Node], level: int,
          taken: dict[int, tuple[int, int, int]]) -> list[tuple[Node, Node]]:  # fmt: skip
    """One level of the walk: the users of the frontier's nodes, each with the node that
    reached it first; a user reached again at this level takes the starts and the best rank."""
    policy = edges.policy
    depth, via, rank, bits = out.depth, out.via, out.rank, out.starts
    by_name = _by_name(policy, level)
    named, users_of = RANK[NAME], edges.users
    found: list[tuple[Node, Node]] = []
    this_level: set[Node] = set()  # the nodes first reached at this level
    for node in frontier:
        users = users_of(node, by_name=by_name or policy.name_edges_into_tests)
        if not users:
            continue
        here_rank, here_bits, name = rank[node], bits[node], node[1]
        if not by_name:
            users = {u: r for u, r in users.items() if r != named or edges.in_tests(u)}
        elif len(users) >= SHARED_AT and _taken_in(taken, users, level, here_bits, here_rank):
            continue
        if this_level and not this_level.isdisjoint(users):
            for user in this_level.intersection(users):
                bits[user] |= here_bits
                edge_rank = users[user]
                path_rank = here_rank if here_rank < edge_rank else edge_rank
                if path_rank > rank[user]:
                    via[user], rank[user] = name, path_rank
        new = [user for user in users if user not in depth]
        for user in new:
            edge_rank = users[user]
            depth[user], via[user] = level, name
            rank[user] = here_rank if here_rank < edge_rank else edge_rank
            bits[user] = here_bits
            found.append((user, node))
        this_level.update(new)
    return found


def _taken_in(taken: dict[int, tuple[int, int, int]], users: Users, level: int, starts: int,
              rank: int) -> bool:  # fmt: skip
    """Whether a dict of users another node shares (`Edges._shared`) was taken in before so
    that this node adds nothing: at an earlier level (its users are all reached), or at this
    one with these starts and this rank already; notes this node's otherwise."""
    before = taken.get(id(users))
    if before is None:
        taken[id(users)] = (level, starts, rank)
        return False
    at, had_starts, had_rank = before
    if at < level or (starts | had_starts == had_starts and rank <= had_rank):
        return True
    taken[id(users)] = (level, starts | had_starts, max(rank, had_rank))
    return False


def _onward(edges: Edges, found: list[tuple[Node, Node]]) -> list[Node]:
    """The nodes the walk goes on from (not a test; a class only as `class_goes_on` says)."""
    goes = edges.ix.memo.goes
    frontier = []
    for user, before in found:
        way = goes.get(user)
        if way is None:
            way = goes[user] = way_of(edges, user)
        if way == GO or (way == CLASS_BODY and class_goes_on(edges, user, before)):
            frontier.append(user)
    return frontier


def _goes_on(edges: Edges, node: Node, before: Node) -> bool:
    """Whether the walk continues past `node`, reached from `before`: not past a test, and
    past a class only as `class_goes_on` says."""
    goes = edges.ix.memo.goes
    way = goes.get(node)
    if way is None:
        way = goes[node] = way_of(edges, node)
    return way == GO or (way == CLASS_BODY and class_goes_on(edges, node, before))


def class_goes_on(edges: Edges, node: Node, before: Node) -> bool:
    """Whether the walk continues past a class reached from `before`: not when its body uses
    `before` only as a base, a decorator or a call (that runs when the module is imported, not
    when the class's users use it), but when it stores it as a value (`generator_class =
    CodeGenerator`, used later). `Policy.expand_classes` goes past every class."""
    stored_names, stored_keys = stored_by(edges.ix, node)
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


def way_of(edges: Edges, node: Node) -> int:
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


def stored_by(ix: Index, node: Node) -> tuple[frozenset[str], frozenset[str]]:
    """The names and keys a class's body stores as values (`generator = CodeGenerator`)."""
    found = ix.memo.stored.get(node)
    if found is None:
        entry = ix.files[node[0]]
        uses = [u for u in entry.compiled.uses if u.source == node[1] and u.kind in STORED]
        found = ix.memo.stored[node] = (
            frozenset(u.last for u in uses), frozenset(k for u in uses for k in u.keys))
    return found



def reaches_a_test(edges: Edges, start: Node) -> bool:
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
                if _has_tests(ix, user, policy, edge_rank == RANK[RESOLVED]):
                    return True
                if _goes_on(edges, user, node):
                    found.append(user)
        frontier = found
    return False


def impact(
    ix: Index, edges: Edges, changed: Sequence[Changed], *, depth: int, policy: Policy
) -> Impact:
    """The callers to `depth`, the tests at any depth, and the fallback to tests that name."""
    edges.fresh()
    starts = [(c.path, c.name) for c in changed]
    walk = _walk(edges, starts)
    callers, groups, tested = _sorted_out(ix, walk, set(starts), depth, policy)
    tests = _first_hits(ix, walk, groups)
    for bit, change in enumerate(changed):
        if tested & (1 << bit) or reaches_a_test(edges, starts[bit]):
            continue
        for test in mentions_of(ix, change):
            keep_test(tests, test, 1, change.name, MENTION)
    return Impact(
        changed=tuple(changed),
        callers=tuple(_caller_hits(ix, walk, callers)),
        tests=tuple(sorted(tests.values(), key=attrgetter("depth", "path", "node_id"))),
        run=run_commands_of(ix, tests.values(), policy),
    )


def run_commands_of(ix: Index, tests: Iterable[TestHit], policy: Policy) -> dict[str, str]:
    """The commands that run these tests, each test file's language from the index."""
    hits = list(tests)
    return run_commands(
        hits,
        {path: ix.files[path].facts.language for path in {t.path for t in hits}},
        lambda path: file_tests(ix, path, policy),
    )


Groups = dict[tuple[int, int], list[tuple[Node, bool, tuple[int, ...]]]]


def _sorted_out(ix: Index, walk: _Walk, starts: set[Node], depth: int, policy: Policy
                ) -> tuple[list[tuple[Node, int]], Groups, int]:  # fmt: skip
    """The callers (node, depth) within `depth`; the nodes that stand for tests, grouped by
    (the tests' depth, minus their confidence's rank), each with whether it is a test itself
    and its tests' numbers; and the bits of the starts that some test reaches."""
    callers: list[tuple[Node, int]] = []
    groups: Groups = {}
    tested = 0
    resolved = RANK[RESOLVED]
    ranks, stands, needs_resolved = walk.rank, ix.memo.stands_for, policy.expand_needs_resolved
    for node, level in walk.depth.items():
        rank = ranks[node]
        if 0 < level <= depth and rank != INFERRED and node not in starts:
            callers.append((node, level))
        found = stands[node] if node in stands else stands_for(ix, node, policy)
        if found is None:
            continue
        itself, numbers = found
        if not itself and needs_resolved and rank != resolved:
            continue
        tested |= walk.starts[node]
        key = (level if itself else level + 1, -RANK[CONFIDENCE[rank]])
        group = groups.get(key)
        if group is None:
            group = groups[key] = []
        group.append((node, itself, numbers))
    return callers, groups, tested


def _first_hits(ix: Index, walk: _Walk, groups: Groups) -> dict[tuple[str, str], TestHit]:
    """Each test once, as the first node of the nearest, most confident group gives it."""
    tests: dict[tuple[str, str], TestHit] = {}  # (path, node id): Go's ids are bare names
    taken: set[int] = set()  # the tests' numbers given so far
    numbered = ix.memo.numbered
    for (at, _), group in sorted(groups.items()):
        confidence = CONFIDENCE[walk.rank[group[0][0]]]
        for node, itself, numbers in group:
            if taken.issuperset(numbers):  # most often (in C)
                continue
            fresh = [n for n in numbers if n not in taken]
            taken.update(fresh)
            via = walk.via[node] if itself else node[1]
            for number in fresh:
                test = numbered[number]
                tests[test.path, test.node_id] = TestHit(
                    test.path, test.name, test.node_id, at, via, confidence)
    return tests


def stands_for(ix: Index, node: Node, policy: Policy, *, keep: bool = True
                ) -> tuple[bool, tuple[int, ...]] | None:  # fmt: skip
    """Whether a reached node is a test itself, and the tests it stands for (itself; or, for a
    test class, a setUp, an autouse fixture, the tests it runs before) as numbers of the
    memo's one numbering of tests: a turn's walk meets the same suites through thousands of
    nodes, and a number is quicker to look up than a test. None: it stands for no test."""
    memo = ix.memo
    entry = ix.files.get(node[0])
    found: tuple[bool, tuple[int, ...]] | None = None
    if entry is not None and entry.test_scope:
        itself = is_test(ix, node)
        tests = tests_of(ix, node, policy, keep=keep)
        if not itself:
            tests += tuple(fixture_scope_tests(ix, node))
        numbers: dict[int, None] = {}
        for test in tests:
            key = (test.path, test.node_id)
            number = memo.test_number.get(key)
            if number is None:
                number = memo.test_number[key] = len(memo.numbered)
                memo.numbered.append(test)
            numbers[number] = None
        if numbers:
            found = (itself, tuple(numbers))
    memo.stands_for[node] = found
    return found


def _has_tests(ix: Index, node: Node, policy: Policy, resolved: bool) -> bool:
    """Whether a reached node is a test or runs before some (a setUp, an autouse fixture)."""
    stands = ix.memo.stands_for
    found = stands[node] if node in stands else stands_for(ix, node, policy)
    return found is not None and (found[0] or resolved or not policy.expand_needs_resolved)


def keep_test(
    table: dict[tuple[str, str], TestHit], test: TestId, depth: int, via: str, confidence: str
) -> None:
    seen = table.get((test.path, test.node_id))
    if seen is None or (depth, -RANK[confidence]) < (seen.depth, -RANK[seen.confidence]):
        table[test.path, test.node_id] = TestHit(test.path, test.name, test.node_id, depth, via,
                                                 confidence)  # fmt: skip


def mentions_of(ix: Index, change: Changed) -> list[TestId]:
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
    out.sort(key=attrgetter("depth", "path", "start_line", "name"))
    return out


__all__ = ["impact"]
