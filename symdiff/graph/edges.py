"""The reverse edges of one definition: who uses it, resolved or by name.

A definition's keys are its module's keys plus its qualified name, then every alias a
re-export gives it (`pkg.QuerySet` for `pkg.query.QuerySet`), then the same member reached
through a subclass (`Sub.m` for `Base.m`); a constructor or a dunder method also answers to its
class. Its users are the uses stored under any of those keys (`resolved`), and the uses that
join by last name part (`name`) when the policy allows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from symdiff.graph.keys import language_of, own_keys, qualified_name
from symdiff.graph.keys.common import CLASS_KINDS
from symdiff.graph.keys.python import absolute, package_of
from symdiff.graph.maps import Index, Node, last_name
from symdiff.graph.policy import Policy

ALIAS_DEPTH = 4
SUBCLASS_LIMIT = 400  # classes visited below one base (Django's Field has ~100)
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__",
                          "constructor", "new"})  # fmt: skip

RESOLVED = "resolved"
NAME = "name"
MENTION = "mention"
RANK = {RESOLVED: 4, NAME: 2, MENTION: 0}
# An edge the walk infers without a use (a dead-end method through its class's users, a
# module's hidden alias): a `name` edge for the tests, but no one's call for the callers.
INFERRED = 1


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
    keys = ix.memo.module_keys.get(path)
    if keys is None:
        language, package = _file_info(ix, path)
        keys = ix.memo.module_keys[path] = own_keys(language, path, package, "", ix.init_dirs)[0]
    return keys


def definition_keys(ix: Index, path: str, name: str) -> frozenset[str]:
    """The keys a definition is used under: its module's with its name, and re-exports."""
    node = (path, name)
    keys = ix.memo.definition_keys.get(node)
    if keys is None:
        keys = ix.memo.definition_keys[node] = frozenset(_definition_keys(ix, path, name))
    return keys


def _definition_keys(ix: Index, path: str, name: str) -> set[str]:
    language, package = _file_info(ix, path)
    modules = _module_keys(ix, path)
    qual = qualified_name(language, name, package)
    keys = {m + qual for m in modules}
    frontier = [(m, qual) for m in modules]
    for _ in range(ALIAS_DEPTH):
        found: list[tuple[str, str]] = []
        for module, q in frontier:
            first, _, rest = q.partition(".")
            exporters = [*ix.exports.get(module + first, ()), *ix.exports.get(module + "*", ()),
                         *ix.exports.get(module, ())]  # fmt: skip
            for exporter, member, local in exporters:
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


def subclasses(ix: Index, path: str, cls: str, policy: Policy) -> tuple[Node, ...]:
    """Every class below `cls`, transitively (resolved bases; named ones when the policy allows)."""
    found = ix.memo.subclasses.get((path, cls))
    if found is None:
        found = ix.memo.subclasses[(path, cls)] = tuple(_subclasses(ix, path, cls, policy))
    return found


def _subclasses(ix: Index, path: str, cls: str, policy: Policy) -> list[Node]:
    def below(p: str, c: str) -> Iterable[Node]:
        found: set[tuple[str, ...]] = set()
        for key in definition_keys(ix, p, c):
            found.update(ix.subclasses.get(key, ()))
        if name_ok(ix, last_name(c), policy):
            found.update(ix.subclasses_by_name.get(last_name(c), ()))
        return [(sub[0], sub[1]) for sub in found]

    return _breadth_first((path, cls), below, SUBCLASS_LIMIT)


def _breadth_first(start: Node, step: Callable[[str, str], Iterable[Node]],
                   limit: int | None = None) -> list[Node]:  # fmt: skip
    """Every node `step` leads to from `start`, transitively, nearest first, each once (not
    `start`); stops taking new levels once `limit` are found."""
    out: list[Node] = []
    seen = {start}
    frontier = [start]
    while frontier and (limit is None or len(out) < limit):
        nxt = []
        for p, c in frontier:
            for node in step(p, c):
                if node not in seen:
                    seen.add(node)
                    out.append(node)
                    nxt.append(node)
        frontier = nxt
    return out


def name_ok(ix: Index, last: str, policy: Policy) -> bool:
    """Whether the policy lets a use join definitions by this last name part."""
    if len(last) < policy.name_min_length or policy.name_max_definitions <= 0:
        return False
    return len(ix.defs_by_last.get(last, ())) <= policy.name_max_definitions


def reach_keys(ix: Index, path: str, name: str, policy: Policy, *, keep: bool = True
               ) -> frozenset[str]:  # fmt: skip
    """Every key whose users reach the definition: its own, its class's, its subclasses'.
    `keep=False`: not memoised (the numbered graph's build meets every node once)."""
    found = ix.memo.reach_keys.get((path, name))
    if found is None:
        found = frozenset(_reach_keys(ix, path, name, policy))
        if keep:
            ix.memo.reach_keys[(path, name)] = found
    return found


def _reach_keys(ix: Index, path: str, name: str, policy: Policy) -> set[str]:
    keys = set(definition_keys(ix, path, name))
    owner, member = _owner(name)
    if not owner or not _is_class(ix, path, owner):
        return keys
    classes = [(path, owner), *subclasses(ix, path, owner, policy)]
    dunder = member.startswith("__") and member.endswith("__")
    for p, c in classes:  # `runner.invoke` where the fixture `runner` makes this class
        for key in definition_keys(ix, p, c):
            for (fixture,) in ix.fixture_types.get(key, ()):
                keys.add(f"fx:{fixture}.{member}")
    for p, c in classes[1:]:  # `self.m()` inside a subclass that does not override `m`
        sub_entry = ix.files.get(p)
        if sub_entry is None or f"{c}.{member}" not in sub_entry.symbols:
            keys.update(m + c + "." + member for m in _module_keys(ix, p))
    if dunder or member in CONSTRUCTORS:
        for p, c in classes:
            keys |= definition_keys(ix, p, c)
    if policy.overrides != "none":
        keys |= _override_keys(ix, path, owner, member, classes, policy)
    return keys


def _override_keys(
    ix: Index, path: str, owner: str, member: str, classes: list[Node], policy: Policy
) -> set[str]:
    """The keys an overriding method is reached under besides its own (policy `overrides`)."""
    keys: set[str] = set()
    for base_path, base in bases(ix, path, owner):
        base_entry = ix.files.get(base_path)
        if base_entry is None or f"{base}.{member}" not in base_entry.symbols:
            continue
        if policy.overrides == "base_callers":
            keys |= definition_keys(ix, base_path, f"{base}.{member}")
        else:  # "class": whoever makes or names the subclass can dispatch to the override
            keys |= definition_keys(ix, path, owner)
            break
    # A mixin's method overrides a sibling base's in the classes that combine them
    # (`class URLSafeSerializer(URLSafeMixin, Serializer)`): their users dispatch to it.
    for sub_path, sub in classes[1:]:
        if _defines_elsewhere(ix, sub_path, sub, member, (path, owner)):
            keys |= definition_keys(ix, sub_path, sub)
    return keys


def _defines_elsewhere(ix: Index, path: str, cls: str, member: str, mixin: Node) -> bool:
    """Whether a base of `cls` other than `mixin` (and the classes below the mixin) defines
    `member`."""
    for base_path, base in bases(ix, path, cls):
        if (base_path, base) == mixin:
            continue
        entry = ix.files.get(base_path)
        if entry is not None and f"{base}.{member}" in entry.symbols:
            return True
    return False


def bases(ix: Index, path: str, cls: str) -> tuple[Node, ...]:
    """The classes `cls` derives from, resolved to definitions, transitively."""
    found = ix.memo.bases.get((path, cls))
    if found is None:
        found = ix.memo.bases[(path, cls)] = tuple(_bases(ix, path, cls))
    return found


def _bases(ix: Index, path: str, cls: str) -> list[Node]:
    def above(p: str, c: str) -> Iterable[Node]:
        entry = ix.files.get(p)
        if entry is None:
            return ()
        return [node for sub, use in entry.compiled.bases if sub == c
                for key in use.keys for node in resolve(ix, key)]  # fmt: skip

    return _breadth_first((path, cls), above)


def resolve(ix: Index, key: str) -> tuple[Node, ...]:
    """The definitions a Python key names, following re-exports (forward: bases, `find`)."""
    found = ix.memo.resolved.get(key)
    if found is None:
        found = ix.memo.resolved[key] = tuple(dict.fromkeys(_resolve(ix, key, {key})))
    return found


def _resolve(ix: Index, key: str, seen: set[str]) -> list[Node]:
    if not key.startswith("py:") or len(seen) > 4 * ALIAS_DEPTH:
        return []
    parts = key[3:].split(".")
    out: list[Node] = []
    for cut in range(len(parts) - 1, 0, -1):
        module, qual = ".".join(parts[:cut]), ".".join(parts[cut:])
        for (path,) in ix.py_modules.get(module, ()):
            if module not in _module_keys_plain(ix, path):
                continue
            if qual in ix.files[path].symbols:
                out.append((path, qual))
                continue
            first, _, rest = qual.partition(".")
            for target in _bindings(ix, path).get(first, ()):
                follow = f"py:{target}.{rest}" if rest else f"py:{target}"
                if follow not in seen:
                    seen.add(follow)
                    out.extend(_resolve(ix, follow, seen))
        if out:
            return out
    return out


def _module_keys_plain(ix: Index, path: str) -> set[str]:
    return {k[3:-1] for k in _module_keys(ix, path)}


def _bindings(ix: Index, path: str) -> dict[str, list[str]]:
    """What a Python file's imports bind: local name → the dotted names it may mean."""
    found = ix.memo.bindings.get(path)
    if found is not None:
        return found
    entry = ix.files[path]
    package = package_of(path)
    found = {}
    wildcards = []
    for imp in entry.facts.refs.imports:
        module = absolute(imp.module, package)
        if imp.name == "*":
            wildcards.append(module)
        elif imp.local:
            found.setdefault(imp.local, []).append(f"{module}.{imp.name}" if imp.name else module)
    if wildcards:
        found = _WithWildcards(found, wildcards)
    ix.memo.bindings[path] = found
    return found


class _WithWildcards(dict[str, list[str]]):
    """Bindings where a name no import binds may come from a wildcard import."""

    def __init__(self, bound: dict[str, list[str]], wildcards: list[str]) -> None:
        super().__init__(bound)
        self.wildcards = wildcards

    def get(self, local: str, default: object = None) -> list[str]:  # type: ignore[override,unused-ignore]
        return self[local] if local in self else [f"{w}.{local}" for w in self.wildcards]
