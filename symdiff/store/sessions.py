"""Agent sessions and turns in SQL (revision 0008): kept from the hooks' journals, read back
for `symdiff sessions` and for the turn bounds of a `diff --session S --since-turn N`.

A record's session and turn are columns of its `provenance` row (`interned.agent_turn`), so a
turn's records are one index range and "everyone but this session" one condition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, func, or_, select

from symdiff.store import tables as t


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn of a session, as stored (microseconds)."""

    number: int
    started_us: int
    ended_us: int | None


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One agent session of a workspace, with its turns."""

    workspace_id: int
    session: str
    agent: str
    model: str | None
    started_us: int
    ended_us: int | None
    turns: tuple[TurnRow, ...] = ()


def session_terms(session: str | None, turn: int | None, not_session: str | None
                  ) -> list[ColumnElement[bool]]:  # fmt: skip
    """Conditions on a read joined with `provenance`: a session (and turn), or all but one."""
    p = t.provenance.c
    terms: list[ColumnElement[bool]] = []
    if session is not None:
        terms.append(p.session == session)
        if turn is not None:
            terms.append(p.turn == turn)
    if not_session is not None:
        terms.append(or_(p.session.is_(None), p.session != not_session))
    return terms


def save(conn: Connection, sessions: Iterable[SessionRow]) -> None:
    """Add or update sessions and their turns (the journal is newer than the table)."""
    s, tt = t.agent_sessions.c, t.agent_turns.c
    for row in sessions:
        found = conn.execute(select(s.id, s.ended_us, s.model).where(
            s.workspace_id == row.workspace_id, s.session == row.session)).first()  # fmt: skip
        if found is None:
            sid = int(conn.execute(t.agent_sessions.insert().values(
                workspace_id=row.workspace_id, session=row.session, agent=row.agent,
                model=row.model, started_us=row.started_us, ended_us=row.ended_us,
            ).returning(s.id)).scalar_one())  # fmt: skip
        else:
            sid = int(found[0])
            if (found[1], found[2]) != (row.ended_us, row.model):
                conn.execute(t.agent_sessions.update().where(s.id == sid).values(
                    ended_us=row.ended_us, model=row.model))  # fmt: skip
        stored = {int(n): (int(a), None if b is None else int(b)) for n, a, b in conn.execute(
            select(tt.turn, tt.started_us, tt.ended_us).where(tt.session_id == sid))}
        for turn in row.turns:
            have = stored.get(turn.number)
            if have is None:
                conn.execute(t.agent_turns.insert().values(
                    session_id=sid, turn=turn.number, started_us=turn.started_us,
                    ended_us=turn.ended_us))  # fmt: skip
            elif have != (turn.started_us, turn.ended_us):
                conn.execute(t.agent_turns.update().where(
                    tt.session_id == sid, tt.turn == turn.number).values(
                    started_us=turn.started_us, ended_us=turn.ended_us))  # fmt: skip


def load(conn: Connection, workspace_ids: Sequence[int] | None,
         session: str | None = None) -> list[SessionRow]:  # fmt: skip
    """Stored sessions (of some workspaces, or every one), oldest first, with their turns."""
    s, tt = t.agent_sessions.c, t.agent_turns.c
    q = select(s.id, s.workspace_id, s.session, s.agent, s.model, s.started_us, s.ended_us)
    if workspace_ids is not None:
        q = q.where(s.workspace_id.in_(list(workspace_ids)))
    if session is not None:
        q = q.where(s.session == session)
    out = []
    for sid, ws, name, agent, model, started, ended in conn.execute(q.order_by(s.started_us)):
        turns = tuple(TurnRow(int(n), int(a), None if b is None else int(b)) for n, a, b in
                      conn.execute(select(tt.turn, tt.started_us, tt.ended_us)
                                   .where(tt.session_id == sid).order_by(tt.turn)))  # fmt: skip
        out.append(SessionRow(int(ws), name, agent, model, int(started),
                              None if ended is None else int(ended), turns))  # fmt: skip
    return out


@dataclass(frozen=True, slots=True)
class TurnCounts:
    """What a turn's records add up to: files, symbols, and records by origin."""

    files: int = 0
    symbols: int = 0
    by_origin: tuple[tuple[str, int], ...] = ()


def turn_counts(conn: Connection, workspace_ids: Sequence[int] | None, session: str
                ) -> dict[int, TurnCounts]:  # fmt: skip
    """For each turn of `session`: distinct files, symbol rows and records by origin."""
    c, p, sc = t.changes.c, t.provenance.c, t.symbol_changes.c
    base = (select(p.turn, c.origin, func.count(), func.count(func.distinct(c.path)))
            .select_from(t.changes.join(t.provenance, p.id == c.provenance_id))
            .where(p.session == session))  # fmt: skip
    sym = (select(p.turn, func.count())
           .select_from(t.changes.join(t.provenance, p.id == c.provenance_id)
                        .join(t.symbol_changes, sc.change_id == c.id))
           .where(p.session == session))  # fmt: skip
    files = (select(p.turn, func.count(func.distinct(c.path)))
             .select_from(t.changes.join(t.provenance, p.id == c.provenance_id))
             .where(p.session == session))  # fmt: skip
    if workspace_ids is not None:
        ws = c.workspace_id.in_(list(workspace_ids))
        base, sym, files = base.where(ws), sym.where(ws), files.where(ws)
    by_origin: dict[int, dict[str, int]] = {}
    for turn, origin, n, _ in conn.execute(base.group_by(p.turn, c.origin)):
        by_origin.setdefault(int(turn), {})[origin] = int(n)
    symbols = {int(turn): int(n) for turn, n in conn.execute(sym.group_by(p.turn))}
    nfiles = {int(turn): int(n) for turn, n in conn.execute(files.group_by(p.turn))}
    return {turn: TurnCounts(nfiles.get(turn, 0), symbols.get(turn, 0),
                             tuple(sorted(origins.items())))
            for turn, origins in by_origin.items()}  # fmt: skip


