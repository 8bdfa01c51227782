"""Oracle: the symbols of every file in a tree, extracted by this code and by a git revision's.

Run: .venv/bin/python benchmarks/extract_oracle.py [TREE] [--against REV] [--ext .py]
(default tree: the Django 5.2.8 sdist, as in extract_speed.py; default revision: HEAD~1).
The revision's `symdiff` package is exported with `git archive` into a temporary folder and
run in a child process, so both sides see the same installed tree-sitter. Exits 1, naming the
first files that differ, unless every file gives identical symbols (every field compared).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from _corpus import django_tree

from symdiff.parse.languages import language_for

REPO = Path(__file__).resolve().parent.parent

# Run by both sides: one JSON line per file, every Symbol field in order.
_DUMP = """
import dataclasses, json, sys
from symdiff.parse.extract import extract_uncached
for line in sys.stdin:
    language, path = json.loads(line)
    with open(path, "rb") as f:
        symbols = extract_uncached(language, f.read())
    print(json.dumps([dataclasses.astuple(s) for s in symbols]))
"""


def dump(package_root: Path, files: list[tuple[str, str]]) -> list[str]:
    """Each file's symbols as a JSON line, extracted by the package under `package_root`."""
    feed = "".join(json.dumps(f) + "\n" for f in files)
    done = subprocess.run(
        [sys.executable, "-c", _DUMP],
        input=feed,
        capture_output=True,
        text=True,
        check=True,
        cwd=package_root,
        env={"PYTHONPATH": str(package_root), "PATH": "/usr/bin:/bin"},
    )
    return done.stdout.splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a source tree (default: Django)")
    parser.add_argument("--against", default="HEAD~1", help="the git revision to compare with")
    parser.add_argument("--ext", default=".py", help="which files, by extension ('' for all)")
    args = parser.parse_args()
    tree: Path = (args.tree or django_tree()).resolve()
    files = []
    for path in sorted(tree.rglob(f"*{args.ext}")):
        language = language_for(path.name)
        if path.is_file() and language is not None:
            files.append((language, str(path)))
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", args.against, "symdiff"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as old_root:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(old_root, filter="data")
        theirs = dump(Path(old_root), files)
    ours = dump(REPO, files)
    differ = [path for (_, path), a, b in zip(files, ours, theirs, strict=True) if a != b]
    symbols = sum(len(json.loads(line)) for line in ours)
    print(f"{len(files)} files, {symbols} symbols; against {args.against}: {len(differ)} differ")
    for path in differ[:10]:
        print("  differs:", path)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
