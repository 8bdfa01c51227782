"""The long-running processes' heap tuning, in a process of its own (it is process-wide)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Rounds of six 4 MiB blocks written (`bytes(n)` would leave its pages untouched), then all
# freed, as a text_diff of two 4 MiB files does (both texts, libgit2's copies of them, xdiff's
# tables): the page faults of rounds 2 to 4.
_FAULTS = """
import resource, sys
from symdiff.record.heap import settle_heap, _keep_freed_memory
if sys.argv[1] == "keep":
    settle_heap(keep_freed_memory=True)
    assert _keep_freed_memory()
else:
    settle_heap()
blocks = [b"x" * (4 << 20) for _ in range(6)]
del blocks
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3):
    blocks = [b"x" * (4 << 20) for _ in range(6)]
    del blocks
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    run = subprocess.run(
        [sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True, check=True
    )
    return int(run.stdout)


@pytest.mark.skipif(
    not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"), reason="glibc only"
)
def test_keeping_freed_memory_spares_the_page_faults_of_the_next_large_block() -> None:
    assert _faults("default") > 3 * 5000  # the heap trimmed each round: 1,024 pages a block
    assert _faults("keep") < 100
