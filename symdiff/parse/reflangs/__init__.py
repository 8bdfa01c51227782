"""A file's references (`symdiff.parse.refs`), per language: which reader reads them.

Python's are read from the text with the definitions' spans (`python.py`: a scan in the regular
expression engine, cheaper than any walk of the tree); every other language's from the tree the
symbols were extracted from, by a tree-sitter query per language (`queries.py`), with the imports
read from the nodes the query captures (`imports.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from symdiff.model import Symbol
from symdiff.parse.refs import FileRefs

if TYPE_CHECKING:  # the codec imports reflangs.common: the read side loads no tree-sitter
    from tree_sitter import Tree


def needs_tree(language: str) -> bool:
    """Whether `language`'s references are read from its tree (else from the text alone)."""
    return language != "python"


def references(language: str, source: bytes, tree: Tree | None, symbols: Sequence[Symbol]
               ) -> FileRefs:  # fmt: skip
    """The imports and references of `source`, whose definitions are `symbols` and whose tree
    (when `needs_tree(language)`) is `tree`."""
    if language == "python":
        from symdiff.parse.reflangs.python import python_refs

        return python_refs(source, symbols)
    if tree is None:
        return FileRefs()
    from symdiff.parse.reflangs.queries import tree_refs

    return tree_refs(language, source, tree, symbols)
