"""Kotlin: classes, interfaces, enums, objects, functions (extensions: `Type.fn`), constructors."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    first_child,
    join_with,
    method_in_class,
    normalise,
    text,
)

BODIES = ("class_body", "enum_class_body")


def _class(node: Node, _scope: Enclosing) -> Def | None:
    name = first_child(node, ("type_identifier",))
    if name is None:
        return None
    tokens = {c.type for c in node.children if not c.is_named}
    kind = "interface" if "interface" in tokens else "enum" if "enum" in tokens else "class"
    return Def(text(name), kind, first_child(node, BODIES), (name,))


def _object(node: Node, _scope: Enclosing) -> Def | None:
    name = first_child(node, ("type_identifier",))
    local = text(name) if name is not None else "Companion"
    cut = () if name is None else (name,)
    return Def(local, "object", first_child(node, BODIES), cut)


def _function(node: Node, _scope: Enclosing) -> Def | None:
    name = first_child(node, ("simple_identifier",))
    if name is None:
        return None
    receiver = first_child(node, ("receiver_type",))
    local = text(name) if receiver is None else f"{normalise(text(receiver))}.{text(name)}"
    return Def(local, "function", first_child(node, ("function_body",)), (name,))


def _constructor(node: Node, _scope: Enclosing) -> Def | None:
    return Def("constructor", "constructor", first_child(node, ("block", "statements")))


def _alias(node: Node, _scope: Enclosing) -> Def | None:
    name = first_child(node, ("type_identifier",))
    return None if name is None else Def(text(name), "type", None, (name,))


FAMILY = Family(
    handlers={
        "class_declaration": _class,
        "object_declaration": _object,
        "companion_object": _object,
        "function_declaration": method_in_class(_function),
        "secondary_constructor": _constructor,
        "type_alias": _alias,
    },
    join=join_with("."),
    comments=frozenset({"line_comment", "multiline_comment"}),
)
