"""The reference index of a workspace: its files' symbols and references, as a graph.

The index is stored by content (`store/facts.py`, kinds `symbols` and `refs`): each blob a
file holds is extracted once, by whoever met it first (the daemon as it records a change, the
build after the baseline, or this module when it finds a blob without them), and read by
everyone else. `current` turns the files of the workspace into a `symdiff.graph.Graph`, held
per process (the MCP server's answers after the first read only what changed since) and
brought up to date from the file states at each call.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from symdiff.config import Settings
from symdiff.errors import StoreError
from symdiff.graph import FileFacts, Graph, parse_gomod
from symdiff.model import Symbol
from symdiff.parse.languages import family_module, language_for
from symdiff.parse.refs import FileRefs
from symdiff.store.store import FileState, Store

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (language, blob id)
Progress = Callable[[int, int], None]  # (files indexed, files in all)
FREEZE_AT = 1000  # files added at once after which the held objects are frozen (gc.freeze)
CHUNK = 200  # files extracted and stored per step: progress and memory stay bounded


@dataclass
class _Held:
    graph: Graph
    patterns: tuple[str, ...]
    blobs: dict[str, str] = field(default_factory=dict)  # path -> blob id in the graph
    modules: dict[str, str] = field(default_factory=dict)  # go.mod path -> blob id
    marker: tuple[int, int] | None = None  # the file states' marker when last refreshed
    numbering: threading.Thread | None = None  # the numbered graph's build (`_number_later`)


_held: dict[tuple[str, str, int], _Held] = {}
_numbered = False  # whether held graphs are numbered in the background (`keep_numbered`)
# Held by whoever reads or updates a held graph (query.py walks under it); re-entrant.
LOCK = threading.RLock()


@functools.lru_cache(maxsize=1 << 16)
def indexed(path: str) -> str | None:
    """The language of a path the reference index reads, or None."""
    language = language_for(path)
    return language if language is not None and family_module(language) is not None else None


def missing(store: Store, version: str, states: Mapping[str, FileState]) -> list[tuple[str, Key]]:
    """The files whose blob has no stored symbols and references: (path, key), by path."""
    keys = {path: (language, state.blob_hash) for path, state in states.items()
            if (language := indexed(path)) is not None}  # fmt: skip
    have = store.have_refs(version, sorted(set(keys.values())))
    return sorted((path, key) for path, key in keys.items() if key not in have)


Facts = tuple[tuple[Symbol, ...], FileRefs]  # a blob's symbols and references


def build(store: Store, version: str, files: Sequence[tuple[str, Key]], *,
          progress: Progress | None = None, read: bool = True) -> dict[Key, Facts]:  # fmt: skip
    """Extract and store the symbols and references of these files' blobs, CHUNK at a time,
    through the shared parse pool (workers when the chunk is worth it); returns them. A blob
    whose text the store does not hold (only its hash: binary or over the size cap) is left
    out of the index.

    The chunks go through the pool as one stream (the workers go on to the next chunk while
    the last jobs of one are parsed), and while they parse, a thread of this call stores each
    chunk answered and reads the texts of the next: this process's own work hides behind
    theirs.
    `read=False` (the daemon's build, which stores and does not read): the workers hand over
    the stored forms themselves, nothing is decoded here, and nothing is returned."""
    from symdiff.parse.pool import shared

    pool = shared()
    out: dict[Key, Facts] = {}
    todo = sorted({key for _, key in files})
    chunks = [todo[start : start + CHUNK] for start in range(0, len(todo), CHUNK)]
    if not chunks:
        return out
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="symdiff-refindex-io") as io:
        taken: deque[list[Key]] = deque()  # the keys of the chunks the pool took, in order

        def texts() -> Iterator[list[tuple[str, bytes]]]:
            """Each chunk's texts, the next one's read while the pool parses this one."""
            reading = io.submit(_texts, store, chunks[0])
            for n in range(len(chunks)):
                wanted = reading.result()
                if n + 1 < len(chunks):
                    reading = io.submit(_texts, store, chunks[n + 1])
                taken.append([key for key, _ in wanted])
                yield [(key[0], text) for key, text in wanted]

        # The workers parse one chunk after the other with no pause between them, while the
        # thread stores each chunk answered (then reads the next): the store waits for neither.
        def keep_read(keys: list[Key], answered: list[tuple[list[Symbol], FileRefs]]) -> int:
            found = {key: (tuple(symbols), refs)
                     for key, (symbols, refs) in zip(keys, answered, strict=True)}  # fmt: skip
            out.update(found)
            return _keep(store, version, found)

        def keep_raw(keys: list[Key], answered: list[tuple[bytes, bytes]]) -> int:
            return _keep_raw(store, version, dict(zip(keys, answered, strict=True)))

        if read:
            kept = _each(io, pool.with_refs_each(texts()), taken, keep_read, progress, len(todo))
        else:
            kept = _each(io, pool.stored_refs_each(texts()), taken, keep_raw, progress, len(todo))
        if kept is not None:
            kept.result()
    return out


_Answer = TypeVar("_Answer")


def _each(io: ThreadPoolExecutor, answers: Generator[list[_Answer]], taken: deque[list[Key]],
          keep: Callable[[list[Key], list[_Answer]], int], progress: Progress | None,
          total: int) -> Future[int] | None:  # fmt: skip
    """Store each chunk's answers on the `io` thread as they come, telling `progress`; the
    last store's future (each one's errors surface before the next is started)."""
    kept: Future[int] | None = None
    done = 0
    with contextlib.closing(answers):  # left early (progress stops it): the workers are freed
        for answered in answers:
            keys = taken.popleft()
            if kept is not None:
                kept.result()
            kept = io.submit(keep, keys, answered)
            done += len(keys)
            if progress is not None:
                progress(done, total)
    return kept


def _keep(store: Store, version: str, found: Mapping[Key, Facts]) -> int:
    """Store what was extracted: a cache, so a store that refuses (read-only, full) costs a
    warning and the next call's parse, never the answer."""
    try:
        return store.keep_facts(version, found)
    except StoreError as exc:
        log.warning("cannot store the reference index's facts: %s", exc)
        return 0


def _keep_raw(store: Store, version: str, found: Mapping[Key, tuple[bytes, bytes]]) -> int:
    """`_keep` for the stored forms the workers encoded."""
    try:
        return store.keep_raw_facts(version, found)
    except StoreError as exc:
        log.warning("cannot store the reference index's facts: %s", exc)
        return 0


def _texts(store: Store, keys: Sequence[Key]) -> list[tuple[Key, bytes]]:
    """The stored texts of these blobs (those kept by hash only left out)."""
    found = store.get_blobs([key[1] for key in keys])
    return [(key, text) for key in keys if (text := found[key[1]]) is not None]


def current(settings: Settings, store: Store, workspace_id: int) -> Graph:
    """The graph of the workspace's files as the store knows them now: held from the last
    call in this process and updated with what changed, the blobs without stored facts
    extracted (and stored) first."""
    from symdiff.parse.version import extractor_version

    version = extractor_version()
    held_key = (settings.db_url, str(settings.root), workspace_id)
    with LOCK:
        held = _held.get(held_key)
        if held is None:
            held = _held[held_key] = _Held(Graph(test_patterns=settings.test_patterns),
                                           settings.test_patterns)
        marker = store.files_marker(workspace_id)
        if marker != held.marker:  # a file state moved: compare them all
            _refresh(store, version, held, store.file_states(workspace_id))
            held.marker = marker
        if _numbered:
            _number_later(held)
        return held.graph


def keep_numbered(on: bool = True) -> None:
    """Number each held graph in the background once it is built or changed (`Graph.warm`):
    for a process that answers many questions from one held graph (the MCP server). A
    question then meets every node's users worked out already (on Django, a question about
    20 functions not asked before: ~130 ms with its edges computed as met, ~30 ms
    numbered); the build costs a few seconds of one core, in steps between questions. A
    one-shot process does not pay for it."""
    global _numbered
    _numbered = on


_END = object()  # the end of `Graph.warm`'s steps


def _number_later(held: _Held) -> None:
    """Start the numbered graph's build on a thread of its own, unless it runs or is done.
    Each step (a few milliseconds) holds LOCK; a question waits at most one step."""
    graph = held.graph
    if graph.warmed or (held.numbering is not None and held.numbering.is_alive()):
        return

    def run() -> None:
        with LOCK:
            steps = graph.warm()
        while True:
            with LOCK:
                if next(steps, _END) is _END:
                    break
            time.sleep(0.001)  # a waiting question takes the lock first
        with LOCK:
            if graph.warmed:
                # The numbered graph's and the build's caches: long-lived, as the graph's own
                # objects (see `_refresh`).
                gc.freeze()

    held.numbering = threading.Thread(target=run, name="symdiff-impact-numbering", daemon=True)
    held.numbering.start()


def wait_numbered(timeout: float | None = None) -> None:
    """Wait for the held graphs' numbering in the background to end (tests, benchmarks)."""
    with LOCK:
        threads = [h.numbering for h in _held.values() if h.numbering is not None]
    for thread in threads:
        thread.join(timeout)


def _refresh(store: Store, version: str, held: _Held, states: Mapping[str, FileState]) -> None:
    modules = {path: state.blob_hash for path, state in states.items()
               if path == "go.mod" or path.endswith("/go.mod")}  # fmt: skip
    if modules != held.modules:
        held.graph = _rebuilt(held, store, modules)
    keys = {path: (language, state.blob_hash) for path, state in states.items()
            if (language := indexed(path)) is not None}  # fmt: skip
    for path in [path for path in held.blobs if path not in keys]:
        held.graph.remove(path)
        del held.blobs[path]
    changed = {path: key for path, key in keys.items() if held.blobs.get(path) != key[1]}
    if not changed:
        return
    found = store.load_facts(version, sorted(set(changed.values())))
    lacking = [(path, key) for path, key in changed.items() if key not in found]
    if lacking:
        found.update(build(store, version, lacking))
    updates = []
    for path, key in sorted(changed.items()):
        facts = found.get(key)
        if facts is None:
            if path in held.blobs:
                held.graph.remove(path)
                del held.blobs[path]
            continue
        symbols, refs = facts
        updates.append(FileFacts(path, key[0], symbols, refs))
        held.blobs[path] = key[1]
    held.graph.update_all(updates)
    if len(updates) >= FREEZE_AT:
        # A held graph is millions of long-lived objects (210 MB for Django): left to the
        # collector, each full collection walks them all (0.35 s on Django, inside whichever
        # call set it off). Frozen, they are left out of every collection; a frozen object
        # freed later is still freed by its reference count (a frozen cycle dropped later, as
        # the caller's Store, stays: one such build's worth, for a build of 1,000 files).
        gc.freeze()


def _rebuilt(held: _Held, store: Store, modules: Mapping[str, str]) -> Graph:
    """A graph with these go.mod files' module paths, holding nothing yet (Go imports resolve
    by them, so every file is added again)."""
    go_modules = {}
    for path, blob in modules.items():
        text = store.get_blob(blob)
        module = None if text is None else parse_gomod(text)
        if module is not None:
            go_modules[path.rpartition("/")[0]] = module
    held.blobs.clear()
    held.modules = dict(modules)
    return Graph(test_patterns=held.patterns, go_modules=go_modules)


def build_in_background(settings: Settings, progress: Progress, done: Callable[[], None],
                        stop: threading.Event) -> threading.Thread:  # fmt: skip
    """The daemon's build of the reference index after its start pass, on a thread of its own
    with its own Store: every file whose blob lacks stored symbols and references is
    extracted, CHUNK files a step, `progress` told after each, `done` at the end. It ends at
    the next step once `stop` is set (what it stored stays: the next build goes on from
    there). Never raises (a failure is logged: the index is then built by the first
    `impact`)."""

    def step(finished: int, total: int) -> None:
        if stop.is_set():
            raise _Stopped
        progress(finished, total)

    def run() -> None:
        from symdiff.parse.version import extractor_version

        try:
            with Store(settings.db_url) as store:
                ws = store.find_workspace(str(settings.root), settings.host)
                if ws is None:
                    return
                version = extractor_version()
                todo = missing(store, version, store.file_states(ws.id))
                step(0, len(todo))
                build(store, version, todo, progress=step, read=False)
        except _Stopped:
            log.info("the reference index build stopped with the daemon")
        except Exception:  # the watcher must survive whatever the build meets
            log.exception("the reference index build failed")
        finally:
            done()

    thread = threading.Thread(target=run, name="symdiff-refindex", daemon=True)
    thread.start()
    return thread


class _Stopped(Exception):
    """The daemon stopped while its build of the reference index ran."""


def forget() -> None:
    """Drop the graphs this process holds (tests; benchmarks of a cold call)."""
    with LOCK:
        _held.clear()
