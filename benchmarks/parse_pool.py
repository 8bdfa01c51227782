"""The parse pool against in-process parsing, by batch size: where the pool starts to pay.

Run: .venv/bin/python benchmarks/parse_pool.py [TREE] [--rounds N] [--workers N] [--chains]
(default tree: the Django 5.2.8 sdist, benchmarks/.cache; TREE may be any tree of .py files).
A job is one file and an edited copy of it (a line added mid-file), as a change record or a
history import parses them; a batch of N pairs is the first N of a fixed random sample of the
tree's files. Each round times every batch size three ways, in an order rotated from round to
round: in-process, through a warm pool of one worker (what the round trip costs), and through a
warm pool of one worker per core (what parallelism buys). Every run parses new bytes (a
run-numbered comment), so neither extract's content cache nor a held tree answers from an
earlier one. Figures are medians over the rounds; the ratios are medians of each round's ratio;
the crossover is where the pool is 10% faster or more (one worker spreads 10% either way here).

Before the rounds it prints what a pool costs besides parsing: its start (processes up, the
interpreter and tree-sitter imported, the first one-job batch answered), the warm-up of new
workers on a big batch (grammar loads, first parses), the transport of that batch's answers
(pickled `Symbol`s against the pool's marshalled tuples), and the same batch in-process when
its bytes were parsed before (extract's cache answers: a benchmark that repeats its batches
measures that, not parsing).

`--chains` times, instead, six batches of the same 100 files, each job's old version the
previous batch's new one (an import's consecutive commits): in-process, through the pool, and
through the pool with its memory of which worker parsed what switched off.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import marshal
import os
import pickle
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _corpus import django_tree

from symdiff.parse import pool
from symdiff.parse.pool import Job, Pair, ParsePool, parse_pair

SIZES = (1, 2, 5, 10, 20, 50, 100, 200)
_marks = itertools.count(1)


def edited(source: bytes, mark: int) -> bytes:
    """`source` with a line added in its middle."""
    at = source.find(b"\n", len(source) // 2) + 1
    return source[:at] + b"edited_%d = 1\n" % mark + source[at:]


def batch(sources: Sequence[bytes]) -> list[Job]:
    """Each source and its edited copy, as bytes never parsed before in this run."""
    mark = next(_marks)
    tag = b"\n# run %d\n" % mark
    return [("python", s + tag, edited(s + tag, mark)) for s in sources]


def in_process(jobs: Sequence[Job]) -> list[Pair]:
    return [parse_pair(*job) for job in jobs]


def cpu(pids: Sequence[int]) -> float:
    """CPU seconds of this process and of `pids` (theirs read from /proc, in 10 ms ticks)."""
    total = time.process_time()
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def measured(run: Callable[[], object], pids: Sequence[int] = ()) -> tuple[float, float]:
    """Wall and CPU seconds of one call (CPU: this process and `pids`)."""
    wall, used = time.perf_counter(), cpu(pids)
    run()
    return time.perf_counter() - wall, cpu(pids) - used


def transport(pairs: list[Pair], repeat: int = 5) -> tuple[float, float]:
    """Seconds to dump and load `pairs` as pickled Symbols, and as the pool sends them
    (marshalled tuples, turned back into Symbols): medians of `repeat`."""

    def pickled() -> None:
        pickle.loads(pickle.dumps(pairs, pickle.HIGHEST_PROTOCOL))

    def plain() -> None:
        data = marshal.dumps([(pool._plain(old), pool._plain(new)) for old, new in pairs])
        [(pool._symbols(old), pool._symbols(new)) for old, new in marshal.loads(data)]

    return (
        statistics.median(measured(pickled)[0] for _ in range(repeat)),
        statistics.median(measured(plain)[0] for _ in range(repeat)),
    )


def costs(sources: list[bytes], workers: int | None) -> None:
    """What a pool costs besides parsing, printed."""
    with ParsePool(workers=workers, min_jobs=1, min_bytes=0) as fresh:
        start = measured(lambda: (fresh.start(), fresh.symbols_of(batch(sources[:1]))))[0]
        cold = measured(lambda: fresh.symbols_of(batch(sources)))[0]
        warm = statistics.median(measured(lambda: fresh.symbols_of(batch(sources)))[0]
                                 for _ in range(3))  # fmt: skip
    jobs = batch(sources)
    first = measured(lambda: in_process(jobs))[0]
    again = measured(lambda: in_process(jobs))[0]
    pairs = in_process(jobs)
    pickled, plain = transport(pairs)
    size = sum(len(j[1] or b"") + len(j[2] or b"") for j in jobs)
    symbols = sum(len(old) + len(new) for old, new in pairs)
    print(f"pool start (processes up, first 1-job batch answered): {start * 1e3:.0f} ms")
    print(f"{len(jobs)} pairs ({size / 1e6:.2f} MB, {symbols} symbols): through new workers "
          f"{cold * 1e3:.0f} ms, warm ones {warm * 1e3:.0f} ms (median of 3)")  # fmt: skip
    print(f"  their answers dumped and loaded: pickled Symbols {pickled * 1e3:.0f} ms, "
          f"marshalled tuples {plain * 1e3:.0f} ms")  # fmt: skip
    print(
        f"  in-process {first * 1e3:.0f} ms; the same bytes again {again * 1e3:.1f} ms "
        "(extract's cache)"
    )


def chain(sources: Sequence[bytes], length: int) -> list[list[Job]]:
    """`length` batches, each job's old version the previous batch's new one (an import's
    consecutive commits), as bytes never parsed before in this run."""
    tag = b"\n# run %d\n" % next(_marks)
    versions = [s + tag for s in sources]
    out = []
    for k in range(length):
        new = [edited(v, k) for v in versions]
        out.append([("python", old, text) for old, text in zip(versions, new, strict=True)])
        versions = new
    return out


def chains(sources: Sequence[bytes], workers: int | None, rounds: int) -> None:
    """A chain of batches in-process, through the pool, and through the pool with no memory
    of which worker parsed what, in rotated order; medians printed."""
    length = 6
    names = ("in-process", "pool", "pool, no affinity")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    with ParsePool(workers=workers, min_jobs=1, min_bytes=0) as p:
        p.start(), p.symbols_of(batch(sources))  # warm

        def through_pool(batches: list[list[Job]], *, affinity: bool) -> None:
            pool.OWNERS = 8192 if affinity else 0
            for jobs in batches:
                p.symbols_of(jobs)

        runs: dict[str, Callable[[list[list[Job]]], object]] = {
            "in-process": lambda batches: [in_process(jobs) for jobs in batches],
            "pool": functools.partial(through_pool, affinity=True),
            "pool, no affinity": functools.partial(through_pool, affinity=False),
        }
        for r in range(rounds):
            for name in names[r % 3 :] + names[: r % 3]:
                work = functools.partial(runs[name], chain(sources, length))
                times[name].append(measured(work, p.pids()))
        pool.OWNERS = 8192
    kb = sum(map(len, sources)) * 2 / 1e3
    print(
        f"a chain of {length} batches of {len(sources)} pairs ({kb:.0f} KB each), each old "
        "version the previous batch's new one (an import); medians, wall ms (CPU ms):"
    )
    base = times["in-process"]
    for name in names:
        wall = statistics.median(w for w, _ in times[name]) * 1e3
        used = statistics.median(c for _, c in times[name]) * 1e3
        ratio = statistics.median(t[0] / b[0] for t, b in zip(times[name], base, strict=True))
        print(f"  {name:18s} {wall:7.0f} ({used:5.0f})  {ratio:5.2f}x")


MARGIN = 0.9  # a pool within 10% of in-process is within this machine's noise (one worker's)


def crossover(ratio: dict[int, float]) -> int | None:
    """The smallest size from which the pool was faster by the margin at every larger size."""
    found = None
    for size in sorted(ratio, reverse=True):
        if ratio[size] >= MARGIN:
            break
        found = size
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path, help="a tree of .py files (default: Django)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds (medians are kept)")
    parser.add_argument("--workers", type=int, help="the big pool's workers (default: the cores)")
    parser.add_argument("--chains", action="store_true", help="time chained batches only")
    args = parser.parse_args()
    tree: Path = args.tree or django_tree()
    files = sorted(tree.rglob("*.py"))
    sources = [p.read_bytes() for p in random.Random(25).sample(files, max(SIZES))]
    load = os.getloadavg()
    if args.chains:
        chains(sources[:100], args.workers, args.rounds)
        print("load average before / after: {:.2f} {:.2f} {:.2f} / {:.2f} {:.2f} {:.2f}".format(
            *load, *os.getloadavg()))  # fmt: skip
        return
    costs(sources, args.workers)

    names = ("in-process", "1 worker", "pool")
    times: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with ParsePool(workers=1, min_jobs=1, min_bytes=0) as one, \
            ParsePool(workers=args.workers, min_jobs=1, min_bytes=0) as many:  # fmt: skip
        one.start(), many.start()
        one.symbols_of(batch(sources)), many.symbols_of(batch(sources))  # warm
        contenders: dict[str, tuple[Callable[[list[Job]], object], list[int]]] = {
            "in-process": (in_process, []),
            "1 worker": (one.symbols_of, one.pids()),
            "pool": (many.symbols_of, many.pids()),
        }
        for r in range(args.rounds):
            for n in SIZES:
                for name in names[r % 3 :] + names[: r % 3]:
                    run, pids = contenders[name]
                    jobs = batch(sources[:n])
                    timed = measured(functools.partial(run, jobs), pids)
                    times.setdefault((name, n), []).append(timed)
        workers = many.size

    print(f"tree: {tree}; the pool: {workers} workers on {pool.cores()} cores; {args.rounds} "
          "rounds")  # fmt: skip
    print("load average before / after: {:.2f} {:.2f} {:.2f} / {:.2f} {:.2f} {:.2f}".format(
        *load, *os.getloadavg()))  # fmt: skip
    print("medians: wall ms (CPU ms, the caller's and its workers'), and ÷ in-process (wall):")
    print(f"{'pairs':>5} {'KB':>6} {'in-process':>16} {'1 worker':>22} {'pool':>22}")
    ratio: dict[int, float] = {}
    for n in SIZES:
        kb = sum(len(s) for s in sources[:n]) * 2 / 1e3
        cells = []
        for name in names:
            wall = statistics.median(w for w, _ in times[name, n]) * 1e3
            used = statistics.median(c for _, c in times[name, n]) * 1e3
            cell = f"{wall:7.1f} ({used:4.0f})"
            if name != "in-process":
                pairs = zip(times[name, n], times["in-process", n], strict=True)
                r = statistics.median(mine[0] / base[0] for mine, base in pairs)
                cell += f" {r:5.2f}x"
                if name == "pool":
                    ratio[n] = r
            cells.append(cell)
        print(f"{n:5d} {kb:6.0f} {cells[0]:>16} {cells[1]:>22} {cells[2]:>22}")
    found = crossover(ratio)
    print(f"crossover (the pool at most {MARGIN}x in-process from there up):",
          "none (the pool never paid)" if found is None else
          f"{found} pairs ({sum(len(s) for s in sources[:found]) * 2 / 1e3:.0f} KB)")  # fmt: skip


if __name__ == "__main__":
    main()
