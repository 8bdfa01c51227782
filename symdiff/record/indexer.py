"""The pipeline: compare the tree now with the tree as last seen, and store what changed.

One module because one pass reads top to bottom (scan, read, build records, pair renames,
commit), and its steps share the `_Pass` state and its safety rules — git's racy-clean stat
rule, unreadable directories kept as unknown rather than deleted, optimistic commits that never
record a change twice. Building one record lives in `attribute/filechange.py`.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from symdiff.agents.attribute import agent_origin
from symdiff.attribute.filechange import build_change
from symdiff.config import Settings
from symdiff.errors import StoreError, ToolFailed
from symdiff.git.head import blobs_at_head
from symdiff.model import ChangeType, FileChange, Origin, Provenance
from symdiff.parse.languages import language_for
from symdiff.parse.shelf import SymbolShelf, keys
from symdiff.record.fileread import NotRegular, ReadResult, read_regular
from symdiff.record.walk import IgnoreRules, Walk, shown, undecodable_prefix, walk
from symdiff.store import FileState, Mutation, Store, Workspace
from symdiff.store.blobs import Blob, git_binary, hash_only, pack
from symdiff.store.deltas import Snapshot, against
from symdiff.timestamps import Clock, format_us, utcnow

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

# Git's "racy clean" rule: a file whose mtime is this close to when we last looked at it may
# have changed again within the same timestamp tick, so size + mtime cannot vouch for it.
RACY_NS = 2_000_000_000
BATCH = 256
MAX_NOTICES = 10_000  # past this many distinct warnings, forget them (and warn again)


@dataclass(frozen=True, slots=True)
class Report:
    """What one reconcile pass did."""

    baseline: bool
    scanned: int
    read: int
    changes: tuple[FileChange, ...]
    skipped: tuple[str, ...] = ()
    seconds: float = 0.0


class Notices:
    """Warnings about paths the index cannot follow, each logged once however many passes meet it.

    A daemon keeps one for its life, so a name that is not UTF-8 or a directory that cannot be
    listed is logged once, not on every pass; every pass still lists it in `Report.skipped`.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def warn(self, text: str) -> None:
        """Log `text` as a warning unless it was logged before."""
        if text in self._seen:
            return
        if len(self._seen) >= MAX_NOTICES:
            self._seen.clear()
        self._seen.add(text)
        log.warning("%s", text)


@dataclass(slots=True)
class _Seen:
    """A file as read now."""

    path: str
    result: ReadResult
    blob: Blob


@dataclass(slots=True)
class _Pass:
    settings: Settings
    store: Store
    workspace: Workspace
    clock: Clock
    baseline: bool
    notices: Notices
    provenance: Provenance = field(default_factory=Provenance)
    intents: dict[tuple[str, str], dict[str, object]] = field(default_factory=dict)
    known: dict[str, FileState] = field(default_factory=dict)
    gone: dict[str, FileState] = field(default_factory=dict)
    added: dict[str, _Seen] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    read: int = 0
    # The symbols of the blobs a batch meets (symbols by content: docs/storage.md). No pairs:
    # a record already keeps its change, and the database's budget has no room for a copy.
    shelf: SymbolShelf = field(default_factory=lambda: SymbolShelf(pairs=False, refs=True))

    def skip(self, rel: str, why: str) -> None:
        """Leave a path as the index last saw it, and say so (once)."""
        self.skipped.append(rel)
        self.notices.warn(why)


def _trusted(known: FileState, st: os.stat_result) -> bool:
    """Whether size + mtime prove a file unchanged since its snapshot."""
    same_stat = (known.size, known.mtime_ns) == (st.st_size, st.st_mtime_ns)
    return same_stat and known.checked_ns - known.mtime_ns >= RACY_NS


def _read(p: _Pass, rel: str) -> _Seen | None:
    """Read one file; None when it vanished, is unreadable, or is not a regular file."""
    try:
        res = read_regular(p.settings.root / rel, max_size=p.settings.max_file_size)
    except (FileNotFoundError, NotADirectoryError, NotRegular):
        return None
    except OSError as exc:
        p.skip(rel, f"skipping {rel}: {exc.strerror or exc}")
        return None
    p.read += 1
    if res.content is None:
        blob = hash_only(res.digest, res.size, binary=False)
    else:
        blob = pack(res.content, content_hash=res.digest)
    return _Seen(rel, res, blob)


def _state(seen: _Seen) -> FileState:
    return FileState(
        seen.path, seen.result.digest, seen.result.size, seen.result.mtime_ns, time.time_ns()
    )


def _before(p: _Pass, old_hash: str | None, new: _Seen | None) -> Snapshot | None:
    """The stored version a change starts from; None when there is none, it is kept by hash
    only, or the content did not change."""
    if old_hash is None or (new is not None and new.result.digest == old_hash):
        return None
    return p.store.snapshot(old_hash)


def _old_text(old: Snapshot | None) -> bytes | None:
    """Text of a stored snapshot; None when absent, binary or kept by hash only."""
    return None if old is None or git_binary(old.data) else old.data


def _compact(seen: _Seen, old_hash: str, old: Snapshot | None) -> Blob:
    """The new version as a delta against the one it replaces, where that pays."""
    if old is None or seen.result.content is None or git_binary(old.data):
        return seen.blob
    return against(seen.blob, seen.result.content, old_hash, old)


def _new_text(seen: _Seen | None) -> bytes | None:
    """Text of a file as read now; None when absent, binary or over the size cap."""
    if seen is None or seen.blob.binary:
        return None
    return seen.result.content


def _file_change(
    p: _Pass,
    kind: ChangeType,
    path: str,
    *,
    old_path: str | None,
    old_hash: str | None,
    new: _Seen | None,
    before: Snapshot | None,
) -> FileChange:
    """One path's FileChange, from its old snapshot (`before`) and the new read."""
    new_hash = new.result.digest if new is not None else None
    old = _old_text(before) if old_hash != new_hash else None
    new_text = _new_text(new) if old_hash != new_hash else None
    origin, origin_info = _origin(p, path, new)
    _load_symbols(p, path, old_hash if old is not None else None,
                  new_hash if new_text is not None else None)  # fmt: skip
    return build_change(kind, path, old_path=old_path, old=old, new=new_text,
                        timestamp=p.clock(), test_patterns=p.settings.test_patterns,
                        old_hash=old_hash, new_hash=new_hash, origin=origin,
                        origin_info=origin_info, git=p.provenance.git, shelf=p.shelf)  # fmt: skip


def _load_symbols(p: _Pass, path: str, old_hash: str | None, new_hash: str | None) -> None:
    """Put on the pass's shelf the symbols stored for this change's blobs (symbols by
    content: a blob parsed before, by any process, is not parsed again)."""
    _shelve(p, [(language_for(path), old_hash, new_hash)])


def _shelve(p: _Pass, wanted: list[tuple[str | None, str | None, str | None]]) -> None:
    """Load onto the pass's shelf, in one read, the stored symbols of these (language, old
    blob, new blob) versions that it has not asked for yet. A cache: when the database cannot
    be read, the blobs are parsed."""
    found = keys(wanted)
    if not found:
        return
    try:
        p.store.load_shelf(p.shelf, found)
    except StoreError as exc:
        p.notices.warn(f"cannot read stored symbols: {exc}")


def _origin(p: _Pass, path: str, new: _Seen | None) -> tuple[Origin, Mapping[str, object] | None]:
    """An announced edit is an edit; a scan knows only the file's mtime; else the caller's."""
    if new is not None and (intent := p.intents.get((path, new.result.digest))) is not None:
        return Origin.EDIT, intent
    if p.provenance.agents:  # inside an agent's tool call: the agent's (docs/agents.md)
        hit = agent_origin(p.provenance, str(p.settings.root), path,
                           None if new is None else new.result.mtime_ns)
        if hit is not None:
            return hit
    if p.provenance.origin is Origin.SCAN:
        if new is None:
            return Origin.SCAN, None
        return Origin.SCAN, {"mtime": format_us(new.result.mtime_ns // 1000)}
    return p.provenance.origin, p.provenance.origin_info


def _pair_renames(
    deleted: dict[str, FileState], added: dict[str, _Seen], moves: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(old, new) pairs: first the observed moves, then identical content under a new path."""
    pairs: list[tuple[str, str]] = []
    for new_path, old_path in moves.items():
        if new_path in added and old_path in deleted:
            pairs.append((old_path, new_path))
    taken_old = {o for o, _ in pairs}
    taken_new = {n for _, n in pairs}
    by_hash: dict[str, list[str]] = {}
    for path in sorted(deleted):
        if path not in taken_old:
            by_hash.setdefault(deleted[path].blob_hash, []).append(path)
    for path in sorted(added):
        if path in taken_new:
            continue
        olds = by_hash.get(added[path].result.digest)
        if olds:
            pairs.append((olds.pop(0), path))
    return pairs


def _kin(gone: Mapping[str, FileState]) -> dict[str, str]:
    """For an added file, the snapshot to store it against: that of a file gone in the same
    batch under the same name (the first by path), as when a directory is moved and its files
    edited. Storage only: the records stay an add and a delete (docs/storage.md, deltas)."""
    kin: dict[str, str] = {}
    for path in sorted(gone):
        kin.setdefault(PurePosixPath(path).name, gone[path].blob_hash)
    return kin


def _scan(
    p: _Pass, paths: Collection[str] | None
) -> tuple[dict[str, os.stat_result], dict[str, FileState]]:
    """The tracked files now and as last seen, over the whole tree or under `paths`.

    Stored files at or under a path that could not be looked at are left out of both: their
    state stands until the path can be looked at again.
    """
    rules = IgnoreRules(p.settings.root, p.settings.ignore)
    if paths is None:
        found = walk(p.settings.root, rules)
        known = p.store.file_states(p.workspace.id)
    else:
        found, wanted = _walk_paths(p, rules, paths)
        known = p.store.file_states(p.workspace.id, under=wanted) if wanted else {}
    for rel in sorted(set(found.undecodable)):
        p.skip(shown(rel), f"skipping {shown(rel)}: the name is not valid UTF-8")
    for rel, why in sorted(found.unknown.items()):
        p.skip(shown(rel), shown(why))
    if found.unknown:
        unknown = set(found.unknown)
        known = {rel: s for rel, s in known.items() if not _covered(rel, unknown)}
    return found.files, known


def _walk_paths(p: _Pass, rules: IgnoreRules, paths: Collection[str]) -> tuple[Walk, list[str]]:
    """What is at or under each of `paths` now, and those of them that can be stored."""
    found = Walk()
    wanted: list[str] = []
    for rel in sorted(set(paths)):
        try:
            st: os.stat_result | None = os.lstat(p.settings.root / rel)
        except (FileNotFoundError, NotADirectoryError):
            st = None  # gone: the stored states under it will say what was deleted
        except OSError as exc:
            found.unknown[rel] = f"cannot stat {rel}: {exc.strerror or exc}"
            continue
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        bad = undecodable_prefix(rel)
        if bad is not None:
            if st is not None and not rules.is_ignored(bad, is_dir=is_dir or bad != rel):
                found.undecodable.append(bad)
            continue
        wanted.append(rel)
        if st is None or rules.is_ignored(rel, is_dir=is_dir):
            continue
        if is_dir:
            found.update(walk(p.settings.root, rules, start=rel))
        elif stat.S_ISREG(st.st_mode):
            found.files[rel] = st
    return found, wanted


def _covered(rel: str, prefixes: set[str]) -> bool:
    """Whether `rel` is one of `prefixes` or lies under one."""
    if "" in prefixes:
        return True
    end = len(rel)
    while end > 0:
        if rel[:end] in prefixes:
            return True
        end = rel.rfind("/", 0, end)
    return False


def reconcile(
    store: Store,
    settings: Settings,
    *,
    paths: Collection[str] | None = None,
    moves: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    clock: Clock = utcnow,
    baseline: bool | None = None,
    notices: Notices | None = None,
    provenance: Provenance | None = None,
) -> Report:
    """Record every difference between the tree and its last snapshot.

    Args:
        paths: only look at these relative paths (files or directories); None = whole tree.
        moves: observed renames, new path -> old path, to pair even when the content changed.
        baseline: True snapshots new files without recording `add`s; False records them even
            in a workspace whose first full pass has not completed; None decides by that.
        notices: where warnings about skipped paths are remembered, to log each once (a
            daemon passes the same one to every pass); None logs each once in this pass.
        provenance: who is writing (origin, origin_info, git state); None: a scan, writer
            unknown. Changes an apply_edits announced are recorded as `edit` regardless.
    """
    started = time.monotonic()
    check_root(settings)
    ws = store.ensure_workspace(str(settings.root), settings.host)
    if baseline is None:
        baseline = not ws.baseline_done
    p = _Pass(settings, store, ws, clock, baseline=baseline, notices=notices or Notices(),
              provenance=provenance or Provenance(), intents=store.intents(ws.id))
    current, p.known = _scan(p, paths)
    to_read = sorted(
        rel for rel, st in current.items() if rel not in p.known or not _trusted(p.known[rel], st)
    )
    p.gone = {rel: state for rel, state in p.known.items() if rel not in current}
    total = len(to_read) + len(p.gone)
    changes: list[FileChange] = []
    for i in range(0, len(to_read), BATCH):
        chunk = to_read[i : i + BATCH]
        _prefetch(p, chunk)
        changes.extend(_commit(p, [m for rel in chunk if (m := _examine(p, rel)) is not None]))
        if progress is not None:
            progress(i + len(chunk), total)
    tail = _arrivals_and_departures(p, moves or {})
    for i in range(0, len(tail), BATCH):
        changes.extend(_commit(p, tail[i : i + BATCH]))
    if progress is not None:
        progress(total, total)
    if p.baseline and paths is None and not ws.baseline_done:
        store.mark_baseline_done(ws.id)
    return Report(
        baseline=p.baseline,
        scanned=len(current),
        read=p.read,
        changes=tuple(changes),
        skipped=tuple(p.skipped),
        seconds=time.monotonic() - started,
    )


def check_root(settings: Settings) -> None:
    """Raise ToolFailed when the workspace root cannot be stored (its path is not UTF-8)."""
    if undecodable_prefix(str(settings.root)) is not None:
        raise ToolFailed(f"the workspace root {shown(str(settings.root))} is not valid UTF-8; "
                         "symdiff cannot index it")


def _prefetch(p: _Pass, chunk: list[str]) -> None:
    """Put on the pass's shelf, in one read, the stored symbols of the versions this chunk's
    files had (the old side of each modify it may record; docs/storage.md, symbols by
    content). The new sides are looked up file by file, once read."""
    if not p.baseline:
        _shelve(p, [(language_for(rel), p.known[rel].blob_hash, None) for rel in chunk
                    if rel in p.known])  # fmt: skip


def _prefetch_added(p: _Pass) -> None:
    """Put on the pass's shelf, in one read, the stored symbols of the added files' contents
    (a file copied, or put back as it was): a checkout that adds thousands of files asked for
    them one query each."""
    _shelve(p, [(language_for(rel), None, seen.result.digest) for rel, seen in p.added.items()
                if not seen.blob.binary])


def _examine(p: _Pass, rel: str) -> Mutation | None:
    """Read a file whose stat changed; a modify or a refreshed state, or hold it as an arrival."""
    seen = _read(p, rel)
    old = p.known.get(rel)
    if seen is None:
        if old is not None and rel not in p.skipped:
            p.gone[rel] = old
        return None
    if old is None:
        if p.baseline:
            return Mutation(upserts=(_state(seen),), blobs=(seen.blob,))
        p.added[rel] = seen
        return None
    if old.blob_hash == seen.result.digest:
        return Mutation(upserts=(_state(seen),))
    before = _before(p, old.blob_hash, seen)
    change = _file_change(p, ChangeType.MODIFY, rel, old_path=None, old_hash=old.blob_hash,
                          new=seen, before=before)  # fmt: skip
    blob = _compact(seen, old.blob_hash, before)
    return Mutation(upserts=(_state(seen),), blobs=(blob,), change=change)


def _arrivals_and_departures(p: _Pass, moves: Mapping[str, str]) -> list[Mutation]:
    """Renames, adds and deletes, once every changed file has been read."""
    muts = []
    for old_path, new_path in _pair_renames(p.gone, p.added, moves):
        seen = p.added.pop(new_path)
        old = p.gone.pop(old_path)
        before = _before(p, old.blob_hash, seen)
        change = _file_change(p, ChangeType.RENAME, new_path, old_path=old_path,
                              old_hash=old.blob_hash, new=seen, before=before)  # fmt: skip
        blob = _compact(seen, old.blob_hash, before)
        muts.append(Mutation(upserts=(_state(seen),), deletes=(old_path,), blobs=(blob,),
                             change=change))  # fmt: skip
    kin = _kin(p.gone)
    _prefetch_added(p)
    for rel, seen in sorted(p.added.items()):
        change = _file_change(p, ChangeType.ADD, rel, old_path=None, old_hash=None, new=seen,
                              before=None)  # fmt: skip
        blob = seen.blob
        base = kin.get(PurePosixPath(rel).name)
        if base is not None:  # a moved-and-edited file: stored against its former self
            blob = _compact(seen, base, _before(p, base, seen))
        muts.append(Mutation(upserts=(_state(seen),), blobs=(blob,), change=change))
    for rel, old in sorted(p.gone.items()):
        try:
            st: os.stat_result | None = os.lstat(p.settings.root / rel)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        except OSError as exc:  # cannot tell whether it is gone: it stays as last seen
            p.skip(rel, f"skipping {rel}: {exc.strerror or exc}")
            continue
        if st is not None and not stat.S_ISDIR(st.st_mode):
            # Still on disk but no longer tracked (now ignored, or became a link): forget it.
            muts.append(Mutation(deletes=(rel,)))
            continue
        # Gone, or a directory now stands where the file was: either way the file was deleted.
        change = _file_change(p, ChangeType.DELETE, rel, old_path=None, old_hash=old.blob_hash,
                              new=None, before=_before(p, old.blob_hash, None))  # fmt: skip
        muts.append(Mutation(deletes=(rel,), change=change))
    return muts


def _commit(p: _Pass, muts: list[Mutation]) -> list[FileChange]:
    """Write a batch and return the changes it recorded.

    A mutation whose file state moved on under us (a concurrent indexer recorded it first) is
    dropped by the store, so that no change is recorded twice.
    """
    expected: dict[str, str | None] = {}
    for m in muts:
        for path in (*m.deletes, *(s.path for s in m.upserts)):
            expected[path] = p.known[path].blob_hash if path in p.known else None
    applied = p.store.apply(p.workspace.id, muts, expected)
    # The versions the records left (blob, where it was): HEAD's keep their symbols.
    left = {(m.change.old_hash, m.change.old_path or m.change.path)
            for m in applied if m.change is not None and m.change.old_hash}  # fmt: skip
    at_head = blobs_at_head(p.settings.root, {path for _, path in left}) if left else {}
    try:  # after the records: the symbols learned on the way are a cache, never a record
        p.store.keep_shelf(p.shelf, replaced={blob for blob, _ in left}, head={
            blob for blob, path in left if at_head.get(path) == blob})
    except StoreError as exc:
        p.notices.warn(f"cannot store the symbols of recorded blobs: {exc}")
    p.shelf = SymbolShelf(p.shelf.version, pairs=False, refs=True)  # a batch's symbols end with it
    return [m.change for m in applied if m.change is not None]
