"""C and C++: functions, prototypes, `ns::Class::method` (also out of class), types, macros."""

from __future__ import annotations

from tree_sitter import Node

from symdiff.parse.languages import cbranches, cmacros
from symdiff.parse.languages.engine import (
    CLASSLIKE,
    Def,
    Enclosing,
    Family,
    Handler,
    join_with,
    normalise,
    text,
)

join = join_with("::")

SPECIFIER_KINDS = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "class_specifier": "class",
    "enum_specifier": "enum",
}
# Declarator wrappers between a declaration and the function's name.
WRAPPING_DECLARATORS = frozenset(
    {"pointer_declarator", "reference_declarator", "parenthesized_declarator",
     "attributed_declarator"}
)  # fmt: skip


def _function_declarator(node: Node | None) -> Node | None:
    """The function_declarator under a declaration's declarator chain, if it declares one."""
    while node is not None:
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            # `int (*get(void))(int)`: the outer declarator is the returned pointer's.
            found = _function_declarator(inner) if inner is not None else None
            return found or node
        if node.type not in WRAPPING_DECLARATORS:
            return None
        node = node.child_by_field_name("declarator") or (
            node.named_children[0] if node.named_children else None
        )
    return None


def _conversion(node: Node | None) -> tuple[str, tuple[Node, ...]] | None:
    """A conversion function's name and the nodes naming it: `operator bool() const`,
    `A::operator _Tp*()` (`operator bool`, `A::operator _Tp*`), as ctags names them."""
    scopes: list[Node] = []
    while node is not None and node.type == "qualified_identifier":
        scopes.extend(c for c in node.children if c != node.child_by_field_name("name"))
        node = node.child_by_field_name("name")
    if node is None or node.type != "operator_cast":
        return None
    # Down to the parameter list: what comes before it names the type (`operator _Tp*`).
    cut: list[Node] = []
    inner: Node | None = node
    while inner is not None and inner.type != "abstract_function_declarator":
        after = inner.child_by_field_name("declarator")
        if after is None and inner.type == "abstract_reference_declarator":
            after = inner.named_children[0] if inner.named_children else None  # `operator T&()`
        cut.extend(c for c in inner.children if c != after)
        inner = after
    params = None if inner is None else inner.child_by_field_name("parameters")
    if params is None:
        return None
    head = text(node)[: params.start_byte - node.start_byte]
    qualifier = "".join(normalise(text(c)) for c in scopes)
    return qualifier + normalise(head), (*scopes, *cut)


def _past_invented_scope(name: Node) -> Node:
    """The name itself when tree-sitter made a type into a scope by inventing the `::`: in
    `YG_EXPORT YGConfigRef YGConfigNew(void);` the macro is read as the type and the type as
    the scope of `YGConfigRef::YGConfigNew`; `static int IMGUI_CDECL Cmp(…)` likewise."""
    while name.type == "qualified_identifier":
        colons = next((c for c in name.children if c.type == "::"), None)
        inner = name.child_by_field_name("name")
        if colons is None or not colons.is_missing or inner is None:
            break
        name = inner
    return name


def _deleted(node: Node | None) -> Node | None:
    """The declarator of `void begin(auto&) = delete;` outside a class, which tree-sitter reads
    as a variable initialised by a `delete` expression; any other declarator as it is."""
    if node is not None and node.type == "init_declarator":
        value = node.child_by_field_name("value")
        if value is not None and value.type == "delete_expression":
            return node.child_by_field_name("declarator")
    return node


def _function(node: Node, scope: Enclosing) -> Def | None:
    declarator = _function_declarator(_deleted(node.child_by_field_name("declarator")))
    name = None if declarator is None else declarator.child_by_field_name("declarator")
    if declarator is None and node.type != "ERROR":
        conversion = _conversion(node.child_by_field_name("declarator"))
        if conversion is not None:
            local, cut = conversion
            owner = local.split("::")[-2] if "::" in local else scope.name
            kind = "method" if "::" in local or scope.kind in CLASSLIKE else "function"
            return Def(local, kind, node.child_by_field_name("body"), cut) if owner else None
    if name is None or name.type in WRAPPING_DECLARATORS:
        return None
    name = _past_invented_scope(name)
    local = normalise(text(name))
    parts = local.split("::")
    owner = parts[-2] if len(parts) > 1 else (scope.name or "").rsplit("::", 1)[-1]
    inside = len(parts) > 1 or scope.kind in CLASSLIKE
    kind = "function"
    if inside:
        kind = "constructor" if parts[-1] == owner else "method"
    # A constructor's member initialisers are code, not part of its signature.
    inits = tuple(c for c in node.named_children if c.type == "field_initializer_list")
    return Def(local, kind, node.child_by_field_name("body"), (name, *inits))


def _unparsed_prototype(node: Node, scope: Enclosing) -> Def | None:
    """`int f(int) __THROW;`: an unknown macro after a prototype leaves an ERROR around it."""
    declarator = next((c for c in node.named_children if c.type == "function_declarator"), None)
    name = None if declarator is None else declarator.child_by_field_name("declarator")
    if name is None or name.type not in ("identifier", "field_identifier", "qualified_identifier"):
        return None
    kind = "method" if scope.kind in CLASSLIKE else "function"
    return Def(normalise(text(name)), kind, None, (name,))


def _specifier(node: Node, _scope: Enclosing) -> Def | None:
    name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
    if name is None or body is None:
        return None
    return Def(normalise(text(name)), SPECIFIER_KINDS[node.type], body, (name,))


def _typedef(node: Node, _scope: Enclosing) -> Def | None:
    """`typedef struct {…} name;` is the struct's definition; other typedefs are types."""
    name, inner = node.child_by_field_name("declarator"), node.child_by_field_name("type")
    if name is None or name.type != "type_identifier":
        return None
    anonymous = inner is not None and inner.child_by_field_name("name") is None
    if inner is not None and inner.type in SPECIFIER_KINDS and anonymous:
        body = inner.child_by_field_name("body")
        if body is not None:
            return Def(text(name), SPECIFIER_KINDS[inner.type], body, (name,))
    return Def(text(name), "type", None, (name,))


def _macro(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    return Def(text(name), "macro", node.child_by_field_name("value"), (name,))


def _alias(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    return None if name is None else Def(text(name), "type", None, (name,))


def _namespace(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None  # an anonymous namespace qualifies nothing
    return Def(normalise(text(name)), "namespace", node.child_by_field_name("body"), (name,))


HANDLERS: dict[str, Handler] = {
    "function_definition": _function,
    "declaration": _function,
    "field_declaration": _function,
    "struct_specifier": _specifier,
    "union_specifier": _specifier,
    "class_specifier": _specifier,
    "enum_specifier": _specifier,
    "type_definition": _typedef,
    "alias_declaration": _alias,
    "namespace_definition": _namespace,
    "preproc_function_def": _macro,
    "ERROR": _unparsed_prototype,
}

FAMILY = Family(
    handlers=HANDLERS,
    join=join,
    wrappers=frozenset({"template_declaration"}),
    mask=cmacros.mask,
    branches=cbranches.splitting,
)
