"""Python: functions, methods, classes; decorators lead the definition they wrap."""

from __future__ import annotations

from symdiff.languages._engine import Family, field_def, join_with, method_in_class
from symdiff.languages.quotes import python_quotes

FAMILY = Family(
    handlers={
        "function_definition": method_in_class(field_def("function")),
        "class_definition": field_def("class"),
    },
    join=join_with("."),
    wrappers=frozenset({"decorated_definition"}),
    literals=python_quotes,
)
