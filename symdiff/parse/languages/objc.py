"""Objective-C: C's definitions (cfamily) plus `@interface`/`@implementation` (categories as
`Class(Category)`), `@protocol`, and methods named by their selector (`Greeter.initWithName:`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from symdiff.parse.languages import cbranches, cfamily, cmacros
from symdiff.parse.languages.engine import Def, Enclosing, Family, Handler, join_with, text

BODIES = frozenset({"compound_statement"})
# What heads an @interface/@implementation/@protocol; its first other child opens the body.
HEADER = frozenset(
    {"identifier", "type_identifier", "parameterized_arguments", "protocol_reference_list",
     "protocol_qualifiers", "comment"}
)  # fmt: skip


# Availability and Swift-bridging macros after a declaration, before its `;` or `{`:
# `- (instancetype)init NS_UNAVAILABLE;`, `… (NSError *error) API_AVAILABLE(ios(10));`,
# `typedef void (^Block)(id x) AF_API_AVAILABLE(macosx(10.12));` — upper-case names with an `_`.
_ANNOTATIONS = re.compile(
    rb"(?<=[\w)\]])((?:[ \t]+[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b(?:\s*" + cmacros.GROUP + rb")?)+)"
    rb"(?=\s*[;{])"
)


# A method's first selector keyword after its return type: `- (void)__addAccessory {`. C's mask
# reads a reserved name after a `)` as a decoration macro (`f(int) __THROW;`); here it is not.
_SELECTOR = re.compile(rb"^[ \t]*[-+][ \t]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*(_\w+)", re.MULTILINE)


def mask(source: bytes) -> bytes:
    """C's macro mask, and Objective-C's availability macros blanked (same length and lines)."""
    masked = cmacros.mask(source)
    if b"_" not in masked:
        return masked
    masked = _ANNOTATIONS.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), masked)
    kept = bytearray(masked)
    for m in _SELECTOR.finditer(source):
        kept[m.start(1) : m.end(1)] = m.group(1)
    return bytes(kept)


def _container(kind: str) -> Handler:
    def handle(node: Node, _scope: Enclosing) -> Def | None:
        name = next((c for c in node.named_children if c.type == "identifier"), None)
        if name is None:
            return None
        local = text(name)
        category = node.child_by_field_name("category")
        if category is not None:
            local, kind_here = f"{local}({text(category)})", "impl"
        else:
            kind_here = kind
        body = next((c for c in node.named_children if c.type not in HEADER), None)
        return Def(local, kind_here, body, (name,))

    return handle


def _method(node: Node, _scope: Enclosing) -> Def | None:
    """`- (void)walk:(int)steps with:(id)x {…}`: named `walk:with:`; `- (void)greet` is `greet`."""
    keywords = [c for c in node.named_children if c.type == "identifier"]
    if not keywords:
        return None
    takes = any(c.type == "method_parameter" for c in node.named_children)
    selector = "".join(f"{text(k)}:" for k in keywords) if takes else text(keywords[0])
    body = next((c for c in node.named_children if c.type in BODIES), None)
    return Def(selector, "method", body, tuple(keywords))


FAMILY = Family(
    handlers={
        **cfamily.HANDLERS,
        "class_interface": _container("interface"),
        "class_implementation": _container("class"),
        "protocol_declaration": _container("interface"),
        "method_definition": _method,
        "method_declaration": _method,
    },
    join=join_with("."),
    mask=mask,
    branches=cbranches.splitting,
)
