"""Perl: packages and subs, named `Package::sub` as Perl names them.

`package X;` runs to the next `package` statement of its block (or the block's end), so it is a
scope whose end is its last statement; `package X { … }` is a scope by its block.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from symdiff.parse.languages.engine import Def, Enclosing, Family, field_def, join_with, text

_sub = field_def("function")
# A sub's parameters, the classic way: leading `my ($a, $b) = @_;`, `my $self = shift;`,
# `my %args = @_;`.
_UNPACK = re.compile(
    rb"my\s*(\([^()]*\)\s*=\s*@_|[$@%]\w+\s*=\s*(shift\b(\s*(\(\s*@_\s*\)|@_))?|@_))\s*;?"
)


def _subroutine(node: Node, scope: Enclosing) -> Def | None:
    found = _sub(node, scope)
    if found is None:
        return None
    if "::" in found.name:
        found.absolute = True  # `sub Other::name { … }` names its package
    if found.body is not None and node.child_by_field_name("signature") is None:
        # The unpacking statements are the parameter list: the body starts after them.
        statement = found.body.named_children[0] if found.body.named_child_count else None
        unpacked = False
        while statement is not None and _UNPACK.fullmatch(statement.text or b""):
            statement, unpacked = statement.next_named_sibling, True
        if unpacked:
            found.body = statement
    return found


def _package(node: Node, _scope: Enclosing) -> Def | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    block = next((c for c in node.named_children if c.type == "block"), None)
    if block is not None:
        return Def(text(name), "module", block, (name,), absolute=True)
    end = node
    while end.next_named_sibling is not None and end.next_named_sibling.type != node.type:
        end = end.next_named_sibling
    return Def(text(name), "module", None, (name,), absolute=True, end=end)


FAMILY = Family(
    handlers={
        "subroutine_declaration_statement": _subroutine,
        "method_declaration_statement": _subroutine,
        "package_statement": _package,
    },
    join=join_with("::"),
    comments=frozenset({"comment", "pod"}),
)
