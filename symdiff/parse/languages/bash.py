"""Bash: functions (both `f() {}` and `function f {}`); constructs the grammar cannot parse
(extended globs, `=~` regexes, bracketed expansion patterns) are masked and the text reparsed."""

from __future__ import annotations

from symdiff.parse.languages.engine import Family, field_def, join_with
from symdiff.parse.languages.shmask import recover

FAMILY = Family(
    handlers={"function_definition": field_def("function")},
    join=join_with("."),
    recover=recover,
)
