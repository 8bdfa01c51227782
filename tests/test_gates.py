"""The gates run with the tests: ruff on the code, tests and benchmarks; mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    res = _run(str(BIN / "ruff"), "check", "symdiff", "tests", "migrations", "benchmarks")
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy_strict_is_clean() -> None:
    res = _run(str(BIN / "mypy"), "--no-error-summary")
    assert res.returncode == 0, res.stdout + res.stderr
