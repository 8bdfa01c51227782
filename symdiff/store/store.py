"""The Store: the only code that writes SQL. Snapshots, file states, change records."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, delete, func, make_url, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from symdiff.errors import StoreError
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.store import tables as t
from symdiff.store.blobs import Blob, unpack
from symdiff.store.engine import insert_ignore, make_engine, upsert_files
from symdiff.store.migrate import upgrade


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


_CHANGE_TYPES = {m.value: m for m in ChangeType}
_SCOPES = {m.value: m for m in Scope}
_SYMBOL_TYPES = {m.value: m for m in SymbolChangeType}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _without_password(url: str) -> str:
    """A database URL fit for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except SQLAlchemyError:
        return "<a malformed database URL>"


def _symbol(d: dict[str, Any]) -> SymbolChange:
    return SymbolChange(
        name=d["name"],
        kind=d["kind"],
        change_type=_SYMBOL_TYPES[d["change_type"]],
        start_line=d["start_line"],
        end_line=d["end_line"],
        renamed_from=d.get("renamed_from"),
        renamed_to=d.get("renamed_to"),
    )


@functools.lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return (_EPOCH + timedelta(days=days)).strftime("%Y-%m-%dT")


def format_us(us: int) -> str:
    """RFC 3339 UTC with microseconds and `Z` of microseconds since the epoch."""
    # The read path formats thousands of these: the date part is cached, the rest is arithmetic.
    days, rest = divmod(us, 86_400_000_000)
    secs, frac = divmod(rest, 1_000_000)
    hours, secs = divmod(secs, 3600)
    minutes, secs = divmod(secs, 60)
    return f"{_day(days)}{hours:02d}:{minutes:02d}:{secs:02d}.{frac:06d}Z"


def to_us(ts: datetime) -> int:
    """Microseconds since the epoch, UTC."""
    delta = ts.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(us: int) -> datetime:
    """The UTC datetime of microseconds since the epoch."""
    return _EPOCH + timedelta(microseconds=us)


class Store:
    """A symdiff database. Opening it runs pending migrations."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.safe_url = _without_password(url)
        try:
            self.engine = make_engine(url)
            if migrate:
                with self.engine.connect() as conn:
                    upgrade(conn)
        except SQLAlchemyError as exc:
            raise StoreError(
                f"cannot open database {self.safe_url}: {exc.__class__.__name__}: "
                f"{str(exc).splitlines()[0]}"
            ) from exc

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

    def get_blob(self, digest: str) -> bytes | None:
        """The bytes of a snapshot, or None when only its hash is kept (or it is unknown)."""
        with self._read() as conn:
            row = conn.execute(
                select(t.blobs.c.codec, t.blobs.c.data).where(t.blobs.c.hash == digest)
            ).first()
        return None if row is None else unpack(row.codec, row.data)

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
            blob_rows = {
                b.hash: {
                    "hash": b.hash,
                    "size": b.size,
                    "binary": b.binary,
                    "codec": b.codec,
                    "data": b.data,
                }
                for m in mutations
                for b in m.blobs
            }
            insert_ignore(conn, t.blobs, list(blob_rows.values()), ["hash"])
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
            for m in mutations:
                if m.change is not None:
                    self._insert_change(conn, workspace_id, m.change)
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

    @staticmethod
    def _insert_change(conn: Connection, workspace_id: int, c: FileChange) -> int:
        res = conn.execute(
            t.changes.insert().values(
                workspace_id=workspace_id,
                ts_us=to_us(c.timestamp),
                path=c.path,
                old_path=c.old_path,
                change_type=c.change_type.value,
                lines_added=c.lines_added,
                lines_removed=c.lines_removed,
                scope=c.scope.value,
                language=c.language,
                old_hash=c.old_hash,
                new_hash=c.new_hash,
                symbols=json.dumps([x.to_dict() for x in c.symbols], separators=(",", ":")),
            )
        )
        change_id = int(res.inserted_primary_key[0])  # type: ignore[index]
        if c.symbols:
            conn.execute(
                t.symbol_changes.insert(),
                [
                    {
                        "change_id": change_id,
                        "ordinal": i,
                        "name": s.name,
                        "kind": s.kind,
                        "change_type": s.change_type.value,
                        "start_line": s.start_line,
                        "end_line": s.end_line,
                        "renamed_from": s.renamed_from,
                        "renamed_to": s.renamed_to,
                    }
                    for i, s in enumerate(c.symbols)
                ],
            )
        return change_id

    # -- the read path --------------------------------------------------------------------

    def _select_changes(
        self,
        *,
        workspace_ids: Sequence[int] | None,
        since: datetime,
        scope: Scope | None,
        limit: int,
    ) -> Sequence[Any]:
        c = t.changes
        q = select(
            c.c.path, c.c.old_path, c.c.ts_us, c.c.change_type, c.c.lines_added,
            c.c.lines_removed, c.c.scope, c.c.language, c.c.symbols, c.c.id,
            t.workspaces.c.root, c.c.old_hash, c.c.new_hash,
        ).join(t.workspaces, t.workspaces.c.id == c.c.workspace_id)  # fmt: skip
        q = q.where(c.c.ts_us >= to_us(since))
        if workspace_ids is not None:
            q = q.where(c.c.workspace_id.in_(list(workspace_ids)))
        if scope is not None:
            q = q.where(c.c.scope == scope.value)
        q = q.order_by(c.c.ts_us.desc(), c.c.id.desc()).limit(limit)
        with self._read() as conn:
            return conn.execute(q).all()

    def query_records(
        self,
        *,
        workspace_ids: Sequence[int] | None,
        since: datetime,
        scope: Scope | None,
        limit: int,
    ) -> list[dict[str, Any]]:
        """Like `query_changes`, as SPEC.md's JSON records: the fast path of the `diff` query."""
        rows = self._select_changes(
            workspace_ids=workspace_ids, since=since, scope=scope, limit=limit
        )
        # One JSON parse for every row's symbols instead of one per row.
        symbols = json.loads("[" + ",".join(r[8] for r in rows) + "]")
        return [
            {
                "path": r[0],
                "old_path": r[1],
                "timestamp": format_us(r[2]),
                "change_type": r[3],
                "lines_added": r[4],
                "lines_removed": r[5],
                "scope": r[6],
                "language": r[7],
                "symbols": syms,
            }
            for r, syms in zip(rows, symbols, strict=True)
        ]

    def query_changes(
        self,
        *,
        workspace_ids: Sequence[int] | None,
        since: datetime,
        scope: Scope | None,
        limit: int,
    ) -> list[FileChange]:
        """Changes at or after `since`, newest first, scope filtered before the limit."""
        rows = self._select_changes(
            workspace_ids=workspace_ids, since=since, scope=scope, limit=limit
        )
        return [
            FileChange(
                path=r[0],
                old_path=r[1],
                timestamp=from_us(r[2]),
                change_type=_CHANGE_TYPES[r[3]],
                lines_added=r[4],
                lines_removed=r[5],
                scope=_SCOPES[r[6]],
                language=r[7],
                symbols=tuple(_symbol(d) for d in json.loads(r[8])),
                workspace=r[10],
                old_hash=r[11],
                new_hash=r[12],
                id=r[9],
            )
            for r in rows
        ]

    def count_changes(self, workspace_id: int) -> int:
        """How many change records a workspace has."""
        with self._read() as conn:
            n = conn.execute(
                select(func.count())
                .select_from(t.changes)
                .where(t.changes.c.workspace_id == workspace_id)
            ).scalar_one()
        return int(n)
