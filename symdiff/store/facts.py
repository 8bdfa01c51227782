"""Facts by content: what was learned about a blob, stored once per (blob, fact set).

A fact set is (extractor version, language, kind): a blob's `symbols`, a pair of blobs'
`changes` (keyed by `pair_blob`), a blob's references (`refs`, the reference index's input).
Rows are read by whoever meets the blob again, and written by whoever learned them first
(docs/storage.md, "Symbols by content"). A cache, not a record: losing a row costs one parse,
so writes ignore conflicts and never hold a record back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import Connection, delete, exists, not_, select, tuple_, union

from symdiff.store import tables as t
from symdiff.store.engine import insert_ignore

SYMBOLS = "symbols"  # a blob's symbols (parse/codec.raw)
CHANGES = "changes"  # a pair of blobs' line counts and symbol changes (codec.raw_pair)
REFS = "refs"  # a blob's references, the reference index's input (codec.raw_refs)
_CHUNK = 500  # blobs per statement (bound parameters)
US_PER_DAY = 86_400 * 1_000_000


def pair_blob(old: str, new: str) -> str:
    """The key a pair of blobs is stored under: a 20-byte digest of both ids, in order."""
    return hashlib.blake2b(bytes.fromhex(old) + bytes.fromhex(new), digest_size=20).hexdigest()


def set_ids(conn: Connection, extractor: str, sets: Iterable[tuple[str, str]], *,
            create: bool) -> dict[tuple[str, str], int]:  # fmt: skip
    """The ids of (language, kind) fact sets of `extractor`; created when `create`."""
    wanted = set(sets)
    if not wanted:
        return {}
    fs = t.fact_sets.c
    if create:
        insert_ignore(conn, t.fact_sets, [{"extractor": extractor, "language": language,
                                           "kind": kind} for language, kind in sorted(wanted)],
                      ["extractor", "language", "kind"])  # fmt: skip
    rows = conn.execute(select(fs.language, fs.kind, fs.id).where(
        fs.extractor == extractor, tuple_(fs.language, fs.kind).in_(sorted(wanted))))
    return {(language, kind): id_ for language, kind, id_ in rows}


Row = tuple[bytes, str | None, int]  # payload, base blob (None: whole), depth


def load(conn: Connection, extractor: str, kind: str,
         keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Row]:  # fmt: skip
    """The stored rows of (language, blob) keys that have one, and of every base their deltas
    need (keyed the same way), followed down each chain."""
    ids = set_ids(conn, extractor, {(language, kind) for language, _ in keys}, create=False)
    if not ids:
        return {}
    language_of = {id_: language for (language, _), id_ in ids.items()}
    set_of = {language: id_ for (language, _), id_ in ids.items()}
    bf = t.blob_facts.c
    columns = (bf.id, bf.blob, bf.set_id, bf.data, bf.base, bf.depth)
    found: dict[int, tuple[tuple[str, str], bytes, int | None, int]] = {}
    by_set: dict[int, list[str]] = {}
    for language, blob in sorted(set(keys)):
        if language in set_of:
            by_set.setdefault(set_of[language], []).append(blob)
    queries = [select(*columns).where(bf.set_id == set_id, bf.blob.in_(blobs[i : i + _CHUNK]))
               for set_id, blobs in by_set.items()
               for i in range(0, len(blobs), _CHUNK)]  # fmt: skip
    while queries:
        bases: set[int] = set()
        for query in queries:
            for id_, blob, set_id, data, base, depth in conn.execute(query):
                found[id_] = ((language_of[set_id], blob), bytes(data), base, depth)
                if base is not None:
                    bases.add(base)
        wanted = sorted(bases - set(found))
        queries = [select(*columns).where(bf.id.in_(wanted[i : i + _CHUNK]))
                   for i in range(0, len(wanted), _CHUNK)]  # fmt: skip
    out: dict[tuple[str, str], Row] = {}
    for key, data, base, depth in found.values():
        below = None if base is None else found.get(base)
        if base is not None and below is None:
            continue  # a base that went: the chain does not read back
        out[key] = (data, None if below is None else below[0][1], depth)
    return out


def present(conn: Connection, extractor: str, kind: str,
            keys: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:  # fmt: skip
    """Which of these (language, blob) keys have a stored row of `kind` (not read)."""
    ids = set_ids(conn, extractor, {(language, kind) for language, _ in keys}, create=False)
    language_of = {id_: language for (language, _), id_ in ids.items()}
    by_set: dict[int, list[str]] = {}
    for language, blob in sorted(set(keys)):
        if (language, kind) in ids:
            by_set.setdefault(ids[(language, kind)], []).append(blob)
    bf = t.blob_facts.c
    out = set()
    for set_id, blobs in by_set.items():
        for i in range(0, len(blobs), _CHUNK):
            for blob, in conn.execute(select(bf.blob).where(
                    bf.set_id == set_id, bf.blob.in_(blobs[i : i + _CHUNK]))):
                out.add((language_of[set_id], blob))
    return out


# What to store: the raw form (codec.raw), and for a delta its base's raw form, base blob and
# depth; `save` packs it as a delta, or whole when the base row is not there.
Offer = tuple[bytes, bytes | None, str | None, int]


def save(conn: Connection, extractor: str, kind: str,
         rows: Mapping[tuple[str, str], Offer], now_us: int, *, zstd_level: int | None = None
         ) -> int:  # fmt: skip
    """Store rows by (language, blob), bases before the deltas on them, each packed here; a row
    already there stays, and a delta whose base row is not there is stored whole. Returns
    rows offered. `zstd_level`: for whole rows (default the codec's)."""
    if not rows:
        return 0
    from symdiff.parse import codec  # writers only: the cold read path does not load it

    ids = set_ids(conn, extractor, {(language, kind) for language, _ in rows}, create=True)
    day = now_us // US_PER_DAY
    for depth in sorted({offer[3] for offer in rows.values()}):
        level = {key: offer for key, offer in rows.items() if offer[3] == depth}
        base_ids = _row_ids(conn, ids, kind, {(key[0], offer[2]) for key, offer in level.items()
                                              if offer[1] is not None and offer[2] is not None})
        values = []
        for (language, blob), (raw, base_raw, base, _) in sorted(level.items()):
            base_id = None if base is None else base_ids.get((language, base))
            if base_raw is None or base_id is None:
                values.append({"blob": blob, "set_id": ids[(language, kind)],
                               "data": codec.pack(raw) if zstd_level is None
                               else codec.pack(raw, level=zstd_level),
                               "base": None, "depth": 0, "day": day})
            else:
                values.append({"blob": blob, "set_id": ids[(language, kind)],
                               "data": codec.pack(raw, base_raw), "base": base_id,
                               "depth": depth, "day": day})  # fmt: skip
        for i in range(0, len(values), _CHUNK):
            insert_ignore(conn, t.blob_facts, values[i : i + _CHUNK], ["blob", "set_id"])
    return len(rows)


def _row_ids(conn: Connection, ids: Mapping[tuple[str, str], int], kind: str,
             keys: set[tuple[str, str | None]]) -> dict[tuple[str, str], int]:  # fmt: skip
    """The row ids of stored (language, blob) keys."""
    bf = t.blob_facts.c
    out: dict[tuple[str, str], int] = {}
    language_of = {id_: language for (language, _), id_ in ids.items()}
    by_set: dict[int, list[str]] = {}
    for language, blob in keys:
        if blob is not None and (language, kind) in ids:
            by_set.setdefault(ids[(language, kind)], []).append(blob)
    for set_id, blobs in by_set.items():
        for i in range(0, len(blobs), _CHUNK):
            for id_, blob in conn.execute(select(bf.id, bf.blob).where(
                    bf.set_id == set_id, bf.blob.in_(sorted(blobs)[i : i + _CHUNK]))):
                out[(language_of[set_id], blob)] = id_
    return out


def held(conn: Connection, blobs: Iterable[str]) -> set[str]:
    """Which of these blobs a file (of any workspace) holds now."""
    wanted, f = sorted(set(blobs)), t.files.c
    return {blob for i in range(0, len(wanted), _CHUNK) for blob in conn.scalars(
        select(f.blob_hash).where(f.blob_hash.in_(wanted[i : i + _CHUNK])))}


def drop_refs(conn: Connection, blobs: Iterable[str]) -> int:
    """Delete the references (of every extractor version) of these blobs; returns how many
    rows went. The caller knows that no file holds them now: collect_step's rule, applied as
    a record replaces a blob instead of at the next collection."""
    wanted, fs, bf = sorted(set(blobs)), t.fact_sets.c, t.blob_facts.c
    refs = select(fs.id).where(fs.kind == REFS).scalar_subquery()
    return sum(int(conn.execute(delete(t.blob_facts).where(
        bf.set_id.in_(refs), bf.blob.in_(wanted[i : i + _CHUNK]))).rowcount)
        for i in range(0, len(wanted), _CHUNK))


def drop_symbols(conn: Connection, blobs: Iterable[str]) -> int:
    """Delete the symbols (of every extractor version) of these blobs, but a row that another
    is stored against; returns how many rows went. The caller knows that no file holds them
    and HEAD does not either: versions a file went through and left (docs/storage.md)."""
    wanted, fs, bf = sorted(set(blobs)), t.fact_sets.c, t.blob_facts.c
    symbols = select(fs.id).where(fs.kind == SYMBOLS).scalar_subquery()
    doomed = {id_ for i in range(0, len(wanted), _CHUNK) for id_ in conn.scalars(
        select(bf.id).where(bf.set_id.in_(symbols), bf.blob.in_(wanted[i : i + _CHUNK])))}
    ids = sorted(doomed)
    for i in range(0, len(ids), _CHUNK):  # one scan a chunk: `base` has no index
        doomed -= set(conn.scalars(select(bf.base).where(bf.base.in_(ids[i : i + _CHUNK]))))
    ids = sorted(doomed)
    return sum(int(conn.execute(delete(t.blob_facts).where(bf.id.in_(ids[i : i + _CHUNK])))
                   .rowcount) for i in range(0, len(ids), _CHUNK))


def collect_step(conn: Connection, extractor: str, cutoff_us: int, limit: int = _CHUNK) -> int:
    """Delete at most `limit` rows of the facts retention no longer keeps; returns how many went
    (0: none is left). The caller runs steps in transactions of their own until one deletes
    nothing, so that a writer never waits for a whole collection.

    - First every row of another extractor version: it is never read again.
    - Then, whatever their age, the references of a blob no file holds now: the reference index
      is of the tree as it is (docs/impact.md).
    - Then a row written before the cutoff whose blob no record and no file state names (a
      revision's blob met by `against`, an imported commit's whose records aged out), unless a
      kept row is a delta against it: chains go from their newest end, step by step.
    """
    fs, bf, c, f = t.fact_sets.c, t.blob_facts.c, t.changes.c, t.files.c
    stale = select(fs.id).where(fs.extractor != extractor).scalar_subquery()
    doomed = list(conn.scalars(select(bf.id).where(bf.set_id.in_(stale)).limit(limit)))
    if not doomed:
        conn.execute(delete(t.fact_sets).where(
            fs.extractor != extractor, ~exists().where(bf.set_id == fs.id)))
        refs = select(fs.id).where(fs.kind == REFS).scalar_subquery()
        doomed = list(conn.scalars(select(bf.id).where(
            bf.set_id.in_(refs), not_(bf.blob.in_(select(f.blob_hash)))).limit(limit)))
    if not doomed:
        live = union(select(c.old_hash).where(c.old_hash.is_not(None)),
                     select(c.new_hash).where(c.new_hash.is_not(None)), select(f.blob_hash))
        child = t.blob_facts.alias("child")
        doomed = list(conn.scalars(select(bf.id).where(
            bf.day < cutoff_us // US_PER_DAY, not_(bf.blob.in_(live)),
            ~exists().where(child.c.base == bf.id)).limit(limit)))
    if not doomed:
        return 0
    return int(conn.execute(delete(t.blob_facts).where(bf.id.in_(doomed))).rowcount)
