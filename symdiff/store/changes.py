"""Change records in SQL: the one statement that writes a change, the one read that serves it.

A change is a row of `changes`; the definitions it touched are rows of `symbol_changes`,
ordered by `ordinal` (docs/spec.md's line order), each naming a `symbol_names` row (name and kind,
stored once); its `origin_info` and `git` are a `provenance` row shared by the records that
carry the same pair.

Reading order for cursors is (txid, id): `txid` is the writing transaction's id on PostgreSQL
(0 on SQLite, where writers are serialised, so ids grow in commit order). A page reads only
below the oldest transaction still running (`_stable_bound`), so a record whose transaction
began earlier but commits later is never passed over: cursors see every record exactly once.

The write and the read of a change, its filters and the cursor order must agree column by
column, so they sit side by side in one module.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, and_, case, false, func, select, true, tuple_
from sqlalchemy.types import BigInteger, Text

from symdiff.model import ChangeType, FileChange, Origin, Scope, SymbolChange, SymbolChangeType
from symdiff.records import ChangeRecord, SymbolRecord, change_record, symbol_record
from symdiff.store import interned
from symdiff.store import tables as t
from symdiff.store.sessions import session_terms
from symdiff.timestamps import from_us, to_us

_CHUNK = 500  # ids per IN (...) list
_NO_BOUND = 2**62  # SQLite: every committed row is stable
_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True, slots=True)
class Position:
    """A place in the reading order: just after the change (txid, id)."""

    txid: int
    id: int


START = Position(-1, 0)


@dataclass(frozen=True, slots=True)
class PathFilter:
    """gitignore-style patterns as (regex, selects) pairs in order; the last that matches a path
    decides. A path no pattern matches is selected only when every pattern is a `!` one."""

    rules: tuple[tuple[str, bool], ...]

    @property
    def default(self) -> bool:
        return not any(selects for _, selects in self.rules)


@dataclass(frozen=True, slots=True)
class ChangeFilter:
    """Which changes a read returns, all filters applied before the limit.

    Without `after`: the newest first. With `after` (a cursor): the changes recorded after that
    position, oldest first. Both only at or after `since_us` (0 for no bound).
    """

    workspace_ids: Sequence[int] | None  # None: every workspace
    since_us: int
    scope: Scope | None  # None: both
    limit: int
    origins: tuple[str, ...] | None = None  # None: every origin
    paths: PathFilter | None = None
    after: Position | None = None
    session: str | None = None  # with `turn`: that turn's records; alone: the session's
    turn: int | None = None
    not_session: str | None = None  # everyone's records but this session's (since a turn)


@dataclass(frozen=True, slots=True)
class StoredChange:
    """A change as stored: its record, and what a patch or a domain object needs beside it."""

    id: int
    workspace: str  # the workspace's root
    ts_us: int
    old_hash: str | None
    new_hash: str | None
    record: ChangeRecord


@dataclass(frozen=True, slots=True)
class Page:
    """The changes a read returns, whether more match beyond the limit, and the position a
    cursor continues from (everything up to it has been read or filtered out)."""

    changes: list[StoredChange]
    more: bool
    position: Position


def _json(value: object) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"), sort_keys=True)


def insert_change(conn: Connection, workspace_id: int, c: FileChange) -> int:
    """Write one change and its symbol rows; returns the change id."""
    return insert_changes(conn, workspace_id, [c])[0]


def insert_changes(conn: Connection, workspace_id: int, changes: Sequence[FileChange]
                   ) -> list[int]:  # fmt: skip
    """Write changes and their symbol rows in order; returns their ids. Their names and
    provenance are looked up (or added) first, all at once, in sorted order: two PostgreSQL
    writers adding the same new names never wait for each other crosswise."""
    if not changes:
        return []
    interned.hold(conn)  # PostgreSQL: retention's delete of unused rows waits for this writer
    names = interned.name_ids(conn, {(s.name, s.kind) for c in changes for s in c.symbols})
    pairs = [(_json(c.origin_info), _json(c.git)) for c in changes]
    provenance = interned.provenance_ids(conn, pairs)
    txid = _current_txid(conn)  # one transaction: one txid for all of them
    # In one statement (with RETURNING, in the order given): a checkout's or a scan's
    # thousands of records one statement each took a third of its recording.
    found = conn.execute(
        t.changes.insert().returning(t.changes.c.id, sort_by_parameter_order=True),
        [{"workspace_id": workspace_id, "ts_us": to_us(c.timestamp), "path": c.path,
          "old_path": c.old_path, "change_type": c.change_type.value,
          "lines_added": c.lines_added, "lines_removed": c.lines_removed,
          "scope": c.scope.value, "language": c.language, "old_hash": c.old_hash,
          "new_hash": c.new_hash, "origin": c.origin.value, "provenance_id": provenance[pair],
          "txid": txid} for c, pair in zip(changes, pairs, strict=True)],
    )  # fmt: skip
    ids = [int(row[0]) for row in found]
    symbol_rows = [
        {"change_id": change_id, "ordinal": i, "name_id": names[(s.name, s.kind)],
         "change_type": t.SYMBOL_CHANGE_CODES[s.change_type.value],
         "start_line": s.start_line, "end_line": s.end_line,
         "renamed_from": s.renamed_from, "renamed_to": s.renamed_to}
        for change_id, c in zip(ids, changes, strict=True) for i, s in enumerate(c.symbols)
    ]  # fmt: skip
    if symbol_rows:
        conn.execute(t.symbol_changes.insert(), symbol_rows)
    return ids


def _current_txid(conn: Connection) -> int:
    """The writing transaction's id on PostgreSQL (the same for every row it writes; a cursor
    orders by it, docs/storage.md), 0 on SQLite."""
    if conn.dialect.name == "postgresql":
        return int(conn.execute(select(func.pg_current_xact_id().cast(Text).cast(BigInteger)))
                   .scalar_one())  # fmt: skip
    return 0


def _stable_bound(conn: Connection) -> int:
    """Rows with a txid below this are final: their transactions committed or aborted."""
    if conn.dialect.name != "postgresql":
        return _NO_BOUND
    xmin = conn.execute(
        select(func.pg_snapshot_xmin(func.pg_current_snapshot()).cast(Text).cast(BigInteger))
    ).scalar_one()
    return int(xmin)


def _after(position: Position, dialect: str) -> ColumnElement[bool]:
    """Rows after a position, written so that the (txid, id) indexes seek to it."""
    c = t.changes.c
    if dialect == "postgresql":
        return tuple_(c.txid, c.id) > tuple_(position.txid, position.id)
    # SQLite writes txid 0 on every row (its writers are serialised): an equality on it lets
    # `(workspace_id, txid, id)` seek on id, and without a workspace the rowid range serves,
    # already in order (SQLite has no `(txid, id)` index since revision 0007); a row-value or
    # OR comparison would scan the whole txid range.
    return and_(c.txid == 0, c.id > position.id)


def _stable(bound: int, dialect: str) -> tuple[ColumnElement[bool], ...]:
    """Rows below the stable bound: no condition on SQLite, where every visible row is final
    (and a range on txid there would lead the planner away from `_after`'s seek)."""
    return (t.changes.c.txid < bound,) if dialect == "postgresql" else ()


def _path_clause(paths: PathFilter) -> ColumnElement[bool]:
    c = t.changes.c
    if not paths.rules:
        return true()
    # The last pattern that matches decides, as in a .gitignore: test them newest first.
    whens = [(c.path.regexp_match(_NAMED_GROUP.sub("(", rx)), true() if selects else false())
             for rx, selects in reversed(paths.rules)]  # fmt: skip
    return case(*whens, else_=true() if paths.default else false()) == true()


def _where(f: ChangeFilter) -> list[ColumnElement[bool]]:
    c = t.changes.c
    terms: list[ColumnElement[bool]] = []
    if f.workspace_ids is not None:
        terms.append(c.workspace_id.in_(list(f.workspace_ids)))
    if f.scope is not None:
        terms.append(c.scope == f.scope.value)
    if f.origins is not None:
        terms.append(c.origin.in_(list(f.origins)))
    if f.paths is not None:
        terms.append(_path_clause(f.paths))
    terms.extend(session_terms(f.session, f.turn, f.not_session))  # needs the provenance join
    return terms


def head(conn: Connection, bound: int, workspace_ids: Sequence[int] | None) -> Position:
    """The newest stable position: a cursor made now continues from here."""
    c = t.changes.c
    # On SQLite every txid is 0: the equality lets the newest row come from the end of the
    # rowid or of `(workspace_id, txid, id)` instead of a sort of every row.
    q = select(c.txid, c.id).where(c.txid < bound if conn.dialect.name == "postgresql"
                                   else c.txid == 0)  # fmt: skip
    if workspace_ids is not None:
        q = q.where(c.workspace_id.in_(list(workspace_ids)))
    row = conn.execute(q.order_by(c.txid.desc(), c.id.desc()).limit(1)).first()
    return START if row is None else Position(int(row[0]), int(row[1]))


def select_page(conn: Connection, f: ChangeFilter) -> Page:
    """The changes a filter selects, each with its symbols, and where a cursor continues."""
    c, p = t.changes.c, t.provenance.c
    bound = _stable_bound(conn)  # first: rows below it are final when the page is read
    q = (
        select(
            c.id, t.workspaces.c.root, c.path, c.old_path, c.ts_us, c.change_type,
            c.lines_added, c.lines_removed, c.scope, c.language, c.old_hash, c.new_hash,
            c.origin, p.origin_info, p.git, c.txid,
        )
        .join(t.workspaces, t.workspaces.c.id == c.workspace_id)
        .outerjoin(t.provenance, p.id == c.provenance_id)
        .where(c.ts_us >= f.since_us, *_where(f))
    )
    if f.after is None:
        q = q.order_by(c.ts_us.desc(), c.id.desc())
    else:
        q = q.where(_after(f.after, conn.dialect.name), *_stable(bound, conn.dialect.name))
        q = q.order_by(c.txid, c.id)
    rows = conn.execute(q.limit(f.limit + 1)).all()
    more = len(rows) > f.limit
    rows = rows[: f.limit]
    if f.after is not None and more:
        position = Position(int(rows[-1][15]), int(rows[-1][0]))
    else:
        # Everything up to the stable head has been read (or did not match): continue there.
        position = head(conn, bound, f.workspace_ids)
        if f.after is not None and (position.txid, position.id) < (f.after.txid, f.after.id):
            position = f.after
    symbols = _symbols(conn, [r[0] for r in rows])
    return Page(
        [
            StoredChange(
                id=id_, workspace=root, ts_us=ts_us, old_hash=old_hash, new_hash=new_hash,
                record=change_record(
                    path=path, old_path=old_path, ts_us=ts_us, change_type=change_type,
                    lines_added=added, lines_removed=removed, scope=scope, language=language,
                    symbols=symbols.get(id_, []), origin=origin,
                    origin_info=None if origin_info is None else json.loads(origin_info),
                    git=None if git is None else json.loads(git),
                ),
            )
            for (id_, root, path, old_path, ts_us, change_type, added, removed, scope,
                 language, old_hash, new_hash, origin, origin_info, git, _txid) in rows
        ],
        more,
        position,
    )


def count_matching(conn: Connection, f: ChangeFilter) -> int:
    """How many changes a filter selects, its limit aside (one `COUNT`)."""
    c = t.changes.c
    source = t.changes if f.session is None and f.not_session is None else t.changes.outerjoin(
        t.provenance, t.provenance.c.id == c.provenance_id)
    q = select(func.count()).select_from(source).where(c.ts_us >= f.since_us, *_where(f))
    if f.after is not None:
        q = q.where(_after(f.after, conn.dialect.name),
                    *_stable(_stable_bound(conn), conn.dialect.name))
    return int(conn.execute(q).scalar_one())


def newest_us(conn: Connection, workspace_ids: Sequence[int] | None) -> int | None:
    """The timestamp of the newest change in some workspaces (None: every one); None if none."""
    q = select(func.max(t.changes.c.ts_us))
    if workspace_ids is not None:
        q = q.where(t.changes.c.workspace_id.in_(list(workspace_ids)))
    value = conn.execute(q).scalar_one()
    return None if value is None else int(value)


def _symbols(conn: Connection, ids: Sequence[int]) -> dict[int, list[SymbolRecord]]:
    """The symbol records of some changes, in line order, by change id."""
    s, n = t.symbol_changes.c, t.symbol_names.c
    types = t.SYMBOL_CHANGE_TYPES
    out: dict[int, list[SymbolRecord]] = {}
    for i in range(0, len(ids), _CHUNK):
        rows = conn.execute(
            select(
                s.change_id, n.name, n.kind, s.change_type, s.start_line, s.end_line,
                s.renamed_from, s.renamed_to,
            )
            .join(t.symbol_names, n.id == s.name_id)
            .where(s.change_id.in_(ids[i : i + _CHUNK]))
            .order_by(s.change_id, s.ordinal)
        ).all()  # rows unpack as tuples: this loop runs for every symbol of every record
        for change_id, name, kind, code, start, end, renamed_from, renamed_to in rows:
            out.setdefault(change_id, []).append(symbol_record(
                name=name, kind=kind, change_type=types[code], start_line=start, end_line=end,
                renamed_from=renamed_from, renamed_to=renamed_to,
            ))  # fmt: skip
    return out


def to_file_change(sc: StoredChange) -> FileChange:
    """The domain value of a stored change."""
    r = sc.record
    return FileChange(
        path=r["path"],
        old_path=r["old_path"],
        timestamp=from_us(sc.ts_us),
        change_type=ChangeType(r["change_type"]),
        lines_added=r["lines_added"],
        lines_removed=r["lines_removed"],
        scope=Scope(r["scope"]),
        language=r["language"],
        symbols=tuple(
            SymbolChange(
                name=s["name"], kind=s["kind"], change_type=SymbolChangeType(s["change_type"]),
                start_line=s["start_line"], end_line=s["end_line"],
                renamed_from=s.get("renamed_from"), renamed_to=s.get("renamed_to"),
            )
            for s in r["symbols"]
        ),
        workspace=sc.workspace,
        old_hash=sc.old_hash,
        new_hash=sc.new_hash,
        id=sc.id,
        origin=Origin(r["origin"]),
        origin_info=r["origin_info"],
        git=r["git"],
    )
