"""JavaScript, TypeScript and TSX: functions, classes, methods and functions bound to names."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    Handler,
    field_def,
    join_with,
    method_in_class,
    normalise,
    text,
)
from symdiff.parse.languages.quotes import ecmascript_quotes

# Values that make a binding a function definition in users' eyes (`const f = () => …`).
FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
NAME_TYPES = frozenset({"identifier", "property_identifier", "private_property_identifier"})


def _method(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    kind = "constructor" if text(name) == "constructor" else "method"
    return Def(text(name), kind, node.child_by_field_name("body"), (name,))


def _construct_signature(_node: Node, _scope: Enclosing) -> Def | None:
    """`new (x: T): C` in an interface: named `new`, as TypeScript's own docs call it."""
    return Def("new", "constructor", None)


def _bound(name: Node | None, value: Node | None, *, kind: str) -> Def | None:
    """A name bound to a function, class or object literal (whose methods it qualifies)."""
    if name is None or value is None or name.type not in NAME_TYPES:
        return None
    if value.type in FUNCTION_VALUES:
        return Def(text(name), kind, value.child_by_field_name("body"), (name,))
    if value.type == "class":
        return Def(text(name), "class", value.child_by_field_name("body"), (name,))
    if value.type == "object":
        return Def(text(name), "object", None, (name,), emit=False)
    return None


def _declarator(node: Node, scope: Enclosing) -> Def | None:
    return _bound(
        node.child_by_field_name("name"), node.child_by_field_name("value"), kind="function"
    )


def _field(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name") or node.child_by_field_name("property")
    found = _bound(name, node.child_by_field_name("value"), kind="method")
    return None if found is None or not found.emit else found


def _pair(node: Node, _scope: Enclosing) -> Def | None:
    return _bound(node.child_by_field_name("key"), node.child_by_field_name("value"), kind="method")


def _assignment(node: Node, _scope: Enclosing) -> Def | None:
    """`module.exports.f = function …`, `Foo.prototype.bar = () => …`."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or right.type not in FUNCTION_VALUES:
        return None
    if left.type not in ("identifier", "member_expression"):
        return None
    return Def(normalise(text(left)), "function", right.child_by_field_name("body"), (left,))


HANDLERS: dict[str, Handler] = {
    "function_declaration": method_in_class(field_def("function")),
    "generator_function_declaration": method_in_class(field_def("function")),
    "function_signature": field_def("function"),
    "class_declaration": field_def("class"),
    "abstract_class_declaration": field_def("class"),
    "class": field_def("class"),
    "method_definition": _method,
    "method_signature": _method,
    "abstract_method_signature": _method,
    "construct_signature": _construct_signature,
    "field_definition": _field,
    "public_field_definition": _field,
    "variable_declarator": method_in_class(_declarator),
    "pair": _pair,
    "assignment_expression": _assignment,
    "interface_declaration": field_def("interface"),
    "type_alias_declaration": field_def("type", body="none"),
    "enum_declaration": field_def("enum"),
    "internal_module": field_def("namespace"),
    "module": field_def("namespace"),
}

FAMILY = Family(
    handlers=HANDLERS,
    join=join_with("."),
    wrappers=frozenset(
        {"export_statement", "lexical_declaration", "variable_declaration", "ambient_declaration"}
    ),
    leading=frozenset({"decorator"}),
    canonical=ecmascript_quotes,
)
