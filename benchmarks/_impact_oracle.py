"""The truth of the impact benchmark: which tests execute each function, from coverage.py.

A project is cloned (real `git`) into benchmarks/.cache/impact/NAME-SHA/src, given a venv of
its own there (its test dependencies from PyPI, plus coverage, pytest-cov and jedi; never
symdiff's venv), and its suite is run once under pytest-cov with a context per test
(`--cov-context=test`: contexts `nodeid|setup`, `nodeid|run`, `nodeid|teardown`, all three
counting for the test). The data file is read with sqlite3 (coverage's own schema: `file`,
`context`, `line_bits` with coverage's "numbits"), so symdiff's venv needs no coverage.

A function's truth is the set of tests that execute at least one line of its BODY: the lines of
its statements after the docstring, minus the bodies of functions nested in it (their `def`
lines and decorators run with it). A parametrised test counts once: its node id without the
`[...]` suffix.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache" / "impact"
TOOLS = ("coverage", "pytest-cov", "jedi", "pytest")
TEST_GROUPS = ("tests", "test", "testing")
NOT_PACKAGES = frozenset({"tests", "test", "testing", "docs", "examples", "scripts", "benchmarks"})


@dataclass(frozen=True)
class Project:
    """A project checked out for the benchmark."""

    name: str
    origin: str  # where it was cloned from (the remote's URL when the clone has one)
    commit: str
    root: Path  # the scratch clone
    venv: Path
    packages: tuple[str, ...]  # implementation package folders, relative to root


@dataclass(frozen=True)
class Function:
    """One function or method, named as symdiff names symbols (`Class.method`, `f.inner`)."""

    path: str  # relative to the project's root, POSIX
    name: str
    def_line: int  # the `def` line of its first definition (overloads, property setters merge)
    name_col: int  # 0-based column of the name on def_line (where jedi is asked)
    span: tuple[int, int]  # first decorator line .. last line, of the first definition
    body: frozenset[int]  # the lines of its body over all its definitions
    edit_at: tuple[int, int]  # (line, indent) where an edit inserts a first body statement


def run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(cmd, cwd=cwd, env=env, check=True, text=True, capture_output=True)


def git(root: Path, *args: str) -> str:
    return run(["git", "-C", str(root), *args]).stdout.strip()


# --- the project -----------------------------------------------------------------------------


def checkout(project_dir: Path, packages: tuple[str, ...] = ()) -> Project:
    """A scratch clone of `project_dir` at its HEAD, cached by commit."""
    commit = git(project_dir, "rev-parse", "HEAD")
    try:
        origin = git(project_dir, "remote", "get-url", "origin")
    except subprocess.CalledProcessError:
        origin = str(project_dir)
    mirror = re.search(r"/([^/+]+)\+([^/]+)/repo/?$", origin)  # a clone of a fetched mirror
    if mirror:
        origin = f"https://github.com/{mirror[1]}/{mirror[2]}"
    name = Path(origin.rstrip("/")).name.removesuffix(".git")
    home = CACHE / f"{name}-{commit[:12]}"
    root = home / "src"
    if not root.exists():
        home.mkdir(parents=True, exist_ok=True)
        run(["git", "clone", "--quiet", "--no-checkout", str(project_dir.resolve()), str(root)])
        git(root, "checkout", "--quiet", commit)
    else:
        git(root, "checkout", "--quiet", "--", ".")  # undo an edit a killed run left behind
    return Project(name, origin, commit, root, home / "venv", packages or find_packages(root))


def find_packages(root: Path) -> tuple[str, ...]:
    """Implementation packages: src/*/ with an __init__.py, else such folders at the top."""
    for base in (root / "src", root):
        found = sorted(
            p.parent.relative_to(root).as_posix() for p in base.glob("*/__init__.py")
            if p.parent.name not in NOT_PACKAGES
        )  # fmt: skip
        if found:
            return tuple(found)
    raise SystemExit(f"no package found under {root}; pass --package")


def _group(groups: dict[str, list[object]], name: str) -> list[str]:
    out: list[str] = []
    for item in groups.get(name, []):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and "include-group" in item:
            out.extend(_group(groups, str(item["include-group"])))
    return out


def test_requirements(root: Path) -> list[str]:
    """The project's test dependencies: a `tests`/`test`/`testing` dependency group or extra,
    else requirements/tests.txt or the like (pins and all)."""
    pyproject = root / "pyproject.toml"
    if pyproject.exists():
        data = tomllib.loads(pyproject.read_text())
        groups = data.get("dependency-groups", {})
        extras = data.get("project", {}).get("optional-dependencies", {})
        for name in TEST_GROUPS:
            if name in groups:
                return _group(groups, name)
            if name in extras:
                return [f"-e{root}[{name}]"]
    for rel in ("requirements/tests.txt", "requirements/test.txt", "requirements/testing.txt",
                "requirements-test.txt"):
        if (root / rel).exists():
            return ["-r", str(root / rel)]
    return []


def make_venv(project: Project, extra: tuple[str, ...] = ()) -> Path:
    """The project's own venv (made once): itself, editable, its test deps and the tools."""
    python = project.venv / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(project.venv)])
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        run([*pip, "--upgrade", "pip"])
        run([*pip, "-e", str(project.root), *test_requirements(project.root), *TOOLS, *extra])
    return python


def tool_versions(python: Path) -> str:
    code = ("import importlib.metadata as m;"
            f"print(', '.join(d + ' ' + m.version(d) for d in {TOOLS!r}))")  # fmt: skip
    return run([str(python), "-c", code]).stdout.strip()


# --- the suite under coverage ----------------------------------------------------------------


def _own_config(project: Project) -> list[str]:
    """pytest's rootdir is the clone; without a pytest config of its own there, an empty one
    (else pytest would climb to a config above the clone, such as symdiff's)."""
    root = project.root
    texts = {name: (root / name).read_text() if (root / name).exists() else ""
             for name in ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")}  # fmt: skip
    has = ((root / "pytest.ini").exists() or "[pytest]" in texts["tox.ini"]
           or "[tool:pytest]" in texts["setup.cfg"] or "[tool.pytest" in texts["pyproject.toml"])
    if has:
        return [f"--rootdir={root}"]
    empty = project.venv.parent / "pytest.ini"
    empty.write_text("[pytest]\n")
    return [f"--rootdir={root}", "-c", str(empty)]


def coverage_run(project: Project, python: Path, pytest_args: tuple[str, ...]) -> Path:
    """The suite's coverage data with a context per test, run once and cached."""
    data = project.venv.parent / "coverage.sqlite"
    if data.exists():
        return data
    rc = project.venv.parent / "coveragerc"  # ours, not the project's (no omit, no parallel)
    rc.write_text(f"[run]\ndata_file = {data}.tmp\nbranch = False\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cov = [f"--cov={p}" for p in project.packages]
    res = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         *_own_config(project), *cov, f"--cov-config={rc}", "--cov-context=test",
         "--cov-report=", *pytest_args],
        cwd=project.root, env=env, text=True, capture_output=True,
    )  # fmt: skip
    tail = res.stdout.strip().splitlines()[-1:] or [res.stderr.strip()[-300:]]
    print(f"  suite under coverage: exit {res.returncode}, {tail[0]}", file=sys.stderr)
    if res.returncode not in (0, 1):  # 1: some tests failed, which still ran
        raise SystemExit(res.stdout[-3000:] + res.stderr[-3000:])
    Path(f"{data}.tmp").rename(data)
    return data


def collected_tests(project: Project, python: Path, pytest_args: tuple[str, ...]) -> list[str]:
    """Every test of the suite (collapsed node ids), collected once and cached."""
    cached = project.venv.parent / "collected.json"
    if not cached.exists():
        res = subprocess.run(
            [str(python), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             *_own_config(project), *pytest_args],
            cwd=project.root, text=True, capture_output=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )  # fmt: skip
        ids = sorted({collapse(ln) for ln in res.stdout.splitlines() if "::" in ln})
        cached.write_text(json.dumps(ids))
    return list(json.loads(cached.read_text()))


def collapse(node_id: str) -> str:
    """A node id with its parametrisation (`[...]`) dropped."""
    node_id = node_id.strip()
    if node_id.endswith("]") and "[" in node_id:
        return node_id[: node_id.index("[")]
    return node_id


def numbits(blob: bytes) -> list[int]:
    """coverage.py's numbits: bit j of byte i set means line 8*i + j ran."""
    return [i * 8 + j for i, byte in enumerate(blob) if byte for j in range(8) if byte >> j & 1]


Phases = dict[str, set[str]]  # collapsed test id -> the phases it ran a line in


def executed(data: Path, root: Path) -> dict[str, dict[int, Phases]]:
    """path -> line -> test -> phases: who ran each measured line."""
    db = sqlite3.connect(f"file:{data}?mode=ro", uri=True)
    files = {i: Path(p).resolve() for i, p in db.execute("select id, path from file")}
    contexts = dict(db.execute("select id, context from context"))
    out: dict[str, dict[int, Phases]] = {}
    real_root = root.resolve()
    for file_id, ctx_id, blob in db.execute("select file_id, context_id, numbits from line_bits"):
        context = contexts[ctx_id]
        if not context or file_id not in files or not files[file_id].is_relative_to(real_root):
            continue
        test, _, phase = context.rpartition("|")
        if not test:
            test, phase = context, "run"
        rel = files[file_id].relative_to(real_root).as_posix()
        lines = out.setdefault(rel, {})
        for line in numbits(blob):
            lines.setdefault(line, defaultdict(set))[collapse(test)].add(phase)
    db.close()
    return out


# --- functions, by Python's own parser -------------------------------------------------------

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef
DefNode = FuncNode | ast.ClassDef


def _children(node: ast.AST) -> list[DefNode]:
    """Definitions nested in `node` with no definition between."""
    found: list[DefNode] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, DefNode):
            found.append(child)
        else:
            found.extend(_children(child))
    return found


def _statements(node: FuncNode) -> list[ast.stmt]:
    body = node.body
    first = body[0]
    is_doc = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
              and isinstance(first.value.value, str))  # fmt: skip
    return body[1:] if is_doc else body


def _body_lines(node: FuncNode) -> set[int]:
    lines: set[int] = set()
    for stmt in _statements(node):
        lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    for inner in ast.walk(node):
        if inner is not node and isinstance(inner, FuncNode):
            for stmt in inner.body:
                lines.difference_update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def functions(path: str, source: str) -> list[Function]:
    """Every function and method of a file, qualified as symdiff qualifies symbols."""
    tree = ast.parse(source)
    lines = source.split("\n")
    found: dict[str, Function] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in _children(node):
            name = f"{prefix}{child.name}"
            if isinstance(child, FuncNode):
                add(name, child)
            visit(child, name + ".")

    def add(name: str, node: FuncNode) -> None:
        body = _body_lines(node)
        old = found.get(name)
        if old is not None and old.edit_at[0]:
            found[name] = Function(path, name, old.def_line, old.name_col, old.span,
                                   old.body | body, old.edit_at)  # fmt: skip
            return
        body |= old.body if old is not None else set()  # an overload's `...`: edit this one
        match = re.search(rf"def\s+({re.escape(node.name)})\b", lines[node.lineno - 1])
        col = match.start(1) if match else node.col_offset
        first = _statements(node) or node.body
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        # `def f(): return 1` or `) -> int: ...`: the body shares the header's line; no edit
        one_line = lines[first[0].lineno - 1][: first[0].col_offset].strip() != ""
        decorated = getattr(first[0], "decorator_list", [])  # insert above its decorators
        at = min([first[0].lineno, *(d.lineno for d in decorated)])
        edit_at = (0, 0) if one_line else (at, first[0].col_offset)
        found[name] = Function(path, name, node.lineno, col, (start, node.end_lineno or start),
                               frozenset(body), edit_at)  # fmt: skip

    visit(tree, "")
    return list(found.values())


def enclosing(funcs: list[Function], line: int) -> Function | None:
    """The innermost function whose span holds `line`."""
    inside = [f for f in funcs if f.span[0] <= line <= f.span[1]]
    return max(inside, key=lambda f: f.span[0], default=None)


@dataclass(frozen=True)
class Truth:
    """Per function, the tests that execute its body, and in which phases."""

    funcs: dict[tuple[str, str], Function]  # (path, name) -> the function
    tests: dict[tuple[str, str], Phases]  # (path, name) -> test -> phases


def truth(project: Project, data: Path) -> Truth:
    ran = executed(data, project.root)
    funcs: dict[tuple[str, str], Function] = {}
    tests: dict[tuple[str, str], Phases] = {}
    for path, by_line in sorted(ran.items()):
        source = (project.root / path).read_text(encoding="utf-8")
        for f in functions(path, source):
            funcs[(path, f.name)] = f
            hit: Phases = defaultdict(set)
            for line in f.body & by_line.keys():
                for test, phases in by_line[line].items():
                    hit[test] |= phases
            if hit:
                tests[(path, f.name)] = dict(hit)
    return Truth(funcs, tests)
