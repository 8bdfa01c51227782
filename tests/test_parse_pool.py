"""The parse pool (symdiff/parse/pool.py) with real worker processes: the same answers as
in-process, in order; a worker killed mid-batch; the shared pool reused; small batches kept
in-process; a pool whose workers cannot run."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from conftest import FIXTURES, LANGUAGES, sample_of, wait_until

from symdiff.attribute.filechange import build_change, change_between
from symdiff.model import ChangeType
from symdiff.parse import pool
from symdiff.parse.pool import Job, Pair, ParsePool, parse_pair

SOME = ("python", "go", "rust", "javascript", "typescript", "c", "java", "ruby")


def edited(source: bytes, mark: int) -> bytes:
    """`source` with a blank line and a comment-free edit in its middle (still valid code)."""
    at = source.find(b"\n", len(source) // 2) + 1
    return source[:at] + b"\n" * mark + source[at:]


def jobs_of(languages: tuple[str, ...] | list[str], mark: int = 1) -> list[Job]:
    """Each language's sample and an edited copy; plus an added and a removed file."""
    out: list[Job] = [(lang, sample_of(lang), edited(sample_of(lang), mark)) for lang in languages]
    out += [("python", None, sample_of("python")), ("go", sample_of("go"), None)]
    return out


@pytest.fixture(scope="module")
def workers() -> Iterator[ParsePool]:
    """Two workers that take every batch."""
    with ParsePool(workers=2, min_jobs=1, min_bytes=0) as p:
        yield p


def test_same_answers_as_in_process(workers: ParsePool) -> None:
    jobs = jobs_of(LANGUAGES)
    before = workers.worker_jobs
    got = workers.symbols_of(jobs)
    assert got == [parse_pair(*job) for job in jobs]
    assert workers.worker_jobs - before == len(jobs)
    assert sum(len(old) + len(new) for old, new in got) > 100  # the samples define things


def test_order_is_the_callers(workers: ParsePool) -> None:
    # Smallest first: the pool sends the largest first, and must still answer in this order.
    jobs = sorted(jobs_of(SOME, mark=2), key=lambda j: len(j[1] or b"") + len(j[2] or b""))
    assert workers.symbols_of(jobs) == [parse_pair(*job) for job in jobs]
    assert workers.symbols_of(jobs[::-1]) == [parse_pair(*job) for job in jobs[::-1]]


def test_consecutive_batches_go_back_to_the_same_workers(workers: ParsePool) -> None:
    # Each job's old version is the previous batch's new one, as in an import: the pool sends it
    # to the worker that parsed that text (its caches and held tree), with the same answers.
    first = jobs_of(SOME, mark=7)
    assert workers.symbols_of(first) == [parse_pair(*job) for job in first]
    second = [(lang, new, edited(new, 8)) for lang, _, new, *_ in first if new is not None]
    assert workers.symbols_of(second) == [parse_pair(*job) for job in second]


def without_middle(source: bytes) -> bytes:
    """`source` without the lines of its middle third: definitions removed and cut short."""
    lines = source.splitlines(keepends=True)
    third = len(lines) // 3
    return b"".join(lines[:third] + lines[2 * third:])


def test_a_job_may_ask_for_its_change(workers: ParsePool) -> None:
    # The workers work out the line counts and symbol changes beside the parse (CHANGE): the
    # same as the record builder works out in-process from the two texts, with no pool at all.
    jobs: list[Job] = [(lang, sample_of(lang), without_middle(sample_of(lang)), pool.OLD
                        | pool.NEW | pool.CHANGE) for lang in LANGUAGES]  # fmt: skip
    jobs.append(("python", sample_of("python"), edited(sample_of("python"), 3),
                 pool.OLD | pool.NEW | pool.CHANGE))  # fmt: skip
    jobs.append(("go", sample_of("go"), sample_of("go"), pool.OLD | pool.NEW | pool.CHANGE))
    jobs.append(("python", None, sample_of("python"), pool.NEW | pool.CHANGE))  # one side only
    got = workers.changes_of(jobs, change_between)
    for (language, old, new, _), (olds, news, change) in zip(jobs, got, strict=True):
        assert (olds, news) == parse_pair(language, old, new)
        if old is None or new is None:
            assert change is None
            continue
        (path,) = (p.name for p in (FIXTURES / language).iterdir() if p.name.startswith("sample"))
        record = build_change(ChangeType.MODIFY, path, old_path=None, old=old,
                              new=new, timestamp=datetime.now(UTC))  # fmt: skip
        assert change == (record.lines_added, record.lines_removed, record.symbols)
    with pytest.raises(ValueError, match="module-level function"):  # a worker imports it
        workers.changes_of(jobs, lambda *sides: change_between(*sides))
    removed = [c for _, _, c in got if c is not None and c[1] > 0]
    assert len(removed) >= len(LANGUAGES) - 2  # the cut removed lines nearly everywhere
    assert sum(len(c[2]) for c in removed) > 2 * len(LANGUAGES)  # and touched definitions


def test_a_job_may_ask_for_one_side(workers: ParsePool) -> None:
    base = [job for job in jobs_of(SOME, mark=9) if job[1] is not None and job[2] is not None]
    olds: list[Job] = [(lang, old, new, pool.OLD) for lang, old, new, *_ in base]
    news: list[Job] = [(lang, old, new, pool.NEW) for lang, old, new, *_ in base]
    got_old, got_new = workers.symbols_of(olds), workers.symbols_of(news)
    whole = [parse_pair(*job) for job in base]
    assert [old for old, _ in got_old] == [old for old, _ in whole]
    assert [new for _, new in got_new] == [new for _, new in whole]
    assert all(new == [] for _, new in got_old) and all(old == [] for old, _ in got_new)


def test_a_worker_killed_mid_batch(caplog: pytest.LogCaptureFixture) -> None:
    jobs = jobs_of(LANGUAGES, mark=3) * 2
    with ParsePool(workers=2, min_jobs=1, min_bytes=0) as p:
        assert p.start()
        stalled, other = p.pids()
        os.kill(stalled, signal.SIGSTOP)  # it takes its first chunk and never answers
        got: list[list[Pair]] = []
        batch = threading.Thread(target=lambda: got.append(p.symbols_of(jobs)))
        batch.start()
        wait_until(lambda: p.worker_jobs > 0, timeout=10, message="the other worker's answer")
        os.kill(stalled, signal.SIGKILL)
        batch.join(30)
        assert not batch.is_alive()
        assert got == [[parse_pair(*job) for job in jobs]]
        assert 0 < p.worker_jobs < len(jobs) and p.local_jobs == len(jobs) - p.worker_jobs
        assert "a parse worker died" in caplog.text
        assert p.pids() == [] and p.starts == 1  # both went; the next batch starts anew
        assert p.symbols_of(jobs[:4]) == [parse_pair(*job) for job in jobs[:4]]
        assert p.starts == 2 and stalled not in p.pids() and other not in p.pids()


def test_shared_reuses_its_workers() -> None:
    shared = pool.shared()
    assert pool.shared() is shared
    jobs = jobs_of(SOME, mark=4)
    shared.min_jobs, shared.min_bytes = 1, 0  # this machine may be below the crossover
    try:
        assert shared.symbols_of(jobs) == [parse_pair(*job) for job in jobs]
        pids, starts, answered = shared.pids(), shared.starts, shared.worker_jobs
        assert len(pids) == min(pool.cores(), shared.size) and answered >= len(jobs)
        assert pool.shared().symbols_of(jobs_of(SOME, mark=5)) == [
            parse_pair(*job) for job in jobs_of(SOME, mark=5)
        ]
        assert shared.pids() == pids and shared.starts == starts
        assert shared.worker_jobs == answered + len(jobs)
    finally:
        shared.min_jobs, shared.min_bytes = pool.crossover_jobs(), pool.MIN_BYTES
        shared.close()  # not left running through the rest of the suite


def test_small_batches_stay_in_process() -> None:
    with ParsePool(min_jobs=pool.MIN_JOBS) as p:
        small = jobs_of(("python", "go"))
        assert sum(len(j[1] or b"") + len(j[2] or b"") for j in small) < pool.MIN_BYTES
        big = sample_of("python") * (pool.MIN_BYTES // len(sample_of("python")) + 1)
        one = [("python", big, edited(big, 1))]  # big enough, but one job is not split
        for jobs in (small, one, []):
            assert p.symbols_of(jobs) == [parse_pair(*job) for job in jobs]
        assert p.worker_jobs == 0 and p.local_jobs == len(small) + 1 and p.pids() == []


def test_the_crossover_never_engages_below_min_cores() -> None:
    p = ParsePool()
    assert (p.min_jobs == pool.MIN_JOBS) == (pool.cores() >= pool.MIN_CORES)
    assert p.size <= pool.cores() and ParsePool(workers=1000).size == pool.cores()


def test_workers_that_cannot_start_or_run(caplog: pytest.LogCaptureFixture) -> None:
    jobs = jobs_of(SOME, mark=6)
    want = [parse_pair(*job) for job in jobs]
    with ParsePool(min_jobs=1, min_bytes=0, python="/nonexistent/python") as p:
        assert not p.start()
        assert p.symbols_of(jobs) == want and p.worker_jobs == 0
    # An interpreter that exits at once: each batch loses its workers, then the pool gives up.
    with ParsePool(workers=1, min_jobs=1, min_bytes=0, python="/bin/false") as p:
        for _ in range(pool.MAX_DEATHS + 1):
            assert p.symbols_of(jobs) == want
        assert p.starts == pool.MAX_DEATHS and p.worker_jobs == 0 and p.pids() == []
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("cannot start or keep running" in r.getMessage() for r in warned) == 1


def test_chunks_go_largest_first_and_cover_every_job() -> None:
    sizes = [5, 500_000, 20, 300_000, 0, 7] + [1000] * 200
    chunks = pool.chunks_of_chains([[i] for i in range(len(sizes))], sizes, 100_000)
    assert sorted(i for c in chunks for i in c) == list(range(len(sizes)))
    assert chunks[0] == [1] and chunks[1] == [3]
    assert all(len(c) <= pool.CHUNK_JOBS for c in chunks)


def test_jobs_that_share_a_text_are_one_chain() -> None:
    a, b, c, d, e = (f"v{i}".encode() for i in range(5))
    digests = [(pool._digest(o), pool._digest(n)) for o, n in
               [(b, c), (d, e), (a, b), (None, d), (c, None), (e, e)]]  # fmt: skip
    assert pool.chains(digests) == [[0, 2, 4], [1, 3, 5]]


def test_a_chain_of_versions_goes_to_one_worker_in_order() -> None:
    # An import's batch: each file's versions, newest first, one job per commit; a file's old
    # version at one commit is its new version at the next older one. Each chain is given to
    # one worker in the caller's order, even when it spans several chunks; at the end an idle
    # worker may take the last chunks of another's chain (one more fresh parse, for balance).
    versions = {name: [edited(sample_of(lang), k) for k in range(12)]
                for name, lang in (("p", "python"), ("g", "go"), ("r", "rust"))}  # fmt: skip
    jobs: list[Job] = []
    chain_of: list[str] = []
    for k in range(11, 0, -1):
        for name, texts in versions.items():
            jobs.append(("python", texts[k - 1], texts[k]))
            chain_of.append(name)
    jobs.append(("python", None, b"def alone(): pass\n"))
    chain_of.append("alone")
    plan = pool._Plan(jobs, pool._Owners(), 2)
    given: dict[int, list[int]] = {0: [], 1: []}
    while not plan.empty():
        for k in (0, 1):
            chunk = plan.next(k)
            if chunk is not None:
                given[k].extend(chunk)
    assert sorted(given[0] + given[1]) == list(range(len(jobs)))
    for name in versions:
        mine = [i for i in range(len(jobs)) if chain_of[i] == name]
        parts = {k: [i for i in given[k] if chain_of[i] == name] for k in (0, 1)}
        owner = 0 if parts[0][:1] == mine[:1] else 1
        assert parts[owner] + parts[1 - owner] == mine, name  # a head, and a tail taken
        assert len(parts[owner]) > len(mine) // 2, name  # most of it by its owner


def _changes(jobs: list[Job]) -> list[tuple[object, ...]]:
    """What `changes_of` answers, worked out in-process with no pool at all."""
    out: list[tuple[object, ...]] = []
    for language, old, new, *_ in jobs:
        olds, news = parse_pair(language, old, new)
        found = None if old is None or new is None else change_between(old, new, olds, news)
        out.append((olds, news, found))
    return out


def test_a_head_start_is_answered_in_its_batch() -> None:
    # `against` sends one worker the edited files while it pairs renames; the batch made after
    # holds them (the same texts) among others, in another order. The head's jobs are not sent
    # twice, and the answers are the batch's, in its order.
    both = pool.OLD | pool.NEW | pool.CHANGE
    jobs: list[Job] = [(lang, sample_of(lang), edited(sample_of(lang), 4), both)
                       for lang in LANGUAGES]  # fmt: skip
    first, rest = jobs[: len(jobs) // 2], jobs[len(jobs) // 2 :]
    with ParsePool(workers=2, min_jobs=1, min_bytes=0) as p:
        head = p.head_start(first, change_between)
        assert head is not None and head.jobs == first and head.worker.process.pid in p.pids()
        assert p.head_start(rest, change_between) is None  # the pool is held by the first
        batch = rest[::-1] + first[::-1] + [("python", None, sample_of("python"), pool.NEW)]
        assert p.changes_of(batch, change_between, head) == _changes(batch)
        assert p.worker_jobs == len(batch) and p.local_jobs == 0  # none sent twice
        assert p.changes_of(jobs, change_between) == _changes(jobs)  # the pool held no more


def test_a_chain_begun_by_a_head_start_stays_with_its_worker() -> None:
    # An import's head start: a file's newest versions go to one worker while git is read for
    # the older ones. The rest of that chain goes to the same worker (which holds the tree and
    # the symbols of the version it re-parses from), not to whichever worker is idle first.
    both = pool.OLD | pool.NEW | pool.CHANGE
    # The rest of the chain is the batch's largest, yet small enough to be anyone's chunk: the
    # idle worker would take it first.
    texts = [edited(sample_of("python"), k) * 10 for k in range(10)]
    chain: list[Job] = [("python", texts[k + 1], texts[k], both) for k in range(9)]
    others: list[Job] = [("python", edited(sample_of("python"), 20 + k) * 30,
                          edited(sample_of("python"), 40 + k) * 30, both) for k in range(16)]
    rest = sum(pool._size(job) for job in chain[2:])
    assert max(map(pool._size, others)) < rest < sum(map(pool._size, chain + others)) // 8
    with ParsePool(workers=2, min_jobs=1, min_bytes=0) as p:
        head = p.head_start(chain[:2], change_between)
        assert head is not None
        owner = p._workers.index(head.worker)
        batch = others + chain
        assert p.changes_of(batch, change_between, head) == _changes(batch)
        assert p._owners.of(pool._digest(texts[3])) == owner  # the job after the head's
        assert p._owners.of(pool._digest(texts[4])) == owner


def test_a_head_start_not_taken_leaves_the_pool_in_step() -> None:
    both = pool.OLD | pool.NEW | pool.CHANGE
    jobs: list[Job] = [(lang, sample_of(lang), edited(sample_of(lang), 5), both) for lang in SOME]
    with ParsePool(workers=2, min_jobs=1, min_bytes=0) as p:
        # Closed unanswered (the caller failed before its batch): the answer is read and
        # dropped, so that the worker's next answer pairs with its next chunk.
        head = p.head_start(jobs, change_between)
        assert head is not None
        head.close()
        assert p.changes_of(jobs, change_between) == _changes(jobs)
        # A batch that holds none of the head's texts (other edits): the head's answers are
        # dropped, not taken for the batch's, and every job of the batch is parsed.
        head = p.head_start(jobs, change_between)
        others: list[Job] = [(lang, sample_of(lang), edited(sample_of(lang), 6), both)
                             for lang in SOME]  # fmt: skip
        before = p.worker_jobs
        assert p.changes_of(others, change_between, head) == _changes(others)
        assert p.worker_jobs - before == len(others)
        assert p.changes_of(jobs[:2], change_between) == _changes(jobs[:2])


def test_no_head_start_where_the_pool_would_not_take_the_batch() -> None:
    jobs: list[Job] = [("python", sample_of("python"), edited(sample_of("python"), 1),
                        pool.OLD | pool.NEW | pool.CHANGE)]  # fmt: skip
    with ParsePool(workers=2, min_jobs=1) as p:  # the default bytes: a sample is too small
        assert p.head_start(jobs, change_between) is None
    with ParsePool(workers=1, min_jobs=1, min_bytes=0) as p:  # one core: in-process
        assert p.head_start(jobs, change_between) is None
    with ParsePool(workers=2, min_jobs=2, min_bytes=0) as p:  # fewer jobs than its crossover
        head = p.head_start(jobs, change_between)
        if head is not None:
            head.close()  # (else the pool's close would wait on it)
        assert head is None
        assert not p.pids()  # no worker started for it
