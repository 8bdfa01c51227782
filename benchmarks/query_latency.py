"""Latency of the `diff` query on a large history, on SQLite and on PostgreSQL.

    .venv/bin/python benchmarks/query_latency.py [--runs 300] [--skip-postgres]

Fills a database with 1,000,000 changes and 3,000,000 symbol changes across 50,000 files over
30 days (bulk inserts through SQLAlchemy Core into the store's own tables; the SQLite file is
cached under benchmarks/.cache, the PostgreSQL data in database `symdiff_bench`), then prints
p50/p99 latency of `symdiff.query.answer.diff` — the whole read path the CLI and MCP tool use — for
the default query, since=720h scope=test limit=500, a cursor page 10,000 records behind the
newest (plain, and with origin and path filters), and the default query with a path filter.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select, text

from symdiff.config import Settings
from symdiff.query.answer import DiffQuery, diff
from symdiff.query.args import encode_cursor
from symdiff.record.heap import settle_heap
from symdiff.store import Position, Store
from symdiff.store import tables as t
from symdiff.store.schema import HEAD

CHANGES = 1_000_000
SYMBOLS_PER_CHANGE = 3
FILES = 50_000
DAYS = 30
TEST_SHARE = 0.2
BATCH = 20_000
ROOT = Path("/bench/workspace")
HOST = "bench-host"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
CACHE = Path(__file__).parent / ".cache"
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_BENCH = "postgresql+psycopg://postgres@127.0.0.1:5432/symdiff_bench"


def _files(rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for i in range(FILES):
        if rng.random() < TEST_SHARE:
            out.append((f"tests/pkg{i % 200}/test_mod{i}.py", "test"))
        else:
            out.append((f"src/pkg{i % 200}/mod{i}.py", "impl"))
    return out


def fill(store: Store) -> None:
    """Insert the synthetic history unless it is already there."""
    with store.engine.connect() as conn:
        have = conn.execute(select(func.count()).select_from(t.changes)).scalar_one()
    if have >= CHANGES:
        print(f"  reusing {have:,} changes already in {store.safe_url}")
        return
    ws = store.ensure_workspace(str(ROOT), HOST)
    rng = random.Random(42)
    files = _files(rng)
    start_us = int((NOW - timedelta(days=DAYS)).timestamp() * 1e6)
    span_us = DAYS * 86_400 * 1_000_000
    # Changes are written as they are observed, so ids grow with time: random instants over
    # the 30 days, inserted in time order.
    instants = sorted(start_us + rng.randrange(span_us) for _ in range(CHANGES))
    started = time.perf_counter()
    change_id = 0
    with store.engine.connect() as conn:
        with conn.begin():  # revision 0006: a symbol row names a (name, kind) row
            conn.execute(t.symbol_names.insert(), [
                {"id": k + 1, "name": f"Cls{k}.method{k}", "kind": "method"}
                for k in range(SYMBOLS_PER_CHANGE)])  # fmt: skip
        for first in range(0, CHANGES, BATCH):
            changes, symbols = [], []
            for _ in range(first, min(first + BATCH, CHANGES)):
                change_id += 1
                path, scope = files[rng.randrange(FILES)]
                mine = [{
                    "change_id": change_id, "ordinal": k, "name_id": k + 1,
                    "change_type": "m", "start_line": 10 * k + 1,
                    "end_line": 10 * k + 8, "renamed_from": None, "renamed_to": None,
                } for k in range(SYMBOLS_PER_CHANGE)]
                symbols.extend(mine)
                changes.append({
                    "id": change_id, "workspace_id": ws.id,
                    "ts_us": instants[change_id - 1], "path": path, "old_path": None,
                    "change_type": "modify", "lines_added": rng.randrange(1, 40),
                    "lines_removed": rng.randrange(0, 40), "scope": scope, "language": "python",
                    "old_hash": None, "new_hash": None,
                })
            with conn.begin():
                conn.execute(t.changes.insert(), changes)
                conn.execute(t.symbol_changes.insert(), symbols)
        if conn.dialect.name == "postgresql":
            conn.execute(text("ANALYZE"))
            conn.commit()
        else:
            conn.exec_driver_sql("ANALYZE")
    print(f"  filled {CHANGES:,} changes, {CHANGES * SYMBOLS_PER_CHANGE:,} symbol changes "
          f"in {time.perf_counter() - started:.0f}s")


def measure(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """p50 and p99 in milliseconds, after a warm-up."""
    for _ in range(min(20, runs)):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def bench(name: str, store: Store, url: str, runs: int) -> None:
    print(f"{name}:")
    fill(store)
    # Measured as `symdiff serve` runs: with the start-up heap frozen (see settle_heap); without
    # it, a full garbage collection over import-time objects costs ~40 ms every few hundred
    # queries, which is what an unsettled p99 shows.
    settle_heap()
    # A cursor 10,000 records behind the newest: a reader catching up, page by page.
    with store.engine.connect() as conn:
        txid, id_ = conn.execute(
            select(t.changes.c.txid, t.changes.c.id)
            .order_by(t.changes.c.txid.desc(), t.changes.c.id.desc()).offset(10_000).limit(1)
        ).one()
    behind = encode_cursor(Position(int(txid), int(id_)))
    cases: dict[str, dict[str, object]] = {
        "default (since=24h limit=50 scope=impl)": {},
        "since=720h scope=test limit=500": {"since": "720h", "scope": "test", "limit": 500},
        "cursor, limit=50": {"cursor": behind},
        "cursor, origin=scan path=src/pkg1*/** limit=50": {
            "cursor": behind, "origin": "scan", "path": "src/pkg1*/**"},
        "default + path=src/pkg1*/** !*7.py": {"path": ["src/pkg1*/**", "!*7.py"]},
    }
    settings = Settings(root=ROOT, db_url=url, host=HOST)
    for label, args in cases.items():
        query = DiffQuery(**args)  # type: ignore[arg-type]

        def run(query: DiffQuery = query) -> object:
            return diff(settings, query, store=store, now=NOW)

        n = len(diff(settings, query, store=store, now=NOW).records)
        p50, p99 = measure(run, runs)
        print(f"  {label:<42} {n:>4} records  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms")
    # As the MCP tool and the CLI call it: the query opens the database itself, every call.
    def opened() -> object:
        return diff(settings, DiffQuery(), now=NOW)

    p50, p99 = measure(opened, runs)
    print(f"  {'default, opening the database per call':<42} {'':>4}          "
          f"p50 {p50:7.2f} ms  p99 {p99:7.2f} ms")


def _pg_store() -> Store | None:
    import psycopg

    try:
        admin = PG_ADMIN.replace("postgresql+psycopg", "postgresql")
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'symdiff_bench'"
                            ).fetchone() is None:
                conn.execute("CREATE DATABASE symdiff_bench")
    except psycopg.Error as exc:
        print(f"PostgreSQL: skipped ({exc.__class__.__name__}: {exc})")
        return None
    return Store(PG_BENCH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--skip-postgres", action="store_true")
    opts = parser.parse_args()
    CACHE.mkdir(exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    url = f"sqlite:///{CACHE / f'query_latency_{HEAD}.db'}"  # a new schema: a new file
    with Store(url) as store:
        bench("SQLite", store, url, opts.runs)
    if not opts.skip_postgres:
        pg = _pg_store()
        if pg is not None:
            with pg:
                bench("PostgreSQL", pg, PG_BENCH, opts.runs)


if __name__ == "__main__":
    main()
