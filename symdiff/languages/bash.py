"""Bash: functions (both `f() {}` and `function f {}`)."""

from __future__ import annotations

from symdiff.languages.engine import Family, field_def, join_with

FAMILY = Family(
    handlers={"function_definition": field_def("function")},
    join=join_with("."),
)
