"""Swift: classes, structs, enums, actors, protocols, extensions (kind impl), functions, inits."""

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

# Swift's grammar parses every nominal type as class_declaration; the keyword tells them apart.
KEYWORD_KINDS = {
    "class": "class",
    "struct": "struct",
    "enum": "enum",
    "actor": "class",
    "extension": "impl",
}


def _type(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    keyword = next((c.type for c in node.children if c.type in KEYWORD_KINDS), "class")
    body = node.child_by_field_name("body")
    return Def(normalise(text(name)), KEYWORD_KINDS[keyword], body, (name,))


def _special(local: str, kind: str) -> Handler:
    def handle(node: Node, _scope: Enclosing) -> Def | None:
        return Def(local, kind, node.child_by_field_name("body"))

    return handle


FAMILY = Family(
    handlers={
        "class_declaration": _type,
        "protocol_declaration": field_def("interface"),
        "function_declaration": method_in_class(field_def("function")),
        "protocol_function_declaration": field_def("method"),
        "init_declaration": _special("init", "constructor"),
        "deinit_declaration": _special("deinit", "method"),
        "typealias_declaration": field_def("type", body="none"),
    },
    join=join_with("."),
    comments=frozenset({"comment", "multiline_comment"}),
)
