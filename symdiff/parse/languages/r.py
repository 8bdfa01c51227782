"""R: functions bound by assignment (`f <- function(x)`, `=`, `<<-`, `env$f <- …`), functions
in a `list(name = function …)` (R6 and reference-class methods), and S4 `setGeneric`/`setMethod`/
`setClass`. Names are joined with `$`, R's own member access (a `.` is part of R names).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from symdiff.parse.languages.engine import Def, Enclosing, Family, join_with, normalise, text

ASSIGN = frozenset({"<-", "<<-", "=", ":="})
TARGETS = frozenset({"identifier", "string", "extract_operator", "namespace_operator"})
# Calls whose value is a scope for the named functions in it (`Foo <- R6Class("Foo", …)`).
CLASSES = frozenset({"R6Class", "R6::R6Class", "setRefClass", "list"})
S4 = {"setGeneric": "function", "setMethod": "method", "setClass": "class"}


def _local(name: Node) -> str:
    if name.type == "string":
        content = next((c for c in name.named_children if c.type == "string_content"), None)
        return text(content)
    return normalise(text(name)).strip("`")


def _assignment(node: Node, _scope: Enclosing) -> Def | None:
    operator = node.child_by_field_name("operator")
    lhs, rhs = node.child_by_field_name("lhs"), node.child_by_field_name("rhs")
    if operator is None or text(operator) not in ASSIGN or lhs is None or rhs is None:
        return None
    if lhs.type not in TARGETS:
        return None
    if rhs.type == "function_definition":
        return Def(_local(lhs), "function", rhs.child_by_field_name("body"), (lhs,))
    function = rhs.child_by_field_name("function") if rhs.type == "call" else None
    if function is not None and text(function) in CLASSES:
        return Def(_local(lhs), "object", None, emit=False)
    return None


def _argument(node: Node, scope: Enclosing) -> Def | None:
    """`name = function(…)` inside `list(…)`: a method of the object the list builds."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None or value.type != "function_definition":
        return None
    call = node.parent.parent if node.parent is not None else None
    function = call.child_by_field_name("function") if call is not None else None
    if function is None or text(function) not in CLASSES:
        return None
    kind = "method" if scope.kind == "object" else "function"
    return Def(_local(name), kind, value.child_by_field_name("body"), (name,))


def _s4(node: Node, _scope: Enclosing) -> Def | None:
    """`setGeneric("name", function…)`, `setMethod("name", "Class", function…)`, `setClass`."""
    function = node.child_by_field_name("function")
    kind = S4.get(text(function)) if function is not None else None
    arguments = node.child_by_field_name("arguments")
    if kind is None or arguments is None:
        return None
    values = [v for a in arguments.named_children if (v := a.child_by_field_name("value"))]
    if not values or values[0].type != "string":
        return None
    body = next((v for v in values if v.type == "function_definition"), None)
    body = body.child_by_field_name("body") if body is not None else None
    return Def(_local(values[0]), kind, body, (values[0],))


def _header(flat: str) -> str:
    """`f = function(x)` and `f <- function(x)` bind alike (styler rewrites one to the other)."""
    return re.sub(r"^\s*=(?!=)", "<-", flat)


FAMILY = Family(
    handlers={"binary_operator": _assignment, "argument": _argument, "call": _s4},
    join=join_with("$"),
    canonical=_header,
)
