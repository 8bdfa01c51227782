"""Lua: `function f`, `function M.f`, `function M:m`, `local function f`, `f = function`.

Names written out in full (`M.f`, `M:m`, `t[k] = function`) are taken as written; a function in
a table constructor (`local M = { f = function … }`) is qualified by the variable (`M.f`).
"""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    field_def,
    join_with,
    normalise,
    text,
)

_declaration = field_def("function")
_TARGETS = ("identifier", "dot_index_expression", "bracket_index_expression")


def _function(node: Node, scope: Enclosing) -> Def | None:
    found = _declaration(node, scope)
    name = node.child_by_field_name("name")
    if found is None or name is None or name.type == "identifier":
        return found
    found.name, found.absolute = normalise(text(name)), True
    found.kind = "method" if name.type == "method_index_expression" else "function"
    return found


def _assigned(node: Node, _scope: Enclosing) -> Def | None:
    """`local f = function(…)`, `M.f = function(…)`; `M = {…}` is a scope for its fields."""
    targets = _first(node, "variable_list")
    values = _first(node, "expression_list")
    if targets is None or values is None or len(targets.named_children) != 1:
        return None
    value = values.named_children[0] if values.named_child_count == 1 else None
    name = targets.named_children[0]
    if value is None or name.type not in _TARGETS:
        return None
    absolute = name.type != "identifier"
    if value.type == "table_constructor":
        return Def(normalise(text(name)), "table", None, absolute=absolute, emit=False)
    if value.type != "function_definition":
        return None
    body = value.child_by_field_name("body")
    return Def(normalise(text(name)), "function", body, (name,), absolute=absolute)


def _field(node: Node, _scope: Enclosing) -> Def | None:
    """`{ name = function(…) … }`, `{ ["name"] = function … }`."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None or value.type != "function_definition":
        return None
    content = _first(name, "string_content") if name.type == "string" else name
    if content is None:
        return None
    return Def(text(content), "function", value.child_by_field_name("body"), (name,))


def _first(node: Node, kind: str) -> Node | None:
    return next((c for c in node.named_children if c.type == kind), None)


FAMILY = Family(
    handlers={
        "function_declaration": _function,
        "assignment_statement": _assigned,
        "field": _field,
    },
    join=join_with("."),
    wrappers=frozenset({"variable_declaration"}),  # `local` leads `local f = function`
)
