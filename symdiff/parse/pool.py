"""Parallel parsing for batch work: many files' pairs of versions parsed by worker processes.

A job is one file's two versions, `(language, old, new)`; its answer is the pair of symbol
lists that `symdiff.attribute.spans` extracts in-process (old from new, then new from old, so
the second is re-parsed incrementally from the first's tree); a job may also ask for the change
between its versions, worked out beside the parse by a function the caller names (CHANGE). Jobs
that share a text (an import's versions of one file) form a chain that one worker parses in
order (`_Plan`). A `ParsePool` keeps one worker
process per core, started on its first batch worth it (or by `start()`) and reused; a batch
below the crossover parses in the calling process.

A worker is a fresh interpreter (`python -c`, spawn's semantics: the daemon is multi-threaded,
so never fork it) speaking length-prefixed `marshal` frames on its stdin and stdout. Not
`multiprocessing`: its spawn and forkserver children re-import the caller's `__main__`, and its
queues need POSIX semaphores that sandboxes without /dev/shm lack. Sources go out and symbols
come back as plain tuples, which cost a third of pickled `Symbol`s to send and load
(docs/performance.md, "Parse pool (issue 25)").

Jobs go out largest first, in chunks that amortise the round trip; each worker has one chunk in
flight and is sent its next before its answer is decoded. A stream of batches (`*_each`: the
reference index's build, 200 files a batch) goes out as one: a batch's chunks follow the last
of the one before, so no worker waits at a batch's end, and each batch is answered in order.
A job whose old version a worker parsed before (the previous commit's new version, in an
import) goes back to that worker, whose caches answer it and whose held tree lets the new
version re-parse incrementally, as they would in one process. A worker that dies ends the
batch's use of the pool: whatever the workers had not answered is parsed in-process, and the
next batch starts new workers (after `MAX_DEATHS` batches in a row that lost one, the pool
gives up). A pool that cannot start parses in-process from then on, and says so once in the
log.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import gc
import hashlib
import importlib
import itertools
import logging
import marshal
import operator
import os
import selectors
import signal
import struct
import subprocess
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from types import TracebackType
from typing import IO, Any

from symdiff.model import Symbol, SymbolChange
from symdiff.parse.codec import change_rows, changes_of_rows, from_raw_refs, raw, raw_refs
from symdiff.parse.extract import extract, extract_with_refs
from symdiff.parse.refs import FileRefs

log = logging.getLogger(__name__)

# (language, old, new[, sides]): `sides` says which to extract (OLD | NEW, the default both);
# a side not extracted may still be given, as the text the other is re-parsed from. REFS (with
# NEW) also reads the new side's references from the same parse (`ParsePool.with_refs`).
# CHANGE (with OLD | NEW, both texts given) also works out the change between them, where the
# two symbol lists are at hand: its line counts and symbol changes, by the function the caller
# names (`ParsePool.changes_of`; a layer above this one's: attribute/filechange.py).
Job = tuple[str, bytes | None, bytes | None] | tuple[str, bytes | None, bytes | None, int]
OLD, NEW, REFS, STORED, CHANGE = 1, 2, 4, 8, 16
Pair = tuple[list[Symbol], list[Symbol]]
Stored = tuple[bytes, bytes]  # a text's symbols and references in their stored raw forms
Change = tuple[int, int, tuple[SymbolChange, ...]]  # lines added, lines removed, symbol changes
# (old text, new text, old symbols, new symbols) -> their Change; a module-level function, which
# a worker imports by its name.
ChangeFn = Callable[[bytes, bytes, list[Symbol], list[Symbol]], Change]
# A job's answer: the pair, the new side's references (REFS), and with STORED only their raw
# forms instead (`codec.raw`, `codec.raw_refs`: the worker encodes what the store keeps); the
# change between the sides (CHANGE).
_Answer = tuple[list[Symbol], list[Symbol], FileRefs | None, Stored | None, Change | None]
_Plain = tuple[Any, ...]  # a Symbol's fields in order: str, int or None, as marshal sends them
_fields = operator.attrgetter(*(f.name for f in dataclasses.fields(Symbol)))

# The crossover (docs/performance.md, "Parse pool (issue 25)"): a batch with fewer jobs (one
# job is not split) or fewer source bytes than these parses in-process, and so does every
# batch on one core. On 2 quiet cores the pool paid from 5 jobs and 24 KB (0.57-0.81x of
# in-process); 256 KB (~50 ms of parsing) leaves room for the first batch's start.
MIN_JOBS = 2
MIN_BYTES = 256 << 10
MIN_CORES = 2
MAX_DEATHS = 3

# A chunk is a worker's round trip: up to ~50 ms of parsing, so the round trip's ~0.5 ms is
# noise, yet small enough that the last chunks balance the workers' ends.
CHUNK_BYTES = 128 << 10
CHUNK_JOBS = 64
# A head start's jobs (both texts counted): about what one worker parses and extracts in the
# 100-150 ms that `against` spends on git's side of a Django-size answer before its batch.
HEAD_BYTES = 1 << 20
OWNERS = 8192  # texts remembered by the worker that parsed them (its cache holds 2048)

_warned = False


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parse_pair(language: str, old: bytes | None, new: bytes | None,
               sides: int = OLD | NEW) -> Pair:  # fmt: skip
    """One job in-process: old parsed from new, then new re-parsed from old's tree (each only
    when `sides` asks for it; [] for a side not asked for or absent)."""
    old_symbols = extract(language, old, base=new) if old is not None and sides & OLD else []
    new_symbols = extract(language, new, base=old) if new is not None and sides & NEW else []
    return old_symbols, new_symbols


def _parse_job(language: str, old: bytes | None, new: bytes | None,
               sides: int = OLD | NEW, *, change: ChangeFn | None = None) -> _Answer:  # fmt: skip
    """One job in-process: `parse_pair`, or with REFS the new side's symbols and references
    (with STORED, in their stored raw forms)."""
    if sides & REFS:
        symbols, refs = ([], FileRefs()) if new is None else extract_with_refs(
            language, new, base=old)
        if sides & STORED:
            return [], [], None, (raw(symbols), raw_refs(refs)), None
        return [], symbols, refs, None, None
    old_symbols, new_symbols = parse_pair(language, old, new, sides)
    if change is None or not sides & CHANGE or not sides & OLD or not sides & NEW \
            or old is None or new is None:  # fmt: skip
        return old_symbols, new_symbols, None, None, None
    return old_symbols, new_symbols, None, None, change(old, new, old_symbols, new_symbols)


def crossover_jobs() -> int:
    """The fewest jobs a batch needs to go to the pool on this machine."""
    return MIN_JOBS if cores() >= MIN_CORES else sys.maxsize


class ParsePool:
    """Worker processes that parse batches of jobs; reusable, and closed by `close()`.

    Args:
        workers: how many processes (default: the cores); never more than the cores.
        min_jobs, min_bytes: the crossover (default: `crossover_jobs()`, `MIN_BYTES`); a
            smaller batch parses in-process.
        python: the interpreter the workers run (default: this one).
    """

    def __init__(self, *, workers: int | None = None, min_jobs: int | None = None,
                 min_bytes: int = MIN_BYTES, python: str | None = None) -> None:  # fmt: skip
        self.size = max(1, min(workers or cores(), cores()))
        self.min_jobs = crossover_jobs() if min_jobs is None else min_jobs
        self.min_bytes = min_bytes
        self.python = python or sys.executable
        self.worker_jobs = 0  # jobs answered by a worker
        self.local_jobs = 0  # jobs parsed in-process
        self.starts = 0  # times workers were started
        self._workers: list[_Worker] = []
        self._owners = _Owners()
        self._deaths = 0  # batches in a row that lost a worker
        self._disabled = False  # workers could not start or keep running: in-process now
        self._lock = threading.Lock()

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:  # fmt: skip
        self.close()

    def pids(self) -> list[int]:
        """The process ids of the running workers."""
        return [w.process.pid for w in self._workers]

    def start(self) -> bool:
        """Start the workers now, if they are not running; whether they run."""
        with self._lock:
            return self._ensure_started()

    def symbols_of(self, jobs: Sequence[Job]) -> list[Pair]:
        """Each job's `(old_symbols, new_symbols)`, in the order of `jobs`."""
        return [(old, new) for old, new, *_ in self._run(jobs)]

    def changes_of(self, jobs: Sequence[Job], change: ChangeFn, head: HeadStart | None = None
                   ) -> list[tuple[list[Symbol], list[Symbol], Change | None]]:  # fmt: skip
        """Each job's `(old_symbols, new_symbols, change)`, in the order of `jobs`: for a job
        that asks for it (CHANGE), `change(old, new, old_symbols, new_symbols)`, else None.
        The workers work the changes out beside the parses (importing `change` by its name),
        so that the caller only assembles its records.

        `head`: what `head_start` sent before these jobs were all known; its jobs (the same
        texts, by identity) are not sent again, and its answers are these jobs' answers."""
        _check_importable(change)
        if head is not None:
            try:
                if head.live(self, change):
                    return [(old, new, found) for old, new, _, _, found
                            in self._held_batch(jobs, change, head)]  # fmt: skip
            finally:
                head.close()
        return [(old, new, found) for old, new, _, _, found in self._run(jobs, change)]

    def head_start(self, jobs: Sequence[Job], change: ChangeFn) -> HeadStart | None:
        """Send one worker the first of a batch's jobs, while the caller works out the rest
        (`against`: the edited files, while it pairs renames); None when the pool would not
        take such a batch or another thread holds it.

        Only one worker: the caller's own work takes the other core meanwhile. Hand the
        answer to `changes_of(..., head=)`, or `close()` it; until then the pool is held."""
        _check_importable(change)
        picked: list[Job] = []
        held = 0
        for job in jobs:
            if held >= HEAD_BYTES:
                break
            picked.append(job)
            held += _size(job)
        if self.size < MIN_CORES or not picked or self._disabled or held < self.min_bytes // 2 \
                or len(jobs) < self.min_jobs:  # fmt: skip
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if not self._ensure_started():
                self._lock.release()
                return None
            worker = self._workers[0]
            worker.post(picked, _name_of(change))
        except _WorkerDied:
            self._stop()
            self._lock.release()
            return None
        except BaseException:
            self._lock.release()
            raise
        return HeadStart(self, worker, picked, change)

    def _held_batch(self, jobs: Sequence[Job], change: ChangeFn, head: HeadStart
                    ) -> list[_Answer]:  # fmt: skip
        """`_run` with the pool already held by `head`, whose chunk is in flight."""
        head.taken = True
        (answers,) = self._batches(iter([jobs]), change, head)
        return answers

    def with_refs(self, texts: Sequence[tuple[str, bytes]]) -> list[tuple[list[Symbol], FileRefs]]:
        """Each `(language, text)`'s symbols and references, from one parse (the cold build of
        the reference index), in the order of `texts`."""
        (answers,) = self.with_refs_each([texts])  # the stream run to its end: workers free
        return answers

    def with_refs_each(self, batches: Iterable[Sequence[tuple[str, bytes]]]
                       ) -> Generator[list[tuple[list[Symbol], FileRefs]]]:  # fmt: skip
        """`with_refs` of each batch, in order, as each is answered: the workers go on to the
        next batch while the last chunks of the one before are parsed (no tail per batch).
        Close the iterator when leaving it early (it holds the workers)."""
        jobs = ([(language, None, text, NEW | REFS) for language, text in batch]
                for batch in batches)  # fmt: skip
        for answers in self._stream(jobs):
            yield [(new, refs or FileRefs()) for _, new, refs, *_ in answers]

    def stored_refs(self, texts: Sequence[tuple[str, bytes]]) -> list[Stored]:
        """`with_refs`, in the raw forms the store keeps, encoded by the workers: for a
        build that stores what it extracts and does not read it (the daemon's)."""
        (answers,) = self.stored_refs_each([texts])
        return answers

    def stored_refs_each(self, batches: Iterable[Sequence[tuple[str, bytes]]]
                         ) -> Generator[list[Stored]]:  # fmt: skip
        """`stored_refs` of each batch, streamed as `with_refs_each` streams them."""
        jobs = ([(language, None, text, NEW | REFS | STORED) for language, text in batch]
                for batch in batches)  # fmt: skip
        empty = (raw([]), raw_refs(FileRefs()))
        for answers in self._stream(jobs):
            yield [stored or empty for _, _, _, stored, _ in answers]

    def _run(self, jobs: Sequence[Job], change: ChangeFn | None = None) -> list[_Answer]:
        (answers,) = self._stream([jobs], change)
        return answers

    def _stream(self, batches: Iterable[Sequence[Job]], change: ChangeFn | None = None
                ) -> Iterator[list[_Answer]]:  # fmt: skip
        """Each batch's answers, in order. From the first batch past the crossover on, the
        rest go through the workers as one stream (another thread's batches parse in-process
        meanwhile)."""
        pending = iter(batches)
        local = functools.partial(self._local, change=change)
        for jobs in pending:
            worth = len(jobs) >= self.min_jobs and sum(map(_size, jobs)) >= self.min_bytes
            if not worth or self._disabled or not self._lock.acquire(blocking=False):
                yield local(jobs)  # small, or another thread's batch holds the workers
                continue
            try:
                if not self._ensure_started():
                    yield local(jobs)
                    continue
                yield from self._batches(itertools.chain([jobs], pending), change)
            finally:
                self._lock.release()

    def close(self) -> None:
        """Stop the workers (a later batch starts them again)."""
        with self._lock:
            self._stop()

    def _local(self, jobs: Sequence[Job], change: ChangeFn | None = None) -> list[_Answer]:
        self.local_jobs += len(jobs)
        return [_parse_job(*job, change=change) for job in jobs]

    def _ensure_started(self) -> bool:
        if self._disabled:
            return False
        if self._workers:
            return True
        try:
            for _ in range(self.size):
                self._workers.append(_Worker(self.python))
        except Exception:  # whatever stops a process starting, the answer is the same here
            self._stop()
            self._disabled = True
            _warn_once()
            return False
        self.starts += 1
        return True

    def _stop(self) -> None:
        workers, self._workers = self._workers, []
        self._owners.clear()
        for w in workers:
            w.hang_up()
        for w in workers:
            w.wait()

    def _batches(self, batches: Iterator[Sequence[Job]], change: ChangeFn | None,
                 head: HeadStart | None = None) -> Iterator[list[_Answer]]:  # fmt: skip
        stream = _Stream(batches, self._owners, len(self._workers), _name_of(change), head)
        local = functools.partial(self._local, change=change)
        try:
            yield from self._dispatch(stream, local)
            self._deaths = 0
        except _WorkerDied as died:
            log.warning("a parse worker died (%s); parsing the rest of the batch here", died)
            self._stop()
            self._deaths += 1
            if self._deaths >= MAX_DEATHS:
                self._disabled = True
                _warn_once()
        except GeneratorExit:  # left early (the iterator closed): the chunks in flight are
            try:  # answered and dropped, so the workers stay for the next batch
                for w in self._workers:
                    if w.chunk is not None:
                        w.receive()
            except _WorkerDied:
                self._stop()
            raise
        except BaseException:  # interrupted: answers still in flight would pair with the
            self._stop()  # next batch's chunks, so these workers go
            raise
        for batch in stream.rest():  # what the workers did not answer, parsed here
            yield batch.answers(local)

    def _dispatch(self, stream: _Stream, local: Callable[[Sequence[Job]], list[_Answer]]
                  ) -> Iterator[list[_Answer]]:  # fmt: skip
        """Send chunks to idle workers and take their answers until every batch is answered;
        each batch's answers as soon as it and those before it are whole.

        A job a worker could not parse (its extraction raised) is left None for the caller to
        parse in-process, which raises as it would have without the pool.
        """
        with selectors.DefaultSelector() as selector:
            stream.take_head(self._workers)
            for k, w in enumerate(self._workers):
                if w.chunk is not None or stream.send_next(k, w):  # busy with the head start
                    selector.register(w.output, selectors.EVENT_READ, k)
            while selector.get_map():
                for key, _ in selector.select():
                    k = key.data
                    w = self._workers[k]
                    assert w.chunk is not None
                    (batch, done), answer = w.chunk, w.receive()
                    if not stream.send_next(k, w):  # first keep it busy, then read its answer
                        selector.unregister(w.output)
                    batch.waiting -= 1
                    results, digests = batch.results, batch.plan.digests
                    for i, plain in zip(done, marshal.loads(answer), strict=True):
                        if plain is not None and i >= 0:  # (-1: a head start's job not asked)
                            refs = None if plain[2] is None else from_raw_refs(plain[2])
                            results[i] = (_symbols(plain[0]), _symbols(plain[1]), refs, plain[3],
                                          _change(plain[4]))  # fmt: skip
                            self.worker_jobs += 1
                            self._owners.note(digests[i], k)
                for batch in stream.whole():
                    yield batch.answers(local)
            for batch in stream.whole():  # batches of no jobs at the end
                yield batch.answers(local)


class HeadStart:
    """A chunk sent to one worker ahead of its batch (`ParsePool.head_start`): the pool is
    held for it until `changes_of` takes its answer or `close()` drops it."""

    def __init__(self, pool: ParsePool, worker: _Worker, jobs: list[Job],
                 change: ChangeFn) -> None:  # fmt: skip
        self.pool, self.worker, self.jobs, self.change = pool, worker, jobs, change
        self.taken = False  # `changes_of` took it into its batch
        self.closed = False

    def live(self, pool: ParsePool, change: ChangeFn) -> bool:
        """Whether `pool` may take this head start into a batch that works out `change`."""
        return (not self.closed and pool is self.pool and change is self.change
                and self.worker in pool._workers)  # fmt: skip

    def close(self) -> None:
        """Release the pool; an answer not taken is read and dropped first (the worker's
        pipe stays in step), and a worker that died is let go."""
        if self.closed:
            return
        self.closed = True
        try:
            if not self.taken:
                self.worker.receive()
        except _WorkerDied:
            self.pool._stop()
        finally:
            self.pool._lock.release()


def _identity(job: Job) -> tuple[str, int, int, int]:
    """A job by its texts' identity: a head start's jobs are the same objects in its batch."""
    return job[0], id(job[1]), id(job[2]), job[3] if len(job) == 4 else OLD | NEW


class _Batch:
    """One batch of a stream: its jobs' plan, their answers so far, its chunks in flight."""

    def __init__(self, jobs: Sequence[Job], owners: _Owners, workers: int,
                 skip: frozenset[int] = frozenset()) -> None:  # fmt: skip
        self.jobs = jobs
        self.plan = _Plan(jobs, owners, workers, skip)
        self.results: list[_Answer | None] = [None] * len(jobs)
        self.waiting = 0  # chunks sent and not answered

    def answers(self, local: Callable[[Sequence[Job]], list[_Answer]]) -> list[_Answer]:
        """The batch's answers, those the workers did not give made by `local`."""
        missing = [i for i, r in enumerate(self.results) if r is None]
        for i, answer in zip(missing, local([self.jobs[i] for i in missing]), strict=True):
            self.results[i] = answer
        return [r for r in self.results if r is not None]


class _Stream:
    """Batches as the workers take them: a batch's chunks go out once the one before has
    given out all of its own, and a batch is answered once it and those before it are."""

    def __init__(self, batches: Iterator[Sequence[Job]], owners: _Owners, workers: int,
                 change: str | None, head: HeadStart | None = None) -> None:  # fmt: skip
        self.batches, self.owners, self.workers = batches, owners, workers
        self.change = change  # the name of the function that works out the changes
        self.open: deque[_Batch] = deque()  # taken in, not yet answered, in order
        self.head = head

    def take_head(self, workers: Sequence[_Worker]) -> None:
        """Make the head start's chunk, in flight, a chunk of the first batch: its jobs are
        found there by their texts' identity (a job not found is answered and dropped), and
        its worker owns their texts before the batch is planned (an import's chains)."""
        head, self.head = self.head, None
        if head is None:
            return
        jobs = next(self.batches, None)
        if jobs is None:
            jobs = []
        index = {_identity(job): i for i, job in enumerate(jobs)}
        found = [index.pop(_identity(job), -1) for job in head.jobs]
        k = list(workers).index(head.worker)
        for job in head.jobs:  # its worker parses them: the rest of their chains go there too
            self.owners.note((_digest(job[1]), _digest(job[2])), k)
        batch = _Batch(jobs, self.owners, self.workers, skip=frozenset(found) - {-1})
        self.open.append(batch)
        worker = head.worker
        assert worker in workers and worker.chunk is None
        worker.chunk = batch, found  # the answer in flight is this batch's
        batch.waiting += 1

    def send_next(self, k: int, worker: _Worker) -> bool:
        """Send worker `k` its next chunk, taking in the next batch when the open ones have
        none left; False when every batch is given out."""
        while True:
            if self.open:
                chunk = self.open[-1].plan.next(k)
                if chunk is not None:
                    batch = self.open[-1]
                    worker.send(chunk, batch, self.change)
                    batch.waiting += 1
                    return True
            jobs = next(self.batches, None)
            if jobs is None:
                return False
            self.open.append(_Batch(jobs, self.owners, self.workers))

    def whole(self) -> Iterator[_Batch]:
        """The open batches answered in full, from the first: each leaves the stream."""
        while self.open and self.open[0].waiting == 0 and (
                len(self.open) > 1 or self.open[0].plan.empty()):  # fmt: skip
            yield self.open.popleft()

    def rest(self) -> Iterator[_Batch]:
        """Every batch not yet answered, then those not yet taken in (after a worker died)."""
        while self.open:
            yield self.open.popleft()
        for jobs in self.batches:
            yield _Batch(jobs, self.owners, self.workers)


class _Owners:
    """Which worker parsed a text last (by digest), so that a job whose old version it was
    goes back there: its extract cache has the old version's symbols, and its held tree lets
    the new version re-parse incrementally. Bounded like the workers' caches."""

    def __init__(self) -> None:
        self._last: OrderedDict[bytes, int] = OrderedDict()

    def of(self, digest: bytes | None) -> int | None:
        return None if digest is None else self._last.get(digest)

    def note(self, digests: tuple[bytes | None, bytes | None], worker: int) -> None:
        for digest in digests:
            if digest is not None:
                self._last[digest] = worker
                self._last.move_to_end(digest)
        while len(self._last) > OWNERS:
            self._last.popitem(last=False)

    def clear(self) -> None:
        self._last.clear()


class _Plan:
    """A batch's chunks, and which one a worker parses next: its own (jobs whose old version
    it parsed before), then anyone's, each largest first; then the smallest of another's.

    Jobs that share a text form a chain (an import's commits: one commit's old version of a
    file is the next older commit's new one), which goes to one worker in the caller's order,
    so that each text is parsed once and each version re-parses from its neighbour's tree. A
    chain longer than a chunk becomes several, all owned by the worker given least so far."""

    def __init__(self, jobs: Sequence[Job], owners: _Owners, workers: int,
                 skip: frozenset[int] = frozenset()) -> None:  # fmt: skip
        """`skip`: jobs already given out (a head start's)."""
        self.digests = [(_digest(job[1]), _digest(job[2])) for job in jobs]
        sizes = [_size(job) for job in jobs]
        target = min(CHUNK_BYTES, (sum(sizes) - sum(sizes[i] for i in skip)) // (workers * 4) + 1)
        mine: list[list[list[int]]] = [[] for _ in range(workers)]  # chains known to a worker
        anyone: list[list[int]] = []
        for chain in chains(self.digests):
            if skip:
                chain = [i for i in chain if i not in skip]
                if not chain:
                    continue
            owner = next((k for i in chain for k in (owners.of(self.digests[i][0]),
                                                     owners.of(self.digests[i][1]))
                          if k is not None and k < workers), None)  # fmt: skip
            (anyone if owner is None else mine[owner]).append(chain)
        self.own = [deque(chunks_of_chains(given, sizes, target)) for given in mine]
        loads = [sum(sizes[i] for chunk in own for i in chunk) for own in self.own]
        shared: list[list[int]] = []
        weighed = [(sum(sizes[i] for i in chain), chain) for chain in anyone]
        for weight, chain in sorted(weighed, key=lambda w: -w[0]):  # largest first
            if weight <= target:
                shared.append(chain)
                continue
            least = loads.index(min(loads))
            self.own[least].extend(chunks_of_chains([chain], sizes, target))
            loads[least] += weight
        self.shared = deque(chunks_of_chains(shared, sizes, target))

    def empty(self) -> bool:
        """Whether every chunk is given out."""
        return not self.shared and not any(self.own)

    def next(self, worker: int) -> list[int] | None:
        if self.own[worker]:
            return self.own[worker].popleft()
        if self.shared:
            return self.shared.popleft()
        busiest = max(self.own, key=len)
        return busiest.pop() if busiest else None


def chains(digests: Sequence[tuple[bytes | None, bytes | None]]) -> list[list[int]]:
    """The jobs (by index) grouped by the texts they share, each group in index order: job i
    and job j are in one group when a text of one is a text of the other, or through others."""
    parent = list(range(len(digests)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[bytes, int] = {}
    for i, pair in enumerate(digests):
        for digest in pair:
            if digest is None:
                continue
            j = first.setdefault(digest, i)
            if j != i:
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(digests)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def chunks_of_chains(given: Sequence[list[int]], sizes: Sequence[int], target: int
                     ) -> list[list[int]]:  # fmt: skip
    """Chains in chunks, the largest chain first, each chain's jobs in their order; a chunk
    closes at `target` bytes or CHUNK_JOBS (within a chain too: its chunks follow in order)."""
    out: list[list[int]] = []
    chunk: list[int] = []
    held = 0
    for chain in sorted(given, key=lambda c: -sum(sizes[i] for i in c)):
        for i in chain:
            chunk.append(i)
            held += sizes[i]
            if held >= target or len(chunk) >= CHUNK_JOBS:
                out.append(chunk)
                chunk, held = [], 0
    if chunk:
        out.append(chunk)
    return out


class _WorkerDied(Exception):
    """A worker's process ended or its pipe broke mid-batch."""


# The worker's first lines: the parent's import path, then the loop. Its stdout is kept for
# the answers alone; anything else printing there would go to stderr.
_BOOT = "import sys; sys.path[:] = sys.argv[1:]; from symdiff.parse.pool import serve; serve()"
_HEADER = struct.Struct("<Q")


class _Worker:
    """One worker process, its pipes, and the chunk it is parsing."""

    def __init__(self, python: str) -> None:
        self.process = subprocess.Popen([python, "-c", _BOOT, *sys.path],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.input, self.output = self.process.stdin, self.process.stdout
        self.chunk: tuple[_Batch, list[int]] | None = None

    def send(self, chunk: list[int], batch: _Batch, change: str | None) -> None:
        self.post([batch.jobs[i] for i in chunk], change)
        self.chunk = batch, chunk

    def post(self, jobs: list[Job], change: str | None) -> None:
        """Write jobs for it to parse (`send` records them as a batch's chunk)."""
        try:
            _write(self.input, marshal.dumps((change, jobs)))
        except OSError as error:
            raise _WorkerDied(f"pid {self.process.pid}: {error}") from error

    def receive(self) -> bytes:
        """The answer to the chunk it was sent."""
        try:
            answer = _read(self.output)
            self.chunk = None
            return answer
        except (EOFError, OSError) as error:
            raise _WorkerDied(f"pid {self.process.pid}, exit {self.process.poll()}") from error

    def hang_up(self) -> None:
        """Close its pipes: it exits at the end of its read."""
        for pipe in (self.input, self.output):
            with contextlib.suppress(OSError):  # a pipe whose reader died
                pipe.close()

    def wait(self) -> None:
        """Wait for it to exit; kill it if it lingers (one stopped or stuck in a grammar)."""
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _write(pipe: IO[bytes], data: bytes) -> None:
    pipe.write(_HEADER.pack(len(data)))
    pipe.write(data)
    pipe.flush()


def _read(pipe: IO[bytes]) -> bytes:
    head = pipe.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the pipe closed")
    (size,) = _HEADER.unpack(head)
    data = pipe.read(size)
    if len(data) < size:
        raise EOFError("the pipe closed mid-message")
    return bytes(data)


def _digest(text: bytes | None) -> bytes | None:
    return None if text is None else hashlib.blake2b(text, digest_size=16).digest()


def _size(job: Job) -> int:
    return len(job[1] or b"") + len(job[2] or b"")


def _plain(symbols: list[Symbol]) -> list[_Plain]:
    return [_fields(s) for s in symbols]


def _symbols(plain: list[_Plain]) -> list[Symbol]:
    return [Symbol(*p) for p in plain]


def _plain_change(change: Change | None) -> tuple[Any, ...] | None:
    if change is None:
        return None
    added, removed, changes = change
    return added, removed, change_rows(changes)


def _change(plain: tuple[Any, ...] | None) -> Change | None:
    if plain is None:
        return None
    added, removed, rows = plain
    return added, removed, changes_of_rows(rows)


def serve() -> None:
    """A worker's loop: a chunk of jobs in on stdin, their symbols out on stdout, until EOF."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    source = os.fdopen(0, "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the answers
    # The objects of the start (modules, grammars) out of every collection; and none while a
    # chunk is parsed: its symbols and references are many objects and no cycles, and the
    # collector's passes over them cost about 5% of a worker's time (Django's cold build).
    gc.freeze()
    while True:
        try:
            name, jobs = marshal.loads(_read(source))
        except EOFError:
            os._exit(0)  # nothing to flush or free; tearing down the interpreter takes 0.2 s
        gc.disable()
        try:
            change = None if name is None else _imported(name)
            done = marshal.dumps([_answer(*job, change=change) for job in jobs])
        finally:
            gc.enable()
        try:
            _write(answers, done)
        except BrokenPipeError:
            os._exit(0)  # the parent hung up mid-chunk (interrupted): nobody wants the answer


def _answer(language: str, old: bytes | None, new: bytes | None, sides: int = OLD | NEW, *,
            change: ChangeFn | None = None) -> tuple[Any, ...] | None:  # fmt: skip
    try:
        old_symbols, new_symbols, refs, stored, found = _parse_job(language, old, new, sides,
                                                                   change=change)  # fmt: skip
    except Exception:  # the caller parses this job itself, and meets the error there
        return None
    # References cross the pipe in the codec's raw form (the one the store keeps).
    refs_raw = None if refs is None else raw_refs(refs)
    return _plain(old_symbols), _plain(new_symbols), refs_raw, stored, _plain_change(found)


def _name_of(change: ChangeFn | None) -> str | None:
    """How a worker finds `change`: `module:qualified name`."""
    return None if change is None else f"{change.__module__}:{change.__qualname__}"


def _imported(name: str) -> ChangeFn:
    """The function `_name_of` named (imported once per process)."""
    found = _IMPORTED.get(name)
    if found is None:
        module, _, qualified = name.partition(":")
        target: Any = importlib.import_module(module)
        for part in qualified.split("."):
            target = getattr(target, part)
        found = _IMPORTED[name] = target
    return found


_IMPORTED: dict[str, ChangeFn] = {}


def _check_importable(change: ChangeFn) -> None:
    """ValueError unless a worker can import `change` by its name (no lambda, no closure)."""
    name = _name_of(change)
    assert name is not None
    try:
        found = _imported(name)
    except (ImportError, AttributeError):
        found = None
    if found is not change:
        raise ValueError(f"a worker cannot import {name}: pass a module-level function")


def _warn_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("parse workers cannot start or keep running; parsing in-process", exc_info=True)


_shared: ParsePool | None = None
_shared_lock = threading.Lock()


def shared() -> ParsePool:
    """The process-wide pool: made on first use (its workers on its first big batch), reused,
    and closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ParsePool()
            atexit.register(_shared.close)
        return _shared
