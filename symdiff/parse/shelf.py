"""A batch's symbols by blob: those read from the store, and those extracted here to be stored.

Beside them, pairs: the line counts and symbol changes from one blob to another, keyed by
(language, old blob, new blob), so that a change asked about again (a second `against`) is
neither diffed nor attributed again.

Symbols are a pure function of (blob, language, extractor version) (version.py), so a batch of
records — a daemon pass, a history import, an `against` answer — asks its store once for the
blobs it will meet (`ask`), is given what is stored (`load`), extracts only the rest (`fill`
in one batch, or `symbols` one by one), and hands back what it extracted (`take_fresh`) for
the store to keep. Without a store, a shelf is simply empty and every blob is extracted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from symdiff.model import Symbol, SymbolChange
from symdiff.parse.refs import FileRefs
from symdiff.parse.version import extractor_version

if TYPE_CHECKING:
    from symdiff.parse.pool import ChangeFn, HeadStart, Job, ParsePool

Key = tuple[str, str]  # (language, git blob id)
PairKey = tuple[str, str, str]  # (language, old blob id, new blob id)
Pair = tuple[int, int, tuple[SymbolChange, ...]]  # lines added, lines removed, symbol changes
Side = tuple[str, bytes | None, str | None, bytes | None, str | None]  # a change, for `fill`


CHAIN = 64  # a blob's symbols are stored whole again when their delta chain would be longer


class SymbolShelf:
    """Symbols by (language, blob id) for one batch of work; not shared between threads.

    A blob extracted as the new side of a change names the old side as its base: the store
    keeps its symbols as a delta against the base's (codec.pack), as long as the base is
    known here and the chain of bases stays within CHAIN.
    """

    def __init__(self, version: str | None = None, *, pairs: bool = True,
                 refs: bool = False) -> None:  # fmt: skip
        """`pairs=False`: keep no pairs (a history import: its changes are not asked again).
        `refs=True`: `symbols` extracts each blob's references too, from the same parse, for
        the reference index (the daemon's and `index`'s passes: docs/impact.md)."""
        self.version = version or extractor_version()
        self.keeps_pairs = pairs
        self.keeps_refs = refs
        self._fresh_refs: dict[Key, FileRefs] = {}
        self._known: dict[Key, tuple[Symbol, ...]] = {}
        self._fresh: dict[Key, tuple[Symbol, ...]] = {}
        self._depth: dict[Key, int] = {}  # how many bases below a blob's stored symbols
        self._base: dict[Key, str] = {}  # a fresh blob's base, when it is stored as a delta
        self._asked: set[Key] = set()  # looked up in the store already (found or not)
        self._pairs: dict[PairKey, Pair] = {}
        self._fresh_pairs: dict[PairKey, Pair] = {}

    def load(self, found: Mapping[Key, Sequence[Symbol]],
             depths: Mapping[Key, int] | None = None) -> None:  # fmt: skip
        """Take symbols that were stored (with their chains' depths), or extracted elsewhere."""
        for key, symbols in found.items():
            self._known[key] = tuple(symbols)
            self._depth[key] = CHAIN if depths is None else depths.get(key, CHAIN)

    def add(self, key: Key, symbols: Sequence[Symbol], base: str | None = None) -> None:
        """Take symbols extracted for this batch; they are handed back by `take_fresh`.
        `base`: the blob this one replaced (same language), to store them against."""
        if key in self._known:
            return
        self._known[key] = self._fresh[key] = tuple(symbols)
        below = None if base is None else self._depth.get((key[0], base))
        if below is not None and below + 1 < CHAIN and base is not None:
            self._base[key] = base
            self._depth[key] = below + 1
        else:
            self._depth[key] = 0

    def get(self, key: Key) -> tuple[Symbol, ...] | None:
        """The blob's symbols if known here."""
        return self._known.get(key)

    def symbols(self, language: str, source: bytes, blob: str | None, base: bytes | None = None,
                base_blob: str | None = None) -> list[Symbol]:  # fmt: skip
        """The symbols of `source` (whose git blob id is `blob`): known, or extracted now.

        `base`: the other version's text (parse/extract.py re-parses from its tree);
        `base_blob`: the blob this one replaced, to store its symbols against (`add`)."""
        if blob is not None and (found := self.get((language, blob))) is not None:
            return list(found)
        # tree-sitter loads only when needed
        from symdiff.parse.extract import extract, extract_with_refs

        if self.keeps_refs and blob is not None:
            symbols, refs = extract_with_refs(language, source, base=base)
            self._fresh_refs[(language, blob)] = refs
        else:
            symbols = extract(language, source, base=base)
        if blob is not None:
            self.add((language, blob), symbols, base_blob)
        return symbols

    def take_fresh_refs(self) -> dict[Key, FileRefs]:
        """The references extracted in this batch, to be stored (their blobs' symbols go with
        `take_fresh`); then forgotten."""
        out, self._fresh_refs = self._fresh_refs, {}
        return out

    def ask(self, keys: Iterable[Key]) -> list[Key]:
        """Of these keys, those neither known nor looked up before; now counted as looked up."""
        out = [key for key in dict.fromkeys(keys)
               if key not in self._known and key not in self._asked]  # fmt: skip
        self._asked.update(out)
        return out

    def depth(self, key: Key) -> int:
        """How many bases lie below a blob's stored symbols (0: stored whole)."""
        return self._depth.get(key, 0)

    def base_of(self, key: Key) -> str | None:
        """The blob a fresh blob's symbols are to be stored against (None: whole)."""
        return self._base.get(key)

    def load_pairs(self, found: Mapping[PairKey, Pair]) -> None:
        """Take pairs that were stored."""
        self._pairs.update(found)

    def pair(self, key: PairKey) -> Pair | None:
        """A change's line counts and symbol changes, if known here."""
        return self._pairs.get(key)

    def add_pair(self, key: PairKey, pair: Pair) -> None:
        """Take a change worked out in this batch; handed back by `take_fresh_pairs` (by a
        shelf that keeps pairs; one that does not holds it for this batch only)."""
        if key not in self._pairs:
            self._pairs[key] = pair
            if self.keeps_pairs:
                self._fresh_pairs[key] = pair

    def take_fresh_pairs(self) -> dict[PairKey, Pair]:
        """The pairs worked out in this batch, then forget that they are fresh."""
        out, self._fresh_pairs = self._fresh_pairs, {}
        return out

    def dirty(self) -> bool:
        """Whether anything was worked out here that the store does not hold yet."""
        return bool(self._fresh or self._fresh_pairs or self._fresh_refs)

    def fill(self, pool: ParsePool, sides: Sequence[Side], change: ChangeFn | None = None,
             head: HeadStart | None = None) -> int:  # fmt: skip
        """Extract in one batch, through `pool` (parse/pool.py: worker processes when the
        batch is worth it), both versions of every change whose symbols this shelf lacks;
        returns how many changes were parsed. `sides`: (language, old text, old blob, new
        text, new blob) per change, None where a side is absent or binary.

        `change` (attribute/filechange.py's `change_between`): a change of which both sides
        are parsed here is also worked out there, beside its parse (its line counts and symbol
        changes: `add_pair`), so that the records built from this shelf neither diff nor
        attribute it again. `head`: this shelf's `head_start` for some of these sides."""
        jobs, owners = self._jobs(sides, change)
        if not jobs:
            if head is not None:
                head.close()
            return 0
        for (language, old, old_id, new, new_id), (olds, news, worked) in zip(
                owners, _answers(pool, jobs, change, head), strict=True):  # fmt: skip
            # Stored against whichever side is known already: an import walks newest first,
            # so a commit's new version is known and its old one goes against it.
            new_known = new_id is not None and (language, new_id) in self._known
            if old is not None and old_id is not None and (language, old_id) not in self._known:
                self.add((language, old_id), olds, new_id if new_known else None)
            if new is not None and new_id is not None and (language, new_id) not in self._known:
                self.add((language, new_id), news, old_id if old is not None else None)
            if worked is not None and old_id is not None and new_id is not None:
                self.add_pair((language, old_id, new_id), worked)
        return len(jobs)

    def head_start(self, pool: ParsePool, sides: Sequence[Side], change: ChangeFn
                   ) -> HeadStart | None:  # fmt: skip
        """Send one of `pool`'s workers the jobs `fill` would make of these sides (the first
        of a batch, known before the rest: `ParsePool.head_start`); pass the answer to `fill`
        with the whole batch's sides, the same texts."""
        jobs, _ = self._jobs(sides, change)
        return pool.head_start(jobs, change) if jobs else None

    def _jobs(self, sides: Sequence[Side], change: ChangeFn | None
              ) -> tuple[list[Job], list[Side]]:  # fmt: skip
        """The parse pool's jobs for the sides this shelf lacks, and the side of each."""
        from symdiff.parse.pool import CHANGE, NEW, OLD

        jobs: list[Job] = []
        owners: list[Side] = []
        for side in sides:
            language, old, old_id, new, new_id = side
            if old_id is not None and new_id is not None and old is not None and new is not None \
                    and (language, old_id, new_id) in self._pairs:  # fmt: skip
                continue
            known = self._known
            lacks_old = old is not None and (old_id is None or (language, old_id) not in known)
            lacks_new = new is not None and (new_id is None or (language, new_id) not in known)
            if lacks_old or lacks_new:  # a side known already is not parsed again (but its
                # text goes along: the other side re-parses from its tree if one is held)
                wants = (OLD if lacks_old else 0) | (NEW if lacks_new else 0)
                if change is not None and lacks_old and lacks_new and old_id is not None \
                        and new_id is not None:  # fmt: skip
                    wants |= CHANGE
                jobs.append((language, old, new, wants))
                owners.append(side)
        return jobs, owners

    def has(self, key: Key) -> bool:
        return key in self._known

    def take_fresh(self) -> dict[Key, tuple[Symbol, ...]]:
        """The symbols extracted in this batch (not loaded), to be stored, then forgotten as
        fresh; `base_of` still names each one's base."""
        out, self._fresh = self._fresh, {}
        return out


def _answers(pool: ParsePool, jobs: list[Job], change: ChangeFn | None, head: HeadStart | None
             ) -> list[tuple[list[Symbol], list[Symbol], Pair | None]]:  # fmt: skip
    if change is not None:
        return pool.changes_of(jobs, change, head)
    if head is not None:
        head.close()
    return [(old, new, None) for old, new in pool.symbols_of(jobs)]


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
