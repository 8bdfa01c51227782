"""Java: classes, interfaces, enums, records, methods, constructors; annotations lead."""

from __future__ import annotations

from symdiff.parse.languages.engine import Family, field_def, join_with

CONSTRUCTOR = field_def("constructor")

FAMILY = Family(
    handlers={
        "class_declaration": field_def("class"),
        "interface_declaration": field_def("interface"),
        "annotation_type_declaration": field_def("interface"),
        "enum_declaration": field_def("enum"),
        "record_declaration": field_def("class"),
        "method_declaration": field_def("method"),
        "annotation_type_element_declaration": field_def("method", body="none"),
        "constructor_declaration": CONSTRUCTOR,
        "compact_constructor_declaration": CONSTRUCTOR,
    },
    join=join_with("."),
    comments=frozenset({"line_comment", "block_comment"}),
)
