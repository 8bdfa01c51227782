"""References read from a tree by one tree-sitter query per language (every language but Python).

A language's query captures the nodes that name what a definition uses: `@call` on a callee (a
function, a `new`'s class, a composite literal's type, a macro, a JSX element), `@member` on a
call whose target is assembled from two fields (Java's `a.b()`: `object`, `name`), `@type` on a
type's name, `@import` on an import (read by `imports.py`), `@package` on the package the file
declares. Each capture becomes one Ref of the innermost definition around it; a target is the
capture's text with `::`, `->`, `\\`, `:` and `$` read as `.`, generic arguments dropped, and a
receiver that is no name (`f().g`, `a[0].g`) cut off (`g`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from tree_sitter import Node, Query, QueryCursor, QueryError, Tree
from tree_sitter_language_pack import SupportedLanguage, get_language

from symdiff.model import Symbol
from symdiff.parse.reflangs.common import Enclosing, ref
from symdiff.parse.reflangs.imports import IMPORTS, package_of, require
from symdiff.parse.refs import FileRefs, Import, Ref, RefKind

_ECMA_CALLS = """
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(jsx_opening_element name: (_) @call)
(jsx_self_closing_element name: (_) @call)
(import_statement) @import
(export_statement source: (_)) @import
(class_heritage (identifier) @type)
(class_heritage (member_expression) @type)
"""
_TS_TYPES = """
(type_identifier) @type
(nested_type_identifier) @type
(extends_clause value: (_) @type)
"""
_C_CALLS = """
(call_expression function: (_) @call)
(preproc_include) @import
"""

# Language -> its query (the capture names above).
QUERIES: dict[str, str] = {
    "javascript": _ECMA_CALLS,
    "typescript": _ECMA_CALLS + _TS_TYPES,
    "tsx": _ECMA_CALLS + _TS_TYPES,
    "go": """
(package_clause) @package
(import_spec) @import
(call_expression function: (_) @call)
(composite_literal type: (_) @call)
(type_identifier) @type
(qualified_type) @type
""",
    "java": """
(package_declaration) @package
(import_declaration) @import
(method_invocation) @member
(object_creation_expression type: (_) @call)
(type_identifier) @type
(scoped_type_identifier) @type
(superclass (_) @type)
""",
    "kotlin": """
(package_header) @package
(import_header) @import
(call_expression . (_) @call)
(user_type) @type
(delegation_specifier (constructor_invocation (user_type) @call))
""",
    "csharp": """
(namespace_declaration) @package
(file_scoped_namespace_declaration) @package
(using_directive) @import
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(base_list (_) @type)
(_ type: (identifier) @type)
(_ type: (qualified_name) @type)
(_ type: (generic_name) @type)
""",
    "rust": """
(use_declaration) @import
(mod_item !body) @import
(call_expression function: (_) @call)
(struct_expression name: (_) @call)
(macro_invocation macro: (_) @call)
(type_identifier) @type
(scoped_type_identifier) @type
""",
    "c": _C_CALLS,
    "cpp": _C_CALLS + """
(new_expression type: (_) @call)
(type_identifier) @type
""",
    "objc": _C_CALLS + "(message_expression) @member\n",
    "ruby": "(call) @member\n",
    "php": """
(namespace_definition) @package
(namespace_use_declaration) @import
(function_call_expression function: (_) @call)
(member_call_expression) @member
(scoped_call_expression) @member
(object_creation_expression (_) @call)
""",
    "swift": "(call_expression . (_) @call)\n",
    "scala": """
(call_expression function: (_) @call)
(instance_expression . (_) @call)
""",
    "bash": "(command name: (command_name) @call)\n",
    "lua": "(function_call name: (_) @call)\n",
    "zig": """
(SuffixExpr variable_type_function: (IDENTIFIER) @call (FnCallArguments))
(FieldOrFnCall function_call: (IDENTIFIER) @call)
""",
    "dart": """
((identifier) @call . (selector (argument_part)))
((selector (unconditional_assignable_selector (identifier) @call)) . (selector (argument_part)))
""",
    "julia": "(call_expression . (_) @call)\n",
    "r": "(call function: (_) @call)\n",
    "haskell": """
(apply function: [(variable) (qualified) (constructor)] @call)
""",
    "elixir": "(call target: (_) @call)\n",
    "ocaml": "(application_expression function: (_) @call)\n",
    "ocaml_interface": "(application_expression function: (_) @call)\n",
    "perl": """
(function_call_expression function: (_) @call)
(method_call_expression) @member
""",
}

# A `@member` capture's node type -> the fields of its receiver and of its member.
_MEMBERS: dict[str, tuple[str, str]] = {
    "method_invocation": ("object", "name"),  # Java
    "call": ("receiver", "method"),  # Ruby
    "member_call_expression": ("object", "name"),  # PHP
    "scoped_call_expression": ("scope", "name"),  # PHP
    "method_call_expression": ("invocant", "method"),  # Perl
    "message_expression": ("receiver", "method"),  # Objective-C
}

# Node types that hold a type's name as their own child (a `@type` capture inside one of these is
# part of the outer capture, which is kept whole).
_TYPE_WRAPPERS = frozenset({
    "scoped_type_identifier", "nested_type_identifier", "qualified_type", "qualified_name",
    "qualified_identifier", "user_type", "generic_name",
})  # fmt: skip

# Calls that load a module: read as imports, not references.
_LOADERS: dict[str, frozenset[str]] = {
    "javascript": frozenset({"require", "import"}),
    "typescript": frozenset({"require", "import"}),
    "tsx": frozenset({"require", "import"}),
    "ruby": frozenset({"require", "require_relative", "load"}),
}

# Callees that are the language's own words, not anyone's definitions.
_NOT_CALLS: dict[str, frozenset[str]] = {
    "elixir": frozenset({
        "def", "defp", "defmodule", "defmacro", "defmacrop", "defstruct", "defimpl",
        "defprotocol", "defdelegate", "defguard", "defexception", "alias", "import", "require",
        "use", "if", "unless", "case", "cond", "with", "for", "fn", "quote", "unquote",
    }),
}  # fmt: skip

_SEPARATORS = re.compile(r"::|->|\?\.|[\\:$]")
_GENERIC = re.compile(r"<[^<>]*>")
_BLANK = re.compile(r"\s+")
_NAME = re.compile(r"(?:[A-Za-z_$@][\w$]*[!?]?\.)*[A-Za-z_$@][\w$]*[!?]?$")
_TAIL = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*[!?]?$")
# Where a tail can start: read on the reversed text, an optional `!` or `?` and the run of name
# characters and dots before it. `_TAIL` searched over a whole callee (an immediately invoked
# function is its whole body: 325 KB in Django's xregexp.js) tries every position and runs each
# word to its end: 0.27 s of a cold build's JavaScript, against ~0 searched from there.
_TAIL_RUN = re.compile(r"[!?]?[\w.]*")


@dataclass(frozen=True, slots=True)
class _Compiled:
    query: Query
    kinds: dict[str, RefKind]


@functools.cache
def _compiled(language: str) -> _Compiled | None:
    source = QUERIES.get(language)
    if source is None:
        return None
    grammar = get_language(cast(SupportedLanguage, language))
    kept = []
    for pattern in filter(None, (line.strip() for line in source.splitlines())):
        try:  # a pattern the grammar cannot read (TypeScript has no JSX) is left out
            Query(grammar, pattern)
        except QueryError:
            continue
        kept.append(pattern)
    if not kept:
        return None
    query = Query(grammar, "\n".join(kept))
    return _Compiled(query, {"call": RefKind.CALL, "member": RefKind.CALL, "type": RefKind.TYPE})


def tree_refs(language: str, source: bytes, tree: Tree, symbols: Sequence[Symbol]) -> FileRefs:
    """The imports and references of a file read from its tree."""
    compiled = _compiled(language)
    if compiled is None:
        return FileRefs()
    captures = QueryCursor(compiled.query).captures(tree.root_node)
    where = Enclosing(symbols, len(source))
    package = ""
    imports: list[Import] = []
    for node in captures.get("package", ()):
        package = package or package_of(node)
    reader = IMPORTS.get(language)
    if reader is not None:
        for node in captures.get("import", ()):
            imports.extend(reader(node))
    refs: dict[tuple[str, str, RefKind], Ref] = {}
    for capture, kind in compiled.kinds.items():
        for node in captures.get(capture, ()):
            if kind is RefKind.TYPE and _part_of_type(node):
                continue
            target = _member(node) if capture == "member" else _target(node)
            if not target:
                continue
            if target in _NOT_CALLS.get(language, ()):
                continue
            if target in _LOADERS.get(language, ()):
                imports.extend(require(node))
                continue
            name = where.name(node.start_byte)
            if name.endswith(target) and _own_name(node, where, target):
                continue
            key = (name, target, kind)
            line = node.start_point.row + 1
            # The first line that writes it, whatever order the captures came in (patterns
            # matching one node do not come in one order from run to run).
            if key not in refs or line < refs[key].line:
                refs[key] = ref(name, target, kind, line)
    imports.sort(key=lambda i: (i.line, i.module, i.name, i.local))
    return FileRefs(package, tuple(imports), tuple(refs[k] for k in sorted(refs)))


def _own_name(node: Node, where: Enclosing, target: str) -> bool:
    """Whether a capture is the enclosing definition's own name in its header (Julia's
    `function f()` holds a call `f()`), not a use of it."""
    symbol = where.symbol(node.start_byte)
    return (
        symbol is not None
        and node.start_point.row + 1 <= symbol.header_end_line
        and symbol.name.rsplit(".", 1)[-1] == target
    )


def _part_of_type(node: Node) -> bool:
    """Whether a type capture is the name of a definition (`class Foo`, `type T struct`) or
    part of a larger type capture (`B` in `a.B`)."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in _TYPE_WRAPPERS:
        return True
    named = parent.child_by_field_name("name")
    return named is not None and named.id == node.id and parent.type not in ("generic_type",)


def _member(node: Node) -> str:
    """The target of a call assembled from its receiver's and its member's fields."""
    fields = _MEMBERS.get(node.type)
    if fields is None:
        return ""
    member = node.child_by_field_name(fields[1])
    if member is None:
        return ""
    receiver = node.child_by_field_name(fields[0])
    name = _clean(_text(member))
    if receiver is None:
        return name
    head = _clean(_text(receiver))
    return f"{head}.{name}" if head and name else name


def _target(node: Node) -> str:
    return _clean(_text(node))


@functools.lru_cache(maxsize=1 << 14)
def _clean(text: str) -> str:
    """A name as written, normalised: separators as `.`, no blanks, generics, or a receiver
    that is not a name (`f().g` -> `g`)."""
    flat = _BLANK.sub("", text)
    while "<" in flat and _GENERIC.search(flat):
        flat = _GENERIC.sub("", flat)
    flat = _SEPARATORS.sub(".", flat).strip(".")
    flat = flat.replace("..", ".")
    if _NAME.match(flat):
        return flat.lstrip("$@")
    run = _TAIL_RUN.match(flat[::-1])
    tail = _TAIL.search(flat, len(flat) - (run.end() if run else 0))
    return tail.group() if tail else ""


def _text(node: Node) -> str:
    data = node.text
    return "" if data is None else data.decode("utf-8", "replace")
