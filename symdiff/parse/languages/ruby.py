"""Ruby, named as Ruby's docs name things: `Outer::Inner`, `Klass#method`, `Klass.singleton`."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import (
    Def,
    Enclosing,
    Family,
    Handler,
    join_with,
    normalise,
    text,
)

CONTAINERS = frozenset({"class", "module"})


def _container(kind: str) -> Handler:
    def handle(node: Node, scope: Enclosing) -> Def | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        local = normalise(text(name))
        qname = (
            local
            if scope.name is None or scope.kind not in CONTAINERS
            else (f"{scope.name}::{local}")
        )
        return Def(qname, kind, node.child_by_field_name("body"), (name,), absolute=True)

    return handle


def _method(node: Node, scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    if scope.name is None:
        return Def(text(name), "function", body, (name,), absolute=True)
    mark = "#" if scope.kind in CONTAINERS else "."
    kind = "method" if scope.kind in CONTAINERS or scope.kind == "singleton" else "function"
    return Def(f"{scope.name}{mark}{text(name)}", kind, body, (name,), absolute=True)


def _singleton_method(node: Node, scope: Enclosing) -> Def | None:
    """`def self.x` on the enclosing class, or `def Other.x`."""
    name, owner = node.child_by_field_name("name"), node.child_by_field_name("object")
    if name is None or owner is None:
        return None
    target = scope.name if text(owner) == "self" and scope.name else text(owner)
    body = node.child_by_field_name("body")
    return Def(f"{target}.{text(name)}", "method", body, (name,), absolute=True)


def _singleton_class(_node: Node, scope: Enclosing) -> Def | None:
    """`class << self`: its methods are the enclosing class's singleton methods."""
    if scope.name is None:
        return None
    return Def(scope.name, "singleton", None, absolute=True, emit=False)


FAMILY = Family(
    handlers={
        "class": _container("class"),
        "module": _container("module"),
        "method": _method,
        "singleton_method": _singleton_method,
        "singleton_class": _singleton_class,
    },
    join=join_with("::"),
)
