"""The impact walk on the numbered graph (`numbered.py`): each level of the breadth-first walk
as a few array operations, the same answer as `walk.py`'s.

A level in `walk._step` meets the frontier's users in order: a user not reached before takes
the level, the first frontier node that reached it (for `_onward`), the starts of every node
that reached it, and the best rank over those paths with, as `via`, the first node giving it.
Here the (frontier node, user) pairs of a level are laid out in that same order and reduced
per user: a sort by (user, -rank, position) finds the best and its first node, and an OR per
user the starts. A list of users shared by many frontier nodes is gathered once per rank of
those nodes (the first node of each rank; the starts of them all), and not again at a later
level (all its users are reached then): what `walk._taken_in` skips.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from symdiff.graph.edges import INFERRED, MENTION, NAME, RANK, RESOLVED
from symdiff.graph.facts import CallerHit, Changed, Impact, TestHit, TestId
from symdiff.graph.maps import Index
from symdiff.graph.numbered import ITSELF, NONE, Numbered
from symdiff.graph.policy import Policy
from symdiff.graph.walk import (
    CLASS_BODY,
    FALLBACK_BUDGET,
    GO,
    class_goes_on,
    keep_test,
    mentions_of,
    run_commands_of,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    from symdiff.graph.users import Edges

    Ints = npt.NDArray[np.int64]

# A rank as the tests' groups count it (walk.CONFIDENCE then RANK): an inferred edge is a name.
GROUP_RANK = {RANK[RESOLVED]: RANK[RESOLVED], RANK[NAME]: RANK[NAME], INFERRED: RANK[NAME],
              RANK[MENTION]: RANK[MENTION]}  # fmt: skip
CONFIDENCE_OF = {RANK[RESOLVED]: RESOLVED, RANK[NAME]: NAME, RANK[MENTION]: MENTION}
_GROUP_RANK = np.array([GROUP_RANK.get(r, 0) for r in range(max(GROUP_RANK) + 1)], dtype=np.int64)


class Swept:
    """What the array walk found: the nodes in the order first reached, and per node (by
    number) its depth (-1: not reached), rank, `via` (a node's number, -1 for a start) and
    the starts that reached it first (one bit each, in 64-bit words)."""

    def __init__(self, size: int, words: int) -> None:
        self.depth = np.full(size, -1, dtype=np.int32)
        self.rank = np.zeros(size, dtype=np.int8)
        self.via = np.full(size, -1, dtype=np.int64)
        self.bits = np.zeros((size, words), dtype=np.uint64)
        self.order: list[Ints] = []


def sweep(ix: Index, edges: Edges, g: Numbered, starts: Sequence[int]) -> Swept:
    """Every node reaching a start, breadth first from all at once, within the budget."""
    words = max(1, (len(starts) + 63) // 64)
    out = Swept(len(g.nodes), words)
    first: dict[int, None] = {}
    for bit, start in enumerate(starts):
        first[start] = None
        out.bits[start, bit // 64] |= np.uint64(1 << (bit % 64))
    frontier = np.fromiter(first, dtype=np.int64, count=len(first))
    out.depth[frontier] = 0
    out.rank[frontier] = RANK[RESOLVED]
    out.order.append(frontier)
    reached = len(frontier)
    taken = np.full(len(g.list_start) - 1, -1, dtype=np.int32)  # the level a list was taken in
    level = 0
    while len(frontier) and reached < edges.policy.node_budget:
        level += 1
        found, before = _level(g, out, frontier, level, taken)
        out.order.append(found)
        reached += len(found)
        frontier = _onward(edges, g, found, before)
    return out


def _level(g: Numbered, out: Swept, frontier: Ints, level: int, taken: npt.NDArray[np.int32]
           ) -> tuple[Ints, Ints]:  # fmt: skip
    """One level: the users first reached at it, in the order first met, and for each the
    frontier node that met it first."""
    lists = g.list_of[frontier].astype(np.int64)
    sizes = g.list_start[lists + 1] - g.list_start[lists]
    keep = np.flatnonzero((sizes > 0) & (taken[lists] < 0))
    if not len(keep):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    ranks = out.rank[frontier[keep]].astype(np.int64)
    # The first node of each (list, rank): the others add only their starts.
    _, firsts = np.unique(lists[keep] * 8 + ranks, return_index=True)
    reps = keep[np.sort(firsts)]
    bits = out.bits[frontier[reps]]
    if len(reps) < len(keep):
        bits = _starts_by_list(out, frontier, lists, keep, reps)
    rep_lists = lists[reps]
    taken[rep_lists] = level
    counts = sizes[reps]
    owner = np.repeat(np.arange(len(reps)), counts)
    at = _segments(g.list_start[rep_lists], counts)
    users = g.users[at].astype(np.int64)
    new = out.depth[users] < 0
    users, owner = users[new], owner[new]
    if not len(users):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    path_rank = np.minimum(g.ranks[at][new].astype(np.int64),
                           out.rank[frontier[reps]].astype(np.int64)[owner])  # fmt: skip
    pairs = np.arange(len(users))
    by_user = np.lexsort((pairs, -path_rank, users))
    sorted_users = users[by_user]
    heads = _heads(sorted_users)
    reached = sorted_users[heads]
    best = by_user[heads]
    first_pair = np.minimum.reduceat(by_user, heads)
    out.depth[reached] = level
    out.rank[reached] = path_rank[best]
    out.via[reached] = frontier[reps[owner[best]]]
    out.bits[reached] = np.bitwise_or.reduceat(bits[owner[by_user]], heads, axis=0)
    met = np.argsort(first_pair, kind="stable")
    return reached[met], frontier[reps[owner[first_pair[met]]]]


def _segments(starts: Ints, counts: Ints) -> Ints:
    """The positions of segments laid end to end: `counts[k]` from `starts[k]`, for each k."""
    at: Ints = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    return at


def _heads(values: Ints) -> Ints:
    """Where each run of equal values in a sorted array begins."""
    heads: Ints = np.flatnonzero(np.diff(values, prepend=values[:1] - 1)) if len(values) else (
        np.empty(0, dtype=np.int64))  # fmt: skip
    return heads


def _starts_by_list(out: Swept, frontier: Ints, lists: Ints, keep: Ints, reps: Ints
                    ) -> npt.NDArray[np.uint64]:  # fmt: skip
    """The starts of every kept frontier node that shares a representative's list, ORed."""
    kept_lists = lists[keep]
    by_list = np.argsort(kept_lists, kind="stable")
    sorted_lists = kept_lists[by_list]
    heads = _heads(sorted_lists)
    ored = np.bitwise_or.reduceat(out.bits[frontier[keep[by_list]]], heads, axis=0)
    return ored[np.searchsorted(sorted_lists[heads], lists[reps])]


def _onward(edges: Edges, g: Numbered, found: Ints, before: Ints) -> Ints:
    """The reached nodes the walk goes on from (`walk._onward`)."""
    way = g.way[found]
    goes = way == GO
    known = g.goes_on
    for k in np.flatnonzero(way == CLASS_BODY).tolist():
        pair = (int(found[k]), int(before[k]))
        went = known.get(pair)
        if went is None:
            went = known[pair] = class_goes_on(edges, g.nodes[pair[0]], g.nodes[pair[1]])
        goes[k] = went
    onward: Ints = found[goes]
    return onward


def impact(ix: Index, edges: Edges, g: Numbered, changed: Sequence[Changed], *, depth: int,
           policy: Policy) -> Impact | None:  # fmt: skip
    """`walk.impact`'s answer, walked on the numbered graph; None if a start's users are
    outside its numbering."""
    starts = []
    for c in changed:
        n = g.add((c.path, c.name))
        if n is None:
            return None
        starts.append(n)
    swept = sweep(ix, edges, g, starts)
    order = np.concatenate(swept.order)
    first, tested = _first_hits(g, swept, order, policy)
    callers = tuple(_callers(g, swept, order, depth))
    mentioned = [(change, test) for bit, change in enumerate(changed)
                 if not tested & (1 << bit) and not reaches_a_test(edges, g, starts[bit])
                 for test in mentions_of(ix, change)]  # fmt: skip
    joined = _mention(g, first, mentioned) if mentioned else first
    if joined is None:  # a test outside the numbering: the fallback joins as walk.py does
        tests = {(t.path, t.node_id): t for t in _hits(g, first)}
        for change, test in mentioned:
            keep_test(tests, test, 1, change.name, MENTION)
        hits = sorted(tests.values(), key=_test_order)
        return Impact(tuple(changed), callers, tuple(hits), run_commands_of(ix, hits, policy))
    first = joined.ordered(g)
    hits = _hits(g, first)
    return Impact(tuple(changed), callers, tuple(hits), _run(ix, g, first, hits, policy))


def reaches_a_test(edges: Edges, g: Numbered, start: int) -> bool:
    """Whether some test reaches `start` (`walk.reaches_a_test`): breadth first within the
    fallback's budget, each user taken in at its first sighting, with that edge's rank."""
    policy = edges.policy
    limit = min(policy.node_budget, FALLBACK_BUDGET)
    seen = np.zeros(len(g.nodes), dtype=bool)
    seen[start] = True
    count = 1
    taken = np.zeros(len(g.list_start) - 1, dtype=bool)  # a list's users are all seen
    frontier = np.array([start], dtype=np.int64)
    while len(frontier) and count < limit:
        lists = g.list_of[frontier].astype(np.int64)
        _, firsts = np.unique(lists, return_index=True)
        firsts = np.sort(firsts)
        firsts = firsts[~taken[lists[firsts]]]
        reps, rep_lists = frontier[firsts], lists[firsts]
        taken[rep_lists] = True
        counts = g.list_start[rep_lists + 1] - g.list_start[rep_lists]
        owner = np.repeat(np.arange(len(reps)), counts)
        at = _segments(g.list_start[rep_lists], counts)
        users = g.users[at].astype(np.int64)
        new = ~seen[users]
        users, owner, ranks = users[new], owner[new], g.ranks[at][new]
        _, met = np.unique(users, return_index=True)
        met = np.sort(met)
        users, owner, ranks = users[met], owner[met], ranks[met]
        seen[users] = True
        count += len(users)
        stands = g.stands[users]
        tested = stands == ITSELF
        if policy.expand_needs_resolved:
            tested |= (stands != NONE) & (ranks == RANK[RESOLVED])
        else:
            tested |= stands != NONE
        if tested.any():
            return True
        frontier = _onward(edges, g, users, reps[owner])
    return False


def _test_order(hit: TestHit) -> tuple[int, str, str]:
    return hit.depth, hit.path, hit.node_id


def _via(names: list[str], n: int) -> str:
    return names[n] if n >= 0 else ""


def _callers(g: Numbered, swept: Swept, order: Ints, depth: int) -> list[CallerHit]:
    level = swept.depth[order]
    chosen = order[(level > 0) & (level <= depth) & (swept.rank[order] != INFERRED)]
    chosen = chosen[np.lexsort((g.caller_rank[chosen], swept.depth[chosen]))]
    nodes, names, kinds, lines = g.nodes, g.names, g.kinds, g.lines
    out = []
    for n, at, via, rank in zip(chosen.tolist(), swept.depth[chosen].tolist(),
                                swept.via[chosen].tolist(), swept.rank[chosen].tolist(),
                                strict=True):  # fmt: skip
        out.append(CallerHit(names[n], nodes[n][0], kinds[n], lines[n], at, names[via],
                             CONFIDENCE_OF[GROUP_RANK[rank]]))
    return out


class First:
    """Each test's first hit: its number, depth, `via` and (group) rank."""

    def __init__(self, tests: Ints, at: Ints, vias: list[str], rank: Ints) -> None:
        self.tests, self.at, self.vias, self.rank = tests, at, vias, rank

    def ordered(self, g: Numbered) -> First:
        """The hits in the answer's order: depth, path, node id."""
        by = np.lexsort((g.tests_table().rank[self.tests], self.at))
        vias = self.vias
        return First(self.tests[by], self.at[by], [vias[k] for k in by.tolist()], self.rank[by])


def _first_hits(g: Numbered, swept: Swept, order: Ints, policy: Policy) -> tuple[First, int]:
    """Each test once, as `walk._first_hits` gives it; and the bits of the starts that some
    test reaches."""
    stands = g.stands[order]
    rank = swept.rank[order].astype(np.int64)
    kept = stands != NONE
    if policy.expand_needs_resolved:
        kept &= (stands == ITSELF) | (rank == RANK[RESOLVED])
    where = np.flatnonzero(kept)
    nodes = order[where]
    tested = 0
    if len(nodes):
        for word, value in enumerate(np.bitwise_or.reduce(swept.bits[nodes], axis=0).tolist()):
            tested |= value << (64 * word)
    itself = stands[where] == ITSELF
    at = swept.depth[nodes].astype(np.int64) + (~itself)
    group_rank = _GROUP_RANK[rank[where]]
    counts = g.test_start[nodes + 1] - g.test_start[nodes]
    owner = np.repeat(np.arange(len(nodes)), counts)
    tests = g.test_of[_segments(g.test_start[nodes], counts)].astype(np.int64)
    # The nearest, most confident group first, then the order the walk reached the nodes.
    by = np.lexsort((owner, -group_rank[owner], at[owner], tests))
    sorted_tests = tests[by]
    heads = by[_heads(sorted_tests)]
    tests, owner = tests[heads], owner[heads]
    names = g.names
    vias = [_via(names, v) if own else names[n] for n, own, v in zip(
        nodes[owner].tolist(), itself[owner].tolist(), swept.via[nodes[owner]].tolist(),
        strict=True)]  # fmt: skip
    return First(tests, at[owner], vias, group_rank[owner]), tested


def _mention(g: Numbered, first: First, mentioned: list[tuple[Changed, TestId]]
             ) -> First | None:  # fmt: skip
    """The hits with the fallback's tests joined (`walk.keep_test`: at depth 1, as a
    mention, where nothing reached the test nearer); None if a test is not numbered."""
    numbers, numbered = g.ix.memo.test_number, g.ix.memo.numbered
    tests, at, rank = first.tests.tolist(), first.at.tolist(), first.rank.tolist()
    vias = list(first.vias)
    where = {n: k for k, n in enumerate(tests)}
    mention = RANK[MENTION]
    for change, test in mentioned:
        n = numbers.get((test.path, test.node_id))
        if n is None or numbered[n].name != test.name:
            return None
        k = where.get(n)
        if k is None:
            where[n] = len(tests)
            tests.append(n)
            at.append(1)
            rank.append(mention)
            vias.append(change.name)
        elif (1, -mention) < (at[k], -rank[k]):
            at[k], rank[k], vias[k] = 1, mention, change.name
    return First(np.array(tests, dtype=np.int64), np.array(at, dtype=np.int64), vias,
                 np.array(rank, dtype=np.int64))  # fmt: skip


def _hits(g: Numbered, first: First) -> list[TestHit]:
    """The hits as named tuples, made in C (tens of thousands in a wide answer)."""
    table = g.tests_table()
    numbers = first.tests.tolist()
    if not numbers:
        return []
    pick = itemgetter(*numbers)
    paths, names, ids = (pick(table.paths_of), pick(table.names), pick(table.node_ids))
    if len(numbers) == 1:
        paths, names, ids = (paths,), (names,), (ids,)
    confidence = [CONFIDENCE_OF[r] for r in first.rank.tolist()]
    rows = zip(paths, names, ids, first.at.tolist(), first.vias, confidence, strict=True)
    return list(map(tuple.__new__, repeat(TestHit), rows))


def _run(ix: Index, g: Numbered, first: First, hits: list[TestHit], policy: Policy
         ) -> dict[str, str]:  # fmt: skip
    """`testing.run_commands` of the hits: the pytest command from the tests' numbers (a file
    whose every test is selected named by its path), the others' as it makes them."""
    table = g.tests_table()
    python = table.python[first.tests]
    run: dict[str, str] = {}
    chosen = first.tests[python]
    if len(chosen):
        chosen = chosen[np.argsort(table.rank[chosen])]
        paths = table.path[chosen]
        heads = _heads(paths)
        sizes = np.diff(np.append(heads, len(chosen)))
        in_every = np.add.reduceat(table.in_every[chosen].astype(np.int64), heads)
        every = table.every[paths[heads]]
        whole = (sizes > 1) & (every > 0) & (in_every == every)
        quoted, words = table.quoted, []
        ends = (heads + sizes).tolist()
        for k, (start, end) in enumerate(zip(heads.tolist(), ends, strict=True)):
            if whole[k]:
                words.append(table.paths[int(paths[start])])
            else:
                words.extend([quoted[t] for t in chosen[start:end].tolist()])
        run["pytest"] = "pytest " + " ".join(words)
    if not python.all():
        rest = [hit for hit, py in zip(hits, python.tolist(), strict=True) if not py]
        run.update(run_commands_of(ix, rest, policy))
    return run


__all__ = ["impact", "sweep"]
