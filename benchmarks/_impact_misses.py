"""Why `impact` missed a test that executes a function: tags read from the project's code (ast)
and from the coverage truth.

The first tag that applies is the miss's reason:
- `collected where imported`: the test's class or function is defined in another test file and
  imported into this one, where pytest collects it again (`from test_x import TestC` in
  test_y.py gives `test_y.py::TestC::test_f`), and the answer has the test under another file;
- `fixture`: the test runs the function only in its setup or teardown;
- `caller not in the graph`: a static caller jedi finds, which this test executes too, is not
  among impact's callers (a reference the index did not resolve);
- `walk stopped`: such a caller is among impact's callers, yet the test was not reached from it;
- `mention only`: impact gave the test, but only as a `mention` (the scores without mentions);
- `dunder`: a protocol method (construction, operators, `with`, iteration), called by no name;
- `by string`: its name is a string constant somewhere (getattr, a registry by name);
- `as a value`: its name is used other than as a call (a callback, a decorator, a registration);
- `inheritance`: its class has a subclass in the project (the test calls it through the
  subclass, or an override calls it through super());
- `named by the test`: the test's file names it (and impact's fallback did not give the test);
- `indirect`: none of these; no static chain was found.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass

from _impact_oracle import Function, Phases

Key = tuple[str, str]


@dataclass(frozen=True)
class Corpus:
    """What the project's Python says about names: strings, non-call uses, subclasses."""

    texts: dict[str, str]
    strings: frozenset[str]
    values: frozenset[str]  # names used as a value (not called, not defined, not imported)
    subclassed: frozenset[str]  # class names some class derives from
    named: dict[str, frozenset[str]]  # path -> identifiers it uses
    defined: dict[str, frozenset[str]]  # path -> the classes and functions at its top level


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def read(texts: dict[str, str]) -> Corpus:
    strings: set[str] = set()
    values: set[str] = set()
    subclassed: set[str] = set()
    named: dict[str, frozenset[str]] = {}
    defined: dict[str, frozenset[str]] = {}
    for path, text in texts.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        called: set[int] = set()
        used: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called.add(id(node.func))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            elif isinstance(node, ast.ClassDef):
                subclassed.update(n for n in map(_name, node.bases) if n)
        for node in ast.walk(tree):
            name = _name(node) if isinstance(node, ast.Name | ast.Attribute) else None
            if name is None:
                continue
            used.add(name)
            if isinstance(node.ctx, ast.Load) and id(node) not in called:
                values.add(name)
        named[path] = frozenset(used)
        defined[path] = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef
                                  | ast.AsyncFunctionDef | ast.ClassDef))  # fmt: skip
    return Corpus(texts, frozenset(strings), frozenset(values), frozenset(subclassed), named,
                  defined)  # fmt: skip


@dataclass(frozen=True)
class Miss:
    """What is known about one sampled function when its misses are explained."""

    function: Function
    phases: Phases  # test -> phases, the truth
    predicted: dict[str, str]  # test -> confidence, impact's answer
    callers: frozenset[Key]  # impact's callers, any depth
    jedi: frozenset[Key]  # jedi's callers
    tests_of: dict[Key, Phases]  # every function's truth


def why(corpus: Corpus, m: Miss, test: str) -> list[str]:
    """The tags of one missed test, the first being its reason."""
    f = m.function
    short = f.name.rsplit(".", 1)[-1]
    tags: list[str] = []
    path, _, rest = test.partition("::")
    elsewhere = any(p.endswith("::" + rest) for p in m.predicted)  # answered, in another file
    if (path in corpus.defined and rest.split("::", 1)[0] not in corpus.defined[path]
            and elsewhere):  # fmt: skip
        tags.append("collected where imported")
    if m.phases[test] <= {"setup", "teardown"}:
        tags.append("fixture")
    ran = sorted(c for c in m.jedi if test in m.tests_of.get(c, {}))
    lacking = [c for c in ran if c not in m.callers]
    if lacking:
        tags.append("caller not in the graph: " + ", ".join(f"{p}:{n}" for p, n in lacking[:3]))
    elif ran:
        tags.append("walk stopped after caller " + ", ".join(f"{p}:{n}" for p, n in ran[:3]))
    if m.predicted.get(test) == "mention":
        tags.append("mention only")
    if is_dunder(short):
        tags.append("dunder")
    if short in corpus.strings:
        tags.append("by string")
    if short in corpus.values:
        tags.append("as a value")
    if "." in f.name and f.name.split(".")[-2] in corpus.subclassed:
        tags.append("inheritance")
    if short in corpus.named.get(test.split("::", 1)[0], ()):
        tags.append("named by the test")
    return tags or ["indirect"]


def is_dunder(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.startswith("__") and last.endswith("__")


def reason(tag: str) -> str:
    """A tag without its particulars, for tallying."""
    return tag.split(":", 1)[0].split(" after ", 1)[0]


def tally(rows: list[tuple[str, list[str]]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for _test, tags in rows:
        counts[reason(tags[0])] += 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
