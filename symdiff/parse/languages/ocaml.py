"""OCaml (`.ml` and `.mli`): functions, modules, module types, classes, methods, types.

A `let` binding is a function when it takes parameters, is bound to `fun`/`function`, or names an
operator (`let ( >>= ) = Lwt.bind`); other values are left out like other languages' variables.
Local `let … in` functions are qualified by the function they are in, as Python's nested
functions are.
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

_NAMES = ("value_name", "parenthesized_operator")


def _let(node: Node, scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("pattern")
    body = node.child_by_field_name("body")
    if name is None or name.type not in _NAMES or body is None:
        return None
    params = any(c.type == "parameter" for c in node.named_children)
    functional = body.type in ("fun_expression", "function_expression")
    if not params and not functional and name.type != "parenthesized_operator":
        return None  # a value; but an operator (`let ( >>= ) = Lwt.bind`) is always a function
    if body.type == "fun_expression":
        body = body.child_by_field_name("body") or body
    kind = "method" if scope.kind == "class" else "function"
    return Def(normalise(text(name)), kind, body, (name,))


def _named(kind: str, name_type: str, body: str = "body") -> Handler:
    """A definition named by its first child of `name_type` (OCaml names are rarely fields)."""

    def handle(node: Node, _scope: Enclosing) -> Def | None:
        name = next((c for c in node.named_children if c.type == name_type), None)
        if name is None:
            return None
        return Def(normalise(text(name)), kind, node.child_by_field_name(body), (name,))

    return handle


def _value_spec(node: Node, scope: Enclosing) -> Def | None:
    """`val f : a -> b` (and `external`): a function when its type is one; values are left out."""
    kind = node.child_by_field_name("type")
    if kind is None or kind.type != "function_type":
        return None
    return _named("function", "value_name", body="none")(node, scope)


def _type(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    return None if name is None else Def(text(name), "type", None, (name,))


def _module(node: Node, scope: Enclosing) -> Def | None:
    found = _named("module", "module_name")(node, scope)
    if found is not None and found.body is None:
        found.body = node.child_by_field_name("module_type")  # `module M : sig … end` in a .mli
    return found


FAMILY = Family(
    handlers={
        "let_binding": _let,
        "module_binding": _module,
        "module_type_definition": _named("interface", "module_type_name"),
        "class_binding": _named("class", "class_name"),
        "class_type_binding": _named("interface", "class_type_name"),
        "method_definition": _named("method", "method_name"),
        "method_specification": _named("method", "method_name"),
        "value_specification": _value_spec,
        "external": _value_spec,
        "type_binding": _type,
    },
    join=join_with("."),
)
