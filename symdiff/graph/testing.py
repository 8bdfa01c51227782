"""Which definitions are tests, their node ids, and the commands that run them."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Iterable, Mapping, Set
from typing import Protocol

from symdiff.graph.edges import definition_keys, subclasses
from symdiff.graph.facts import TestId
from symdiff.graph.keys import JS
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.maps import Entry, Index, Node
from symdiff.graph.policy import Policy

# Methods a test framework calls around every test of their class.
LIFECYCLE = frozenset({
    "setUp", "tearDown", "setUpClass", "tearDownClass", "setUpTestData", "asyncSetUp",
    "asyncTearDown", "setup_method", "teardown_method", "setup_class", "teardown_class",
    "setup", "teardown", "_pre_setup", "_post_teardown", "__init__",
})  # fmt: skip
FUNCTION_KINDS = frozenset({"function", "method", "async_function", "async_method"})


def _python_test(entry: Entry, name: str) -> bool:
    symbol = entry.symbols.get(name)
    if symbol is None or symbol.kind not in FUNCTION_KINDS:
        return False
    owner, _, last = name.rpartition(".")
    if not last.startswith("test"):
        return False
    while owner:  # methods of classes (nested ones too), not functions inside functions
        parent = entry.symbols.get(owner)
        if parent is None or parent.kind not in CLASS_KINDS:
            return False
        owner = owner.rpartition(".")[0]
    return True


def _pytest_id(path: str, name: str) -> str:
    return path + "::" + name.replace(".", "::")


def _class_tests(entry: Entry, cls: str) -> list[str]:
    """The test methods a class defines directly (their last names)."""
    return [
        name.rpartition(".")[2] for name in entry.children.get(cls, ())
        if _python_test(entry, name)
    ]  # fmt: skip


def is_test(ix: Index, node: Node) -> bool:
    """A test itself: the walk reports it and goes no further."""
    found = ix.memo.is_test.get(node)
    if found is None:
        found = ix.memo.is_test[node] = _is_test(ix, node)
    return found


def _is_test(ix: Index, node: Node) -> bool:
    path, name = node
    entry = ix.files.get(path)
    if entry is None or not entry.test_scope:
        return False
    language = entry.facts.language
    if language in JS:
        return True
    if language == "go":
        return _go_test(path, name)
    return language == "python" and _python_test(entry, name)


def _go_test(path: str, name: str) -> bool:
    qual = name.partition(".")[2]
    return path.endswith("_test.go") and qual.startswith("Test") and "." not in qual


def tests_of(ix: Index, node: Node, policy: Policy, *, keep: bool = True
             ) -> tuple[TestId, ...]:  # fmt: skip
    """The tests a reached node is, or runs before: a test, a test class, a setUp
    (`keep=False`: not memoised)."""
    found = ix.memo.tests.get(node)
    if found is None:
        found = tuple(_tests_of(ix, node, policy))
        if keep:
            ix.memo.tests[node] = found
    return found


def _tests_of(ix: Index, node: Node, policy: Policy) -> list[TestId]:
    path, name = node
    entry = ix.files.get(path)
    if entry is None or not entry.test_scope:
        return []
    language = entry.facts.language
    if language in JS:
        return [TestId(path, "", path)]
    if language == "go":
        return [TestId(path, name, name.partition(".")[2])] if _go_test(path, name) else []
    if language != "python":
        return []
    if _python_test(entry, name):
        owner, _, method = name.rpartition(".")
        if not owner:
            return [TestId(path, name, _pytest_id(path, name))]
        out = _method_ids(ix, path, owner, method)
        for sub_path, sub in subclasses(ix, path, owner, policy):
            sub_entry = ix.files.get(sub_path)
            if sub_entry is not None and sub_entry.test_scope and (
                    f"{sub}.{method}" not in sub_entry.symbols):
                out.extend(_method_ids(ix, sub_path, sub, method))
        return out
    symbol = entry.symbols.get(name)
    owner, _, member = name.rpartition(".")
    if symbol is not None and symbol.kind in CLASS_KINDS:
        return _all_tests(ix, path, name, policy)
    if owner and member in LIFECYCLE:
        return _all_tests(ix, path, owner, policy)
    return []


def _all_tests(ix: Index, path: str, cls: str, policy: Policy) -> list[TestId]:
    """Every test a class runs, and every test of the classes below it."""
    entry = ix.files[path]
    inherited = _class_tests(entry, cls)
    out = [t for m in inherited for t in _method_ids(ix, path, cls, m)]
    for sub_path, sub in subclasses(ix, path, cls, policy):
        sub_entry = ix.files.get(sub_path)
        if sub_entry is None or not sub_entry.test_scope:
            continue
        methods = set(inherited) | set(_class_tests(sub_entry, sub))
        out.extend(t for m in sorted(methods) for t in _method_ids(ix, sub_path, sub, m))
    return out


def _method_ids(ix: Index, path: str, cls: str, method: str) -> list[TestId]:
    """A test method's ids: in its class, and where a test file imports the class."""
    name = f"{cls}.{method}"
    out = [TestId(path, name, _pytest_id(path, name))]
    for other, local in _collected_elsewhere(ix, path, cls):
        out.append(TestId(other, f"{local}.{method}", _pytest_id(other, f"{local}.{method}")))
    return out


def _collected_elsewhere(ix: Index, path: str, cls: str) -> list[tuple[str, str]]:
    """The test files that import a top-level test class: pytest collects its tests there too,
    under the name it is imported as."""
    if not cls or "." in cls:
        return []
    return [(p, local) for key in definition_keys(ix, path, cls)
            for p, local in ix.test_imports.get(key, ()) if p != path]  # fmt: skip


def fixture_scope_tests(ix: Index, node: Node) -> list[TestId]:
    """The tests an autouse fixture runs before: its file's, or everything below its conftest."""
    path, name = node
    entry = ix.files.get(path)
    if entry is None or not any(f.autouse and f.symbol == name for f in entry.compiled.fixtures):
        return []
    if posixpath.basename(path) == "conftest.py":
        folder = posixpath.dirname(path)
        paths = [p for p in ix.files if not folder or p.startswith(folder + "/")]
    else:
        paths = [path]
    out: list[TestId] = []
    for p in paths:
        e = ix.files[p]
        if e.test_scope and e.facts.language == "python":
            out.extend(TestId(p, n, _pytest_id(p, n)) for n in e.symbols if _python_test(e, n))
    return out


def file_tests(ix: Index, path: str, policy: Policy) -> frozenset[str]:
    """The pytest node ids of every test a Python test file defines, as the index knows them."""
    found = ix.memo.file_tests.get(path)
    if found is None:
        entry = ix.files.get(path)
        found = ix.memo.file_tests[path] = frozenset() if entry is None else frozenset(
            t.node_id for name in entry.symbols if _python_test(entry, name)
            for t in tests_of(ix, (path, name), policy) if t.path == path)  # fmt: skip
    return found


def _whole_files(by_file: dict[str, set[str]], whole: Callable[[str], Set[str]]) -> list[str]:
    """The ids, a file's replaced by its path where they are all of its tests."""
    out: list[str] = []
    for path, chosen in sorted(by_file.items()):
        every = whole(path) if len(chosen) > 1 else None
        out.extend([path] if every and every <= chosen else sorted(chosen))
    return out


class _Test(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def node_id(self) -> str: ...


def run_commands(tests: Iterable[_Test], languages: Mapping[str, str],
                 whole: Callable[[str], Set[str]] | None = None) -> dict[str, str]:  # fmt: skip
    """The commands that run the tests (`TestId`s or `TestHit`s): pytest node ids, `go test
    -run` per package, JS files.

    `whole(path)`: every pytest id of a test file; a file whose every test is selected is
    named by its path alone, so that a wide selection stays a command a shell takes."""
    pytest_ids: dict[str, set[str]] = {}  # test file -> its ids (a pytest id starts with it)
    go: dict[str, set[str]] = {}
    files: set[str] = set()
    for test in tests:
        language = languages.get(test.path, "")
        if language == "python":
            ids = pytest_ids.get(test.path)
            if ids is None:
                ids = pytest_ids[test.path] = set()
            ids.add(test.node_id)
        elif language == "go":
            go.setdefault(posixpath.dirname(test.path), set()).add(test.node_id)
        else:
            files.add(test.path)
    run: dict[str, str] = {}
    if pytest_ids:
        words = (_whole_files(pytest_ids, whole) if whole is not None
                 else sorted(i for ids in pytest_ids.values() for i in ids))  # fmt: skip
        run["pytest"] = "pytest " + " ".join(map(shlex.quote, words))
    if go:
        run["go"] = " && ".join(
            f"go test -run {shlex.quote('^(' + '|'.join(sorted(names)) + ')$')} "
            f"{shlex.quote('./' + folder if folder else '.')}"
            for folder, names in sorted(go.items())
        )
    if files:
        run["files"] = " ".join(shlex.quote(f) for f in sorted(files))
    return run
