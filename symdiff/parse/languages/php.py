"""PHP: `Ns\\Class::method`, `Ns\\function`; classes, interfaces, traits, enums."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import Def, Enclosing, Family, field_def, normalise, text


def join(scope: Enclosing, name: str) -> str:
    """Namespaces join with `\\`, class members with `::`."""
    if scope.name is None:
        return name
    sep = "\\" if scope.kind in ("namespace", "module") else "::"
    return f"{scope.name}{sep}{name}"


def _method(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    kind = "constructor" if text(name).lower() == "__construct" else "method"
    return Def(text(name), kind, node.child_by_field_name("body"), (name,))


def _namespace(node: Node, _scope: Enclosing) -> Def | None:
    name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
    if name is None or body is None:
        return None  # `namespace X;` is the file's prefix, not a block
    return Def(normalise(text(name)), "namespace", body, (name,))


def _file_namespace(root: Node) -> str | None:
    for child in root.named_children:
        if child.type == "namespace_definition" and child.child_by_field_name("body") is None:
            name = child.child_by_field_name("name")
            return None if name is None else normalise(text(name))
    return None


FAMILY = Family(
    handlers={
        "function_definition": field_def("function"),
        "method_declaration": _method,
        "class_declaration": field_def("class"),
        "interface_declaration": field_def("interface"),
        "trait_declaration": field_def("trait"),
        "enum_declaration": field_def("enum"),
        "namespace_definition": _namespace,
    },
    join=join,
    prefix=_file_namespace,
)
