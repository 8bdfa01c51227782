"""Elixir: modules, protocols, implementations, and `def`/`defp`/`defmacro`/`defguard` clauses.

Every definition is a call (`def name(args) do … end`), so one handler reads the call's target.
Functions are qualified by their module (`MyApp.Worker.start_link`; one a macro's `quote do`
injects, by the macro: `EEx.Engine.__using__.init`); each clause of a multi-clause
function is its own Symbol (their heads differ, so their signatures do), like an overload.
"""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import Def, Enclosing, Family, normalise, text

FUNCTIONS = {
    "def": "function", "defp": "function", "defguard": "function", "defguardp": "function",
    "defdelegate": "function", "defmacro": "macro", "defmacrop": "macro",
}  # fmt: skip
MODULES = {"defmodule": "module", "defprotocol": "interface", "defimpl": "impl"}


def _call(node: Node, scope: Enclosing) -> Def | None:
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return None
    word = text(target)
    if word in FUNCTIONS:
        return _function(node, FUNCTIONS[word], scope)
    if word in MODULES:
        return _module(node, MODULES[word])
    return None


def _arguments(node: Node) -> list[Node]:
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    return [] if args is None else list(args.named_children)


def _head_name(head: Node) -> Node | None:
    """The name in a clause head: `f(a)`, `f(a) when g`, `f`, `a + b` (an operator)."""
    if head.type == "binary_operator" and text(head.child_by_field_name("operator")) == "when":
        left = head.child_by_field_name("left")
        return None if left is None else _head_name(left)
    if head.type == "call":
        target = head.child_by_field_name("target")
        if target is not None and target.type == "call":  # `def unquote(name)(x)`, generated
            return target
        return target if target is not None and target.type == "identifier" else None
    if head.type == "identifier":
        return head
    if head.type in ("binary_operator", "unary_operator"):
        return head.child_by_field_name("operator")
    return None


def _body(node: Node, args: list[Node]) -> Node | None:
    """A `do … end` block, or the keyword list of a one-line `, do: …`."""
    block = next((c for c in node.named_children if c.type == "do_block"), None)
    if block is not None:
        return block
    last = args[-1] if len(args) > 1 else None
    if last is not None and last.type == "keywords" and last.named_child_count:
        key = last.named_children[0].child_by_field_name("key")
        if key is not None and text(key).startswith("do:"):
            return last
    return None


def _function(node: Node, kind: str, scope: Enclosing) -> Def | None:
    args = _arguments(node)
    name = _head_name(args[0]) if args else None
    if name is None or scope.name is None:
        return None  # a `def` outside a module is not code Elixir compiles
    return Def(normalise(text(name)), kind, _body(node, args), (name,))


def _module(node: Node, kind: str) -> Def | None:
    args = _arguments(node)
    if not args or args[0].type not in ("alias", "atom"):
        return None
    name = normalise(text(args[0]))
    if kind == "impl":  # `defimpl Size, for: Map` compiles to the module `Size.Map`
        for pair in (p for a in args[1:] if a.type == "keywords" for p in a.named_children):
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if key is not None and text(key).startswith("for:") and value is not None:
                name = f"{name}.{normalise(text(value))}"
    return Def(name, kind, _body(node, args), (args[0],))


def _header(flat: str) -> str:
    """`def f(x), do: x` and `def f(x) do x end` have one signature: drop the comma before `do:`."""
    return flat.rstrip().removesuffix(",")


def _join(scope: Enclosing, name: str) -> str:
    return name if scope.name is None else f"{scope.name}.{name}"


# Only the calls `_call` can take (a `def`…/`defmodule`… target): a file holds ten times more
# other calls, and handing each to Python cost more than the parse.
_QUERY = "((call target: (identifier) @target) @def (#any-of? @target {}))".format(
    " ".join(f'"{word}"' for word in (*FUNCTIONS, *MODULES))
)

FAMILY = Family(
    handlers={"call": _call},
    join=_join,
    canonical=_header,
    query=_QUERY,
    # In a tree without errors, the walk goes from one `def`… word of the source to the next
    # (the calls whose target it is) instead of asking the query for every call.
    keywords=tuple(word.encode() for word in (*FUNCTIONS, *MODULES)),
    keyword_field="target",
)
