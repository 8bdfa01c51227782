"""Test or implementation: a path's scope by the test conventions of its language."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import pathspec

from symdiff.model import Scope

# gitignore-style patterns: a trailing `/` matches a directory of that name at any depth.
TEST_PATTERNS: tuple[str, ...] = (
    # directories
    "tests/", "test/", "__tests__/", "testdata/", "spec/", "specs/", "src/test/", "__mocks__/",
    # Python
    "test_*.py", "*_test.py", "conftest.py",
    # Go
    "*_test.go",
    # JavaScript / TypeScript
    "*.test.js", "*.test.jsx", "*.test.mjs", "*.test.cjs", "*.test.ts", "*.test.tsx",
    "*.spec.js", "*.spec.jsx", "*.spec.mjs", "*.spec.ts", "*.spec.tsx",
    # JVM, .NET, PHP, Swift
    "*Test.java", "*Tests.java", "*IT.java", "*Test.kt", "*Tests.kt", "*Spec.scala", "*Test.scala",
    "*Suite.scala", "*Tests.cs", "*Test.cs", "*Test.php", "*Tests.swift", "*Test.swift",
    # Ruby, Rust, C/C++, shell
    "*_spec.rb", "*_test.rb", "test_*.rb", "*_test.rs", "*_test.c", "*_test.cc", "*_test.cpp",
    "test_*.c", "test_*.cpp", "*.bats",
)  # fmt: skip


@lru_cache(maxsize=32)
def _spec(extra: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(TEST_PATTERNS + extra)


def classify(path: str, extra_patterns: Sequence[str] = ()) -> Scope:
    """`test` when a workspace-relative POSIX path follows a test convention, else `impl`.

    Extra patterns (gitignore syntax) add conventions; a `!pattern` takes a path back to `impl`.
    """
    return _classify(path, tuple(extra_patterns))


def forget() -> None:
    """Drop the paths classified (for benchmarks: a run as the first one)."""
    _classify.cache_clear()


# Matching a path tries each of some sixty patterns; a record's path is classified when it is
# selected and again when it is built, and `against` asked again meets the same paths.
@lru_cache(maxsize=8192)
def _classify(path: str, extra: tuple[str, ...]) -> Scope:
    return Scope.TEST if _spec(extra).match_file(path) else Scope.IMPL
