"""Run a command that file modes bind, also when the tests run as root (as here and in CI).

Root reads and lists whatever the mode bits say, so `chmod 000` proves nothing in-process. A
child that drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set before it
execs stays uid 0 (it still owns the test's files) but is bound by their modes like any user.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

# Dropped by the child itself before exec, so no preexec_fn runs in a forked, threaded parent.
_DROP = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
    if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        sys.exit(f"cannot drop capability {cap}: {os.strerror(ctypes.get_errno())}")
os.execv(sys.argv[1], sys.argv[1:])
"""


def bound_by_modes(argv: Sequence[str]) -> list[str]:
    """`argv` wrapped so that file modes apply to it (unchanged when not root)."""
    if os.geteuid() != 0:
        return list(argv)
    return [sys.executable, "-c", _DROP, *argv]


def python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python ARGS` bound by file modes; stdout and stderr captured as text."""
    return subprocess.run(bound_by_modes([sys.executable, *args]),
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=120)


def symdiff(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m symdiff ARGS` bound by file modes."""
    return python("-m", "symdiff", *args, env=env)


def popen_symdiff(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start `python -m symdiff ARGS` bound by file modes (for the daemon)."""
    return subprocess.Popen(bound_by_modes([sys.executable, "-m", "symdiff", *args]),
                            env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
