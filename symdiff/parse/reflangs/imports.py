"""Imports read from the import nodes a language's query captures (`queries.py`), one small
reader per language: each turns one node into the `Import`s it binds."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from tree_sitter import Node

from symdiff.parse.refs import Import

Reader = Callable[[Node], list[Import]]


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _line(node: Node) -> int:
    return node.start_point.row + 1


def _unquote(text: str) -> str:
    return text.strip().strip("'\"`<>")


def ecmascript(node: Node) -> list[Import]:
    """`import d, {a as b} from "m"`, `import * as ns from "m"`, `import "m"`,
    `export {x as y} from "m"`, `export * from "m"`."""
    source = node.child_by_field_name("source")
    if source is None:
        return []
    module, line = _unquote(_text(source)), _line(node)
    out: list[Import] = []
    for child in node.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    out.append(Import(_text(part), module, "default", line))
                elif part.type == "namespace_import":
                    out.extend(Import(_text(n), module, "", line) for n in part.named_children)
                elif part.type == "named_imports":
                    out.extend(_specifiers(part, module, line))
        elif child.type == "export_clause":
            out.extend(_specifiers(child, module, line))
    if not out:  # a side-effect import, or `export * from`
        star = node.type == "export_statement"
        out.append(Import("", module, "*" if star else "", line))
    return out


def _specifiers(node: Node, module: str, line: int) -> Iterator[Import]:
    for spec in node.named_children:
        name = spec.child_by_field_name("name")
        if name is None:
            continue
        alias = spec.child_by_field_name("alias")
        yield Import(_text(alias or name), module, _text(name), line)


def require(node: Node) -> list[Import]:
    """`const m = require("m")`, `const {a, b: c} = require("m")`, `import("m")` (a callee
    node whose call holds the module), Ruby's `require "m"`."""
    call = node if node.type == "call" else node.parent
    if call is None:
        return []
    args = call.child_by_field_name("arguments")
    first = args.named_children[0] if args is not None and args.named_children else None
    if first is None or "string" not in first.type:
        return []
    module, line = _unquote(_text(first)), _line(node)
    holder = call.parent
    if holder is None or holder.type != "variable_declarator":
        return [Import("", module, "", line)]
    bound = holder.child_by_field_name("name")
    if bound is not None and bound.type == "identifier":
        return [Import(_text(bound), module, "", line)]
    out = []
    for part in bound.named_children if bound is not None else ():
        if part.type == "shorthand_property_identifier_pattern":
            out.append(Import(_text(part), module, _text(part), line))
        elif part.type == "pair_pattern":
            key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
            out.append(Import(_text(value), module, _text(key), line))
    return out


def golang(node: Node) -> list[Import]:
    """`import f "fmt"`, `_ "x"`, `. "x"`, `"a/b"` (bound as its package's conventional name,
    `_go_package`)."""
    path = _unquote(_text(node.child_by_field_name("path")))
    name = node.child_by_field_name("name")
    line = _line(node)
    if name is None:
        return [Import(_go_package(path), path, "", line)]
    if name.type == "dot":
        return [Import("", path, "*", line)]
    if name.type == "blank_identifier":
        return [Import("", path, "", line)]
    return [Import(_text(name), path, "", line)]


def _go_package(path: str) -> str:
    """The name an unnamed Go import binds, by convention: the path's last segment, but a
    major version's (`x/y/v2` -> `y`) and gopkg.in's `.vN` (`gopkg.in/yaml.v3` -> `yaml`)."""
    parts = path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    return re.sub(r"\.v\d+$", "", last)


_JAVA_IMPORT = re.compile(r"^import\s+(?:static\s+)?([\w.\s]+?)(\.\s*\*)?\s*;?$", re.S)


def java(node: Node) -> list[Import]:
    """`import a.b.C;`, `import static a.b.C.m;`, `import a.b.*;`."""
    found = _JAVA_IMPORT.match(_text(node).strip())
    if found is None:
        return []
    path = re.sub(r"\s+", "", found.group(1))
    if found.group(2):
        return [Import("", path, "*", _line(node))]
    module, _, name = path.rpartition(".")
    return [Import(name, module, name, _line(node))]


def kotlin(node: Node) -> list[Import]:
    """`import a.b.C`, `import a.b.C as D`, `import a.b.*`."""
    path = ""
    alias = ""
    star = False
    for child in node.named_children:
        if child.type == "identifier":
            path = re.sub(r"\s+", "", _text(child))
        elif child.type == "import_alias":
            alias = _text(child.named_children[-1]) if child.named_children else ""
        elif child.type == "wildcard_import":
            star = True
    if not path:
        return []
    if star:
        return [Import("", path, "*", _line(node))]
    module, _, name = path.rpartition(".")
    return [Import(alias or name, module, name, _line(node))]


def csharp(node: Node) -> list[Import]:
    """`using A.B;` (every name of the namespace), `using X = A.B.C;`, `using static A.B;`."""
    alias = node.child_by_field_name("name")
    named = [c for c in node.named_children if alias is None or c.id != alias.id]
    if not named:
        return []
    path = re.sub(r"\s+", "", _text(named[-1])).replace("::", ".")
    if alias is None:
        return [Import("", path, "*", _line(node))]
    module, _, name = path.rpartition(".")
    return [Import(_text(alias), module, name, _line(node))]


def rust(node: Node) -> list[Import]:
    """`use crate::a::{b, c as d};`, `use super::x;`, `use std::io::*;`, `mod m;`."""
    line = _line(node)
    if node.type == "mod_item":
        name = _text(node.child_by_field_name("name"))
        return [Import(name, f"self.{name}", "", line)] if name else []
    argument = node.child_by_field_name("argument")
    return list(_use(argument, "", line)) if argument is not None else []


def _use(node: Node, prefix: str, line: int) -> Iterator[Import]:
    kind = node.type
    if kind in ("identifier", "scoped_identifier", "crate", "super", "self", "metavariable"):
        path = _join(prefix, _text(node).replace("::", "."))
        module, _, name = path.rpartition(".")
        if name == "self":  # `use a::{self}`: the module itself
            module, _, name = module.rpartition(".")
        yield Import(name, module, name, line)
    elif kind == "use_as_clause":
        path_node = node.child_by_field_name("path")
        alias = _text(node.child_by_field_name("alias"))
        path = _join(prefix, _text(path_node).replace("::", "."))
        module, _, name = path.rpartition(".")
        yield Import(alias, module, name, line)
    elif kind == "use_wildcard":
        star = node.named_children[0] if node.named_children else None
        yield Import("", _join(prefix, _text(star).replace("::", ".")), "*", line)
    elif kind == "scoped_use_list":
        head = node.child_by_field_name("path")
        scope = _join(prefix, _text(head).replace("::", ".")) if head is not None else prefix
        items = node.child_by_field_name("list")
        for item in items.named_children if items is not None else ():
            yield from _use(item, scope, line)
    elif kind == "use_list":
        for item in node.named_children:
            yield from _use(item, prefix, line)


def _join(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix and path else prefix or path


def include(node: Node) -> list[Import]:
    """C and C++'s `#include <a.h>` / `"a/b.h"`: the file, bound to no name."""
    return [Import("", _unquote(_text(node.child_by_field_name("path"))), "", _line(node))]


def php(node: Node) -> list[Import]:
    """`use A\\B\\C;`, `use A\\B as D;`."""
    out = []
    for clause in node.named_children:
        if clause.type != "namespace_use_clause":
            continue
        alias = clause.child_by_field_name("alias")
        names = [c for c in clause.named_children if alias is None or c.id != alias.id]
        if not names:
            continue
        path = _text(names[0]).lstrip("\\").replace("\\", ".")
        module, _, name = path.rpartition(".")
        out.append(Import(_text(alias) if alias is not None else name, module, name, _line(node)))
    return out


IMPORTS: dict[str, Reader] = {
    "javascript": ecmascript,
    "typescript": ecmascript,
    "tsx": ecmascript,
    "go": golang,
    "java": java,
    "kotlin": kotlin,
    "csharp": csharp,
    "rust": rust,
    "c": include,
    "cpp": include,
    "objc": include,
    "php": php,
}


def package_of(node: Node) -> str:
    """The package or namespace a package node declares, `.`-separated."""
    if node.type == "package_clause":  # Go: `package p`
        return _text(node.named_children[0]) if node.named_children else ""
    name = node.child_by_field_name("name")
    if name is None:
        named = [c for c in node.named_children if c.type not in ("comment", "declaration_list")]
        name = named[0] if named else None
    text = re.sub(r"\s+", "", _text(name))
    return text.replace("\\", ".").replace("::", ".")
