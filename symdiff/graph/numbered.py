"""The graph numbered for the array walk (`sweep.py`): every node's users, tests and way,
worked out ahead of the questions and kept as arrays.

A question the process has not met before otherwise computes the users of every node it
meets (on Django, 20 functions meet 10-20 thousand nodes: ~160 ms of its ~220 ms).
`Numbered.steps` works them all out once per version of the index, in steps a caller can run
in the background (~10 ms each, under whatever lock guards the graph); an edit that changed
only uses recomputes only the nodes whose users it touched (`patch`). numpy is imported only
once a build or a walk runs: a one-shot command line never loads it.

The nodes are numbered in their sorted order, so a node's users in number order are in the
order `Edges.users` gives them: the array walk meets ties as the dict walk does. Nodes with
equal users share one list (a class's methods reached through its users), which the walk takes
in once a level.
"""

from __future__ import annotations

import shlex
import time
from array import array
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from symdiff.graph.maps import Index, Node, collector_paused
from symdiff.graph.policy import Policy
from symdiff.graph.testing import file_tests
from symdiff.graph.walk import CLASS_BODY, STOP, class_goes_on, stands_for, stored_by, way_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from symdiff.graph.users import Edges

STEP = 0.01  # seconds a build step works for (then one more node at most)
NONE, OTHER, ITSELF = -1, 0, 1  # what a node stands for: no test; tests it runs before; itself


class Numbered:
    """The index's nodes as numbers, with their users, tests and way, for one version."""

    def __init__(self, ix: Index, edges: Edges) -> None:
        self.ix = ix
        self.edges = edges
        self.version = ix.version
        self.ready = False
        self.failed = False  # a user outside the numbering: the dict walk answers
        self.nodes: list[Node] = sorted(_nodes(ix))
        self.number: dict[Node, int] = {node: n for n, node in enumerate(self.nodes)}
        self.names: list[str] = [name for _, name in self.nodes]
        self._stale: set[Node] = set()  # nodes whose users an edit changed since their list
        self._table: Tests | None = None
        # Whether the walk goes on past a class reached from a node (`walk.class_goes_on`):
        # (class, node) -> bool, for each class body that stores something.
        self.goes_on: dict[tuple[int, int], bool] = {}
        # What the build fills in (Python lists, then arrays when it ends).
        # Each distinct list (its users' numbers and their ranks, as bytes) -> its number; the
        # lists not yet in the arrays.
        self._lists: dict[tuple[bytes, bytes], int] = {}
        self._unlisted: list[tuple[bytes, bytes]] = []
        self._list_of: list[int] = []
        self._way: list[int] = []
        self._stands: list[int] = []
        self._tests: list[tuple[int, ...]] = []
        self.kinds: list[str] = []  # per node: its symbol's kind, its first line
        self.lines: list[int] = []

    def steps(self) -> Iterator[None]:
        """The build, a step at a time: each about STEP seconds (and one node: Django's
        `Model` methods take up to 0.1 s each)."""
        ix, edges = self.ix, self.edges
        # First: the edges' tables of an older version are dropped now, not after the first
        # nodes registered their keys there (`Edges.fresh`).
        self.stale(edges.fresh())
        todo = iter(self.nodes)
        while self._some(todo):
            yield
            if ix.version != self.version or self.failed:
                return  # a newer build replaces this one; or the dict walk answers
            self.stale(edges.fresh())
        yield
        if ix.version != self.version or self.failed:
            return
        with collector_paused():
            self._arrays()
        started = time.perf_counter()
        for path in sorted({t.path for t in ix.memo.numbered}):  # what `Tests` reads, memoised
            if time.perf_counter() - started > STEP:
                yield
                if ix.version != self.version:
                    return
                started = time.perf_counter()
            file_tests(ix, path, edges.policy)
        yield
        if ix.version != self.version:
            return
        with collector_paused():
            self.tests_table()
        self.ready = True
        self.stale(edges.fresh())
        self.patch()

    def _some(self, todo: Iterator[Node]) -> bool:
        """Nodes of `todo` for STEP seconds, the collector paused (they make objects, no
        cycles); whether some are left."""
        started = time.perf_counter()
        with collector_paused():
            for node in todo:
                self._node(node)
                if time.perf_counter() - started > STEP:
                    return True
        return False

    def _node(self, node: Node) -> None:
        """One node's users, way and tests."""
        ix, edges, memo = self.ix, self.edges, self.ix.memo
        self._list_of.append(self._list(node))
        entry = ix.files.get(node[0])
        symbol = entry.symbols.get(node[1]) if entry is not None else None
        self.kinds.append(symbol.kind if symbol is not None else "" if node[1] else "module")
        self.lines.append(symbol.start_line if symbol is not None else 1)
        goes = memo.goes.get(node)
        if goes is None:
            goes = memo.goes[node] = way_of(edges, node)
        if goes == CLASS_BODY and not stored_by(ix, node)[0]:
            goes = STOP  # a class body storing nothing: `class_goes_on` is False
        self._way.append(goes)
        found = memo.stands_for[node] if node in memo.stands_for else (
            stands_for(ix, node, edges.policy, keep=False))  # fmt: skip
        self._stands.append(NONE if found is None else ITSELF if found[0] else OTHER)
        self._tests.append(() if found is None else found[1])

    def stale(self, nodes: set[Node]) -> None:
        """Nodes whose users an edit changed (`Edges.fresh`): worked out again before the
        next walk."""
        self._stale.update(nodes)

    def usable(self) -> bool:
        """Whether the build ended for the index's version, every user numbered."""
        return self.ready and not self.failed and self.version == self.ix.version

    def patch(self) -> None:
        """Work out the stale nodes' users again (an edit that changed only uses)."""
        for node in sorted(self._stale):
            n = self.number.get(node)
            if n is not None:
                self.list_of[n] = self._list(node)
        self._stale.clear()
        self._listed()

    def add(self, node: Node) -> int | None:
        """The number of a node, numbered now if the build did not meet it (a removed
        symbol's start); None if one of its users is outside the numbering."""
        import numpy as np

        n = self.number.get(node)
        if n is not None:
            return n
        users = self._list(node)
        if users < 0:
            self.failed = False  # this node's users only: the others hold
            return None
        self._listed()
        n = len(self.nodes)
        self.nodes.append(node)
        self.number[node] = n
        self.names.append(node[1])
        found = stands_for(self.ix, node, self.edges.policy)
        tests = np.array(() if found is None else found[1], dtype=np.int32)
        self.list_of = np.append(self.list_of, np.int32(users))
        self.way = np.append(self.way, np.int8(way_of(self.edges, node)))
        self.stands = np.append(self.stands, np.int8(
            NONE if found is None else ITSELF if found[0] else OTHER))
        self.test_of = np.concatenate((self.test_of, tests))
        self.test_start = np.append(self.test_start, self.test_start[-1] + len(tests))
        self.caller_rank = np.append(self.caller_rank, np.int32(n))
        self.kinds.append("")
        self.lines.append(1)
        return n

    def tests_table(self) -> Tests:
        """The numbered tests as the answer needs them, for every number so far."""
        numbered = self.ix.memo.numbered
        if self._table is None or self._table.size != len(numbered):
            self._table = Tests(self.ix, self.edges.policy)
        return self._table

    def _list(self, node: Node) -> int:
        """The number of the node's users' list (one per distinct list); -1 (and `failed`)
        if a user is outside the numbering. A new list joins the arrays at `_listed`."""
        users = self.edges.computed(node)
        number = self.number
        try:
            key = (array("i", [number[u] for u in users]).tobytes(),
                   array("b", users.values()).tobytes())  # fmt: skip
        except KeyError:
            self.failed = True
            return -1
        self._class_bodies(node, users)
        found = self._lists.get(key)
        if found is None:
            found = self._lists[key] = len(self._lists)
            self._unlisted.append(key)
        return found

    def _class_bodies(self, node: Node, users: Iterable[Node]) -> None:
        """Whether the walk goes past each class whose body stores something, reached from
        `node` (`walk.class_goes_on`), worked out now rather than in a question."""
        ix, edges, memo = self.ix, self.edges, self.ix.memo
        kept = node in memo.reach_keys  # else memoised only while its class users are asked
        for user in users:
            way = memo.goes.get(user)
            if way is None:
                way = memo.goes[user] = way_of(edges, user)
            if way == CLASS_BODY and stored_by(ix, user)[0]:
                self.goes_on[self.number[user], self.number[node]] = class_goes_on(
                    edges, user, node)
        if not kept:
            memo.reach_keys.pop(node, None)

    def _listed(self) -> None:
        """The new lists put at the arrays' end."""
        import numpy as np

        if not self._unlisted:
            return
        new = self._unlisted
        self._unlisted = []
        counts = np.array([len(r) for _, r in new], dtype=np.int64)
        users = np.frombuffer(b"".join(u for u, _ in new), dtype=np.int32)
        ranks = np.frombuffer(b"".join(r for _, r in new), dtype=np.int8)
        if self.ready:
            ends = self.list_start[-1] + np.cumsum(counts)
            self.list_start = np.concatenate((self.list_start, ends))
            self.users = np.concatenate((self.users, users))
            self.ranks = np.concatenate((self.ranks, ranks))
            return
        self.list_start = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.list_start[1:])
        self.users, self.ranks = users, ranks

    def _arrays(self) -> None:
        import numpy as np

        self.list_of = np.array(self._list_of, dtype=np.int32)
        self._listed()
        self.way = np.array(self._way, dtype=np.int8)
        self.stands = np.array(self._stands, dtype=np.int8)
        counts = [len(t) for t in self._tests]
        self.test_start = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.test_start[1:])
        self.test_of = np.fromiter((t for ts in self._tests for t in ts), dtype=np.int32,
                                   count=int(self.test_start[-1]))  # fmt: skip
        # The callers' order: (path, start_line, name), as a rank per node; the nodes are in
        # (path, name) order already, so only each path's run is sorted again.
        lines, by = self.lines, []
        start = 0
        nodes = self.nodes
        for end in range(1, len(nodes) + 1):
            if end == len(nodes) or nodes[end][0] != nodes[start][0]:
                by.extend(sorted(range(start, end), key=lambda n: (lines[n], nodes[n][1])))
                start = end
        self.caller_rank = np.empty(len(by), dtype=np.int32)
        self.caller_rank[by] = np.arange(len(by), dtype=np.int32)
        self._list_of = self._way = self._stands = []
        self._tests = []

    if TYPE_CHECKING:
        list_of: npt.NDArray[np.int32]
        list_start: npt.NDArray[np.int64]
        users: npt.NDArray[np.int32]
        ranks: npt.NDArray[np.int8]
        way: npt.NDArray[np.int8]
        stands: npt.NDArray[np.int8]
        test_start: npt.NDArray[np.int64]
        test_of: npt.NDArray[np.int32]
        caller_rank: npt.NDArray[np.int32]


class Tests:
    """Each numbered test's place in the answer's order (path, node id), and what its pytest
    command needs: its id and its file's path shell-quoted, whether the file's every test
    (`file_tests`) includes it, and how many those are."""

    def __init__(self, ix: Index, policy: Policy) -> None:
        import numpy as np

        numbered = ix.memo.numbered
        self.size = len(numbered)
        by = sorted(range(self.size), key=lambda n: (numbered[n].path, numbered[n].node_id))
        self.rank = np.empty(self.size, dtype=np.int64)
        self.rank[by] = np.arange(self.size, dtype=np.int64)
        self.paths_of = [t.path for t in numbered]
        self.names = [t.name for t in numbered]
        self.node_ids = [t.node_id for t in numbered]
        self.quoted = [shlex.quote(t.node_id) for t in numbered]
        self.python = np.array([ix.files[t.path].facts.language == "python" for t in numbered],
                               dtype=bool)  # fmt: skip
        paths = sorted({t.path for t in numbered})
        self.paths = [shlex.quote(p) for p in paths]
        path_of = {p: k for k, p in enumerate(paths)}
        self.path = np.array([path_of[t.path] for t in numbered], dtype=np.int64)
        every = {p: file_tests(ix, p, policy) for p in paths}
        self.in_every = np.array([t.node_id in every[t.path] for t in numbered], dtype=bool)
        self.every = np.array([len(every[p]) for p in paths], dtype=np.int64)


def _nodes(ix: Index) -> set[Node]:
    """Every node a walk can meet: each file's module and definitions, and every user."""
    out: set[Node] = set()
    for path, entry in ix.files.items():
        out.add((path, ""))
        out.update((path, name) for name in entry.symbols)
        compiled = entry.compiled
        out.update((path, use.source) for use in compiled.uses)
        out.update((path, source) for source, _ in compiled.fixture_uses)
        out.update((path, source) for _, _, source in compiled.module_attrs)
    return out


__all__ = ["ITSELF", "NONE", "OTHER", "Numbered"]
