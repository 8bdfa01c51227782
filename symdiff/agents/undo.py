"""Undo a turn (or a whole session), keeping everyone else's work (issue 24, item 5).

The turn's records (agent and edit) are reverted newest first, each as a three-way merge onto
the files as they are now: base = what the record wrote, ours = the file now, theirs = what it
replaced. A person's or a later turn's lines beside the turn's stay byte for byte; the same
lines touched by both are a conflict, and then nothing is written. Files the turn created are
removed (a conflict if someone changed them since), files it deleted come back, renames go
back. The writes are all-or-nothing (`edits.write.commit`); removals follow them. The undo is
recorded as `edit`, with `origin_info.undo` naming the session and turn it undid.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from symdiff.agents.merge import Conflict, merge3
from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.store import ChangeFilter, Store, StoredChange
from symdiff.store.changes import START

MAX_RECORDS = 100_000


@dataclass(frozen=True, slots=True)
class FileConflict:
    """Why one file cannot be reverted."""

    path: str
    reason: str
    lines: tuple[Conflict, ...] = ()


@dataclass(slots=True)
class UndoPlan:
    """What undoing a turn would do: each touched path's bytes now and after (None: absent)."""

    session: str
    turn: int | None
    records: int = 0
    now: dict[str, bytes | None] = field(default_factory=dict)
    after: dict[str, bytes | None] = field(default_factory=dict)
    conflicts: list[FileConflict] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        """Paths whose content the undo changes, sorted."""
        return sorted(p for p in self.after if self.after[p] != self.now.get(p))


def _read(root: Path, path: str) -> bytes | None:
    try:
        with open(root / path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def turn_records(store: Store, ids: list[int] | None, session: str, turn: int | None
                 ) -> list[StoredChange]:  # fmt: skip
    """The records of a session's turn (None: of the whole session), oldest first."""
    page = store.page(ChangeFilter(ids, 0, None, MAX_RECORDS, after=START, session=session,
                                   turn=turn))  # fmt: skip
    return [c for c in page.changes if c.record["origin"] in ("agent", "edit")]


def plan(store: Store, settings: Settings, session: str, turn: int | None) -> UndoPlan:
    """The undo of `session`'s turn `turn` (None: every turn), computed, nothing written."""
    root = settings.root
    ws = store.find_workspace(str(root), settings.host)
    if ws is None:
        raise InvalidArgs(f"nothing is indexed at {root}")
    records = turn_records(store, [ws.id], session, turn)
    if not records:
        raise InvalidArgs(f"session {session}{'' if turn is None else f' turn {turn}'} has no "
                          "recorded changes here")
    out = UndoPlan(session, turn, records=len(records))
    state: dict[str, bytes | None] = {}

    def current(path: str) -> bytes | None:
        if path not in state:
            state[path] = out.now[path] = _read(root, path)
        return state[path]

    def blob(digest: str | None) -> bytes | None:
        return None if digest is None else store.get_blob(digest)

    for c in reversed(records):
        r = c.record
        kind, path, old_path = r["change_type"], r["path"], r["old_path"]
        old, new, cur = blob(c.old_hash), blob(c.new_hash), current(path)
        if kind in ("add", "delete"):
            _add_or_delete(out, state, kind, path, cur, old, new)
        else:  # modify, rename: take the record's edit back out of the file as it is now
            reverted = _revert(out, path, cur, old, new)
            if reverted is None:
                continue
            if kind == "rename" and old_path is not None:
                if current(old_path) is not None:
                    out.conflicts.append(FileConflict(old_path, "renamed away by the turn and "
                                                                "made again since"))  # fmt: skip
                    continue
                state[path], state[old_path] = None, reverted
            else:
                state[path] = reverted
    out.after = dict(state)
    return out


def _add_or_delete(out: UndoPlan, state: dict[str, bytes | None], kind: str, path: str,
                   cur: bytes | None, old: bytes | None, new: bytes | None) -> None:
    """A file the turn created goes (unless changed since); one it deleted comes back."""
    if kind == "add":
        if cur is None or cur == new:
            state[path] = None
        else:
            out.conflicts.append(FileConflict(path, "created by the turn and changed since"))
    elif cur is None:
        state[path] = old
    elif cur != old:
        out.conflicts.append(FileConflict(path, "deleted by the turn and made again since"))


def _revert(out: UndoPlan, path: str, cur: bytes | None, old: bytes | None,
            new: bytes | None) -> bytes | None:  # fmt: skip
    if cur is None:
        out.conflicts.append(FileConflict(path, "changed by the turn and deleted since"))
        return None
    if old is None or new is None:
        if cur == new and old is not None:
            return old
        out.conflicts.append(FileConflict(path, "its content is kept by hash only (binary or "
                                                "too large)"))  # fmt: skip
        return None
    if cur == new:
        return old
    merged, conflicts = merge3(new, cur, old)
    if merged is None:
        out.conflicts.append(FileConflict(path, "the turn and a later change touched the same "
                                                "lines", tuple(conflicts)))  # fmt: skip
    return merged


def apply(store: Store, settings: Settings, p: UndoPlan, *, client: object = "cli"
          ) -> list[dict[str, object]]:  # fmt: skip
    """Write the plan (all files or none; removals after), and record it as an edit; the
    change records."""
    from symdiff.agents.attribute import in_session
    from symdiff.edits.write import Write, commit
    from symdiff.model import Origin, Provenance
    from symdiff.record.indexer import reconcile
    from symdiff.record.origins import scan_provenance
    from symdiff.records import of_change
    from symdiff.workspace.gate import Beneath

    if p.conflicts:
        raise InvalidArgs("the undo conflicts with later changes; nothing was written")
    root = settings.root
    paths = p.changed
    base = scan_provenance(root)
    reconcile(store, settings, paths=paths, provenance=base)  # pending saves are their own
    writes = []
    for path in paths:
        new = p.after[path]
        if new is not None:
            old = p.now.get(path)
            mode = os.lstat(root / path).st_mode & 0o7777 if old is not None else None
            writes.append(Write(Beneath(root, tuple(path.split("/"))), old, new, mode))
    commit(writes)
    for path in paths:
        if p.after[path] is None and _read(root, path) == p.now.get(path):
            os.unlink(root / path)
    info = dict(in_session({"client": client, "undo": {"session": p.session, "turn": p.turn}},
                           base) or {})  # fmt: skip
    report = reconcile(store, settings, paths=paths, baseline=False,
                       provenance=Provenance(Origin.EDIT, info, base.git))  # fmt: skip
    return [dict(of_change(c)) for c in report.changes]


def preview(p: UndoPlan, settings: Settings) -> dict[str, object]:
    """The dry run: the patch (a git patch from the files now to after the undo), a
    symbol-level summary per file, the conflicts."""
    from datetime import UTC, datetime

    from symdiff.attribute.filechange import build_change
    from symdiff.diffs.linediff import git_patch
    from symdiff.model import ChangeType

    files, patch = [], []
    for path in p.changed:
        now, after = p.now.get(path), p.after[path]
        kind = ChangeType.ADD if now is None else (
            ChangeType.DELETE if after is None else ChangeType.MODIFY)
        change = build_change(kind, path, old_path=None, old=now, new=after,
                              timestamp=datetime.now(UTC))  # fmt: skip
        files.append({"path": path, "change_type": kind.value, "lines_added": change.lines_added,
                      "lines_removed": change.lines_removed,
                      "symbols": [{"name": s.name, "kind": s.kind,
                                   "change_type": s.change_type.value} for s in change.symbols]})
        patch.append(git_patch(now, after, old_name=path, new_name=path))
    return {
        "session": p.session, "turn": p.turn, "records": p.records, "files": files,
        "patch": "".join(patch),
        "conflicts": [{"path": c.path, "reason": c.reason,
                       "lines": [{"start": x.start, "end": x.end, "now": x.ours,
                                  "undo": x.theirs} for x in c.lines]} for c in p.conflicts],
    }  # fmt: skip


def undo_turn(settings: Settings, *, session: object, turn: object = None, write: bool = False,
              client: object = "cli") -> dict[str, object]:  # fmt: skip
    """`symdiff undo` / MCP `undo_turn`: the dry run (patch, summary, conflicts), and with
    `write` the undo itself (`applied`, `recorded`). InvalidArgs for bad arguments, or for a
    conflicting undo asked to write (nothing is written then)."""
    from symdiff.query.args import normalize_turn_args
    from symdiff.store import Store

    args = normalize_turn_args(session, turn, None)
    if args is None:
        raise InvalidArgs("session is required: the undo reverts a session's turn")
    with Store(settings.db_url) as store:
        p = plan(store, settings, args.session, args.turn)
        out = preview(p, settings)
        out["applied"] = False
        if write:
            if p.conflicts:
                raise InvalidArgs(f"the undo conflicts in {', '.join(c.path for c in p.conflicts)}"
                                  "; nothing was written (run without apply to see both sides)")
            out["recorded"] = apply(store, settings, p, client=client)
            out["applied"] = True
    return out
