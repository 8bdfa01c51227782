"""Haskell: functions (a type signature and its equations, as one Symbol), classes, instances,
data types, newtypes and type synonyms, qualified by the module (`Data.Queue.push`).

A function is written as siblings — `f :: T`, then `f 0 = …`, `f n = …` — so its Symbol starts at
the signature (or the first equation) and ends at the last equation of the same name. Its header
runs to the first equation's `=`: the type signature and the first equation's patterns.
"""

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

EQUATIONS = frozenset({"function", "bind"})
COMMENTS = frozenset({"comment", "haddock", "pragma"})
# Where a declaration is a definition of its scope; `let`/`where` bindings are local values.
DECLARATIONS = frozenset({"declarations", "class_declarations", "instance_declarations"})


def _name_node(node: Node) -> Node | None:
    name = node.child_by_field_name("name")
    if name is None and node.type == "function":  # an operator defined infix: `a <+> b = …`
        infix = next((c for c in node.named_children if c.type == "infix"), None)
        name = None if infix is None else infix.child_by_field_name("operator")
    return name


def _name_of(node: Node) -> str | None:
    name = _name_node(node)
    return None if name is None else normalise(text(name)).removeprefix("(").removesuffix(")")


def _previous(node: Node) -> Node | None:
    prev = node.prev_named_sibling
    while prev is not None and prev.type in COMMENTS:
        prev = prev.prev_named_sibling
    return prev


def _last_equation(node: Node, name: str) -> Node | None:
    """The last of the equations of `name` that follow `node`, or None when none does."""
    last = None
    nxt = node.next_named_sibling
    while nxt is not None:
        if nxt.type in COMMENTS:
            nxt = nxt.next_named_sibling
            continue
        if nxt.type not in EQUATIONS or _name_of(nxt) != name:
            break
        last, nxt = nxt, nxt.next_named_sibling
    return last


def _kind(scope: Enclosing) -> str:
    return "method" if scope.kind in ("class", "impl") else "function"


def _top(node: Node) -> bool:
    return node.parent is not None and node.parent.type in DECLARATIONS


def _signature(node: Node, scope: Enclosing) -> Def | None:
    """`f :: T`: the function, running to its last equation."""
    name, head = _name_of(node), _name_node(node)
    if name is None or head is None or not _top(node):
        return None
    last = _last_equation(node, name)
    if last is None:
        return Def(name, _kind(scope), None, (head,))
    # The header runs on to the first equation's `=`: its patterns are the parameters' names.
    first = node.next_named_sibling
    while first is not None and first.type in COMMENTS:
        first = first.next_named_sibling
    assert first is not None  # `last` was found after `node`
    body, first_head = _body(first), _name_node(first)
    cut = (head,) if first_head is None else (head, first_head)
    return Def(name, _kind(scope), body, cut, end=last)


def _body(equation: Node) -> Node | None:
    return next((c for c in equation.children if c.type in ("match", "guards")), None)


def _equation(node: Node, scope: Enclosing) -> Def | None:
    """The first equation of a function without a type signature (later ones belong to it)."""
    name, head = _name_of(node), _name_node(node)
    if name is None or head is None or not _top(node):
        return None
    prev = _previous(node)
    if prev is not None and prev.type in (EQUATIONS | {"signature"}) and _name_of(prev) == name:
        return None  # a later equation, or one whose signature already made the Symbol
    return Def(name, _kind(scope), _body(node), (head,), end=_last_equation(node, name))


def _declaration(kind: str) -> Handler:
    def handle(node: Node, _scope: Enclosing) -> Def | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        body = node.child_by_field_name("declarations") if kind != "type" else None
        local = normalise(text(name))
        if kind == "impl":  # `instance Show Bar`: the class and the type patterns
            patterns = node.child_by_field_name("patterns")
            local = normalise(f"{local} {text(patterns)}") if patterns is not None else local
        return Def(local, kind, body, (name,))

    return handle


def _module(root: Node) -> str | None:
    header = next((c for c in root.named_children if c.type == "header"), None)
    module = None if header is None else header.child_by_field_name("module")
    return None if module is None else text(module)


FAMILY = Family(
    handlers={
        "signature": _signature,
        "function": _equation,
        "bind": _equation,
        "class": _declaration("class"),
        "instance": _declaration("impl"),
        "data_type": _declaration("type"),
        "newtype": _declaration("type"),
        "type_synomym": _declaration("type"),  # sic: the grammar's spelling
        "type_family": _declaration("type"),
    },
    join=join_with("."),
    comments=COMMENTS,
    prefix=_module,
)
