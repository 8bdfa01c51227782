"""Per language: a file's uses as candidate keys, and a definition's own keys."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from symdiff.graph.facts import FileFacts
from symdiff.graph.keys import ecmascript, golang, jvm, python, rust
from symdiff.graph.keys.common import Compiled, Use, last_part
from symdiff.parse.refs import RefKind

PYTHON = frozenset({"python"})
JS = frozenset({"javascript", "typescript", "tsx"})
JVM = frozenset({"java", "kotlin", "csharp", "scala"})


FUNCTION_KINDS = frozenset({"function", "method", "async_function", "async_method",
                            "constructor", "arrow_function", "closure", "lambda"})  # fmt: skip


def compile_file(
    facts: FileFacts, go_modules: Mapping[str, str], *, test_scope: bool = False
) -> Compiled:
    """What one file contributes to the index, from its own facts alone."""
    compiled = _compile(facts, go_modules, test_scope)
    nested = _nested_uses(facts)
    return replace(compiled, uses=compiled.uses + nested) if nested else compiled


def _nested_uses(facts: FileFacts) -> tuple[Use, ...]:
    """A definition nested in a function runs when (and only when) that function runs: the
    function uses it, whether or not anything names it (a callback, a test's local class)."""
    kinds = {s.name: s.kind for s in facts.symbols}
    modules = own_keys(facts.language, facts.path, facts.refs.package, "", frozenset())[0]
    if not modules:
        return ()
    out = []
    for symbol in facts.symbols:
        if symbol.parent is not None and kinds.get(symbol.parent) in FUNCTION_KINDS:
            qual = qualified_name(facts.language, symbol.name, facts.refs.package)
            key = modules[0] + qual
            out.append(Use(symbol.parent, RefKind.CALL, (key,), last_part(qual), False))
    return tuple(out)


def _compile(facts: FileFacts, go_modules: Mapping[str, str], test_scope: bool) -> Compiled:
    language = facts.language
    if language in PYTHON:
        return python.compile_python(facts.path, facts.symbols, facts.refs,
                                     test_scope=test_scope)  # fmt: skip
    if language in JS:
        return ecmascript.compile_js(facts.path, facts.symbols, facts.refs)
    if language == "go":
        return golang.compile_go(facts.path, facts.refs, go_modules)
    if language in JVM:
        return jvm.compile_jvm(facts.symbols, facts.refs)
    if language == "rust":
        return rust.compile_rust(facts.path, facts.symbols, facts.refs)
    uses = tuple(
        Use(r.source, r.kind, (), last_part(r.target), True) for r in facts.refs.refs
    )
    return Compiled(uses=uses)


def language_of(path: str) -> str:
    """A language good enough to key a file the graph no longer holds (a removed file)."""
    ext = path.rpartition(".")[2]
    return {
        "py": "python", "pyi": "python", "go": "go", "rs": "rust", "java": "java",
        "kt": "kotlin", "cs": "csharp", "js": "javascript", "jsx": "javascript",
        "mjs": "javascript", "cjs": "javascript", "ts": "typescript", "tsx": "tsx",
    }.get(ext, "")  # fmt: skip


def own_keys(
    language: str, path: str, package: str, name: str, init_dirs: frozenset[str] | set[str]
) -> tuple[tuple[str, ...], str]:
    """A definition's module keys (each ends where its qualified name starts) and that name."""
    if language in PYTHON:
        return tuple(f"py:{m}." if m else "py:" for m in python.module_names(path, init_dirs)), name
    if language in JS:
        return (ecmascript.module_key(path),), name
    if language == "go":
        return (golang.module_key(path),), golang.qualified(name)
    if language in JVM:
        return (jvm.module_key(package),), jvm.qualified(name, package)
    if language == "rust":
        return (rust.module_key(path),), rust.qualified(name)
    return (), name


def qualified_name(language: str, name: str, package: str) -> str:
    """A Symbol.name as its keys spell it, inside its module."""
    if language == "go":
        return golang.qualified(name)
    if language in JVM:
        return jvm.qualified(name, package)
    if language == "rust":
        return rust.qualified(name)
    return name


__all__ = [
    "Compiled", "Use", "compile_file", "language_of", "last_part", "own_keys", "qualified_name",
]
