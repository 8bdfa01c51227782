"""C#: namespaces (also file-scoped), types, methods, constructors, properties, operators."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    field_def,
    first_child,
    join_with,
    normalise,
    text,
)

TYPE_KINDS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "struct_declaration": "struct",
    "record_declaration": "class",
    "record_struct_declaration": "struct",
    "enum_declaration": "enum",
}
MEMBER_KINDS = {
    "method_declaration": "method",
    "constructor_declaration": "constructor",
    "destructor_declaration": "method",
    "property_declaration": "property",
    "indexer_declaration": "property",
    "event_declaration": "property",
    "local_function_statement": "function",
    "delegate_declaration": "type",
}


def _member(node: Node, scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body") or node.child_by_field_name("accessors")
    if body is None:
        body = first_child(node, ("arrow_expression_clause", "accessor_list"))
    local = "~" + text(name) if node.type == "destructor_declaration" else text(name)
    return Def(local, MEMBER_KINDS[node.type], body, (name,))


def _operator(node: Node, _scope: Enclosing) -> Def | None:
    """`operator +` and conversion operators, named by their operator or target type."""
    op = node.child_by_field_name("operator") or node.child_by_field_name("type")
    if op is None:
        return None
    body = node.child_by_field_name("body") or first_child(node, ("arrow_expression_clause",))
    return Def(normalise(f"operator {text(op)}"), "method", body, ())


def _file_namespace(root: Node) -> str | None:
    namespace = first_child(root, ("file_scoped_namespace_declaration",))
    name = None if namespace is None else namespace.child_by_field_name("name")
    return None if name is None else normalise(text(name))


HANDLERS = {kind: field_def(value) for kind, value in TYPE_KINDS.items()}
HANDLERS.update({kind: _member for kind in MEMBER_KINDS})
HANDLERS["operator_declaration"] = _operator
HANDLERS["conversion_operator_declaration"] = _operator
HANDLERS["namespace_declaration"] = field_def("namespace")

FAMILY = Family(
    handlers=HANDLERS,
    join=join_with("."),
    prefix=_file_namespace,
)
