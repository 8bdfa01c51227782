"""Go: `pkg.Func`, `pkg.Type.Method` (receiver type, pointer and type arguments stripped), types."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    field_def,
    first_child,
    join_with,
    text,
)

# The Go type constructor that makes a type spec a struct or an interface.
TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _receiver_type(receiver: Node | None) -> str | None:
    """`r *Pair[K, V]` -> `Pair`."""
    param = None if receiver is None else first_child(receiver, ("parameter_declaration",))
    node = None if param is None else param.child_by_field_name("type")
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") or first_child(
            node, ("type_identifier", "generic_type", "pointer_type")
        )
    return None if node is None else text(node)


def _method(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    owner = _receiver_type(node.child_by_field_name("receiver"))
    if name is None or owner is None:
        return None
    return Def(f"{owner}.{text(name)}", "method", node.child_by_field_name("body"), (name,))


def _type_spec(node: Node, _scope: Enclosing) -> Def | None:
    name, type_node = node.child_by_field_name("name"), node.child_by_field_name("type")
    if name is None or type_node is None:
        return None
    kind = TYPE_KINDS.get(type_node.type, "type")
    # A struct's or interface's members are its body; any other type is all header.
    body = type_node if kind != "type" else None
    return Def(text(name), kind, body, (name,))


def _package(root: Node) -> str | None:
    clause = first_child(root, ("package_clause",))
    ident = None if clause is None else first_child(clause, ("package_identifier",))
    return None if ident is None else text(ident)


FAMILY = Family(
    handlers={
        "function_declaration": field_def("function"),
        "method_declaration": _method,
        "type_spec": _type_spec,
        "type_alias": _type_spec,
    },
    join=join_with("."),
    prefix=_package,
)
