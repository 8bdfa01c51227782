"""Python: imports with aliases and relative imports, module attributes, `self`/`cls`, fixtures."""

from __future__ import annotations

from symdiff.graph.keys.common import (
    Compiled,
    Fixture,
    Use,
    base_uses,
    enclosing_class,
    last_part,
)
from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs, RefKind

SUFFIXES = (".py", ".pyi", ".pyw")
LIFECYCLE_MODULE = frozenset({"setup_module", "setUpModule", "teardown_module",
                              "tearDownModule", "setup_function", "teardown_function"})


def _split(path: str) -> tuple[list[str], str]:
    """A module's folders and its last name part (a package's `__init__` is its folder)."""
    folders = path.split("/")
    name = folders.pop()
    stem = name.rpartition(".")[0] if name.endswith(SUFFIXES) else name
    if stem == "__init__":
        stem = folders.pop() if folders else ""
    return folders, stem


def dotted_path(path: str) -> str:
    """`a/b/c.py` → `a.b.c`; a package's `__init__.py` → the package."""
    folders, stem = _split(path)
    return ".".join([*folders, stem]) if stem else ""


def package_of(path: str) -> str:
    """The package a file's relative imports start from."""
    dotted = dotted_path(path)
    if path.rpartition("/")[2].startswith("__init__."):
        return dotted
    return dotted.rpartition(".")[0]


def absolute(module: str, package: str) -> str:
    """A relative import's module (`..m`) made absolute from the importing file's package."""
    if not module.startswith("."):
        return module
    rest = module.lstrip(".")
    up = len(module) - len(rest) - 1
    parts = package.split(".") if package else []
    base = parts[: len(parts) - up] if up <= len(parts) else []
    return ".".join([*base, rest] if rest else base)


def module_names(path: str, init_dirs: set[str] | frozenset[str]) -> tuple[str, ...]:
    """The dotted names a file is importable as: from its package root or any folder above.

    The package root is the top of the chain of folders holding an `__init__.py`; a folder
    without one (a namespace package, a `src/` layout, a tests folder on `sys.path`) starts a
    name too, so `src/pkg/mod.py` is `src.pkg.mod` and `pkg.mod`. The full path comes first.
    """
    folders, stem = _split(path)
    if not stem:
        return ("",)
    depth = len(folders)
    while depth > 0 and "/".join(folders[:depth]) in init_dirs:
        depth -= 1
    return tuple(".".join([*folders[i:], stem]) for i in range(depth + 1))


def _fixture(target: str, source: str) -> Fixture | None:
    """A fixture definition from a decorator: `pytest.fixture`, `fixture:name=x`, `:autouse`."""
    head, _, options = target.partition(":")
    if last_part(head) not in ("fixture", "yield_fixture"):
        return None
    name = source.rpartition(".")[2]
    autouse = False
    for option in options.split(",") if options else ():
        key, _, value = option.partition("=")
        if key.strip() == "name" and value.strip():
            name = value.strip().strip("'\"")
        elif key.strip() == "autouse" and value.strip().lower() not in ("false", "0"):
            autouse = True
    return Fixture(name=name, symbol=source, autouse=autouse)


class _Binder:
    """The names one file binds, and the keys a target gets from them."""

    def __init__(self, path: str, symbols: tuple[Symbol, ...], refs: FileRefs) -> None:
        self.own = dotted_path(path)
        package = package_of(path)
        self.kinds = {s.name: s.kind for s in symbols}
        self.bindings: dict[str, tuple[str, str]] = {}  # local -> (qualified, module)
        self.wildcards: list[str] = []
        self.exports: list[tuple[str, str, str]] = []
        # A package's `__init__` re-exports what it imports; another module's imports are its
        # own business, but for `import *` (a settings module built from another).
        reexports = path.rpartition("/")[2].startswith("__init__.")
        for imp in refs.imports:
            module = absolute(imp.module, package)
            if imp.name == "*":
                self.wildcards.append(module)
                self.exports.append((f"py:{module}.", "*", ""))
            elif imp.name:
                qualified = f"{module}.{imp.name}" if module else imp.name
                if imp.local:
                    self.bindings[imp.local] = (qualified, module)
                if reexports:
                    self.exports.append((f"py:{module}.", imp.name, imp.local or imp.name))
            elif imp.local:
                bound = module if imp.local != module.partition(".")[0] else imp.local
                self.bindings[imp.local] = (bound, bound)
                if reexports:
                    self.exports.append((f"py:{module}.", "", imp.local))
        self.dotted_locals = sorted((b for b in self.bindings if "." in b), key=len, reverse=True)

    def scoped(self, first: str, source: str) -> str | None:
        """The definition a bare name means from inside `source`: enclosing functions, module."""
        scope = source
        while scope:
            if self.kinds.get(scope) != "class" and f"{scope}.{first}" in self.kinds:
                return f"{scope}.{first}"
            scope = scope.rpartition(".")[0]
        return first if first in self.kinds else None

    def use(self, source: str, target: str, kind: RefKind, supers: dict[str, list[str]]) -> Use:
        last = last_part(target)
        for local in self.dotted_locals:  # `import os.path as p` bound "os.path"? rare; exact
            if target == local or target.startswith(local + "."):
                qualified, module = self.bindings[local]
                rest = target[len(local):]
                return Use(source, kind, (f"py:{qualified}{rest}",), last,
                           rest.count(".") >= 2, module)  # fmt: skip
        first, _, rest = target.partition(".")
        tail = f".{rest}" if rest else ""
        deep = rest.count(".") >= 1  # a chain past one attribute: its receiver is unknown
        if first in ("self", "cls"):
            cls = enclosing_class(source, self.kinds)
            if cls is None or not rest:
                return Use(source, kind, (), last, True)
            return Use(source, kind, (f"py:{self.own}.{cls}{tail}",), last, deep)
        if first in ("super", "super()"):
            cls = enclosing_class(source, self.kinds)
            keys = tuple(f"{base}{tail}" for base in supers.get(cls or "", ()))
            return Use(source, kind, keys, last, True)
        if first in self.bindings:
            qualified, module = self.bindings[first]
            return Use(source, kind, (f"py:{qualified}{tail}",), last, deep, module)
        defined = self.scoped(first, source)
        if defined is not None:
            return Use(source, kind, (f"py:{self.own}.{defined}{tail}",), last, deep)
        keys = tuple(f"py:{module}.{target}" for module in self.wildcards)
        return Use(source, kind, keys, last, True)


def compile_python(
    path: str, symbols: tuple[Symbol, ...], refs: FileRefs, *, test_scope: bool = False
) -> Compiled:
    """A Python file's uses, re-exports, bases and fixtures."""
    binder = _Binder(path, symbols, refs)
    if path.endswith(".pyi"):  # a stub never runs: it defines, it uses nothing
        return Compiled(exports=tuple(binder.exports))
    # One use per (definition, name, kind): a call made five times is one edge.
    plain = [r for r in {(r.source, r.target, r.kind): r for r in refs.refs}.values()
             if r.kind is not RefKind.FIXTURE]
    # Bases first (no `super` inside a base list): `super().m` then means each base's `m`.
    bases = base_uses(symbols, [binder.use(r.source, r.target, r.kind, {}) for r in plain
                                if r.kind is RefKind.TYPE],
                      [r.line for r in plain if r.kind is RefKind.TYPE])  # fmt: skip
    supers: dict[str, list[str]] = {}
    for cls, base in bases:
        supers.setdefault(cls, []).extend(base.keys)
    params: dict[str, set[str]] = {}  # a definition -> the fixtures it asks for
    for r in refs.refs:
        if r.kind is RefKind.FIXTURE:
            params.setdefault(r.source, set()).add(r.target)
    uses: list[Use] = []
    fixtures: list[Fixture] = []
    attrs: set[tuple[str, str, str]] = set()
    for ref in plain:
        target = ref.target
        if ref.kind is RefKind.DECORATOR:
            fixture = _fixture(target, ref.source)
            if fixture is not None:
                fixtures.append(fixture)
            target = target.partition(":")[0]
        use = binder.use(ref.source, target, ref.kind, supers)
        first, dot, rest = target.partition(".")
        if first in binder.bindings:
            qualified, module = binder.bindings[first]
            if dot:  # `mod.attr`
                attrs.add((qualified, rest.partition(".")[0], ref.source))
            if qualified != module:  # `from module import name`: a use of module's name
                attrs.add((module, qualified[len(module) + 1 :], ref.source))
        if dot and first in params.get(ref.source, ()):
            use = use._replace(keys=(*use.keys, f"fx:{target}"))
        uses.append(use)
    # A module-level `from m import X` is module-level code using `m.X` (a registry module
    # re-exported under another name: `from .filters import FILTERS as DEFAULT_FILTERS`).
    for imp in refs.imports:
        if imp.name and imp.name != "*":
            attrs.add((absolute(imp.module, package_of(path)), imp.name, ""))
    return Compiled(
        uses=tuple(uses), exports=tuple(binder.exports), bases=tuple(bases),
        fixtures=tuple(fixtures),
        fixture_uses=tuple((s, f) for s, names in params.items() for f in sorted(names)),
        module_lifecycle=tuple(s.name for s in symbols if s.name in LIFECYCLE_MODULE),
        fixture_types=_fixture_types(fixtures, uses),
        test_imports=_test_imports(binder) if test_scope else (),
        module_attrs=tuple(sorted(attrs)),
    )  # fmt: skip


def _fixture_types(fixtures: list[Fixture], uses: list[Use]) -> tuple[tuple[str, str], ...]:
    """The classes a fixture may return: those its body calls or names as a type."""
    if not fixtures:
        return ()
    names = {f.symbol: f.name for f in fixtures}
    out: list[tuple[str, str]] = []
    for use in uses:
        name = names.get(use.source)
        if name and use.kind in (RefKind.CALL, RefKind.TYPE) and use.last[:1].isupper():
            out.extend((key, name) for key in use.keys)
    return tuple(out)


def _test_imports(binder: _Binder) -> tuple[tuple[str, str], ...]:
    """A test file's imported classes (by name's case): pytest may collect their tests here."""
    return tuple(
        (f"py:{qualified}", local) for local, (qualified, _) in binder.bindings.items()
        if local[:1].isupper() and "." not in local
    )  # fmt: skip
