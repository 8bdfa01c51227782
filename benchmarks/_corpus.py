"""Real source trees for benchmarks, downloaded once into benchmarks/.cache."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
DJANGO_VERSION = "5.2.8"


def django_tree() -> Path:
    """The unpacked Django sdist (downloaded from PyPI on first use)."""
    target = CACHE / f"django-{DJANGO_VERSION}"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"django-{DJANGO_VERSION}.tar.gz"
    if not sdist.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"django=={DJANGO_VERSION}", "-d", str(CACHE)],
            check=True,
        )  # fmt: skip
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    return target
