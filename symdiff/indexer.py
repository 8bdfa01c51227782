"""The pipeline: compare the tree now with the tree as last seen, and store what changed."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from symdiff.attribute import symbol_changes
from symdiff.config import Settings
from symdiff.ignore import IgnoreRules, walk
from symdiff.languages import language_for
from symdiff.linediff import diff_lines
from symdiff.model import ChangeType, FileChange, SymbolChange
from symdiff.reader import NotRegular, ReadResult, read_file
from symdiff.scope import classify
from symdiff.store import FileState, Mutation, Store, Workspace
from symdiff.store.blobs import Blob, hash_only, pack

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Progress = Callable[[int, int], None]

# Git's "racy clean" rule: a file whose mtime is this close to when we last looked at it may
# have changed again within the same timestamp tick, so size + mtime cannot vouch for it.
RACY_NS = 2_000_000_000
BATCH = 256


def utcnow() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Report:
    """What one reconcile pass did."""

    baseline: bool
    scanned: int
    read: int
    changes: tuple[FileChange, ...]
    skipped: tuple[str, ...] = ()
    seconds: float = 0.0


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
    skipped: list[str] = field(default_factory=list)
    read: int = 0


def count_lines(content: bytes) -> int:
    """Lines as git counts them: a last line without a newline still counts."""
    return content.count(b"\n") + (1 if content and not content.endswith(b"\n") else 0)


def _stat_key(st: os.stat_result) -> tuple[int, int]:
    return st.st_size, st.st_mtime_ns


def _trusted(known: FileState, st: os.stat_result) -> bool:
    """Whether size + mtime prove a file unchanged since its snapshot."""
    return (known.size, known.mtime_ns) == _stat_key(st) and \
        known.checked_ns - known.mtime_ns >= RACY_NS


def _read(p: _Pass, rel: str) -> _Seen | None:
    """Read one file; None when it vanished, is unreadable, or is not a regular file."""
    try:
        res = read_file(p.settings.root / rel, max_size=p.settings.max_file_size)
    except FileNotFoundError:
        return None
    except NotRegular:
        return None
    except OSError as exc:
        log.warning("skipping %s: %s", rel, exc.strerror or exc)
        p.skipped.append(rel)
        return None
    p.read += 1
    if res.content is None:
        blob = hash_only(res.digest, res.size, binary=False)
    else:
        blob = pack(res.content, content_hash=res.digest)
    return _Seen(rel, res, blob)


def _state(seen: _Seen) -> FileState:
    return FileState(seen.path, seen.result.digest, seen.result.size, seen.result.mtime_ns,
                     time.time_ns())


def _symbols(language: str | None, old: bytes | None, new: bytes | None,
             path: str) -> tuple[SymbolChange, ...]:
    if language is None:
        return ()
    try:
        return tuple(symbol_changes(language, old, new))
    except Exception:  # a parser bug must cost one file's symbols, never the daemon
        log.exception("symbol extraction failed for %s", path)
        return ()


def _text(store: Store, digest: str | None, blob: Blob | None = None) -> bytes | None:
    """Text content of a snapshot, or None when binary, hash-only or unknown."""
    if blob is not None:
        return None if blob.binary or blob.data is None else _blob_bytes(blob)
    return None if digest is None else _nonbinary(store.get_blob(digest))


def _blob_bytes(blob: Blob) -> bytes | None:
    from symdiff.store.blobs import unpack

    return unpack(blob.codec, blob.data)


def _nonbinary(data: bytes | None) -> bytes | None:
    return None if data is None or b"\0" in data[:8000] else data


def _record(p: _Pass, *, kind: ChangeType, path: str, old_path: str | None,
            old_hash: str | None, new: _Seen | None) -> FileChange:
    """Build one change record from the old snapshot and the new read."""
    old = _text(p.store, old_hash) if old_hash else None
    new_text = _text(p.store, None, new.blob) if new is not None else None
    if old is not None and new_text is not None:
        d = diff_lines(old, new_text)
        added, removed = d.lines_added, d.lines_removed
    else:
        added = count_lines(new_text) if new_text is not None else 0
        removed = count_lines(old) if old is not None else 0
        if kind in (ChangeType.MODIFY, ChangeType.RENAME):
            # One side is binary or hash-only: git's numstat shows no line counts.
            added = removed = 0
    language = language_for(path)
    same = old_hash is not None and new is not None and old_hash == new.result.digest
    symbols = () if same else _symbols(
        language, old, new_text, path) if (old is not None or new_text is not None) else ()
    return FileChange(
        path=path, old_path=old_path, timestamp=p.clock(), change_type=kind,
        lines_added=added, lines_removed=removed,
        scope=classify(path, p.settings.test_patterns), language=language, symbols=symbols,
        old_hash=old_hash, new_hash=new.result.digest if new is not None else None,
    )


def _pair_renames(deleted: dict[str, FileState], added: dict[str, _Seen],
                  moves: Mapping[str, str]) -> list[tuple[str, str]]:
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


def _scan(p: _Pass, paths: Collection[str] | None) -> tuple[dict[str, os.stat_result],
                                                             dict[str, FileState]]:
    """The tracked files now and as last seen, over the whole tree or under `paths`."""
    rules = IgnoreRules(p.settings.root, p.settings.ignore)
    if paths is None:
        return walk(p.settings.root, rules), p.store.file_states(p.workspace.id)
    current: dict[str, os.stat_result] = {}
    for rel in sorted(set(paths)):
        try:
            st = os.lstat(p.settings.root / rel)
        except OSError:
            continue
        import stat as _st

        if _st.S_ISDIR(st.st_mode):
            if not rules.is_ignored(rel, is_dir=True):
                current.update(walk(p.settings.root, rules, start=rel))
        elif _st.S_ISREG(st.st_mode) and not rules.is_ignored(rel):
            current[rel] = st
    return current, p.store.file_states(p.workspace.id, under=sorted(set(paths)))


def _chunks(items: Sequence[str], n: int) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def reconcile(store: Store, settings: Settings, *, paths: Collection[str] | None = None,
              moves: Mapping[str, str] | None = None, progress: Progress | None = None,
              clock: Clock = utcnow) -> Report:
    """Record every difference between the tree and its last snapshot.

    Args:
        paths: only look at these relative paths (files or directories); None = whole tree.
        moves: observed renames, new path -> old path, to pair even when the content changed.
    """
    started = time.monotonic()
    ws = store.ensure_workspace(str(settings.root), settings.host)
    p = _Pass(settings, store, ws, clock)
    baseline = not ws.baseline_done
    current, known = _scan(p, paths)

    to_read = [rel for rel, st in current.items()
               if rel not in known or not _trusted(known[rel], st)]
    gone = {rel: known[rel] for rel in known if rel not in current}
    total = len(to_read) + len(gone)
    done = 0
    added: dict[str, _Seen] = {}
    changes: list[FileChange] = []

    for chunk in _chunks(sorted(to_read), BATCH):
        muts: list[Mutation] = []
        for rel in chunk:
            seen = _read(p, rel)
            if seen is None:
                if rel in known and rel not in p.skipped:
                    gone[rel] = known[rel]
                continue
            old = known.get(rel)
            if old is None:
                if baseline:
                    muts.append(Mutation(upserts=(_state(seen),), blobs=(seen.blob,)))
                else:
                    added[rel] = seen
            elif old.blob_hash == seen.result.digest:
                muts.append(Mutation(upserts=(_state(seen),)))
            else:
                change = _record(p, kind=ChangeType.MODIFY, path=rel, old_path=None,
                                 old_hash=old.blob_hash, new=seen)
                muts.append(Mutation(upserts=(_state(seen),), blobs=(seen.blob,), change=change))
        changes.extend(m.change for m in _commit(store, ws, muts, known) if m.change)
        done += len(chunk)
        if progress is not None:
            progress(done, total)

    muts = []
    for old_path, new_path in _pair_renames(gone, added, moves or {}):
        seen = added.pop(new_path)
        gone.pop(old_path)
        change = _record(p, kind=ChangeType.RENAME, path=new_path, old_path=old_path,
                         old_hash=known[old_path].blob_hash, new=seen)
        muts.append(Mutation(upserts=(_state(seen),), deletes=(old_path,), blobs=(seen.blob,),
                             change=change))
    for rel, seen in sorted(added.items()):
        change = _record(p, kind=ChangeType.ADD, path=rel, old_path=None, old_hash=None, new=seen)
        muts.append(Mutation(upserts=(_state(seen),), blobs=(seen.blob,), change=change))
    for rel, old in sorted(gone.items()):
        if os.path.lexists(settings.root / rel):
            # Still on disk but no longer tracked (now ignored, or became a link): forget it.
            muts.append(Mutation(deletes=(rel,)))
            continue
        change = _record(p, kind=ChangeType.DELETE, path=rel, old_path=None,
                         old_hash=old.blob_hash, new=None)
        muts.append(Mutation(deletes=(rel,), change=change))
    for i in range(0, len(muts), BATCH):
        changes.extend(m.change for m in _commit(store, ws, muts[i:i + BATCH], known) if m.change)
    if progress is not None:
        progress(total, total)

    if baseline and paths is None:
        store.mark_baseline_done(ws.id)
    return Report(baseline=baseline, scanned=len(current), read=p.read,
                  changes=tuple(changes), skipped=tuple(p.skipped),
                  seconds=time.monotonic() - started)


def _commit(store: Store, ws: Workspace, muts: list[Mutation],
            known: Mapping[str, FileState]) -> list[Mutation]:
    """Write a batch; a mutation whose file state moved on under us (a concurrent indexer
    recorded it first) is dropped, so that no change is recorded twice."""
    expected = {}
    for m in muts:
        for path in (*m.deletes, *(s.path for s in m.upserts)):
            expected[path] = known[path].blob_hash if path in known else None
    return store.apply(ws.id, muts, expected)
