"""The import graph, read from the code: no cycle, no import from a lower layer into a higher
one, the adapters through the one door, and few modules at the top of the package.

Every `import` counts, wherever it stands: at the top, inside a function (the lazy imports that
keep the read side light), under `if TYPE_CHECKING:`. So do the names `symdiff` and
`symdiff.api` re-export lazily by module name (`_EXPORTS`, `_LAZY`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import symdiff
import symdiff.api

PACKAGE = Path(symdiff.__file__).parent

# Bottom to top. A module may import its own layer (without a cycle) and the layers below.
LAYERS: tuple[tuple[str, ...], ...] = (
    # inert values: the domain's dataclasses and enums, errors, settings, times, durations
    # (and the names of `.symdiff/` with its status file's schema, which the settings name the
    # state folder by: `workspace.layout` imports nothing of symdiff's)
    ("symdiff.errors", "symdiff.model", "symdiff.duration", "symdiff.timestamps",
     "symdiff.records", "symdiff.config", "symdiff.workspace.layout",
     "symdiff.workspace.names"),
    # the `.symdiff/` folder (its layout, the daemon's lock, status file and sync cookies) and
    # the file-system gate: what every stage that touches the disk shares
    # and the agents' hook journals in `.symdiff/agents/`: their events, the sessions and tool
    # windows folded from them, and the rules that place a write in a window
    ("symdiff.workspace", "symdiff.agents.events", "symdiff.agents.journal",
     "symdiff.agents.state", "symdiff.agents.reader", "symdiff.agents.attribute"),
    ("symdiff.parse", "symdiff.diffs"),  # pure: bytes in, symbols and line diffs out
    # old and new symbols with hunks: symbol changes; the reference graph and the impact walk
    ("symdiff.attribute", "symdiff.graph"),
    ("symdiff.store",),  # the only code that writes SQL
    ("symdiff.git",),  # a repository's state, tree diffs, renames, the commit import
    # the services: recording, edits, a definition's history, the read side
    # (and the agents' services: recording a session, its listing, undo, blame, Agent Trace;
    # and impact: the reference index of a workspace and the walk from its changes)
    ("symdiff.record", "symdiff.edits", "symdiff.symbols", "symdiff.query", "symdiff.agents",
     "symdiff.impact"),
    ("symdiff.api", "symdiff"),  # the door, and the package that re-exports it
    ("symdiff.httpguard", "symdiff.mcp", "symdiff.ui"),  # the servers and their HTTP door
    ("symdiff.cli", "symdiff.__main__"),  # the command line, which also starts the servers
)  # fmt: skip

INERT = LAYERS[0]
ADAPTERS = ("symdiff.cli", "symdiff.mcp", "symdiff.ui", "symdiff.httpguard")
DOOR = ("symdiff", "symdiff.api")
# Beside the door: what an adapter may import of another adapter (the command line starts the
# two servers; the HTTP door answers the MCP requests it cannot let through).
ADAPTER_ENTRIES: Mapping[str, tuple[str, ...]] = {
    "symdiff.cli": ("symdiff.mcp.server", "symdiff.ui", "symdiff.httpguard"),
    "symdiff.mcp": ("symdiff.httpguard",),
    "symdiff.ui": ("symdiff.httpguard",),
    "symdiff.httpguard": ("symdiff.mcp.wire",),
}
MAX_TOP_MODULES = 10


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its `__init__.py`)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _target(name: str, modules: Iterable[str]) -> str | None:
    """The module `name` refers to: itself, else the nearest package above it."""
    known = set(modules)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, modules: Iterable[str]) -> set[str]:
    """The package's modules that `module` imports, anywhere in its code."""
    known = set(modules)
    is_package = path.name == "__init__.py"
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(_target(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join([*here, base] if base else here)
            for alias in node.names:
                # `from symdiff.store import tables` imports a module; `... import Store` not.
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else _target(base, known))
    found.discard(module)
    return {m for m in found if m is not None and m.split(".")[0] == "symdiff"}


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, for the whole package."""
    modules = module_names(PACKAGE)
    graph = {m: imports_of(m, p, modules) for m, p in modules.items()}
    graph["symdiff"] |= set(symdiff._EXPORTS.values())  # lazy re-exports, by module name
    graph["symdiff.api"] |= set(symdiff.api._LAZY.values())
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Each strongly connected set of more than one module (Tarjan), as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _within(module: str, prefixes: Iterable[str]) -> str | None:
    """The longest of `prefixes` that is `module` or a package holding it."""
    matches = [p for p in prefixes if module == p or module.startswith(p + ".")]
    return max(matches, key=len, default=None)


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    """The layer of a module: that of the most specific name listed for it."""
    best: tuple[int, int] | None = None
    for number, names in enumerate(layers):
        if (prefix := _within(module, names)) is not None and (
                best is None or len(prefix) > best[1]):
            best = (number, len(prefix))
    return None if best is None else best[0]


def upward(graph: Mapping[str, Iterable[str]],
           layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:  # fmt: skip
    """Each import from a lower layer into a higher one, and each module with no layer."""
    bad = []
    for module, targets in sorted(graph.items()):
        mine = layer_of(module, layers)
        if mine is None:
            bad.append(f"{module} is in no layer")
            continue
        for target in sorted(targets):
            theirs = layer_of(target, layers)
            if theirs is not None and theirs > mine:
                bad.append(f"{module} (layer {mine}) imports {target} (layer {theirs})")
    return bad


def around_the_door(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import of an adapter that is not the door, an inert value, its own package, or
    another adapter's entry it may use."""
    bad = []
    for module, targets in sorted(graph.items()):
        adapter = _within(module, ADAPTERS)
        if adapter is None:
            continue
        allowed = (*INERT, adapter, *ADAPTER_ENTRIES.get(adapter, ()))
        for target in sorted(targets):
            if target not in DOOR and _within(target, allowed) is None:
                bad.append(f"{module} imports {target}")
    return bad


def test_the_checks_can_fail() -> None:
    graph = {"symdiff.a": {"symdiff.b"}, "symdiff.b": {"symdiff.c"}, "symdiff.c": {"symdiff.a"},
             "symdiff.d": {"symdiff.a"}}  # fmt: skip
    assert cycles(graph) == [["symdiff.a", "symdiff.b", "symdiff.c"]]
    assert cycles({"symdiff.a": {"symdiff.b"}, "symdiff.b": set()}) == []
    layers = (("symdiff.a", "symdiff.b"), ("symdiff.c",))
    assert upward(graph, layers) == ["symdiff.b (layer 0) imports symdiff.c (layer 1)",
                                     "symdiff.d is in no layer"]  # fmt: skip
    assert layer_of("symdiff.workspace.lock") == 1 and layer_of("symdiff.cli.main") == 9
    assert layer_of("symdiff") == layer_of("symdiff.api") != layer_of("symdiff.query.answer")
    reaching = {"symdiff.cli.x": {"symdiff.api", "symdiff.cli.y", "symdiff.model",
                                  "symdiff.query.answer", "symdiff.mcp.server"},
                "symdiff.mcp.x": {"symdiff.ui", "symdiff", "symdiff.records"}}  # fmt: skip
    assert around_the_door(reaching) == ["symdiff.cli.x imports symdiff.query.answer",
                                         "symdiff.mcp.x imports symdiff.ui"]  # fmt: skip


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    (tmp_path / "symdiff" / "sub").mkdir(parents=True)
    code = ("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
            "import symdiff.model as m\nfrom symdiff.sub import leaf, Thing\nfrom . import b\n"
            "if TYPE_CHECKING:\n    from symdiff.errors import X\n"
            "def f():\n    from .sub.leaf import y\n")  # fmt: skip
    for name in ("__init__", "model", "errors", "a", "b", "sub/__init__", "sub/leaf"):
        (tmp_path / "symdiff" / f"{name}.py").write_text(code if name == "a" else "")
    modules = module_names(tmp_path / "symdiff")
    assert imports_of("symdiff.a", tmp_path / "symdiff" / "a.py", modules) == {
        "symdiff.model", "symdiff.sub.leaf", "symdiff.sub", "symdiff.b", "symdiff.errors"}


def test_no_module_imports_itself_back() -> None:
    assert cycles(import_graph()) == []


def test_no_layer_imports_a_higher_one() -> None:
    assert upward(import_graph()) == []


def test_the_adapters_come_in_through_the_door() -> None:
    assert around_the_door(import_graph()) == []


def test_few_modules_sit_at_the_top() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
