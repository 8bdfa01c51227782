"""Python: functions, methods, classes; decorators lead the definition they wrap."""

from __future__ import annotations

from symdiff.parse.languages.engine import Family, field_def, join_with
from symdiff.parse.languages.quotes import python_quotes

FAMILY = Family(
    handlers={
        "function_definition": field_def("function", methods=True),
        "class_definition": field_def("class"),
    },
    join=join_with("."),
    comment_marks=(b"#",),
    wrappers=frozenset({"decorated_definition"}),
    wrapper_mark=b"@",
    canonical=python_quotes,
    keywords=(b"def", b"class"),
    header_from_bytes=True,
)
