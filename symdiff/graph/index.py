"""The reference graph: files in, `find` and `impact` out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from symdiff.graph.edges import resolve
from symdiff.graph.facts import Changed, FileFacts, Impact
from symdiff.graph.maps import Index, Node, collector_paused, last_name
from symdiff.graph.numbered import Numbered
from symdiff.graph.policy import DEFAULT_POLICY, Policy
from symdiff.graph.users import Edges
from symdiff.graph.walk import impact


class Graph:
    """Every file's definitions and references, and the walk from changed symbols."""

    def __init__(
        self,
        files: Iterable[FileFacts] = (),
        *,
        test_patterns: Sequence[str] = (),
        go_modules: Mapping[str, str] | None = None,
        policy: Policy = DEFAULT_POLICY,
    ) -> None:
        self._ix = Index(test_patterns=test_patterns, go_modules=go_modules or {})
        self._ix.add_all(files)
        self._edges = Edges(self._ix, policy)
        self._numbered: Numbered | None = None

    @property
    def policy(self) -> Policy:
        """How the walk treats `name` edges and where it stops (`symdiff.graph.policy`)."""
        return self._edges.policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._ix.changed()  # the cached keys and tests depend on it
        self._edges = Edges(self._ix, policy)
        self._numbered = None

    def warm(self) -> Iterator[None]:
        """The numbered graph's build (every node's users and tests worked out before a
        question needs them; `numbered.py`), a step of a few milliseconds at a time: the
        caller runs the steps under its lock, in the background. Nothing to do when the
        graph is numbered for this version already, or when the policy limits name edges by
        depth (the array walk does not)."""
        if self._edges.policy.name_max_depth is not None or self.warmed:
            return iter(())
        self._numbered = Numbered(self._ix, self._edges)
        return self._numbered.steps()

    @property
    def warmed(self) -> bool:
        """Whether the numbered graph is built for the index's version."""
        return self._numbered is not None and self._numbered.usable()

    def update(self, facts: FileFacts) -> None:
        """A file added or changed: only its own entries are replaced."""
        self._ix.update(facts)

    def update_all(self, files: Iterable[FileFacts]) -> None:
        """Many files added or changed at once (the first build of a held graph): as `update`
        for each, with the garbage collector paused over them."""
        self._ix.add_all(files)

    def remove(self, path: str) -> None:
        """A file deleted."""
        self._ix.remove(path)

    def paths(self) -> set[str]:
        """The paths the graph holds."""
        return set(self._ix.files)

    def find(self, spec: str) -> list[Changed]:
        """The definitions `spec` names: `path:Name`, `Name`, `Class.method`, `pkg.mod.Name`."""
        ix = self._ix
        path, sep, name = spec.partition(":")
        if sep and path in ix.files:
            symbols = ix.files[path].symbols
            nodes = [(path, name)] if name in symbols else [
                (path, s) for s in symbols if _suffix(s, name)
            ]
        else:
            candidates = ix.defs_by_last.get(last_name(spec), set())
            nodes = [(p, n) for p, n in candidates if n == spec]
            if not nodes and "." in spec:
                nodes = list(resolve(ix, "py:" + spec))
            if not nodes:
                nodes = [(p, n) for p, n in candidates if _suffix(n, spec)]
        return [Changed(p, n, "given") for p, n in sorted(set(nodes), key=self._order)]

    def _order(self, node: Node) -> tuple[str, int, str]:
        entry = self._ix.files.get(node[0])
        symbol = entry.symbols.get(node[1]) if entry is not None else None
        return node[0], symbol.start_line if symbol is not None else 0, node[1]

    def impact(self, changed: Sequence[Changed], *, depth: int = 2) -> Impact:
        """The callers of the changed symbols to `depth`, and the tests that reach them."""
        # A wide answer makes tens of thousands of objects: without the pause, the collector
        # runs dozens of times in one call, a full pass every few calls.
        with collector_paused():
            found = self._numbered_impact(changed, depth)
            if found is None:
                found = impact(self._ix, self._edges, changed, depth=depth,
                               policy=self._edges.policy)  # fmt: skip
            return found

    def _numbered_impact(self, changed: Sequence[Changed], depth: int) -> Impact | None:
        """The same answer walked on the numbered graph (`sweep.py`), if it is built for the
        index's version; None otherwise."""
        numbered = self._numbered
        if numbered is None:
            return None
        numbered.stale(self._edges.fresh())  # an edit inside bodies: its nodes, again
        if not numbered.usable():
            return None
        numbered.patch()
        if not numbered.usable():  # a user the numbering lacks: numbered again by `warm`
            return None
        from symdiff.graph import sweep

        return sweep.impact(self._ix, self._edges, numbered, changed, depth=depth,
                            policy=self._edges.policy)  # fmt: skip

    def impact_json(self, changed: Sequence[Changed], *, depth: int = 2) -> dict[str, object]:
        """`impact(...).as_json()`, the collector paused over both."""
        with collector_paused():
            return self.impact(changed, depth=depth).as_json()


def _suffix(name: str, spec: str) -> bool:
    return name.endswith("." + spec) or name.endswith("::" + spec)
