"""Soak: a simulated busy month with retention running as the daemon schedules it (issue 16).

    .venv/bin/python benchmarks/soak.py [--quick] [--days 30] [--changes 240000]
        [--files 3000] [--keep 168h] [--db URL]

Records `--changes` file modifications over `--files` files through the store's write path
(`Store.apply`, batches of 256 as the indexer writes them; each a new zstd snapshot of a ~3 KB
Python file and two symbol rows), the clock advanced evenly over `--days` simulated days; 80%
of the edits go to 20% of the files. At every simulated midnight, as the daemon's daily
collection would, `retention.collect` runs on a thread of its own (its own Store) while the
writes go on. At each midnight the script samples this process's RSS (writer, gc and reader
together), the database size (file + WAL; `pg_database_size` on PostgreSQL) and the latency of
`symdiff.query.answer.diff` through one kept read-only store, as the MCP server reads: p50/p99
of the default query (24h, limit 50) and of a 168h scope=all limit=500 query, each at that simulated
instant. It prints the series, then whether size and RSS level off and whether p99 grows:
the last third of the days against the middle third (the first window is still filling).

`--keep` defaults to 168h here (the product default is 2160h) so that one simulated month holds
four windows and the plateau is reached; the records kept are then a week's worth.
`--quick`: 10 days, 30,000 changes, 600 files, keep 72h (about a minute).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from symdiff.config import Settings
from symdiff.duration import parse_go_duration
from symdiff.model import ChangeType, FileChange, Scope, SymbolChange, SymbolChangeType
from symdiff.query.answer import DiffQuery, diff
from symdiff.record.heap import settle_heap
from symdiff.record.retention import GcReport, collect
from symdiff.store import FileState, Mutation, Store
from symdiff.store.blobs import pack

BATCH = 256
DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Sample:
    day: int
    written: int
    records: int
    blobs: int
    size: int
    rss: int
    p50: float
    p99: float
    wide_p99: float
    apply_max: float  # the slowest write batch of the day (ms): a writer's longest stall
    gc: GcReport | None


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def source(path: str, version: int, rng: random.Random) -> bytes:
    """A ~3 KB module: fixed functions, and the one this version edits."""
    n = int(path.rsplit("m", 1)[1].split(".")[0])
    lines = [f"def f{n}_{i}(x, y):\n    total = x * {i} + y\n    return total - {n}\n\n"
             for i in range(24)]  # fmt: skip
    k = rng.randrange(24)
    lines[k] = (f"def f{n}_{k}(x, y, z={version}):\n    total = x * {k} + y + z\n"
                f"    return total - {version}  # edit {version}\n\n")
    return "".join(lines).encode()


def count(store: Store, table: str) -> int:
    from sqlalchemy import text

    with store.engine.connect() as conn:
        return int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def latency(settings: Settings, reader: Store, query: DiffQuery, now: datetime,
            runs: int) -> tuple[float, float]:  # fmt: skip
    for _ in range(5):
        diff(settings, query, store=reader, now=now)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        diff(settings, query, store=reader, now=now)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--changes", type=int, default=240_000)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--keep", default="168h")
    ap.add_argument("--runs", type=int, default=100, help="queries per sample")
    ap.add_argument("--db", default=None, help="database URL (default: a temporary SQLite)")
    args = ap.parse_args()
    if args.quick:
        args.days, args.changes, args.files, args.keep, args.runs = 10, 30_000, 600, "72h", 50
    tmp = Path(tempfile.mkdtemp(prefix="symdiff-soak-"))
    root = tmp / "tree"
    root.mkdir()
    settings = replace(Settings.resolve(root, db=args.db),
                       keep_us=parse_go_duration(args.keep) // 1000)  # fmt: skip
    rng = random.Random(16)
    paths = [f"src/pkg{i % 50}/m{i}.py" for i in range(args.files)]
    hot = paths[: max(1, len(paths) // 5)]
    per_day = args.changes // args.days
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - DAY * args.days
    print(f"soak: {args.changes:,} changes over {args.files:,} files in {args.days} simulated "
          f"days, keep {args.keep}, gc daily; database {settings.db_url.split('?')[0]}")
    store = Store(settings.db_url)
    ws = store.ensure_workspace(str(settings.root), settings.host)
    current: dict[str, tuple[str, int]] = {}
    baseline = []
    for p in paths:  # the baseline: every file's first snapshot, no records
        blob = pack(source(p, 0, rng))
        current[p] = (blob.hash, 0)
        baseline.append(Mutation(upserts=(FileState(p, blob.hash, blob.size, 1, 1),),
                                 blobs=(blob,)))  # fmt: skip
    for i in range(0, len(baseline), BATCH):
        store.apply(ws.id, baseline[i : i + BATCH])
    reader = Store(settings.db_url, read_only=True)
    settle_heap()
    samples: list[Sample] = []
    gc_thread: threading.Thread | None = None
    gc_done: list[GcReport] = []
    written = 0
    started = time.monotonic()
    for day in range(args.days):
        midnight = start + DAY * (day + 1)
        step = DAY / per_day
        batch: list[Mutation] = []
        applies: list[float] = []

        def write(muts: list[Mutation], applies: list[float] = applies) -> None:
            t0 = time.perf_counter()
            store.apply(ws.id, muts)
            applies.append((time.perf_counter() - t0) * 1000)

        for k in range(per_day):
            when = start + DAY * day + step * k
            path = rng.choice(hot) if rng.random() < 0.8 else rng.choice(paths)
            old_hash, version = current[path]
            blob = pack(source(path, version + 1, rng))
            change = FileChange(
                path=path, old_path=None, timestamp=when, change_type=ChangeType.MODIFY,
                lines_added=3, lines_removed=3, scope=Scope.IMPL, language="python",
                old_hash=old_hash, new_hash=blob.hash,
                symbols=(SymbolChange(f"f{version}", "function",
                                      SymbolChangeType.SIGNATURE_CHANGED, 1, 3),
                         SymbolChange(f"g{version}", "function", SymbolChangeType.MODIFIED, 5, 7)),
            )  # fmt: skip
            current[path] = (blob.hash, version + 1)
            batch.append(Mutation(upserts=(FileState(path, blob.hash, blob.size, 1, 1),),
                                  blobs=(blob,), change=change))  # fmt: skip
            if len(batch) == BATCH:
                write(batch)
                batch = []
        write(batch)
        written += per_day
        # Midnight: the previous collection has finished; sample, then start today's.
        last = None
        if gc_thread is not None:
            gc_thread.join()
            last = gc_done[-1]
        p50, p99 = latency(settings, reader, DiffQuery(), midnight, args.runs)
        _, wide = latency(settings, reader, DiffQuery(since="168h", limit=500, scope="all"),
                          midnight, max(10, args.runs // 5))  # fmt: skip
        sample = Sample(day + 1, written, count(store, "changes"), count(store, "blobs"),
                        store.size_bytes() or 0, rss_bytes(), p50, p99, wide, max(applies),
                        last)  # fmt: skip
        samples.append(sample)
        print(f"day {sample.day:3d}  written {sample.written:>9,}  records {sample.records:>8,}"
              f"  blobs {sample.blobs:>8,}  db {sample.size / 1e6:7.1f} MB  rss "
              f"{sample.rss / 1e6:6.1f} MB  diff p50 {p50:6.2f} ms p99 {p99:6.2f} ms  "
              f"168h/500 p99 {wide:7.2f} ms  slowest write {max(applies):5.0f} ms" + (
                  "" if last is None else f"  gc: -{last.records:,} rec -{last.blobs:,} blobs "
                  f"{last.seconds:.1f} s, longest write {last.longest_write_s * 1000:.0f} ms"),
              flush=True)  # fmt: skip
        gc_thread = threading.Thread(
            target=lambda now=midnight: gc_done.append(collect(settings, now=now.timestamp())))
        gc_thread.start()
    if gc_thread is not None:
        gc_thread.join()
    elapsed = time.monotonic() - started
    reader.close()
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)
    verdict(samples, elapsed)


def verdict(samples: list[Sample], elapsed: float) -> None:
    third = max(1, len(samples) // 3)
    middle, last = samples[third : 2 * third], samples[-third:]

    def peak(xs: list[Sample], key: str) -> float:
        return max(float(getattr(s, key)) for s in xs)

    def med(xs: list[Sample], key: str) -> float:
        return statistics.median(float(getattr(s, key)) for s in xs)

    print(f"\n{len(samples)} days in {elapsed:.0f} s; middle third = days "
          f"{middle[0].day}-{middle[-1].day}, last third = days {last[0].day}-{last[-1].day}")
    for label, key, fn, unit, scale, tolerance in (
        ("database size, peak", "size", peak, "MB", 1e6, 1.10),
        ("RSS, peak", "rss", peak, "MB", 1e6, 1.10),
        ("records kept, peak", "records", peak, "", 1, 1.10),
        ("diff p99, median", "p99", med, "ms", 1, 1.25),
        ("168h/500 p99, median", "wide_p99", med, "ms", 1, 1.25),
        ("slowest write batch, max", "apply_max", peak, "ms", 1, 2.0),
    ):
        a, b = fn(middle, key) / scale, fn(last, key) / scale
        ok = b <= a * tolerance
        print(f"{label:24s} middle {a:10.2f} {unit:2s}  last {b:10.2f} {unit:2s}  "
              f"({(b / a - 1) * 100 if a else 0:+.1f}%)  "
              f"{'levels off' if ok else 'GROWS'} (tolerance +{(tolerance - 1) * 100:.0f}%)")
    gcs = [s.gc for s in samples if s.gc is not None]
    if gcs:
        print(f"gc runs: {len(gcs)}, longest {max(g.seconds for g in gcs):.1f} s, its longest "
              f"transaction {max(g.longest_write_s for g in gcs) * 1000:.0f} ms; records "
              f"collected {sum(g.records for g in gcs):,}, snapshots {sum(g.blobs for g in gcs):,}"
              f"; vacuum: {', '.join(sorted({g.vacuum for g in gcs}))}")


if __name__ == "__main__":
    main()
