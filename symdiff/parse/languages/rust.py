"""Rust: `mod::Type::method`; methods of `impl Trait for Type` live under `<Type as Trait>`."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    field_def,
    first_child,
    join_with,
    method_in_class,
    normalise,
    text,
)

join = join_with("::")


def _base_type(node: Node | None) -> str | None:
    """`Wrapper<T>` -> `Wrapper`, `&'a mut fmt::Formatter` -> `fmt::Formatter`."""
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type"):
        node = node.child_by_field_name("type") or first_child(
            node, ("type_identifier", "scoped_type_identifier", "generic_type")
        )
    return None if node is None else normalise(text(node))


def _impl(node: Node, scope: Enclosing) -> Def | None:
    # Two trait impls may both define `fmt`; the trait keeps their names apart, as Rust's own
    # `<Type as Trait>` paths do.
    owner = _base_type(node.child_by_field_name("type"))
    if owner is None:
        return None
    trait = node.child_by_field_name("trait")
    qname = join(scope, owner)
    if trait is not None:
        qname = f"<{qname} as {normalise(text(trait))}>"
    return Def(qname, "impl", node.child_by_field_name("body"), absolute=True)


def _macro(node: Node, _scope: Enclosing) -> Def | None:
    # `macro_rules! name {` is the header; the rules are the body.
    name = node.child_by_field_name("name")
    if name is None:
        return None
    return Def(text(name), "macro", first_child(node, ("macro_rule",)), (name,))


FUNCTION = method_in_class(field_def("function"))

FAMILY = Family(
    handlers={
        "function_item": FUNCTION,
        "function_signature_item": FUNCTION,
        "struct_item": field_def("struct"),
        "union_item": field_def("struct"),
        "enum_item": field_def("enum"),
        "trait_item": field_def("trait"),
        "impl_item": _impl,
        "mod_item": field_def("module"),
        "type_item": field_def("type", body="none"),
        "macro_definition": _macro,
    },
    join=join,
    comments=frozenset({"line_comment", "block_comment"}),
    leading=frozenset({"attribute_item"}),
)
