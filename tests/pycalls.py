"""An oracle for Python's calls built on the standard library's `ast` (tests/test_refs.py and
benchmarks/refs_oracle.py): what the reference extractor must read as CALL refs."""

from __future__ import annotations

import ast


def dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):  # super().m()
        inner = node.value
        if isinstance(inner.func, ast.Name) and inner.func.id == "super" and not inner.args:
            return f"super.{node.attr}"
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def ast_calls(source: bytes) -> set[tuple[str, str]]:
    """(the enclosing definition's qualified name, the dotted callee) of every call whose
    callee is a name or a chain of attributes on one (or `super().m`, as `super.m`); a
    decorator's own call is its definition's
    DECORATOR, not a call, and a definition holds its decorators, defaults and annotations."""
    out: set[tuple[str, str]] = set()

    def visit(node: ast.AST, scope: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = node.name if not scope else f"{scope}.{node.name}"
            decorators = {id(d) for d in node.decorator_list}
            for child in ast.iter_child_nodes(node):
                for grandchild in ast.iter_child_nodes(child) if id(child) in decorators else ():
                    visit(grandchild, inner)
                if id(child) not in decorators:
                    visit(child, inner)
            return
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is not None:
                out.add((scope, name))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(source), "")
    return out
