"""The reverse edges of one definition: who uses it, resolved or by name.

A definition's keys are its module's keys plus its qualified name, then every alias a
re-export gives it (`pkg.QuerySet` for `pkg.query.QuerySet`), then the same member reached
through a subclass (`Sub.m` for `Base.m`); a constructor or a dunder method also answers to its
class. Its users are the uses stored under any of those keys (`resolved`), and the uses that
join by last name part (`name`) when the policy allows.
"""

from __future__ import annotations

from dataclasses import dataclass

from symdiff.graph.keys import language_of, own_keys
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.keys.python import absolute, package_of
from symdiff.graph.maps import Entry, Index, Node, last_name
from symdiff.graph.policy import Policy

ALIAS_DEPTH = 4
SUBCLASS_LIMIT = 400  # classes visited below one base (Django's Field has ~100)
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__",
                          "constructor", "new"})  # fmt: skip

RESOLVED = "resolved"
NAME = "name"
MENTION = "mention"
RANK = {RESOLVED: 2, NAME: 1, MENTION: 0}


@dataclass(frozen=True, slots=True)
class Edge:
    """A user of a definition, and how sure the join is."""

    user: Node
    confidence: str


def _file_info(ix: Index, path: str) -> tuple[str, str]:
    entry = ix.files.get(path)
    if entry is None:
        return language_of(path), ""
    return entry.facts.language, entry.facts.refs.package


def _module_keys(ix: Index, path: str) -> tuple[str, ...]:
    language, package = _file_info(ix, path)
    return own_keys(language, path, package, "", ix.init_dirs)[0]


def definition_keys(ix: Index, path: str, name: str) -> set[str]:
    """The keys a definition is used under: its module's with its name, and re-exports."""
    language, package = _file_info(ix, path)
    modules, qual = own_keys(language, path, package, name, ix.init_dirs)
    keys = {m + qual for m in modules}
    frontier = [(m, qual) for m in modules]
    for _ in range(ALIAS_DEPTH):
        found: list[tuple[str, str]] = []
        for module, q in frontier:
            first, _, rest = q.partition(".")
            for exporter, member, local in ix.exports.get(module, ()):
                if member == "*":
                    alias = q
                elif member == "":
                    alias = f"{local}.{q}" if local else ""
                elif member == first and local:
                    alias = f"{local}.{rest}" if rest else local
                else:
                    continue
                if not alias:
                    continue
                for em in _module_keys(ix, exporter):
                    if em + alias not in keys:
                        keys.add(em + alias)
                        found.append((em, alias))
        if not found:
            break
        frontier = found
    return keys


def _is_class(ix: Index, path: str, name: str) -> bool:
    entry = ix.files.get(path)
    if entry is None:
        return True  # a removed definition's owner: assume the best reach
    symbol = entry.symbols.get(name)
    return symbol is not None and symbol.kind in CLASS_KINDS


def _owner(name: str) -> tuple[str, str]:
    """`A.B.m` → (`A.B`, `m`); Rust's `S::new` → (`S`, `new`)."""
    sep = "::" if "::" in name else "."
    owner, _, member = name.rpartition(sep)
    return owner, member


def subclasses(ix: Index, path: str, cls: str, policy: Policy) -> list[Node]:
    """Every class below `cls`, transitively (resolved bases; named ones when the policy allows)."""
    out: list[Node] = []
    seen = {(path, cls)}
    frontier = [(path, cls)]
    while frontier and len(out) < SUBCLASS_LIMIT:
        nxt = []
        for p, c in frontier:
            found: set[tuple[str, ...]] = set()
            for key in definition_keys(ix, p, c):
                found.update(ix.subclasses.get(key, ()))
            if _name_ok(ix, last_name(c), policy):
                found.update(ix.subclasses_by_name.get(last_name(c), ()))
            for sub in found:
                node = (sub[0], sub[1])
                if node not in seen:
                    seen.add(node)
                    out.append(node)
                    nxt.append(node)
        frontier = nxt
    return out


def _name_ok(ix: Index, last: str, policy: Policy) -> bool:
    if len(last) < policy.name_min_length or policy.name_max_definitions <= 0:
        return False
    return len(ix.defs_by_last.get(last, ())) <= policy.name_max_definitions


def reach_keys(ix: Index, path: str, name: str, policy: Policy) -> set[str]:
    """Every key whose users reach the definition: its own, its class's, its subclasses'."""
    keys = definition_keys(ix, path, name)
    owner, member = _owner(name)
    if not owner or not _is_class(ix, path, owner):
        return keys
    classes = [(path, owner), *subclasses(ix, path, owner, policy)]
    dunder = member.startswith("__") and member.endswith("__")
    for p, c in classes[1:]:
        keys |= definition_keys(ix, p, f"{c}.{member}")
    if dunder or member in CONSTRUCTORS:
        for p, c in classes:
            keys |= definition_keys(ix, p, c)
    if policy.overrides_reach_base_callers:
        for base_path, base in bases(ix, path, owner):
            keys |= definition_keys(ix, base_path, f"{base}.{member}")
    return keys


def bases(ix: Index, path: str, cls: str) -> list[Node]:
    """The classes `cls` derives from, resolved to definitions, transitively."""
    out: list[Node] = []
    seen = {(path, cls)}
    frontier = [(path, cls)]
    while frontier:
        nxt = []
        for p, c in frontier:
            entry = ix.files.get(p)
            if entry is None:
                continue
            for sub, use in entry.compiled.bases:
                if sub != c:
                    continue
                for key in use.keys:
                    for node in resolve(ix, key):
                        if node not in seen:
                            seen.add(node)
                            out.append(node)
                            nxt.append(node)
        frontier = nxt
    return out


def resolve(ix: Index, key: str, depth: int = 0) -> list[Node]:
    """The definitions a Python key names, following re-exports (forward, for bases)."""
    if not key.startswith("py:") or depth > ALIAS_DEPTH:
        return []
    dotted = key[3:]
    parts = dotted.split(".")
    out: list[Node] = []
    for cut in range(len(parts) - 1, 0, -1):
        module, qual = ".".join(parts[:cut]), ".".join(parts[cut:])
        for (path,) in ix.py_modules.get(module, ()):
            entry = ix.files[path]
            if qual in entry.symbols:
                out.append((path, qual))
                continue
            first, _, rest = qual.partition(".")
            for imp_module, member in _bindings(entry, first):
                target = f"{imp_module}.{member}" if member else imp_module
                out.extend(resolve(ix, f"py:{target}{'.' + rest if rest else ''}", depth + 1))
        if out:
            return out
    return out


def _bindings(entry: Entry, local: str) -> list[tuple[str, str]]:
    """What a Python file's imports bind to `local`: (module, member)."""
    out = []
    for imp in entry.facts.refs.imports:
        if imp.local == local or (imp.name == "*" and not imp.local):
            module = absolute(imp.module, package_of(entry.facts.path))
            member = imp.name if imp.name != "*" else local
            out.append((module, member))
    return out
