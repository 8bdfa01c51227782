"""Attribution accuracy: symdiff's symbol changes against an independent `ast` oracle.

Downloads sdists of consecutive releases of real pure-Python projects (cached in
benchmarks/.cache), pairs their .py files by path, and scores `symbol_changes('python', old,
new)` (function/method/class kinds) against an oracle built on Python's own parser. The
oracle's rules are in docs/attribution.md. Prints precision and recall per change type and a
few disagreements. The peer, PyDriller's `changed_methods` (lizard functions whose span holds an
added or deleted line, kept in a set keyed by name and parameters), is scored in the same run on
functions and methods with the change type ignored, as is symdiff.
Run: .venv/bin/python benchmarks/attribution_accuracy.py [--show N]
"""

from __future__ import annotations

import argparse
import ast
import importlib
import subprocess
import sys
import tarfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symdiff.attribute.spans import symbol_changes
from symdiff.diffs.linediff import diff_lines

CACHE = Path(__file__).parent / ".cache" / "sdists"
PEER = Path(__file__).parent / ".cache" / "peer"
LIZARD = "lizard==1.24.3"  # what PyDriller 2.x computes changed_methods with

# (distribution, old version, new version): consecutive releases.
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("attrs", "23.1.0", "23.2.0"),
    ("attrs", "23.2.0", "24.1.0"),
    ("click", "8.1.7", "8.1.8"),
    ("click", "8.1.8", "8.2.0"),
    ("requests", "2.31.0", "2.32.0"),
    ("requests", "2.32.3", "2.32.4"),
    ("rich", "13.9.4", "14.0.0"),
    ("rich", "13.7.1", "13.8.0"),
    ("flask", "3.0.3", "3.1.0"),
    ("jinja2", "3.1.4", "3.1.5"),
)
KINDS = frozenset({"function", "method", "class"})
TYPES = ("added", "removed", "modified", "signature_changed")

Record = tuple[str, str]  # (qualified name, change type)


# --- fetching --------------------------------------------------------------------------------


def sdist(dist: str, version: str) -> Path:
    """The cached sdist of one release, downloaded on first use."""
    CACHE.mkdir(parents=True, exist_ok=True)
    for p in CACHE.iterdir():
        if p.name.lower().replace("_", "-").startswith(f"{dist}-{version}.".lower()):
            return p
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         f"{dist}=={version}", "-d", str(CACHE)],
        check=True,
    )  # fmt: skip
    return sdist(dist, version)


def python_files(archive: Path) -> dict[str, bytes]:
    """The .py files of an sdist, keyed by path without the top-level directory."""
    out: dict[str, bytes] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                f = tar.extractfile(member)
                if f is not None:
                    out[member.name.split("/", 1)[1]] = f.read()
    return out


# --- the oracle ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Definition:
    """One definition as Python's own parser sees it."""

    name: str
    header: str
    body: tuple[str, ...]
    line: int  # the `def`/`class` line, where lizard starts a function
    is_class: bool


DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _span(node: DefNode) -> tuple[int, int]:
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    assert node.end_lineno is not None
    return start, node.end_lineno


def _header(node: DefNode) -> str:
    decorators = [ast.dump(d) for d in node.decorator_list]
    if isinstance(node, ast.ClassDef):
        parts = ["class", *decorators, *map(ast.dump, node.bases), *map(ast.dump, node.keywords)]
    else:
        returns = ast.dump(node.returns) if node.returns else ""
        kind = "async" if isinstance(node, ast.AsyncFunctionDef) else "def"
        parts = [kind, *decorators, ast.dump(node.args), returns]
    return "\x00".join(parts)


def _children(node: ast.AST) -> list[DefNode]:
    """Definitions nested in `node` with no definition between."""
    found: list[DefNode] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, DefNode):
            found.append(child)
        else:
            found.extend(_children(child))
    return found


def _own_body(lines: list[str], node: DefNode) -> tuple[str, ...]:
    """Raw source lines of the definition minus nested definitions', blank ones dropped,
    with the indentation they all share removed."""
    start, end = _span(node)
    skip: set[int] = set()
    for child in _children(node):
        c_start, c_end = _span(child)
        skip.update(range(c_start, c_end + 1))
    kept = [lines[n - 1] for n in range(start, end + 1) if n not in skip and lines[n - 1].strip()]
    common = min((len(s) - len(s.lstrip(" \t")) for s in kept), default=0)
    prefix = kept[0][:common] if kept else ""
    while prefix and not all(s.startswith(prefix) for s in kept):
        prefix = prefix[:-1]
    return tuple(s[len(prefix) :] for s in kept)


def definitions(source: bytes) -> list[Definition]:
    """Every function/class definition, qualified by the definitions enclosing it."""
    tree = ast.parse(source)
    # Split exactly where git and symdiff split lines, so line numbers agree with ast's.
    lines = [ln.rstrip("\r") for ln in source.decode("utf-8").split("\n")]
    out: list[Definition] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in _children(node):
            name = f"{prefix}{child.name}"
            is_class = isinstance(child, ast.ClassDef)
            out.append(
                Definition(name, _header(child), _own_body(lines, child), child.lineno, is_class)
            )
            visit(child, name + ".")

    visit(tree, "")
    return out


def oracle(old: bytes | None, new: bytes | None) -> Counter[Record]:
    """The symbol changes Python's own parser implies, matched by qualified name and order."""
    olds = definitions(old) if old is not None else []
    news = definitions(new) if new is not None else []
    by_name_old: dict[str, list[Definition]] = {}
    by_name_new: dict[str, list[Definition]] = {}
    for d in olds:
        by_name_old.setdefault(d.name, []).append(d)
    for d in news:
        by_name_new.setdefault(d.name, []).append(d)
    out: Counter[Record] = Counter()
    for name in by_name_old.keys() | by_name_new.keys():
        o, n = by_name_old.get(name, []), by_name_new.get(name, [])
        for a, b in zip(o, n, strict=False):
            if a.header != b.header:
                out[(name, "signature_changed")] += 1
            elif a.body != b.body:
                out[(name, "modified")] += 1
        out[(name, "removed")] += max(len(o) - len(n), 0)
        out[(name, "added")] += max(len(n) - len(o), 0)
    return +out


def symdiff_records(old: bytes | None, new: bytes | None) -> Counter[Record]:
    """symdiff's symbol changes of the kinds the oracle knows."""
    return Counter(
        (c.name, c.change_type.value) for c in symbol_changes("python", old, new) if c.kind in KINDS
    )


# --- the peer: PyDriller's changed_methods ---------------------------------------------------


def lizard_module() -> Any:
    """lizard, installed into the benchmark cache on first use (never into the project)."""
    if not PEER.exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(PEER), LIZARD],
            check=True,
        )
    sys.path.insert(0, str(PEER))
    return importlib.import_module("lizard")


def peer_changed(lizard: Any, old: bytes | None, new: bytes | None) -> Counter[str]:
    """PyDriller's changed methods, named by the oracle definition starting on the same line."""
    diff = diff_lines(old or b"", new or b"")
    deleted = [n for h in diff.hunks for n in h.removed]
    added = [n for h in diff.hunks for n in h.added]
    found: dict[tuple[str, tuple[str, ...]], str] = {}  # PyDriller's set: name + parameters
    for source, lines in ((new, added), (old, deleted)):
        if source is None:
            continue
        qualified = {d.line: d.name for d in definitions(source) if not d.is_class}
        info = lizard.analyze_file.analyze_source_code("x.py", source.decode("utf-8"))
        for fn in info.function_list:
            if any(fn.start_line <= n <= fn.end_line for n in lines):
                name = qualified.get(fn.start_line, f"?{fn.name}")
                found.setdefault((fn.name, tuple(fn.parameters)), name)
    return Counter(found.values())


def changed_functions(records: Counter[Record], classes: set[str]) -> Counter[str]:
    """Names of functions and methods with any change, as the peer's score counts them."""
    out: Counter[str] = Counter()
    for (name, _kind), n in records.items():
        if name not in classes:
            out[name] += n
    return out


# --- scoring ---------------------------------------------------------------------------------


@dataclass
class Score:
    """True positives, and counts on each side, per change type."""

    tp: Counter[str]
    predicted: Counter[str]
    expected: Counter[str]


def parses(source: bytes | None) -> bool:
    if source is None:
        return True
    try:
        ast.parse(source)
        source.decode("utf-8")
    except (SyntaxError, ValueError):
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=10, help="disagreements to print")
    args = parser.parse_args()

    score = Score(Counter(), Counter(), Counter())
    fn_score = {"symdiff": Score(Counter(), Counter(), Counter()),
                "pydriller": Score(Counter(), Counter(), Counter())}  # fmt: skip
    lizard = lizard_module()
    disagreements: list[str] = []
    files = 0
    elapsed = 0.0
    for dist, v_old, v_new in PAIRS:
        old_files = python_files(sdist(dist, v_old))
        new_files = python_files(sdist(dist, v_new))
        for path in sorted(old_files.keys() | new_files.keys()):
            old, new = old_files.get(path), new_files.get(path)
            if old == new or not (parses(old) and parses(new)):
                continue
            files += 1
            expected = oracle(old, new)
            t0 = time.perf_counter()
            got = symdiff_records(old, new)
            elapsed += time.perf_counter() - t0
            for (_name, kind), n in (got & expected).items():
                score.tp[kind] += n
            for (_name, kind), n in got.items():
                score.predicted[kind] += n
            for (_name, kind), n in expected.items():
                score.expected[kind] += n
            classes = {
                d.name for src in (old, new) if src is not None
                for d in definitions(src) if d.is_class
            }  # fmt: skip
            fn_expected = changed_functions(expected, classes)
            for who, fn_got in (
                ("symdiff", changed_functions(got, classes)),
                ("pydriller", peer_changed(lizard, old, new)),
            ):
                fn_score[who].tp["any"] += sum((fn_got & fn_expected).values())
                fn_score[who].predicted["any"] += sum(fn_got.values())
                fn_score[who].expected["any"] += sum(fn_expected.values())
            tag = f"{dist} {v_old}->{v_new} {path}"
            disagreements += [f"  extra   {tag}: {r}" for r in (got - expected).elements()]
            disagreements += [f"  missing {tag}: {r}" for r in (expected - got).elements()]

    print(f"{len(PAIRS)} release pairs, {files} changed .py files, symdiff time {elapsed:.2f} s")
    print(f"{'change type':<18} {'oracle':>7} {'symdiff':>7} {'agree':>7} {'precision':>9} "
          f"{'recall':>7}")  # fmt: skip
    for kind in (*TYPES, "overall"):
        if kind == "overall":
            tp, pr, ex = (sum(c.values()) for c in (score.tp, score.predicted, score.expected))
        else:
            tp, pr, ex = score.tp[kind], score.predicted[kind], score.expected[kind]
        precision = tp / pr if pr else 1.0
        recall = tp / ex if ex else 1.0
        print(f"{kind:<18} {ex:>7} {pr:>7} {tp:>7} {precision:>9.4f} {recall:>7.4f}")
    print("functions and methods, change type ignored (the peer has no change types):")
    for who, sc in fn_score.items():
        tp, pr, ex = sc.tp["any"], sc.predicted["any"], sc.expected["any"]
        precision, recall = tp / pr if pr else 1.0, tp / ex if ex else 1.0
        print(f"  {who:<10} oracle {ex}  found {pr}  agree {tp}  "
              f"precision {precision:.4f}  recall {recall:.4f}")  # fmt: skip
    print(f"disagreements: {len(disagreements)}")
    for line in disagreements[: args.show]:
        print(line)


if __name__ == "__main__":
    main()
