"""Rust: `use` paths with `crate`, `super` and `self` to module files."""

from __future__ import annotations

from symdiff.graph.keys.common import Compiled, Use, last_part
from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs

ROOTS = ("lib", "main", "mod")


def crate_and_module(path: str) -> tuple[str, list[str]]:
    """A file's crate root (the folder through its last `src/`) and its module path."""
    parts = path.split("/")
    stem = parts.pop().removesuffix(".rs")
    src = max((i for i, p in enumerate(parts) if p == "src"), default=-1)
    root = "/".join(parts[: src + 1])
    module = parts[src + 1 :]
    if not (stem == "mod" or (stem in ROOTS and not module)):
        module.append(stem)
    return root, module


def module_key(path: str) -> str:
    """The key prefix of a Rust file's definitions."""
    root, module = crate_and_module(path)
    return f"rs:{root}:" + "".join(f"{m}." for m in module)


def qualified(name: str) -> str:
    """A Rust Symbol.name with `.` for `::`."""
    return name.replace("::", ".")


def _resolve(path: str, root: str, module: list[str]) -> str | None:
    """A `use` path's key, or None when it leaves the crate."""
    parts = path.split(".")
    head = parts[0]
    if head == "crate":
        return f"rs:{root}:" + ".".join(parts[1:])
    if head in ("self", "super"):
        base = list(module)
        while parts and parts[0] in ("self", "super"):
            if parts.pop(0) == "super" and base:
                base.pop()
        return f"rs:{root}:" + ".".join([*base, *parts])
    return None


def compile_rust(path: str, symbols: tuple[Symbol, ...], refs: FileRefs) -> Compiled:
    """A Rust file's uses and its `pub use` re-exports."""
    root, module = crate_and_module(path)
    own = module_key(path)
    kinds = {qualified(s.name): s.kind for s in symbols}
    bindings: dict[str, str | None] = {}
    globs: list[str] = []
    exports: list[tuple[str, str, str]] = []
    for imp in refs.imports:
        full = f"{imp.module}.{imp.name}" if imp.name and imp.name != "*" else imp.module
        key = _resolve(full, root, module)
        if imp.name == "*":
            if key is not None:
                globs.append(key + ".")
                exports.append((key + ".", "*", ""))
            continue
        local = imp.local or full.rpartition(".")[2]
        bindings[local] = key
        if key is not None:
            mod, _, member = key.rpartition(".")
            exports.append((mod + ".", member, local))
    uses = []
    for ref in refs.refs:
        target = ref.target
        first, _, rest = target.partition(".")
        tail = f".{rest}" if rest else ""
        last = last_part(target)
        source = qualified(ref.source)
        if first in bindings:
            key = bindings[first]
            keys: tuple[str, ...] = () if key is None else (key + tail,)
            uses.append(Use(ref.source, ref.kind, keys, last, key is not None and "." in rest))
        elif first in ("crate", "self", "super") and rest:
            key = _resolve(target, root, module)
            uses.append(Use(ref.source, ref.kind, (key,) if key else (), last, False))
        elif first in ("Self", "self") and source:
            owner = source.rpartition(".")[0] if "." in source else source
            uses.append(Use(ref.source, ref.kind, (f"{own}{owner}{tail}",), last, "." in rest))
        else:
            keys = (own + target, *(g + target for g in globs))
            uses.append(Use(ref.source, ref.kind, keys, last, bool(rest) or first not in kinds))
    return Compiled(uses=tuple(uses), exports=tuple(exports))
