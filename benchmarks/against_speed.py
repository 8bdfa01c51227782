"""`against` on a Django-size tree with 200 changed files, beside `git diff --numstat -M REF`.

    .venv/bin/python benchmarks/against_speed.py [--changed 200] [--runs 5]

Builds a git repository from the Django sdist (benchmarks/_corpus.py) in a temporary directory,
commits it, then changes 200 Python files in the work tree: 170 edited (a function body and a
signature), 20 renamed with `git mv` and edited, 10 deleted. Prints the median wall time of
`diff(DiffQuery(against="HEAD", scope="all", limit=500))` — the whole answer: git's comparison,
line counts and symbol changes, the symbol caches emptied before each run — beside `git diff
--numstat -M HEAD` (counts only), the share spent on symbols (the same comparison with symbol
extraction switched off, as a first call and asked again in the same process: blobs, rename
scores and test paths held by content), the same question asked again with the caches warm,
and the floor
of any tree-sitter-based answer: tree-sitter's parse alone of both versions of each file, and
of one version per file (a lower bound: each file's first version is parsed from scratch, the
other may be re-parsed from its tree). Wall and CPU time (this process's and git's, which is a
child): CPU time is what other work on a shared machine disturbs least.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
from _caches import cold
from _corpus import django_tree
from tree_sitter_language_pack import get_parser

from symdiff.attribute import filechange
from symdiff.config import Settings
from symdiff.query import against
from symdiff.query.answer import DiffQuery, diff

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


def changed_texts(root: Path) -> list[list[bytes]]:
    """Per changed file, its versions (HEAD's, then the work tree's): what any tree-sitter-based
    answer must parse. Each file's first version at least from scratch; the other may be
    re-parsed from its tree, as symdiff does (reparse.py)."""
    repo = pygit2.Repository(str(root))
    head = repo.revparse_single("HEAD").peel(pygit2.Tree)
    files = []
    for line in git(root, "diff", "--name-status", "HEAD").splitlines():
        status, path = line.split("\t")[0], line.split("\t")[-1]
        if status.startswith("R"):
            old_path = line.split("\t")[1]
            files.append([repo[head[old_path].id].read_raw(), (root / path).read_bytes()])
        elif status == "D":
            files.append([repo[head[path].id].read_raw()])
        elif status == "A":
            files.append([(root / path).read_bytes()])
        else:
            files.append([repo[head[path].id].read_raw(), (root / path).read_bytes()])
    return files


Times = tuple[float, float]  # (wall, cpu) seconds


def cpu_seconds() -> float:
    """User and system time of this process and its children, to the microsecond (os.times
    counts in 10 ms ticks, a tenth of git's whole run here)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(fn: Callable[[], object], runs: int, *, warm: bool = False) -> tuple[Times, object]:
    """Medians of wall and CPU time (this process's and its children's: git runs as a child)."""
    out = fn()
    walls, cpus = [], []
    for _ in range(runs):
        if not warm:
            cold()
        before, started = cpu_seconds(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - before)
    return (statistics.median(walls), statistics.median(cpus)), out


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
        # Symbols off: each record's own extraction, and the batch parse before the records
        # (query/against.py's _parse, through the parse pool) that fills what they read.
        real, real_batch = filechange.file_symbols, against._parse
        filechange.file_symbols = lambda *a: ()  # type: ignore[assignment]
        against._parse = lambda *a: None  # type: ignore[assignment]
        try:
            bare, _ = timed(lambda: diff(settings, query).records, args.runs)
            bare_again, _ = timed(lambda: diff(settings, query).records, args.runs, warm=True)
        finally:
            filechange.file_symbols, against._parse = real, real_batch
        files, parser = changed_texts(root), get_parser("python")
        texts = [text for versions in files for text in versions]
        firsts = [versions[0] for versions in files]
        floor, _ = timed(lambda: [parser.parse(text) for text in texts], args.runs, warm=True)
        least, _ = timed(lambda: [parser.parse(text) for text in firsts], args.runs, warm=True)
        assert isinstance(answer, list) and isinstance(out, str)
        print(f"tree: {tracked} tracked files, {len(answer)} differ "
              f"(git diff lists {len(out.splitlines())}); medians of {args.runs}")
        print("                                            wall        cpu")
        rows = [("against HEAD (records with symbols)", ours), ("  without symbols", bare),
                ("  without symbols, asked again", bare_again),
                ("  asked again (symbols cached)", again), ("git diff --numstat -M HEAD", peer),
                (f"tree-sitter parse alone ({len(texts)} versions)", floor),
                (f"  one version per file ({len(firsts)})", least)]  # fmt: skip
        for label, (wall, cpu) in rows:
            print(f"{label:38} {wall * 1000:8.1f} ms {cpu * 1000:8.1f} ms")
        for k, name in ((0, "wall"), (1, "cpu")):
            print(f"ratio to git diff, {name}: {ours[k] / peer[k]:.2f}x (warm "
                  f"{again[k] / peer[k]:.2f}x, without symbols {bare[k] / peer[k]:.2f}x, asked "
                  f"again {bare_again[k] / peer[k]:.2f}x, "
                  f"parse alone {floor[k] / peer[k]:.2f}x, one version per file "
                  f"{least[k] / peer[k]:.2f}x)")


if __name__ == "__main__":
    main()
