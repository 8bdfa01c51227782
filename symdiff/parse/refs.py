"""A file's references: the names each definition uses, and what the file imports; inert values.

These are what the reference index (docs/impact.md) is built from. They are a pure function of
a blob's bytes and its language, like its symbols, and are stored by content beside them.
Nothing here is resolved: a `Ref` holds a name as the code spells it (separators normalised to
`.`), and `symdiff.graph` resolves it against the other files' imports and definitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RefKind(StrEnum):
    """How a definition uses a name."""

    CALL = "call"  # f(), a.b.c(), new X(), X{}
    ATTR = "attr"  # a.b read or written, not called
    TYPE = "type"  # an annotation, a base class, a parameter or field type
    DECORATOR = "decorator"  # @name, @a.b(...)
    NAME = "name"  # a bare name read as a value (a function passed as a callback)
    FIXTURE = "fixture"  # pytest: a test's or a fixture's parameter, usefixtures("x")


@dataclass(frozen=True, slots=True)
class Ref:
    """One use of a name inside a definition.

    `source` is the innermost enclosing definition's `Symbol.name` ("" at module level).
    `target` is the name as written with `.` between its parts: `os.path.join`, `self.save`,
    `Foo`, `pkg.Func`, `crate.a.b` (Rust's `::`, PHP's `\\` become `.`). Where the extractor saw
    which class a local variable holds (`x = Foo(); x.bar()`), the receiver is replaced by that
    class as written: `Foo.bar`.
    """

    source: str
    target: str
    kind: RefKind
    line: int


@dataclass(frozen=True, slots=True)
class Import:
    """One name an import binds in a file.

    `local` is the name bound in the file ("" for a wildcard or side-effect import). `module` is
    what the import names, as its language spells it: Python's dotted module with a relative
    import's leading dots kept (`..pkg.mod`); JavaScript's and TypeScript's module specifier
    (`./a/b`, `react`); Go's import path; the dotted package or namespace in Java, Kotlin and
    C#; Rust's `use` path with `crate`, `super` and `self` kept, `.`-separated. `name` is the
    member taken from the module (`y` in `from x import y as z`; `default` for a JavaScript
    default import; `*` for a wildcard), "" when the module itself is bound.
    """

    local: str
    module: str
    name: str
    line: int


@dataclass(frozen=True, slots=True)
class FileRefs:
    """What one file imports and uses.

    `package`: the package or namespace the file declares (Go's package name, the Java or Kotlin
    package, the first C# namespace), "" where the language has none.
    """

    package: str = ""
    imports: tuple[Import, ...] = ()
    refs: tuple[Ref, ...] = ()
