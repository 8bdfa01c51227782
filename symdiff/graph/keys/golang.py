"""Go: import paths to package folders through the go.mod modules; same-package names."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from symdiff.graph.keys.common import Compiled, Use, last_part
from symdiff.parse.refs import FileRefs


def package_dir(import_path: str, go_modules: Mapping[str, str]) -> str | None:
    """The workspace folder of an import path, by the longest module path it starts with."""
    best: tuple[int, str] | None = None
    for folder, module in go_modules.items():
        if import_path == module or import_path.startswith(module + "/"):
            sub = import_path[len(module) + 1 :]
            if best is None or len(module) > best[0]:
                best = (len(module), posixpath.join(folder, sub).strip("/") if sub else folder)
    return None if best is None else best[1]


def module_key(path: str) -> str:
    """A Go file's definitions live in its folder's package."""
    return f"go:{posixpath.dirname(path)}:"


def qualified(name: str) -> str:
    """A Go Symbol.name without its package: `p.T.M` → `T.M`."""
    return name.partition(".")[2] or name


def compile_go(path: str, refs: FileRefs, go_modules: Mapping[str, str]) -> Compiled:
    """A Go file's uses: `pkg.F` through its imports, bare names within the package folder."""
    own = module_key(path)
    bindings: dict[str, str | None] = {}
    dots: list[str] = []
    for imp in refs.imports:
        folder = package_dir(imp.module, go_modules)
        local = imp.local or imp.module.rpartition("/")[2]
        if local == ".":
            if folder is not None:
                dots.append(f"go:{folder}:")
        elif local != "_":
            bindings[local] = None if folder is None else f"go:{folder}:"
    uses = []
    for ref in refs.refs:
        first, _, rest = ref.target.partition(".")
        last = last_part(ref.target)
        if rest and first in bindings:
            prefix = bindings[first]
            if prefix is None:  # the standard library, another module
                uses.append(Use(ref.source, ref.kind, (), last, False))
            else:
                uses.append(Use(ref.source, ref.kind, (prefix + rest,), last, "." in rest))
            continue
        keys = (own + ref.target, *(d + ref.target for d in dots))
        uses.append(Use(ref.source, ref.kind, keys, last, bool(rest)))
    return Compiled(uses=tuple(uses))


def parse_gomod(text: bytes) -> str | None:
    """The module path a go.mod declares, or None."""
    for raw in text.decode("utf-8", "replace").splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("module"):
            rest = line[len("module") :].strip()
            if rest and line[len("module")] in " \t(\"":
                return rest.strip("()").strip().strip('"`') or None
    return None
