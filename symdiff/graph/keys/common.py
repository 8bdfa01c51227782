"""What a file's references become in the index: candidate keys, computed from the file alone.

A key names a definition in one global namespace per language family: `py:pkg.mod.Class.meth`,
`go:dir/of/pkg:T.M`, `js:src/a/b:f`, `jvm:a.b.C.m`, `rs:crate/src:a.b.f`. A use is stored under
the keys its own file's imports give it; a definition is looked up under the keys its path
gives it (`ModuleKey` + its qualified name), so a file's update never touches another file's
entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from symdiff.model import Symbol
from symdiff.parse.refs import RefKind

CLASS_KINDS = frozenset({
    "class", "struct", "interface", "trait", "enum", "record", "object", "impl", "type",
    "protocol", "module", "namespace", "union", "extension", "mixin",
})  # fmt: skip


class Use(NamedTuple):
    """One reference, compiled: the keys it resolves to, and whether it may join by name.

    `anchor` is the module a name-joinable use went through (`os` for `os.path.join`): when no
    file of the workspace is that module, the use is external and joins nothing by name.
    """

    source: str
    kind: RefKind
    keys: tuple[str, ...]
    last: str
    fallback: bool
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class Fixture:
    """A pytest fixture a file defines."""

    name: str  # the name tests ask for
    symbol: str  # the defining function's Symbol.name
    autouse: bool


@dataclass(frozen=True, slots=True)
class Compiled:
    """Everything one file contributes to the reverse maps."""

    uses: tuple[Use, ...] = ()
    # (the module key an import names, the member it takes ("*": all, "": the module), the
    # name it binds here): what lets `pkg.QuerySet` mean `pkg.query.QuerySet`.
    exports: tuple[tuple[str, str, str], ...] = ()
    bases: tuple[tuple[str, Use], ...] = ()  # (class Symbol.name, the use of one base)
    fixtures: tuple[Fixture, ...] = ()
    fixture_uses: tuple[tuple[str, str], ...] = ()  # (source, fixture name)
    module_lifecycle: tuple[str, ...] = field(default=())  # e.g. setup_module: every test here
    # (a class key a fixture's value may be, the fixture's name): `runner.invoke` in a test
    # that asks for `runner` is then a use of that class's `invoke` (key `fx:runner.invoke`).
    fixture_types: tuple[tuple[str, str], ...] = ()
    # A test file's `from m import TestC`: pytest collects TestC's tests here too (key, local).
    test_imports: tuple[tuple[str, str], ...] = ()
    # (a module as imported, the attribute used of it, the using definition): `attr.s` is
    # ("attr", "s", ...). A package's `__init__` may bind `s = attrs` at module level, which no
    # import shows: the walk from its module-level code looks these up (docs/impact.md).
    module_attrs: tuple[tuple[str, str, str], ...] = ()


def last_part(target: str) -> str:
    """The last name part of a dotted target (`c` of `a.b.c`, `f` of `f()`)."""
    last = target.rpartition(".")[2]
    return last[:-2] if last.endswith("()") else last


def enclosing_class(source: str, kinds: dict[str, str], sep: str = ".") -> str | None:
    """The nearest class-like definition at or above `source`."""
    name = source
    while name:
        if kinds.get(name) in CLASS_KINDS:
            return name
        name = name.rpartition(sep)[0]
    return None


def base_uses(
    symbols: tuple[Symbol, ...], uses: list[Use], lines: list[int]
) -> list[tuple[str, Use]]:
    """The uses that name a class's bases: type uses on the class's header lines."""
    classes = [s for s in symbols if s.kind in CLASS_KINDS]
    if not classes:
        return []
    out: list[tuple[str, Use]] = []
    for use, line in zip(uses, lines, strict=True):
        if use.kind is not RefKind.TYPE:
            continue
        for cls in classes:
            if cls.start_line <= line <= cls.header_end_line and (
                use.source == cls.name or use.source == (cls.parent or "")
            ):
                out.append((cls.name, use))
                break
    return out
