"""A path's scope by test conventions: the defaults, extra patterns and `!` exceptions, asked
again (the answers are memoised per path and pattern set)."""

from __future__ import annotations

from symdiff.model import Scope
from symdiff.parse.testpaths import classify


def test_conventions_extras_and_exceptions_asked_again() -> None:
    for _ in range(2):
        assert classify("pkg/tests/helpers.py") is Scope.TEST
        assert classify("pkg/test_io.py") is Scope.TEST
        assert classify("pkg/io.py") is Scope.IMPL
        assert classify("pkg/io.py", ["pkg/*.py"]) is Scope.TEST
        assert classify("pkg/io.py", ("pkg/*.py", "!pkg/io.py")) is Scope.IMPL
        assert classify("pkg/test_io.py", ["!pkg/test_io.py"]) is Scope.IMPL
        assert classify("pkg/io.py") is Scope.IMPL  # the extras of one call stay with it
