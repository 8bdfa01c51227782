"""Python: functions, methods, classes; decorators lead the definition they wrap."""

from __future__ import annotations

from symdiff.parse.languages.engine import Family, field_def, join_with
from symdiff.parse.languages.quotes import python_quotes

CONTAINERS = frozenset(
    {"module", "block", "decorated_definition", "function_definition", "class_definition",
     "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
     "except_group_clause", "finally_clause", "with_statement", "for_statement",
     "while_statement", "match_statement", "case_clause"}
)  # fmt: skip

FAMILY = Family(
    handlers={
        "function_definition": field_def("function", methods=True),
        "class_definition": field_def("class"),
    },
    join=join_with("."),
    wrappers=frozenset({"decorated_definition"}),
    canonical=python_quotes,
    # Python defines only in statements; these are all the nodes that hold statements.
    containers=CONTAINERS,
    keywords=(b"def", b"class"),
    header_from_bytes=True,
)
