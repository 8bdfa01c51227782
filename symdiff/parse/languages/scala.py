"""Scala: classes, objects, traits, enums, defs, type aliases."""

from __future__ import annotations

from symdiff.parse.languages.engine import Family, field_def, join_with, method_in_class

FUNCTION = method_in_class(field_def("function"))

FAMILY = Family(
    handlers={
        "class_definition": field_def("class"),
        "object_definition": field_def("object"),
        "trait_definition": field_def("trait"),
        "enum_definition": field_def("enum"),
        "function_definition": FUNCTION,
        "function_declaration": FUNCTION,
        "type_definition": field_def("type", body="none"),
    },
    join=join_with("."),
    comments=frozenset({"comment", "block_comment"}),
)
