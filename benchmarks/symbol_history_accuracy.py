"""Symbol history against an `ast` oracle on consecutive real releases of real projects.

    .venv/bin/python benchmarks/symbol_history_accuracy.py

Each chain of releases (sdists cached in benchmarks/.cache/sdists, see attribution_accuracy.py)
is replayed into a temporary tree, one `symdiff index` pass per release (the first is the
baseline). For every function and method that exists, once, in the same file in every release,
Python's own parser says in which releases its definition changed (its header or its own body,
the oracle of docs/attribution.md); `symbol_history` must list exactly those releases, and each
version's text (`symbol_source`) must be the definition's whole lines in that release.
"""

from __future__ import annotations

import ast
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from attribution_accuracy import definitions, python_files, sdist

from symdiff.api import index
from symdiff.config import Settings
from symdiff.store import Store
from symdiff.symbols.history import symbol_history, symbol_source

CHAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("attrs", ("23.1.0", "23.2.0", "24.1.0")),
    ("click", ("8.1.7", "8.1.8", "8.2.0")),
    ("flask", ("3.0.3", "3.1.0")),
    ("jinja2", ("3.1.4", "3.1.5")),
)


def _texts(source: bytes) -> dict[str, str]:
    """Each function and method (not nested in a function) -> its whole lines, decorators
    included; names defined twice in the file are left out."""
    lines = source.decode("utf-8").split("\n")
    seen: Counter[str] = Counter()
    out: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                name = prefix + node.name
                seen[name] += 1
                assert node.end_lineno is not None
                out[name] = "\n".join(lines[first - 1 : node.end_lineno]) + "\n"
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return {k: v for k, v in out.items() if seen[k] == 1}


def _replay(root: Path, releases: list[dict[str, bytes]]) -> Settings:
    """Write each release over the tree and index it."""
    settings = Settings(root=root, db_url=f"sqlite:///{root.parent / 'index.db'}", host="bench")
    for files in releases:
        for old in root.rglob("*.py"):
            if str(old.relative_to(root)) not in files:
                old.unlink()
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        index(settings)
    return settings


def check_chain(dist: str, versions: tuple[str, ...]) -> Counter[str]:
    releases = [{k: v for k, v in python_files(sdist(dist, ver)).items()
                 if not k.startswith(("tests/", "docs/", "examples/"))} for ver in versions]
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "ws").resolve()
        root.mkdir()
        settings = _replay(root, releases)
        store = Store(settings.db_url)
        spent = 0.0
        for path in sorted(releases[0]):
            if not all(path in r for r in releases):
                continue
            try:
                texts = [_texts(r[path]) for r in releases]
                defs = [{d.name: d for d in definitions(r[path])} for r in releases]
            except (SyntaxError, UnicodeDecodeError):
                continue
            for name in texts[0]:
                if not all(name in t for t in texts):
                    continue
                tally["definitions"] += 1
                changed = [k for k in range(1, len(releases))
                           if (defs[k][name].header, defs[k][name].body)
                           != (defs[k - 1][name].header, defs[k - 1][name].body)]  # fmt: skip
                t0 = time.perf_counter()
                answer = symbol_history(settings, name, path=path, limit=500, store=store)
                spent += time.perf_counter() - t0
                tally["queries"] += 1
                got = list(reversed(answer.versions)) if answer.status == "found" else []
                if len(got) != len(changed):
                    tally["versions differ"] += 1
                    if tally["versions differ"] <= 5:
                        print(f"  {dist} {path} {name}: oracle {changed}, symdiff "
                              f"{[v['change_type'] for v in got]} ({answer.status})")
                    continue
                tally["versions agree"] += 1
                tally["versions"] += len(got)
                for k, v in zip(changed, got, strict=True):
                    shown = symbol_source(settings, name, version=int(str(v["version"])),
                                          path=path, store=store)  # fmt: skip
                    if shown["source"] == texts[k][name]:
                        tally["texts identical"] += 1
                    else:
                        tally["texts differ"] += 1
        tally["ms"] += int(spent * 1000)
        store.close()
    return tally


def main() -> None:
    total: Counter[str] = Counter()
    for dist, versions in CHAINS:
        started = time.perf_counter()
        tally = check_chain(dist, versions)
        print(f"{dist} {' -> '.join(versions)}: {tally['definitions']} definitions, "
              f"{tally['versions agree']} with the oracle's versions, {tally['versions differ']} "
              f"not; {tally['versions']} versions, {tally['texts identical']} texts identical, "
              f"{tally['texts differ']} not; symbol_history "
              f"{tally['ms'] / max(tally['queries'], 1):.2f} ms each with diffs "
              f"({time.perf_counter() - started:.0f} s)")
        total += tally
    print(f"all: {total['definitions']} definitions, {total['versions agree']} agree, "
          f"{total['versions differ']} differ; {total['versions']} versions, "
          f"{total['texts identical']} texts identical, {total['texts differ']} differ")


if __name__ == "__main__":
    main()
