"""The Store: a database opened, its workspaces, file states and snapshots, and the atomic write
path. Change rows themselves are written and read in `changes.py`; SQL lives nowhere else.

Every method is one short transaction; they stay in one class because they share the
connection rules (`_read`, `_write`) and the one place errors become StoreError.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, delete, func, make_url, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from symdiff.errors import StoreError
from symdiff.model import FileChange, Origin
from symdiff.store import cursors, deltas, facts
from symdiff.store import intents as edit_intents
from symdiff.store import sessions as agent_sessions
from symdiff.store import tables as t
from symdiff.store.blobs import Blob
from symdiff.store.changes import (
    ChangeFilter,
    Page,
    StoredChange,
    count_matching,
    insert_changes,
    newest_us,
    select_page,
    to_file_change,
)
from symdiff.store.engine import insert_ignore, make_engine, upsert_files
from symdiff.store.schema import is_current, stored_revision

if TYPE_CHECKING:
    from symdiff.model import Symbol
    from symdiff.parse.refs import FileRefs
    from symdiff.parse.shelf import SymbolShelf


@dataclass(frozen=True, slots=True)
class Workspace:
    """One watched tree on one machine."""

    id: int
    root: str
    host: str
    baseline_done: bool


@dataclass(frozen=True, slots=True)
class FileState:
    """What a tracked file looked like when last seen."""

    path: str
    blob_hash: str
    size: int
    mtime_ns: int
    checked_ns: int


@dataclass(frozen=True, slots=True)
class Mutation:
    """One atomic unit of indexing: new file states, removed ones, snapshots, and a record."""

    upserts: tuple[FileState, ...] = ()
    deletes: tuple[str, ...] = ()
    blobs: tuple[Blob, ...] = ()
    change: FileChange | None = None


def without_password(url: str) -> str:
    """A database URL fit for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except SQLAlchemyError:
        return "<a malformed database URL>"


def _migrate(url: str) -> None:
    """Bring a database's schema to the newest revision, on a writable connection."""
    from symdiff.store.migrate import upgrade

    engine = make_engine(url)
    try:
        # Writer transactions (BEGIN IMMEDIATE on SQLite): two processes opening a new database
        # at once queue on the busy timeout; the second then finds nothing left to do.
        with engine.connect().execution_options(symdiff_write=True) as conn:
            upgrade(conn)
    finally:
        engine.dispose()


class Store:
    """A symdiff database. Opening it runs pending migrations (Alembic loads only then).

    `read_only=True` opens it for reading: every connection refuses writes. (A schema that is
    behind is still migrated first, on a connection of its own.)
    """

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.safe_url = without_password(url)
        try:
            self.engine = make_engine(url, read_only=read_only)
            with self.engine.connect() as conn:
                current = is_current(conn)
            if not current:
                _migrate(url)
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot open database {self.safe_url}: {exc.__class__.__name__}: "
                f"{str(exc).splitlines()[0]}"
            ) from exc

    def size_bytes(self) -> int | None:
        """How much room the database takes: a SQLite file with its WAL, a PostgreSQL
        database's size; None where that cannot be told."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            path = (url.database or "").removeprefix("file:")
            if not path or path == ":memory:":
                return None
            return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
        if url.get_backend_name() != "postgresql":
            return None
        with self._read() as conn:
            return int(conn.execute(select(func.pg_database_size(func.current_database())))
                       .scalar_one())

    def revision(self) -> str | None:
        """The schema revision the database is at."""
        try:
            with self.engine.connect() as conn:
                return stored_revision(conn)
        except SQLAlchemyError as exc:
            raise StoreError(f"read failed: {str(exc).splitlines()[0]}") from exc

    def close(self) -> None:
        """Release every connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            with self.engine.connect().execution_options(symdiff_write=True) as conn, conn.begin():
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"write failed: {str(exc).splitlines()[0]}") from exc

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"read failed: {str(exc).splitlines()[0]}") from exc

    # -- workspaces -----------------------------------------------------------------------

    def ensure_workspace(self, root: str, host: str) -> Workspace:
        """The workspace for (root, host), created on first use."""
        existing = self.find_workspace(root, host)
        if existing is not None:
            return existing
        with self._write() as conn:
            insert_ignore(
                conn,
                t.workspaces,
                [
                    {
                        "root": root,
                        "host": host,
                        "created_us": int(time.time() * 1e6),
                        "baseline_done": False,
                    }
                ],
                ["root", "host"],
            )
        found = self.find_workspace(root, host)
        assert found is not None
        return found

    def find_workspace(self, root: str, host: str) -> Workspace | None:
        """The workspace for (root, host), if it exists."""
        with self._read() as conn:
            row = conn.execute(
                select(t.workspaces).where(t.workspaces.c.root == root, t.workspaces.c.host == host)
            ).first()
        return None if row is None else Workspace(row.id, row.root, row.host, row.baseline_done)

    def workspaces(self) -> list[Workspace]:
        """Every workspace in the database."""
        with self._read() as conn:
            rows = conn.execute(select(t.workspaces).order_by(t.workspaces.c.id)).all()
        return [Workspace(r.id, r.root, r.host, r.baseline_done) for r in rows]

    def mark_baseline_done(self, workspace_id: int) -> None:
        """Record that the first full snapshot of a workspace is complete."""
        with self._write() as conn:
            conn.execute(
                update(t.workspaces)
                .where(t.workspaces.c.id == workspace_id)
                .values(baseline_done=True)
            )

    # -- file states and snapshots --------------------------------------------------------

    def file_states(
        self, workspace_id: int, *, under: Sequence[str] | None = None
    ) -> dict[str, FileState]:
        """Current state of tracked files, optionally only those at or under some paths.

        Each path is looked up as itself and as a directory prefix, by ranges on the primary
        key (`path` compares bytewise: BINARY on SQLite, COLLATE "C" on PostgreSQL).
        """
        f = t.files
        q = select(f).where(f.c.workspace_id == workspace_id)
        with self._read() as conn:
            if under is None or "" in under:
                rows: list[Any] = list(conn.execute(q))
            else:
                rows = []
                wanted = sorted(set(under))
                for i in range(0, len(wanted), 100):
                    terms = [
                        (f.c.path == p) | ((f.c.path >= p + "/") & (f.c.path < p + "0"))
                        for p in wanted[i : i + 100]
                    ]
                    rows.extend(conn.execute(q.where(or_(*terms))))
        return {
            r.path: FileState(r.path, r.blob_hash, r.size, r.mtime_ns, r.checked_ns) for r in rows
        }

    def files_marker(self, workspace_id: int) -> tuple[int, int]:
        """(how many files, the latest `checked_ns`): it moves whenever a file state is
        added, removed or rewritten (a file read again), so that a reader holding what it
        built from the file states knows, in one query, whether they changed."""
        f = t.files.c
        with self._read() as conn:
            count, latest = conn.execute(select(func.count(), func.max(f.checked_ns)).where(
                f.workspace_id == workspace_id)).one()
        return int(count), int(latest or 0)

    def get_blob(self, digest: str) -> bytes | None:
        """The bytes of a snapshot, or None when only its hash is kept (or it is unknown)."""
        found = self.snapshot(digest)
        return None if found is None else found.data

    def get_blobs(self, digests: Sequence[str]) -> dict[str, bytes | None]:
        """`get_blob` of many, in a few queries."""
        with self._read() as conn:
            return deltas.read_many(conn, digests)

    def snapshot(self, digest: str) -> deltas.Snapshot | None:
        """A snapshot's bytes and its depth in a delta chain (None: hash only, or unknown).
        A delta whose base is gone is a StoreError, never wrong bytes."""
        with self._read() as conn:
            return deltas.read(conn, digest)

    # -- the write path -------------------------------------------------------------------

    def apply(
        self,
        workspace_id: int,
        mutations: Sequence[Mutation],
        expected: Mapping[str, str | None] | None = None,
    ) -> list[Mutation]:
        """Apply mutations in one transaction and return those applied.

        With `expected` (path -> blob hash as the caller last saw it, None = untracked), a
        mutation touching a path whose stored state no longer matches is skipped: another
        writer recorded that change first, and recording it again would duplicate it.
        """
        if not mutations:
            return []
        with self._write() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(workspace_id)))
            if expected is not None:
                mutations = self._still_valid(conn, workspace_id, mutations, expected)
            blobs = deltas.settle(conn, list({b.hash: b for m in mutations for b in m.blobs}
                                             .values()))  # fmt: skip
            blob_rows = [
                {"hash": b.hash, "size": b.size, "binary": b.binary, "codec": b.codec,
                 "data": b.data, "base": b.base}
                for b in blobs
            ]  # fmt: skip
            insert_ignore(conn, t.blobs, blob_rows, ["hash"])
            for m in mutations:
                for path in m.deletes:
                    conn.execute(
                        delete(t.files).where(
                            t.files.c.workspace_id == workspace_id, t.files.c.path == path
                        )
                    )
            upsert_files(
                conn,
                [
                    {
                        "workspace_id": workspace_id,
                        "path": s.path,
                        "blob_hash": s.blob_hash,
                        "size": s.size,
                        "mtime_ns": s.mtime_ns,
                        "checked_ns": s.checked_ns,
                    }
                    for m in mutations
                    for s in m.upserts
                ],
            )
            insert_changes(conn, workspace_id, [m.change for m in mutations if m.change])
            for m in mutations:
                c = m.change
                if c is not None and c.origin is Origin.EDIT and c.new_hash is not None:
                    edit_intents.consume_intent(conn, workspace_id, c.path, c.new_hash)
        return list(mutations)

    @staticmethod
    def _still_valid(
        conn: Connection,
        workspace_id: int,
        mutations: Sequence[Mutation],
        expected: Mapping[str, str | None],
    ) -> list[Mutation]:
        paths = sorted(expected)
        now: dict[str, str] = {}
        for i in range(0, len(paths), 500):
            rows = conn.execute(
                select(t.files.c.path, t.files.c.blob_hash).where(
                    t.files.c.workspace_id == workspace_id, t.files.c.path.in_(paths[i : i + 500])
                )
            )
            now.update({r.path: r.blob_hash for r in rows})
        valid = []
        for m in mutations:
            touched = (*m.deletes, *(s.path for s in m.upserts))
            if all(now.get(path) == expected.get(path) for path in touched):
                valid.append(m)
        return valid

    # -- the read path --------------------------------------------------------------------

    def stored_changes(self, f: ChangeFilter) -> list[StoredChange]:
        """The changes a filter selects (see `page`)."""
        return self.page(f).changes

    def page(self, f: ChangeFilter) -> Page:
        """The changes a filter selects, whether more remain, and where a cursor continues."""
        with self._read() as conn:
            return select_page(conn, f)

    def count(self, f: ChangeFilter) -> int:
        """How many changes a filter selects, its limit aside."""
        with self._read() as conn:
            return count_matching(conn, f)

    def newest_us(self, workspace_ids: Sequence[int] | None) -> int | None:
        """When the newest change of some workspaces (None: all) was observed; None if none."""
        with self._read() as conn:
            return newest_us(conn, workspace_ids)

    # -- named readers and edit intents ----------------------------------------------------

    def reader_cursor(self, name: str) -> str | None:
        """The cursor a named reader stopped at (None: a reader never seen)."""
        with self._read() as conn:
            return cursors.reader_cursor(conn, name)

    def move_reader(self, name: str, old: str | None, new: str) -> bool:
        """Advance a named reader from `old` to `new`; False when another answer moved it."""
        with self._write() as conn:
            return cursors.move_reader(conn, name, old, new)

    def add_intents(self, workspace_id: int, intents: Sequence[tuple[str, str]],
                    info: Mapping[str, object] | None) -> None:  # fmt: skip
        """Say that each (path, new_hash) is about to be written by an edit."""
        with self._write() as conn:
            edit_intents.add_intents(conn, workspace_id, intents, info)

    def intents(self, workspace_id: int) -> dict[tuple[str, str], dict[str, object]]:
        """The live edit intents of a workspace: (path, new_hash) -> origin_info."""
        with self._read() as conn:
            return edit_intents.intents(conn, workspace_id)

    # -- agent sessions (revision 0008; store/sessions.py) ---------------------------------

    def save_sessions(self, rows: Sequence[agent_sessions.SessionRow]) -> None:
        """Add or update agent sessions and their turns."""
        with self._write() as conn:
            agent_sessions.save(conn, rows)

    def sessions(self, workspace_ids: Sequence[int] | None, *, session: str | None = None
                 ) -> list[agent_sessions.SessionRow]:  # fmt: skip
        """Stored agent sessions with their turns, oldest first."""
        with self._read() as conn:
            return agent_sessions.load(conn, workspace_ids, session)

    def turn_counts(self, workspace_ids: Sequence[int] | None, session: str
                    ) -> dict[int, agent_sessions.TurnCounts]:  # fmt: skip
        """Files, symbols and records by origin of each turn of a session."""
        with self._read() as conn:
            return agent_sessions.turn_counts(conn, workspace_ids, session)

    def changes(self, f: ChangeFilter) -> list[FileChange]:
        """Like `stored_changes`, as domain values."""
        return [to_file_change(sc) for sc in self.stored_changes(f)]

    def count_changes(self, workspace_id: int) -> int:
        """How many change records a workspace has."""
        with self._read() as conn:
            n = conn.execute(
                select(func.count())
                .select_from(t.changes)
                .where(t.changes.c.workspace_id == workspace_id)
            ).scalar_one()
        return int(n)

    # -- facts by content (store/facts.py) ------------------------------------------------

    def load_shelf(self, shelf: SymbolShelf, keys: Sequence[tuple[str, str]],
                   pairs: Sequence[tuple[str, str, str]] = ()) -> int:  # fmt: skip
        """Put on `shelf` the stored symbols of these (language, blob) keys, and the stored
        changes of these (language, old blob, new blob) pairs, that it lacks, as stored by its
        extractor version; returns how many were found. A payload that does not read back
        (damaged, or a delta whose base went) is skipped: its blob is extracted afresh."""
        from symdiff.parse import codec  # the facts' codec: not on the cold read path

        asked = {(language, facts.pair_blob(old, new)): (language, old, new)
                 for language, old, new in pairs if shelf.pair((language, old, new)) is None}
        wanted = shelf.ask(keys)
        if not wanted and not asked:
            return 0
        with self._read() as conn:
            paired = facts.load(conn, shelf.version, facts.CHANGES, list(asked)) if asked else {}
            # A side whose every change is known needs no symbols.
            known = {asked[key] for key in paired}
            needed = {(language, blob) for language, old, new in set(asked.values()) - known
                      for blob in (old, new)}  # fmt: skip
            spared = {(language, blob) for language, old, new in known
                      for blob in (old, new)} - needed  # fmt: skip
            wanted = [key for key in wanted if key not in spared]
            rows = facts.load(conn, shelf.version, facts.SYMBOLS, wanted) if wanted else {}
        raws: dict[tuple[str, str], bytes | None] = {}
        found, depths = {}, {}
        for key in wanted:
            data = _raw_of(key, rows, raws)
            if data is None:
                continue
            try:
                found[key] = codec.from_raw(data)
            except codec.CodecError:
                continue
            depths[key] = rows[key][2]
        shelf.load(found, depths)
        changes = {}
        for key, (data, _, _) in paired.items():
            try:
                changes[asked[key]] = codec.decode_pair(data)
            except codec.CodecError:
                continue
        shelf.load_pairs(changes)
        return len(found) + len(changes)

    def keep_shelf(self, shelf: SymbolShelf, *, now_us: int | None = None,
                   replaced: Iterable[str] = (), head: Iterable[str] = ()) -> int:  # fmt: skip
        """Store what `shelf` worked out (its fresh symbols, each whole or as a delta against
        its base's, and its pairs); returns how many rows were offered.

        `replaced`: the blobs the batch's records replaced (their old sides). Once no file
        holds one, its references go, and so do its symbols unless `head` names it (HEAD's
        version of its path, which `against HEAD` asks about) or a row is stored against
        them: the cache keeps each file's current version and HEAD's, not every version in
        between (docs/storage.md). A version whose base goes is stored whole."""
        from symdiff.parse import codec

        fresh, pairs, refs = shelf.take_fresh(), shelf.take_fresh_pairs(), shelf.take_fresh_refs()
        replaced = set(replaced)
        if not fresh and not pairs and not refs and not replaced:
            return 0
        now = now_us if now_us is not None else time.time_ns() // 1000
        raws: dict[tuple[str, str], bytes] = {}

        def raw(key: tuple[str, str]) -> bytes | None:
            if key not in raws:
                found = shelf.get(key)
                if found is None:
                    return None
                raws[key] = codec.raw(found)
            return raws[key]

        changes = {(language, facts.pair_blob(old, new)): (codec.raw_pair(*pair), None, None, 0)
                   for (language, old, new), pair in pairs.items()}  # fmt: skip
        with self._write() as conn:
            gone = replaced - facts.held(conn, replaced)
            superseded = gone - set(head)
            facts.drop_refs(conn, gone)
            facts.drop_symbols(conn, superseded)
            symbols: dict[tuple[str, str], facts.Offer] = {}
            for key in fresh:
                if key[1] in superseded:
                    continue  # an old side parsed on the way, left behind at once
                base = shelf.base_of(key)
                if base in superseded:
                    base = None  # its row went (or never was): stored whole
                base_raw = None if base is None else raw((key[0], base))
                own = raw(key)
                assert own is not None  # fresh symbols are known
                symbols[key] = (own, base_raw, base, 0 if base_raw is None else shelf.depth(key))
            offered = {key: (codec.raw_refs(file_refs), None, None, 0)
                       for key, file_refs in refs.items() if key[1] not in gone}  # fmt: skip
            return (facts.save(conn, shelf.version, facts.SYMBOLS, symbols, now)
                    + facts.save(conn, shelf.version, facts.CHANGES, changes, now)
                    + facts.save(conn, shelf.version, facts.REFS, offered, now,
                                 zstd_level=codec.REFS_LEVEL))

    def load_facts(self, version: str, keys: Sequence[tuple[str, str]]
                   ) -> dict[tuple[str, str], tuple[tuple[Symbol, ...], FileRefs]]:  # fmt: skip
        """The stored symbols and references (the reference index's input) of these (language,
        blob) keys that have both, as stored by extractor `version`. A payload that does not read
        back is left out: its blob is extracted afresh."""
        from symdiff.parse import codec

        if not keys:
            return {}
        with self._read() as conn:
            refs = facts.load(conn, version, facts.REFS, keys)
            rows = facts.load(conn, version, facts.SYMBOLS, [key for key in keys if key in refs])
        raws: dict[tuple[str, str], bytes | None] = {}
        out = {}
        for key, (data, _, _) in refs.items():
            symbols = _raw_of(key, rows, raws)
            if symbols is None:
                continue
            try:
                out[key] = (codec.from_raw(symbols), codec.from_raw_refs(codec.unpack(data)))
            except codec.CodecError:
                continue
        return out

    def have_refs(self, version: str, keys: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
        """Which of these (language, blob) keys have stored references (none is read)."""
        with self._read() as conn:
            return facts.present(conn, version, facts.REFS, keys) if keys else set()

    def keep_facts(self, version: str,
                   found: Mapping[tuple[str, str], tuple[Sequence[Symbol], FileRefs]], *,
                   now_us: int | None = None) -> int:  # fmt: skip
        """Store blobs' symbols (whole, where not stored yet) and references; returns how many
        blobs were offered."""
        from symdiff.parse import codec

        return self.keep_raw_facts(version, {
            key: (codec.raw(syms), codec.raw_refs(file_refs))
            for key, (syms, file_refs) in found.items()}, now_us=now_us)  # fmt: skip

    def keep_raw_facts(self, version: str, found: Mapping[tuple[str, str], tuple[bytes, bytes]],
                       *, now_us: int | None = None) -> int:  # fmt: skip
        """`keep_facts` for symbols and references already in their raw forms (`codec.raw`,
        `codec.raw_refs`: as the parse pool's workers hand them over)."""
        from symdiff.parse import codec

        if not found:
            return 0
        now = now_us if now_us is not None else time.time_ns() // 1000
        symbols: dict[tuple[str, str], facts.Offer] = {
            key: (raw_symbols, None, None, 0) for key, (raw_symbols, _) in found.items()}
        refs: dict[tuple[str, str], facts.Offer] = {
            key: (raw_refs, None, None, 0) for key, (_, raw_refs) in found.items()}
        with self._write() as conn:
            facts.save(conn, version, facts.SYMBOLS, symbols, now)
            facts.save(conn, version, facts.REFS, refs, now, zstd_level=codec.REFS_LEVEL)
        return len(found)


def _raw_of(key: tuple[str, str], rows: Mapping[tuple[str, str], facts.Row],
            raws: dict[tuple[str, str], bytes | None], depth: int = 0) -> bytes | None:  # fmt: skip
    """The raw form of a stored key's symbols, its chain of bases unpacked first; None when a
    link is missing or does not unpack (the blob is then parsed again)."""
    from symdiff.parse import codec
    from symdiff.parse.shelf import CHAIN

    if key in raws:
        return raws[key]
    row = rows.get(key)
    result = None
    if row is not None and depth <= CHAIN:
        data, base, _ = row
        base_raw = None if base is None else _raw_of((key[0], base), rows, raws, depth + 1)
        if base is None or base_raw is not None:
            try:
                result = codec.unpack(data, base_raw)
            except codec.CodecError:
                result = None
    raws[key] = result
    return result
