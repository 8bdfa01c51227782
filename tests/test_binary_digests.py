"""Content hashes stored as their bytes (revision 0007): a revision 0006 database (hex text)
upgraded in place reads back identical, new writes share its snapshots, and the downgrade
puts the hex text back."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from symdiff.store import ChangeFilter, Mutation, Position, Store
from symdiff.store.blobs import delta, pack
from symdiff.store.engine import make_engine
from symdiff.store.migrate import upgrade
from symdiff.store.schema import HEAD

V1 = b"".join(b"def f%d(x):\n    return x + %d\n\n" % (i, i) for i in range(200))
V2 = V1.replace(b"return x + 17\n", b"return x - 17\n")
V3 = V2 + b"def tail():\n    pass\n"


def _fill_0006(url: str) -> dict[str, Any]:
    """A database at revision 0006 as 0006 wrote it: a whole snapshot and a delta against it,
    a file state, two records and an edit intent, every hash as 40 hex digits."""
    one, two = pack(V1), delta(pack(V2), V2, pack(V1).hash, V1)
    assert one.base is None and two.base == one.hash and two.codec == "zdelta"
    engine = make_engine(url)
    with engine.connect() as conn:
        upgrade(conn, to="0006")
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO workspaces (id, root, host, created_us, baseline_done) "
                          "VALUES (1, '/r', 'h', 0, true)"))
        for b in (one, two):
            conn.execute(text("INSERT INTO blobs (hash, size, \"binary\", codec, data, base) "
                              "VALUES (:h, :s, false, :c, :d, :b)"),
                         {"h": b.hash, "s": b.size, "c": b.codec, "d": b.data, "b": b.base})
        conn.execute(text("INSERT INTO files (workspace_id, path, blob_hash, size, mtime_ns, "
                          "checked_ns) VALUES (1, 'a.py', :h, :s, 5, 6)"),
                     {"h": two.hash, "s": two.size})
        for id_, old, new in ((1, None, one.hash), (2, one.hash, two.hash)):
            conn.execute(text(
                "INSERT INTO changes (id, workspace_id, ts_us, path, old_path, change_type, "
                "lines_added, lines_removed, scope, language, old_hash, new_hash, origin, txid) "
                "VALUES (:id, 1, :ts, 'a.py', NULL, :ct, 1, 1, 'impl', 'python', :o, :n, "
                "'watch', 0)"),
                {"id": id_, "ts": id_ * 1000, "ct": "add" if old is None else "modify",
                 "o": old, "n": new})  # fmt: skip
        conn.execute(text("INSERT INTO edit_intents (workspace_id, path, new_hash, origin_info, "
                          "expires_us) VALUES (1, 'a.py', :h, NULL, :e)"),
                     {"h": two.hash, "e": 4 * 10**15})  # fmt: skip
    engine.dispose()
    return {"v1": one.hash, "v2": two.hash}


def _raw(url: str) -> dict[str, list[tuple[Any, ...]]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {
                "blobs": [tuple(r) for r in conn.execute(text(
                    "SELECT hash, size, codec, data, base FROM blobs ORDER BY size"))],
                "changes": [tuple(r) for r in conn.execute(text(
                    "SELECT id, old_hash, new_hash FROM changes ORDER BY id"))],
                "files": [tuple(r) for r in conn.execute(text(
                    "SELECT path, blob_hash FROM files"))],
                "edit_intents": [tuple(r) for r in conn.execute(text(
                    "SELECT path, new_hash FROM edit_intents"))],
            }  # fmt: skip
    finally:
        engine.dispose()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_revision_0006_database_upgrades_in_place(backend: str,
                                                    request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    h = _fill_0006(url)
    with Store(url) as store:
        assert store.revision() == HEAD
        assert store.get_blob(h["v1"]) == V1 and store.get_blob(h["v2"]) == V2
        snap = store.snapshot(h["v2"])
        assert snap is not None and snap.depth == 1
        assert store.file_states(1)["a.py"].blob_hash == h["v2"]
        page = store.page(ChangeFilter(None, 0, None, 10, after=Position(-1, 0)))
        assert [(c.id, c.old_hash, c.new_hash) for c in page.changes] == [
            (1, None, h["v1"]), (2, h["v1"], h["v2"])]
        assert list(store.intents(1)) == [("a.py", h["v2"])]
        # A new version stored against the converted one: its base is found, not re-stored.
        three = delta(pack(V3), V3, h["v2"], V2)
        assert three.base == h["v2"]
        store.apply(1, [Mutation(blobs=(three,))])
        assert store.get_blob(three.hash) == V3
        again = store.snapshot(three.hash)
        assert again is not None and again.depth == 2
    raw = _raw(url)
    for row in raw["blobs"]:  # stored as the hash's 20 bytes, not its hex
        assert isinstance(row[0], bytes) and len(row[0]) == 20
        assert row[4] is None or (isinstance(row[4], bytes) and len(row[4]) == 20)
    assert raw["changes"][1][1:] == (bytes.fromhex(h["v1"]), bytes.fromhex(h["v2"]))
    assert raw["files"] == [("a.py", bytes.fromhex(h["v2"]))]
    if backend == "sqlite":
        engine = make_engine(url)
        with engine.connect() as conn:
            names = set(conn.execute(text(
                "SELECT name FROM sqlite_master WHERE tbl_name = 'changes' AND type = 'index'"
            )).scalars())  # fmt: skip
            plan = " ".join(str(r[-1]) for r in conn.execute(text(
                "EXPLAIN QUERY PLAN SELECT data FROM blobs WHERE hash = :h"),
                {"h": bytes.fromhex(h["v1"])}))  # fmt: skip
        engine.dispose()
        assert "ix_changes_txid_id" not in names and "ix_changes_ts_us" in names
        assert "ix_changes_workspace_id_txid_id" in names
        assert "USING INDEX sqlite_autoindex_blobs_1 (hash=?)" in plan


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_downgrade_gives_back_the_hex_text(backend: str,
                                               request: pytest.FixtureRequest) -> None:
    from alembic import command

    from symdiff.store.migrate import _config, current_revision

    url = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    _fill_0006(url)
    before = _raw(url)
    assert isinstance(before["blobs"][0][0], str) and len(before["blobs"][0][0]) == 40
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            upgrade(conn, to="0007")
            assert current_revision(conn) == "0007"
            command.downgrade(_config(conn), "0006")
            conn.commit()
            assert current_revision(conn) == "0006"
    finally:
        engine.dispose()
    assert _raw(url) == before
