"""Dart: classes, mixins, extensions, enums, functions, methods, getters/setters, operators and
constructors (`Point.Point`, named `Point.origin`), qualified by class.

tree-sitter-dart puts a function's signature and its body side by side (`method_signature`, then
`function_body`), so the Symbol runs from the signature to the body, its sibling.
"""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages.engine import Def, Enclosing, Family, Handler, text

# Signature node -> kind; the name is its last `name` field or identifier (`A.named` -> `named`).
SIGNATURES = {
    "function_signature": "function",
    "getter_signature": "function",
    "setter_signature": "function",
    "operator_signature": "function",
    "constructor_signature": "constructor",
    "constant_constructor_signature": "constructor",
    "factory_constructor_signature": "constructor",
    "redirecting_factory_constructor_signature": "constructor",
}
CLASSLIKE = frozenset({"class", "trait", "impl", "enum"})


def _name(node: Node) -> Node | None:
    if node.type == "operator_signature":
        return next((c for c in node.children if "operator" in c.type and c.is_named), None)
    names = node.children_by_field_name("name") or [
        c for c in node.named_children if c.type == "identifier"
    ]
    return names[-1] if names else None


def _signature(node: Node, scope: Enclosing) -> Def | None:
    holder = node.parent
    if holder is None or holder.type in ("lambda_expression", "function_type"):
        return None  # a local function (handled by its declaration) or a function type
    name = _name(node)
    if name is None:
        return None
    kind = SIGNATURES[node.type]
    if kind == "function" and scope.kind in CLASSLIKE:
        kind = "method"
    outer = holder if holder.type in ("method_signature", "declaration") else node
    body = outer.next_named_sibling
    if body is None or body.type != "function_body" or outer.type == "declaration":
        body = None
    # A named constructor's class part (`Point.` in `Point.origin`) and a constructor's
    # initialiser list (`: x = 0`, code) are not signature.
    names = [
        c for c in node.named_children if c.type == "identifier" and c.end_byte <= name.end_byte
    ]
    inits = [c for c in holder.named_children if c.type == "initializers"]
    cut = (name, *names, *inits) if kind == "constructor" else (name,)
    return Def(text(name), kind, body, cut, end=body or outer)


def _local(node: Node, _scope: Enclosing) -> Def | None:
    """`int twice(int a) => a * 2;` inside a body."""
    lam = next((c for c in node.named_children if c.type == "lambda_expression"), None)
    signature = lam.child_by_field_name("parameters") if lam is not None else None
    name = _name(signature) if signature is not None else None
    if lam is None or name is None:
        return None
    return Def(text(name), "function", lam.child_by_field_name("body"), (name,))


def _type(kind: str) -> Handler:
    def handle(node: Node, _scope: Enclosing) -> Def | None:
        name = node.child_by_field_name("name") or next(
            (c for c in node.named_children if c.type == "identifier"), None
        )
        if name is None and kind == "impl":  # an unnamed `extension on String`
            name = node.child_by_field_name("class")
        if name is None:
            return None
        body = node.child_by_field_name("body") or next(
            (c for c in node.named_children if c.type.endswith("_body")), None
        )
        return Def(text(name), kind, body, (name,))

    return handle


FAMILY = Family(
    handlers={
        **{t: _signature for t in SIGNATURES},
        "local_function_declaration": _local,
        "class_definition": _type("class"),
        "mixin_declaration": _type("trait"),
        "extension_declaration": _type("impl"),
        "enum_declaration": _type("enum"),
    },
    join=lambda scope, name: name if scope.name is None else f"{scope.name}.{name}",
    comments=frozenset({"comment", "documentation_comment"}),
    wrappers=frozenset({"method_signature", "declaration"}),
    leading=frozenset({"annotation", "marker_annotation"}),
)
