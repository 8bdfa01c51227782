"""A batch's symbols by blob: those read from the store, and those extracted here to be stored.

Beside them, pairs: the line counts and symbol changes from one blob to another, keyed by
(language, old blob, new blob), so that a change asked about again (a second `against`, a
change the daemon recorded) is neither diffed nor attributed again.

Symbols are a pure function of (blob, language, extractor version) (version.py), so a batch of
records — a daemon pass, a history import, an `against` answer — asks its store once for the
blobs it will meet (`wanted`), is given what is stored (`load`), extracts only the rest, and
hands back what it extracted (`fresh`) for the store to keep. Without a store, a shelf is
simply empty and every blob is extracted, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from symdiff.model import Symbol, SymbolChange
from symdiff.parse.version import extractor_version

Key = tuple[str, str]  # (language, git blob id)
PairKey = tuple[str, str, str]  # (language, old blob id, new blob id)
Pair = tuple[int, int, tuple[SymbolChange, ...]]  # lines added, lines removed, symbol changes


class SymbolShelf:
    """Symbols by (language, blob id) for one batch of work; not shared between threads."""

    def __init__(self, version: str | None = None, *, pairs: bool = True) -> None:
        """`pairs=False`: keep no pairs (a history import: its changes are not asked again)."""
        self.version = version or extractor_version()
        self.keeps_pairs = pairs
        self._known: dict[Key, tuple[Symbol, ...]] = {}
        self._fresh: dict[Key, tuple[Symbol, ...]] = {}
        self._pairs: dict[PairKey, Pair] = {}
        self._fresh_pairs: dict[PairKey, Pair] = {}
        self.hits = 0
        self.misses = 0

    def load(self, found: Mapping[Key, Sequence[Symbol]]) -> None:
        """Take symbols that were stored (or extracted elsewhere) for these blobs."""
        for key, symbols in found.items():
            self._known[key] = tuple(symbols)

    def add(self, key: Key, symbols: Sequence[Symbol]) -> None:
        """Take symbols extracted for this batch; they are handed back by `fresh`."""
        if key not in self._known:
            self._known[key] = self._fresh[key] = tuple(symbols)

    def get(self, key: Key) -> tuple[Symbol, ...] | None:
        """The blob's symbols if known here, counting the hit or miss."""
        found = self._known.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def symbols(self, language: str, source: bytes, blob: str | None,
                base: bytes | None = None) -> list[Symbol]:  # fmt: skip
        """The symbols of `source` (whose git blob id is `blob`): known, or extracted now."""
        if blob is not None and (found := self.get((language, blob))) is not None:
            return list(found)
        from symdiff.parse.extract import extract  # tree-sitter loads only when needed

        symbols = extract(language, source, base=base)
        if blob is not None:
            self.add((language, blob), symbols)
        return symbols

    def load_pairs(self, found: Mapping[PairKey, Pair]) -> None:
        """Take pairs that were stored."""
        self._pairs.update(found)

    def pair(self, key: PairKey) -> Pair | None:
        """A change's line counts and symbol changes, if known here."""
        return self._pairs.get(key)

    def add_pair(self, key: PairKey, pair: Pair) -> None:
        """Take a change worked out in this batch; handed back by `take_fresh_pairs`."""
        if self.keeps_pairs and key not in self._pairs:
            self._pairs[key] = self._fresh_pairs[key] = pair

    def take_fresh_pairs(self) -> dict[PairKey, Pair]:
        """The pairs worked out in this batch, then forget that they are fresh."""
        out, self._fresh_pairs = self._fresh_pairs, {}
        return out

    def dirty(self) -> bool:
        """Whether anything was worked out here that the store does not hold yet."""
        return bool(self._fresh or self._fresh_pairs)

    def has(self, key: Key) -> bool:
        return key in self._known

    def fresh(self) -> dict[Key, tuple[Symbol, ...]]:
        """The symbols extracted in this batch (not loaded), to be stored."""
        return dict(self._fresh)

    def take_fresh(self) -> dict[Key, tuple[Symbol, ...]]:
        """`fresh`, then forget that they are fresh (they have been stored)."""
        out, self._fresh = self._fresh, {}
        return out


def keys(pairs: Iterable[tuple[str | None, str | None, str | None]]) -> list[Key]:
    """The distinct (language, blob) keys of (language, old blob, new blob) triples."""
    out: dict[Key, None] = {}
    for language, old, new in pairs:
        if language is None:
            continue
        for blob in (old, new):
            if blob is not None:
                out[(language, blob)] = None
    return list(out)
