"""Julia: functions and methods (`function f(…)`, `f(…) = …`, `macro m(…)`), structs, abstract
types and modules, qualified by module (`Geo.area`).

Julia dispatches on argument types, so one function is usually many methods: each is its own
Symbol with its own signature, like an overload. A method added to another module's function
(`function Base.show(io::IO, c::Circle)`) keeps the name it is written with (`Base.show`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    Handler,
    join_with,
    normalise,
    text,
)

# Wrappers around a call in a signature: `f(x)::T`, `f(x) where {T}`.
WRAPPERS = frozenset({"typed_expression", "where_expression"})


def _callee(node: Node | None) -> Node | None:
    """The name a signature calls: `f` in `f(x::T)::R where {T}`, `Base.show`, an operator."""
    while node is not None and node.type in WRAPPERS:
        node = node.named_children[0] if node.named_child_count else None
    if node is None or node.type != "call_expression":
        return None
    name = node.named_children[0] if node.named_child_count else None
    if name is not None and name.type == "parametrized_type_expression":
        name = name.named_children[0]  # a constructor `Array{T}(…)`: `{T}` is signature
    if name is None or name.type not in ("identifier", "field_expression", "operator"):
        return None
    return name


def _named(name: Node, kind: str, body: Node | None) -> Def:
    local = normalise(text(name))
    return Def(local, kind, body, (name,), absolute=name.type == "field_expression")


def _function(node: Node, _scope: Enclosing) -> Def | None:
    signature = next((c for c in node.named_children if c.type == "signature"), None)
    if signature is None or not signature.named_child_count:
        return None
    head = signature.named_children[0]
    name = head if head.type == "identifier" else _callee(head)  # `function g end`
    if name is None:
        return None
    body = next((c for c in node.named_children if c.type == "block"), None)
    return _named(name, "macro" if node.type == "macro_definition" else "function", body)


def _short(node: Node, _scope: Enclosing) -> Def | None:
    """`f(x) = …`: an assignment to a call is a method definition."""
    operator = next((c for c in node.children if c.type == "operator"), None)
    if operator is None or text(operator) != "=" or node.named_child_count < 3:
        return None
    name = _callee(node.named_children[0])
    return None if name is None else _named(name, "function", node.named_children[-1])


def _type(kind: str) -> Handler:
    def handle(node: Node, _scope: Enclosing) -> Def | None:
        head = next((c for c in node.named_children if c.type == "type_head"), None)
        name = head.named_children[0] if head is not None and head.named_child_count else None
        while name is not None and name.type in (
            "binary_expression",
            "parametrized_type_expression",
        ):
            name = name.named_children[0] if name.named_child_count else None
        if name is None or name.type != "identifier":
            return None
        body = next((c for c in node.named_children if c.type == "block"), None)
        return Def(text(name), kind, body, (name,))

    return handle


def _module(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = next((c for c in node.named_children if c.type == "block"), None)
    return Def(text(name), "module", body, (name,))


def _header(flat: str) -> str:
    """`function f(x) … end` and `f(x) = …` define the same method: one signature for both."""
    return re.sub(r"^\s*function\b|=\s*$", "", flat)


FAMILY = Family(
    handlers={
        "function_definition": _function,
        "macro_definition": _function,
        "assignment": _short,
        "struct_definition": _type("struct"),
        "abstract_definition": _type("type"),
        "module_definition": _module,
    },
    join=join_with("."),
    canonical=_header,
)
