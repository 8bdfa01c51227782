"""`against` on a Django-size tree with 200 changed files, beside `git diff --numstat -M REF`.

    .venv/bin/python benchmarks/against_speed.py [--changed 200] [--runs 5]

Builds a git repository from the Django sdist (benchmarks/_corpus.py) in a temporary directory,
commits it, then changes 200 Python files in the work tree: 170 edited (a function body and a
signature), 20 renamed with `git mv` and edited, 10 deleted. Prints the median wall time of
`diff(DiffQuery(against="HEAD", scope="all", limit=500))` — the whole answer: git's comparison,
line counts and symbol changes, the symbol caches emptied before each run — beside `git diff
--numstat -M HEAD` (counts only), the share spent on symbols (the same comparison with symbol
extraction switched off), and the same question asked again with the caches warm.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _corpus import django_tree

from symdiff import filechange
from symdiff.config import Settings
from symdiff.query import DiffQuery, diff

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "b",
       "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def build(target: Path, changed: int) -> list[Path]:
    shutil.copytree(django_tree(), target)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-qm", "django")
    files = sorted(p for p in target.rglob("*.py") if "\ndef " in p.read_text(errors="replace"))
    picked = files[:: max(1, len(files) // changed)][:changed]
    for i, path in enumerate(picked):
        text = path.read_text()
        text = text.replace("\ndef ", f"\ndef _touched_{i}(a, b):\n    return a + b\n\n\ndef ", 1)
        text = text.replace("    return ", "    return  ", 1)
        if i % 20 == 19:
            path.unlink()
            continue
        path.write_text(text)
        if i % 10 == 4:
            git(target, "mv", str(path.relative_to(target)),
                str(path.relative_to(target)).removesuffix(".py") + "_moved.py")
    return picked


def cold() -> None:
    """Forget the symbol caches (by content hash), so every run parses as a first call does."""
    extract = importlib.import_module("symdiff.extract")  # the package re-exports a function
    attribute = importlib.import_module("symdiff.attribute")
    extract._cache.clear()
    extract._cache_held = 0
    attribute._memo.clear()
    attribute._memo_held = 0


def timed(fn: Callable[[], object], runs: int, *, warm: bool = False) -> tuple[float, object]:
    out = fn()
    times = []
    for _ in range(runs):
        if not warm:
            cold()
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "django"
        build(root, args.changed)
        tracked = len(git(root, "ls-files").splitlines())
        settings = Settings.resolve(str(root))
        query = DiffQuery(against="HEAD", scope="all", limit=500)
        ours, answer = timed(lambda: diff(settings, query).records, args.runs)
        again, _ = timed(lambda: diff(settings, query).records, args.runs, warm=True)
        peer, out = timed(lambda: git(root, "diff", "--numstat", "-M", "HEAD"), args.runs)
        real = filechange.file_symbols
        filechange.file_symbols = lambda *a: ()  # type: ignore[assignment]
        try:
            bare, _ = timed(lambda: diff(settings, query).records, args.runs)
        finally:
            filechange.file_symbols = real
        assert isinstance(answer, list) and isinstance(out, str)
        print(f"tree: {tracked} tracked files, {len(answer)} differ "
              f"(git diff lists {len(out.splitlines())})")
        print(f"against HEAD (records with symbols): {ours * 1000:8.1f} ms")
        print(f"  of which symbols:                   {(ours - bare) * 1000:8.1f} ms")
        print(f"  asked again (symbols cached):       {again * 1000:8.1f} ms")
        print(f"git diff --numstat -M HEAD:          {peer * 1000:8.1f} ms")
        print(f"ratio: {ours / peer:.2f}x  (without symbols: {bare / peer:.2f}x)")


if __name__ == "__main__":
    main()
