"""Snapshots: whole and delta forms, chains and their cap, and the upgrade from revision 0003."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
import zstandard
from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.exc import OperationalError

from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.errors import StoreError
from symdiff.record.indexer import reconcile
from symdiff.store import ChangeFilter, FileState, Mutation, Store
from symdiff.store import tables as t
from symdiff.store.blobs import CODEC_DELTA, pack, unpack
from symdiff.store.deltas import MAX_CHAIN_BYTES, MAX_DEPTH, Snapshot, against, settle
from symdiff.store.engine import make_engine
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD


def _versions(n: int) -> list[bytes]:
    """`n` successive versions of one Python file, each a small edit of the one before."""
    lines = [f"def f{i}(x):\n    return x + {i}\n".encode() for i in range(200)]
    out = []
    for v in range(n):
        lines[(v * 37) % len(lines)] = f"def f{v}(x):\n    return x * {v}  # v{v}\n".encode()
        if v % 5 == 0:
            lines.insert((v * 11) % len(lines), f"# note {v}\n".encode())
        out.append(b"".join(lines))
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0003_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    """Snapshots written at revision 0003 (zstd, raw, hash only) read back byte for byte at HEAD,
    as whole snapshots (no base); new versions are then stored as deltas against them."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    texts = _versions(3)
    zstd = zstandard.ZstdCompressor(level=3).compress(texts[0])
    rows = [(blob_id(texts[0]), len(texts[0]), False, "zstd", zstd),
            (blob_id(texts[1]), len(texts[1]), False, "raw", texts[1]),
            (blob_id(b"\0bin"), 4, True, "none", None)]  # fmt: skip
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0003")
    with engine.begin() as conn:
        for digest, size, binary, codec, data in rows:
            conn.execute(text("INSERT INTO blobs (hash, size, \"binary\", codec, data) VALUES "
                              "(:h, :s, :b, :c, :d)"),
                         {"h": digest, "s": size, "b": binary, "c": codec, "d": data})
    engine.dispose()
    with Store(url) as store:
        assert store.revision() == HEAD
        assert store.get_blob(rows[0][0]) == texts[0]
        assert store.get_blob(rows[1][0]) == texts[1]
        assert store.get_blob(rows[2][0]) is None
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM blobs WHERE base IS NULL")
                                ).scalar_one() == 3  # fmt: skip
        ws = store.ensure_workspace("/r", "h").id
        h2 = _write(store, ws, "m.py", texts[2], rows[1][0])  # against the raw 0003 row
        more = [*_versions(6)[3:], texts[0] + b"# at the end\n"]
        hashes = [h2]
        for content in more:
            hashes.append(_write(store, ws, "m.py", content, hashes[-1]))
        assert [_rows(store)[h] for h in hashes] == [
            (CODEC_DELTA, b) for b in [rows[1][0], *hashes[:-1]]]  # fmt: skip
        assert [store.get_blob(h) for h in hashes] == [texts[2], *more]
        assert store.get_blob(rows[0][0]) == texts[0]


def _write(store: Store, ws: int, path: str, content: bytes, before: str | None) -> str:
    """Store one version of `path` as the indexer does: a delta against `before` where it pays.
    Returns its hash."""
    whole = pack(content)
    base = store.snapshot(before) if before is not None else None
    blob = against(whole, content, before, base) if before is not None else whole
    state = FileState(path, whole.hash, len(content), 0, 0)
    store.apply(ws, [Mutation(upserts=(state,), blobs=(blob,))])
    return whole.hash


def _rows(store: Store) -> dict[str, tuple[str, str | None]]:
    with store.engine.connect() as conn:
        return {r.hash: (r.codec, r.base) for r in conn.execute(select(t.blobs))}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_many_versions_round_trip_through_capped_chains(backend: str,
                                                        request: pytest.FixtureRequest) -> None:
    """80 versions of one path: each a delta against the one before, re-based to a whole
    snapshot after MAX_DEPTH deltas; every version reads back byte for byte, the deepest too."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    texts = _versions(80)
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h").id
        hashes: list[str] = []
        for content in texts:
            hashes.append(_write(store, ws, "m.py", content, hashes[-1] if hashes else None))
        rows = _rows(store)
        read = [store.snapshot(h) for h in hashes]
    assert [s.data for s in read if s is not None] == texts
    with Store(url) as store:  # many at once: whole and delta rows alike, unknown ones None
        unknown = "ab" * 20
        assert store.get_blobs([*reversed(hashes), unknown]) == {
            **dict(zip(hashes, texts, strict=True)), unknown: None}
    depths = [s.depth for s in read if s is not None]
    assert depths == [i % (MAX_DEPTH + 1) for i in range(80)]
    assert max(depths) == MAX_DEPTH
    for i, h in enumerate(hashes):
        codec, base = rows[h]
        if depths[i] == 0:
            assert (codec, base) == ("zstd", None)
        else:
            assert (codec, base) == (CODEC_DELTA, hashes[i - 1])
    whole = sum(len(pack(c).data or b"") for c in texts)
    with Store(url) as store, store.engine.connect() as conn:
        stored_bytes = conn.execute(select(func.sum(func.length(t.blobs.c.data)))).scalar_one()
    assert stored_bytes * 5 < whole  # deltas pay: small edits of a 6 KB file


def test_a_big_file_re_bases_sooner() -> None:
    """The chain's decoded bytes are capped too: a file of 3 MB has chains of MAX_CHAIN_BYTES."""
    rng = random.Random(16)
    content = b"".join(b"x_%d = %d\n" % (i, rng.getrandbits(48)) for i in range(150_000))
    assert len(content) > 3_000_000
    new = content + b"# one more line\n"
    whole = pack(new)
    limit = MAX_CHAIN_BYTES // len(new) - 2
    near = against(whole, new, blob_id(content), Snapshot(content, limit))
    assert (near.codec, near.base) == (CODEC_DELTA, blob_id(content))
    # The window reaches back over the whole base (else half of it would be literals again).
    assert len(near.data or b"") * 20 < len(whole.data or b"")
    assert unpack(near.codec, near.data, content) == new
    assert against(whole, new, blob_id(content), Snapshot(content, limit + 1)) is whole
    assert against(whole, new, blob_id(content), Snapshot(content, MAX_DEPTH)) is whole


def test_a_delta_that_does_not_pay_is_stored_whole() -> None:
    old, new = b"a" * 10, bytes(range(256)) * 4  # nothing in common
    whole = pack(new)
    assert against(whole, new, blob_id(old), Snapshot(old, 0)) is whole


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_delta_whose_base_is_gone_is_an_error_not_wrong_bytes(
        backend: str, request: pytest.FixtureRequest) -> None:  # fmt: skip
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    v1, v2, other = [*_versions(2), b"print('something else entirely')\n" * 50]
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h").id
        h1 = _write(store, ws, "m.py", v1, None)
        h2 = _write(store, ws, "m.py", v2, h1)
        assert _rows(store)[h2] == (CODEC_DELTA, h1)
        with store.engine.begin() as conn:  # the base's bytes swapped for other bytes
            conn.execute(update(t.blobs).where(t.blobs.c.hash == h1)
                         .values(data=pack(other).data))  # fmt: skip
        with pytest.raises(StoreError, match=f"snapshot {h2} does not decode"):
            store.get_blob(h2)
        with store.engine.begin() as conn:  # the base deleted (as a faulty gc would)
            conn.execute(delete(t.blobs).where(t.blobs.c.hash == h1))
        with pytest.raises(StoreError, match=f"delta against {h1}, which the database no"):
            store.get_blob(h2)
        with pytest.raises(StoreError, match=f"delta against {h1}, which the database no"):
            store.get_blobs([h2])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_delta_is_written_whole_when_its_base_went_before_the_commit(
        backend: str, request: pytest.FixtureRequest) -> None:  # fmt: skip
    """The base is checked inside the writing transaction: one deleted between the read and
    the commit (gc at work) makes the new version a whole snapshot, never a dangling delta."""
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_head_url")
    v1, v2 = _versions(2)
    with Store(url) as store:
        ws = store.ensure_workspace("/r", "h").id
        h1 = _write(store, ws, "m.py", v1, None)
        blob = against(pack(v2), v2, h1, store.snapshot(h1))
        assert blob.codec == CODEC_DELTA
        with store.engine.begin() as conn:
            conn.execute(delete(t.blobs).where(t.blobs.c.hash == h1))
        store.apply(ws, [Mutation(blobs=(blob,))])
        assert _rows(store)[blob.hash] == ("zstd", None)
        assert store.get_blob(blob.hash) == v2


def test_the_indexer_stores_new_versions_as_deltas(tmp_path: Path, sqlite_url: str) -> None:
    """Modifies and a rename through the real indexer: each new version is a delta against the
    version it replaced (across the rename too), the records are those of whole snapshots."""
    root = tmp_path / "tree"
    root.mkdir()
    texts = _versions(4)
    settings = Settings.resolve(root, db=sqlite_url, host="h")
    with Store(sqlite_url) as store:
        (root / "m.py").write_bytes(texts[0])
        reconcile(store, settings)
        for content in texts[1:3]:
            (root / "m.py").write_bytes(content)
            reconcile(store, settings, paths=["m.py"])
        (root / "m.py").rename(root / "n.py")
        (root / "n.py").write_bytes(texts[3])
        reconcile(store, settings, paths=["m.py", "n.py"], moves={"n.py": "m.py"})
        rows = _rows(store)
        changes = store.changes(ChangeFilter(None, 0, None, 100))
        assert [store.get_blob(blob_id(c)) for c in texts] == texts
    hashes = [blob_id(c) for c in texts]
    assert rows[hashes[0]] == ("zstd", None)
    assert [rows[h] for h in hashes[1:]] == [(CODEC_DELTA, h) for h in hashes[:-1]]
    assert [(c.change_type.value, c.old_hash, c.new_hash) for c in reversed(changes)] == [
        ("modify", hashes[0], hashes[1]), ("modify", hashes[1], hashes[2]),
        ("rename", hashes[2], hashes[3])]  # fmt: skip
    assert all(c.lines_added and c.symbols for c in changes)


def test_a_moved_and_edited_file_is_stored_against_its_former_self(tmp_path: Path,
                                                                     sqlite_url: str) -> None:
    """A directory moved and its files edited in one batch, seen by a scan (no observed move,
    content not identical, so the indexer records an add and a delete): the added version is
    stored as a delta against the gone file of the same name; a new name is stored whole."""
    root = tmp_path / "tree"
    (root / "old").mkdir(parents=True)
    texts = _versions(3)
    settings = Settings.resolve(root, db=sqlite_url, host="h")
    with Store(sqlite_url) as store:
        (root / "old" / "m.py").write_bytes(texts[0])
        reconcile(store, settings)
        (root / "old" / "m.py").unlink()
        (root / "old").rmdir()
        (root / "new").mkdir()
        (root / "new" / "m.py").write_bytes(texts[2])
        (root / "new" / "other.py").write_bytes(texts[1].replace(b"def", b"async def"))
        reconcile(store, settings)
        rows = _rows(store)
        changes = store.changes(ChangeFilter(None, 0, None, 100))
        assert store.get_blob(blob_id(texts[2])) == texts[2]
    assert sorted((c.change_type.value, c.path) for c in changes) == [
        ("add", "new/m.py"), ("add", "new/other.py"), ("delete", "old/m.py")]
    assert rows[blob_id(texts[2])] == (CODEC_DELTA, blob_id(texts[0]))
    assert rows[blob_id(texts[1].replace(b"def", b"async def"))] == ("zstd", None)


def test_a_base_cannot_be_deleted_under_a_delta_being_written(pg_head_url: str) -> None:
    """PostgreSQL: the writer locks each base it found (FOR KEY SHARE) until its delta commits,
    so a concurrent delete of the base waits, and then finds the delta standing on it."""
    v1, v2 = _versions(2)
    with Store(pg_head_url) as store:
        ws = store.ensure_workspace("/r", "h").id
        h1 = _write(store, ws, "m.py", v1, None)
        blob = against(pack(v2), v2, h1, store.snapshot(h1))
        with store.engine.connect() as writer, store.engine.connect() as deleter:
            writer.begin()
            (settled,) = settle(writer, [blob])
            assert (settled.codec, settled.base) == (CODEC_DELTA, h1)
            deleter.begin()
            deleter.execute(text("SET LOCAL lock_timeout = '300ms'"))
            with pytest.raises(OperationalError, match="lock timeout"):
                deleter.execute(delete(t.blobs).where(t.blobs.c.hash == h1))
            deleter.rollback()
            writer.execute(insert(t.blobs).values(hash=blob.hash, size=blob.size, binary=False,
                                                  codec=blob.codec, data=blob.data, base=h1))
            writer.commit()
            # A deleter that waited sees, in a new statement, the delta now standing on it.
            assert deleter.execute(select(func.count()).where(t.blobs.c.base == h1)
                                   ).scalar_one() == 1  # fmt: skip
            deleter.rollback()
        assert store.get_blob(blob.hash) == v2


def test_a_delta_written_during_retentions_batch_waits_and_then_goes_whole(
        pg_head_url: str) -> None:  # fmt: skip
    """PostgreSQL: retention's delete batch holds SHARE ROW EXCLUSIVE on `blobs`; a writer with
    a delta waits for the whole batch before it checks its base (no deadlock between the
    writer's row lock and the batch's DELETE), and finds the base gone: it writes whole."""
    v1, v2 = _versions(2)
    with Store(pg_head_url) as store:
        ws = store.ensure_workspace("/r", "h").id
        h1 = _write(store, ws, "m.py", v1, None)
        blob = against(pack(v2), v2, h1, store.snapshot(h1))
        assert blob.codec == CODEC_DELTA
        errors: list[BaseException] = []

        def write() -> None:
            try:
                store.apply(ws, [Mutation(blobs=(blob,))])
            except BaseException as exc:  # reported below
                errors.append(exc)

        with store.engine.connect() as gc:
            gc.begin()
            gc.execute(text("SET LOCAL deadlock_timeout = '100ms'"))
            gc.execute(text("LOCK TABLE blobs IN SHARE ROW EXCLUSIVE MODE"))
            writer = threading.Thread(target=write)
            writer.start()
            writer.join(0.5)
            assert writer.is_alive()  # waiting for the batch
            gc.execute(delete(t.blobs).where(t.blobs.c.hash == h1))
            gc.commit()
        writer.join(10)
        assert not errors and not writer.is_alive()
        assert _rows(store)[blob.hash] == ("zstd", None)
        assert store.get_blob(blob.hash) == v2
