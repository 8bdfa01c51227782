"""`symdiff sessions`: the workspace's agent sessions and turns, with what each turn wrote.

Sessions and turns come from the database and from the hooks' journals (newer: a turn the
daemon has not copied yet is listed too); the counts from the records of each turn.
"""

from __future__ import annotations

from typing import Any

from symdiff.agents.reader import Journals
from symdiff.agents.recorder import rows
from symdiff.config import Settings
from symdiff.store.kept import reader
from symdiff.store.sessions import SessionRow, TurnCounts
from symdiff.timestamps import format_us


def list_sessions(settings: Settings) -> list[dict[str, Any]]:
    """Sessions oldest first: session, agent, model, started, ended, and turns (turn, started,
    ended, files, symbols, by_origin)."""
    root = settings.root
    journals = Journals(str(root))
    journals.refresh()
    store = reader(settings.db_url)
    ws = None if store is None else store.find_workspace(str(root), settings.host)
    ids = None if ws is None else [ws.id]
    found: dict[str, SessionRow] = {}
    if store is not None and ids is not None:
        found = {s.session: s for s in store.sessions(ids)}
    found.update({s.session: s for s in rows(journals.sessions, ws.id if ws else 0)})
    out: list[dict[str, Any]] = []
    for s in sorted(found.values(), key=lambda s: s.started_us):
        counts = store.turn_counts(ids, s.session) if store is not None and ids else {}
        out.append({
            "session": s.session, "agent": s.agent, "model": s.model,
            "started": format_us(s.started_us),
            "ended": None if s.ended_us is None else format_us(s.ended_us),
            "turns": [_turn(t.number, t.started_us, t.ended_us, counts.get(t.number))
                      for t in s.turns],
        })  # fmt: skip
    return out


def _turn(number: int, started: int, ended: int | None, counts: TurnCounts | None
          ) -> dict[str, object]:  # fmt: skip
    counts = counts or TurnCounts()
    return {"turn": number, "started": format_us(started),
            "ended": None if ended is None else format_us(ended), "files": counts.files,
            "symbols": counts.symbols, "by_origin": dict(counts.by_origin)}  # fmt: skip
