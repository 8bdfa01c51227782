"""The hook's slow paths, loaded only when needed: recording without a daemon, keeping the
sessions in the database, and the context a new turn is told.

- Without a daemon, a tool call's PostToolUse records the tree as `symdiff index` would (its
  windows are in the journal, so what the call wrote is the agent's) before it returns, and a
  UserPromptSubmit does the same first, so a person's saves between turns are recorded as
  theirs (`scan`) before the turn's tools run.
- `flush` copies the journals' sessions and turns into the database (`store/sessions.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from symdiff.agents.reader import Journals, read_session
from symdiff.agents.state import Session, last_ended_turn
from symdiff.config import Settings
from symdiff.records import ChangeRecord
from symdiff.store import Store
from symdiff.store.sessions import SessionRow, TurnRow

MAX_CONTEXT = 2000  # characters of the summary before "and K more"


def rows(sessions: Mapping[str, Session], workspace_id: int) -> list[SessionRow]:
    """The database rows of the journals' sessions (times in µs)."""
    return [
        SessionRow(workspace_id, s.id, s.agent, s.model, s.start // 1000,
                   None if s.end is None else s.end // 1000,
                   tuple(TurnRow(t.number, t.start // 1000,
                                 None if t.end is None else t.end // 1000) for t in s.turns))
        for s in sessions.values()
    ]  # fmt: skip


def flush(store: Store, settings: Settings, journals: Journals | None = None) -> None:
    """Keep every session and turn the journals know in the database (a daemon passes its
    `Journals`, and nothing is written when they have not grown since its last look)."""
    if journals is None:
        journals = Journals(str(settings.root))
        journals.refresh()
    elif not journals.refresh():
        return
    if journals.sessions:
        ws = store.ensure_workspace(str(settings.root), settings.host)
        store.save_sessions(rows(journals.sessions, ws.id))


def record_now(root: Path) -> int:
    """Record the tree now, attributing writes inside tool windows (no daemon runs); how many
    changes were recorded."""
    from symdiff.record.indexer import check_root, reconcile
    from symdiff.record.origins import scan_provenance

    settings = Settings.resolve(root)
    check_root(settings)
    with Store(settings.db_url) as store:  # one pass, as `symdiff index` (api.index) runs it
        report = reconcile(store, settings, provenance=scan_provenance(settings.root))
        flush(store, settings)
    return len(report.changes)


def context(root: Path, session: str) -> str | None:
    """What anyone but `session` changed since its last turn ended, as a short symbol-level
    summary; None when nothing did (or the session has no ended turn)."""
    from symdiff.query.answer import DiffQuery, diff

    state = read_session(str(root), session)
    if state is None:
        return None
    last = last_ended_turn(state)
    if last is None:
        return None
    answer = diff(Settings.resolve(root, nearest=True),
                  DiffQuery(session=session, since_turn=last.number, scope="all",
                            limit=500))  # fmt: skip
    return summary(answer.records, last.number, more=answer.more)


def summary(records: Sequence[ChangeRecord], turn: int, *, more: bool = False) -> str | None:
    """The context text: one line per record, oldest first, cut at about MAX_CONTEXT."""
    if not records:
        return None
    head = (f"symdiff: since your turn {turn} ended, others changed these files "
            "(symbol-level; `diff` with session and since_turn has the details):")
    lines = [_line(r) for r in reversed(records)]
    out, used = [head], len(head)
    for i, text in enumerate(lines):
        if used + len(text) + 1 > MAX_CONTEXT:
            rest = len(lines) - i
            out.append(f"and {rest}{'+' if more else ''} more")
            break
        out.append(text)
        used += len(text) + 1
    else:
        if more:
            out.append("and more")
    return "\n".join(out)


def _line(r: ChangeRecord) -> str:
    path = r["path"] if r["old_path"] is None else f"{r['old_path']} → {r['path']}"
    symbols = ", ".join(f"{s['name']} {s['change_type']}" for s in r["symbols"][:6])
    if len(r["symbols"]) > 6:
        symbols += f", +{len(r['symbols']) - 6}"
    return (f"- {r['change_type']} {path} +{r['lines_added']} -{r['lines_removed']}"
            f"{': ' + symbols if symbols else ''} (by {_who(r)})")


def _who(r: ChangeRecord) -> str:
    origin, info = r["origin"], r["origin_info"] or {}
    if origin == "agent":
        return f"{info.get('agent', 'agent')} session {info.get('session')} turn {info.get('turn')}"
    if origin in ("watch", "scan"):
        return "a person (or a tool outside any agent)" if origin == "watch" else "unknown (scan)"
    if origin == "git":
        return f"git {info.get('operation', '')}".rstrip()
    if origin == "edit":
        client = info.get("client")
        name = client.get("name") if isinstance(client, dict) else client
        return f"apply_edits by {name}" if name else "apply_edits"
    return str(origin)
