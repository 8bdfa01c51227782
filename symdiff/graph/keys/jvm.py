"""Java, Kotlin and C#: imports of `a.b.C`, same-package classes, wildcard imports, members."""

from __future__ import annotations

from symdiff.graph.keys.common import Compiled, Use, base_uses, enclosing_class, last_part
from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs


def module_key(package: str) -> str:
    """A file's definitions live in its package (its namespace in C#)."""
    return f"jvm:{package}." if package else "jvm:"


def qualified(name: str, package: str) -> str:
    """A Symbol.name inside its package (C#'s names carry their namespace: dropped)."""
    if package and name.startswith(package + "."):
        return name[len(package) + 1 :]
    return name


def _enclosing_packages(package: str) -> list[str]:
    parts = package.split(".") if package else []
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def compile_jvm(symbols: tuple[Symbol, ...], refs: FileRefs) -> Compiled:
    """A Java, Kotlin or C# file's uses."""
    package = refs.package
    kinds = {qualified(s.name, package): s.kind for s in symbols}
    bindings: dict[str, str] = {}
    scopes = _enclosing_packages(package)
    for imp in refs.imports:
        if imp.name in ("", "*") and not imp.local:
            scopes.append(imp.module)  # `import a.b.*;`, C#'s `using A.B;`
        elif imp.name and imp.name != "*":
            bindings[imp.local or imp.name] = f"{imp.module}.{imp.name}" if imp.module else imp.name
        elif imp.local:
            bindings[imp.local] = imp.module
    uses = []
    for ref in refs.refs:
        source = qualified(ref.source, package)
        first, _, rest = ref.target.partition(".")
        tail = f".{rest}" if rest else ""
        last = last_part(ref.target)
        if first in bindings:
            uses.append(Use(ref.source, ref.kind, (f"jvm:{bindings[first]}{tail}",), last,
                            "." in rest))  # fmt: skip
            continue
        keys: list[str] = []
        cls = enclosing_class(source, kinds)
        if first in ("this", "super") and cls:
            keys.append(f"jvm:{package}.{cls}{tail}" if package else f"jvm:{cls}{tail}")
        else:
            while cls:  # a member or nested class of an enclosing class
                keys.append(f"{module_key(package)}{cls}.{ref.target}")
                cls = enclosing_class(cls.rpartition(".")[0], kinds)
            keys.extend(f"jvm:{scope}.{ref.target}" for scope in scopes)
            keys.append(f"jvm:{ref.target}")
        uses.append(Use(ref.source, ref.kind, tuple(keys), last, first == "super" or bool(rest)))
    bases = base_uses(symbols, uses, [r.line for r in refs.refs])
    return Compiled(uses=tuple(uses), bases=tuple(bases))
