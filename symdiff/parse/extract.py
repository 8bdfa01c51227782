"""extract(language, source) -> the definitions in a source file, as Symbols; pure."""

from __future__ import annotations

import functools
import hashlib
import importlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import cast

from tree_sitter import Node, Parser, Query, Tree
from tree_sitter_language_pack import SupportedLanguage, get_language, get_parser

from symdiff.model import Symbol
from symdiff.parse import reparse
from symdiff.parse.languages import family_module
from symdiff.parse.languages.engine import (
    Family,
    definition_query,
    error_bytes,
    walk,
)
from symdiff.parse.reflangs import needs_tree, references
from symdiff.parse.refs import FileRefs

# Parsers are not safe to share between threads; keep one per language per thread.
_local = threading.local()

# Symbols by content: a file's old version was its new version at the previous change, so the
# pipeline asks for each content twice. Keyed by a digest, so no source is kept alive.
# Bounded by entries and by symbols held, so a long-running daemon that meets huge generated
# files keeps tens of MB here at most.
CACHE_SIZE = 2048
CACHE_SYMBOLS = 100_000
_cache: OrderedDict[tuple[str, bytes], tuple[Symbol, ...]] = OrderedDict()
_cache_lock = threading.Lock()
_cache_held = 0


def _parser(language: str) -> Parser:
    cache: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(language)
    if parser is None:
        parser = cache[language] = get_parser(cast(SupportedLanguage, language))
    return parser


@functools.cache
def _family(language: str) -> tuple[Family, Query] | None:
    module = family_module(language)
    if module is None:
        return None
    family: Family = importlib.import_module(module).FAMILY
    return family, definition_query(family, get_language(cast(SupportedLanguage, language)))


def extract(language: str, source: bytes, *, base: bytes | None = None) -> list[Symbol]:
    """The definitions in `source`, ordered by start line; [] for a language we do not parse.

    `base`: a text that `source` was probably edited from (the other version of a changed
    file); while its tree is held (reparse.py), `source` is parsed incrementally from it. The
    answer is the same either way. Never raises on bad input: a file with syntax errors yields
    whatever still parses.
    """
    if _family(language) is None:
        return []
    digest = _digest(source)
    return list(_cached(language, digest, source, None if base is None else _digest(base)))


def _digest(source: bytes) -> bytes:
    return hashlib.blake2b(source, digest_size=16).digest()


def _cached(language: str, digest: bytes, source: bytes, base: bytes | None) -> tuple[Symbol, ...]:
    with _cache_lock:
        hit = _cache.get((language, digest))
        if hit is not None:
            _cache.move_to_end((language, digest))
            return hit
    symbols = tuple(_extract(language, source, digest, base))
    _remember(language, digest, symbols)
    return symbols


def _remember(language: str, digest: bytes, symbols: tuple[Symbol, ...]) -> None:
    global _cache_held
    if len(symbols) > CACHE_SYMBOLS // 4:
        return  # one huge file would evict everything else
    with _cache_lock:
        previous = _cache.pop((language, digest), None)
        _cache_held -= len(previous) if previous is not None else 0
        _cache[(language, digest)] = symbols
        _cache_held += len(symbols)
        while len(_cache) > CACHE_SIZE or _cache_held > CACHE_SYMBOLS:
            _cache_held -= len(_cache.popitem(last=False)[1])


def extract_uncached(language: str, source: bytes) -> list[Symbol]:
    """`extract` without its caches: always parses from scratch (for benchmarks and tests)."""
    return _extract(language, source, None, None)


def extract_with_refs(language: str, source: bytes, *, base: bytes | None = None
                      ) -> tuple[list[Symbol], FileRefs]:  # fmt: skip
    """`extract(language, source, base=base)` and the file's references, from one parse.

    The symbols are `extract`'s exactly (and fill its cache); the references are read from the
    same tree, or for a language read from its text (Python) from the symbols alone, so that
    symbols already cached cost no parse at all.
    """
    if _family(language) is None:
        return [], FileRefs()
    digest = _digest(source)
    if not needs_tree(language):
        symbols = list(_cached(language, digest, source, None if base is None else _digest(base)))
        return symbols, references(language, source, None, symbols)
    tree = _tree(language, source, digest, None if base is None else _digest(base))
    symbols = _cached_from(language, digest, source, tree)
    return symbols, references(language, source, tree, symbols)


def extract_refs(language: str, source: bytes) -> FileRefs:
    """The references of `source` (`extract_with_refs`'s second half)."""
    return extract_with_refs(language, source)[1]


def extract_with_refs_uncached(language: str, source: bytes) -> tuple[list[Symbol], FileRefs]:
    """`extract_with_refs` without the symbols' cache: one parse from scratch (benchmarks)."""
    if _family(language) is None:
        return [], FileRefs()
    tree = _tree(language, source, None, None)
    symbols = _walk(language, source, tree)
    return symbols, references(language, source, tree if needs_tree(language) else None, symbols)


def _cached_from(language: str, digest: bytes, source: bytes, tree: Tree) -> list[Symbol]:
    """The symbols of `source` from the cache, or walked from `tree` and cached."""
    with _cache_lock:
        hit = _cache.get((language, digest))
    if hit is not None:
        return list(hit)
    symbols = _walk(language, source, tree)
    _remember(language, digest, tuple(symbols))
    return symbols


def _extract(language: str, source: bytes, key: bytes | None, base: bytes | None) -> list[Symbol]:
    if _family(language) is None:
        return []
    return _walk(language, source, _tree(language, source, key, base))


def _walk(language: str, source: bytes, tree: Tree) -> list[Symbol]:
    found = _family(language)
    assert found is not None
    family, query = found
    return walk(family, source, tree.root_node, query)


def _tree(language: str, source: bytes, key: bytes | None, base: bytes | None) -> Tree:
    """The tree the symbols are walked from: of the masked text, recovered, branches read."""
    found = _family(language)
    assert found is not None
    family, _ = found
    # The tree of a masked text places definitions; signatures are cut from the source itself.
    parser = _parser(language)
    text = source if family.mask is None else family.mask(source)
    tree = reparse.parse(parser, language, text, key, base)
    if tree.root_node.has_error and family.recover is not None:
        again = parser.parse(family.recover(source))
        if error_bytes(again.root_node) < error_bytes(tree.root_node):
            tree = again
    if tree.root_node.has_error and family.branches is not None:
        tree = _first_branches(parser, family.branches, text, tree)
    return tree


_BRANCH_ROUNDS = 3  # a split inside another split shows only once the outer one is read


def _first_branches(parser: Parser, branches: Callable[[bytes, Node], list[tuple[int, int]]],
                    text: bytes, tree: Tree) -> Tree:  # fmt: skip
    """The tree with the conditionals that split a declaration under its ERROR nodes read as
    their first branch (as ctags reads them), round by round while errors shrink. Each round
    re-parses from the last tree, edited where the text was blanked (lines and length kept)."""
    errors = error_bytes(tree.root_node)
    for _ in range(_BRANCH_ROUNDS):
        spans = branches(text, tree.root_node)
        if not spans:
            break
        blanked = bytearray(text)
        edited = tree.copy()
        for start, end in spans:
            blanked[start:end] = re.sub(rb"[^\n]", b" ", text[start:end])
            at, to = reparse.point(text, start), reparse.point(text, end)
            edited.edit(start, end, end, at, to, to)
        again = parser.parse(bytes(blanked), edited)
        fewer = error_bytes(again.root_node)
        if fewer >= errors:
            break
        text, tree, errors = bytes(blanked), again, fewer
        if not errors:
            break
    return tree
