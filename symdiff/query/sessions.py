"""The `diff` query over agent sessions: `session` with `turn` or `since_turn` (the argument
rules are `query/args.py`'s).

- `session` + `turn`: what the agent did in that turn — every record of the session's turn,
  whatever tool wrote it (`agent`, and `edit` from apply_edits inside the turn).
- `session` + `since_turn`: what anyone else changed since that turn ended — every record
  observed after its end that is not this session's.
- `session` alone: the whole session's records.

With `turn` or `since_turn` the `since` window does not apply (a turn is its own window);
cursors, `origin`, `path` and `scope` still do.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from symdiff.errors import InvalidArgs
from symdiff.query.args import TurnArgs, Window

if TYPE_CHECKING:
    from symdiff.store import ChangeFilter, Store

def with_turn_bounds(window: Window, store: Store, ids: list[int] | None, root: Path) -> Window:
    """The window with the end of its `since_turn` turn (InvalidArgs while it is unknown or
    has not ended). The hooks' journal is newer than the database: it is asked first."""
    turns = window.turns
    if turns is None or turns.since_turn is None:
        return window
    end = _turn_end(store, ids, root, turns.session, turns.since_turn)
    return replace(window, turn_end_us=end)


def _turn_end(store: Store, ids: list[int] | None, root: Path, session: str, number: int
              ) -> int:  # fmt: skip
    from symdiff.agents.reader import read_session

    live = read_session(str(root), session)
    if live is not None:
        for turn in live.turns:
            if turn.number == number and turn.end is not None:
                return turn.end // 1000
    for row in store.sessions(ids, session=session):
        for stored in row.turns:
            if stored.number == number and stored.ended_us is not None:
                return stored.ended_us
    raise InvalidArgs(f"since_turn: turn {number} of session {session} is not known or has not "
                      "ended")


def turn_filter(f: ChangeFilter, turns: TurnArgs, end_us: int | None) -> ChangeFilter:
    """A read's filter narrowed to a session's turn, or to everyone else since a turn."""
    if turns.since_turn is not None:
        return replace(f, since_us=max(f.since_us if f.after is not None else 0, end_us or 0),
                       not_session=turns.session)
    return replace(f, since_us=0, session=turns.session, turn=turns.turn)
