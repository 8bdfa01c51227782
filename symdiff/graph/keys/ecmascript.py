"""JavaScript and TypeScript: relative ES imports and `require` to files, re-exports."""

from __future__ import annotations

import posixpath

from symdiff.graph.keys.common import Compiled, Use, enclosing_class, last_part
from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs

EXTENSIONS = (".d.ts", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")
# Specifiers a bundler or tsconfig maps into the project: joined by name, not dropped.
ALIASED = ("@/", "~/", "#", "src/")


def _module(path: str) -> str:
    for ext in EXTENSIONS:
        if path.endswith(ext):
            path = path[: -len(ext)]
            break
    if path == "index":
        return ""
    return path.removesuffix("/index")


def module_key(path: str) -> str:
    """A file's module: its path without extension, a folder's `index.*` as the folder."""
    return f"js:{_module(path)}:"


def _specifier(spec: str, folder: str) -> str | None:
    if not spec.startswith("."):
        return None
    return f"js:{_module(posixpath.normpath(posixpath.join(folder, spec)))}:"


def compile_js(path: str, symbols: tuple[Symbol, ...], refs: FileRefs) -> Compiled:
    """A JS/TS file's uses and re-exports."""
    own = module_key(path)
    folder = posixpath.dirname(path)
    kinds = {s.name: s.kind for s in symbols}
    bindings: dict[str, tuple[str | None, str, bool]] = {}  # local -> (module key, member, aliased)
    exports: list[tuple[str, str, str]] = []
    for imp in refs.imports:
        key = _specifier(imp.module, folder)
        aliased = key is None and imp.module.startswith(ALIASED)
        if key is not None:
            member = "" if imp.name == "*" and imp.local else imp.name
            exports.append((key, member, imp.local))
        if imp.local:
            member = "" if imp.name in ("", "*") else imp.name
            bindings[imp.local] = (key, member, aliased)
    uses = []
    for ref in refs.refs:
        first, _, rest = ref.target.partition(".")
        tail = f".{rest}" if rest else ""
        last = last_part(ref.target)
        deep = "." in rest
        if first in bindings:
            key, member, aliased = bindings[first]
            if key is None:
                uses.append(Use(ref.source, ref.kind, (), last, aliased))
            elif not member:
                uses.append(Use(ref.source, ref.kind, (key + rest,) if rest else (), last, deep))
            elif member == "default":
                keys: tuple[str, ...] = (f"{key}default{tail}", f"{key}{first}{tail}")
                uses.append(Use(ref.source, ref.kind, keys, last, True))
            else:
                uses.append(Use(ref.source, ref.kind, (f"{key}{member}{tail}",), last, deep))
        elif first == "this":
            cls = enclosing_class(ref.source, kinds)
            keys = (f"{own}{cls}{tail}",) if cls and rest else ()
            uses.append(Use(ref.source, ref.kind, keys, last, deep or not keys))
        elif first in kinds:
            uses.append(Use(ref.source, ref.kind, (own + ref.target,), last, deep))
        else:
            uses.append(Use(ref.source, ref.kind, (), last, True))
    return Compiled(uses=tuple(uses), exports=tuple(exports))
