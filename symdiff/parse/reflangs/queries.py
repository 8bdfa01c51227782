"""References read from a tree by a tree-sitter query per language."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Tree

from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs


def tree_refs(language: str, source: bytes, tree: Tree, symbols: Sequence[Symbol]) -> FileRefs:
    """The imports and references of a file read from its tree."""
    return FileRefs()
