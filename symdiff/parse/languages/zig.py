"""Zig: functions (`fn`, `pub fn`, `extern fn`), and the structs, enums, unions and opaques that
Zig binds to names (`const Point = struct { … }`), whose functions are methods (`Point.init`).
"""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import CLASSLIKE, Def, Enclosing, Family, join_with, text

CONTAINERS = {"struct": "struct", "enum": "enum", "union": "struct", "opaque": "struct"}


def _first(node: Node | None, kind: str) -> Node | None:
    if node is None:
        return None
    return next((c for c in node.named_children if c.type == kind), None)


def _container(value: Node | None) -> Node | None:
    """The `struct { … }` a declaration binds, through Zig's expression wrappers."""
    while value is not None and value.type in ("ErrorUnionExpr", "SuffixExpr"):
        value = value.named_children[0] if value.named_child_count else None
    return value if value is not None and value.type == "ContainerDecl" else None


def _decl(node: Node, scope: Enclosing) -> Def | None:
    found = _definition(node, scope)
    prev = node.prev_sibling
    if found is not None and prev is not None and prev.type == "pub":
        found.start = prev  # the grammar leaves `pub` outside the declaration
    return found


def _definition(node: Node, scope: Enclosing) -> Def | None:
    proto = _first(node, "FnProto")
    if proto is not None:
        name = proto.child_by_field_name("function")
        if name is None:
            return None
        kind = "method" if scope.kind in CLASSLIKE else "function"
        return Def(text(name), kind, _first(node, "Block"), (name,))
    var = _first(node, "VarDecl")
    name = var.child_by_field_name("variable_type_function") if var is not None else None
    container = _container(_first(var, "ErrorUnionExpr"))
    if name is None or container is None:
        return None
    head = _first(container, "ContainerDeclType")
    word = text(head).split("(")[0].strip() if head is not None else ""
    members = [c for c in container.named_children if c.type != "ContainerDeclType"]
    body = members[0] if members else None
    return Def(text(name), CONTAINERS.get(word, "struct"), body, (name,))


FAMILY = Family(
    handlers={"Decl": _decl},
    join=join_with("."),
    comments=frozenset({"line_comment", "doc_comment", "container_doc_comment"}),
)
