"""Latency of `symbol_history` for one name in an index of 1,000,000 changes (SQLite).

    .venv/bin/python benchmarks/symbol_history_speed.py [--runs 300]

Fills a SQLite database (cached as benchmarks/.cache/symbol_history_<revision>.db) with
1,000,000 changes
to 50,000 files over 30 days, as benchmarks/query_latency.py does, but with 3,000,000 symbol
rows whose names are each file's own methods (`pkgN.modM.Cls.methodK`, ten per file), so a
name has a handful of versions, as real code does; one name (`hot.Cls.method`) has 1,000. Then
prints p50/p99 of `symbol_history` (the library call the CLI and the MCP tool make)
for a random name, for the hot name, with `path`, and for an unknown name (the "did you mean"
scan of every recorded name). The synthetic records have no snapshots, so no diff is built:
the texts' cost is measured on real code by benchmarks/symbol_history_accuracy.py.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from query_latency import measure  # the same p50/p99 rule as the diff query's figures
from sqlalchemy import func, select

from symdiff.config import Settings
from symdiff.record.heap import settle_heap
from symdiff.store import Store
from symdiff.store import tables as t
from symdiff.store.schema import HEAD
from symdiff.symbols.history import symbol_history

CHANGES = 1_000_000
SYMBOLS_PER_CHANGE = 3
FILES = 50_000
METHODS = 10
HOT_EVERY = 1_000  # every 1,000th change also touches the hot name
DAYS = 30
BATCH = 20_000
ROOT = Path("/bench/workspace")
HOST = "bench-host"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
CACHE = Path(__file__).parent / ".cache" / f"symbol_history_{HEAD}.db"  # per schema


def _path(i: int) -> str:
    return f"src/pkg{i % 200}/mod{i}.py"


def _name(i: int, k: int) -> str:
    return f"pkg{i % 200}.mod{i}.Cls.method{k}"


def fill(store: Store) -> None:
    """Insert the synthetic history unless it is already there."""
    with store.engine.connect() as conn:
        have = conn.execute(select(func.count()).select_from(t.changes)).scalar_one()
    if have >= CHANGES:
        print(f"  reusing {have:,} changes in {store.safe_url}")
        return
    ws = store.ensure_workspace(str(ROOT), HOST)
    rng = random.Random(42)
    start_us = int((NOW - timedelta(days=DAYS)).timestamp() * 1e6)
    span_us = DAYS * 86_400 * 1_000_000
    instants = sorted(start_us + rng.randrange(span_us) for _ in range(CHANGES))
    started = time.perf_counter()
    name_ids: dict[str, int] = {}  # revision 0006: a symbol row names a (name, kind) row
    with store.engine.connect() as conn:
        for first in range(0, CHANGES, BATCH):
            changes, symbols, new_names = [], [], []
            for change_id in range(first + 1, min(first + BATCH, CHANGES) + 1):
                hot = change_id % HOT_EVERY == 0
                f = rng.randrange(FILES)
                path = "src/hot.py" if hot else _path(f)
                ks = sorted(rng.sample(range(METHODS), SYMBOLS_PER_CHANGE))
                names = ["hot.Cls.method"] if hot else [_name(f, k) for k in ks]
                for name in names:
                    if name not in name_ids:
                        name_ids[name] = len(name_ids) + 1
                        new_names.append({"id": name_ids[name], "name": name, "kind": "method"})
                symbols.extend({
                    "change_id": change_id, "ordinal": n, "name_id": name_ids[name],
                    "change_type": "m", "start_line": 10 * n + 1, "end_line": 10 * n + 8,
                    "renamed_from": None, "renamed_to": None,
                } for n, name in enumerate(names))  # fmt: skip
                changes.append({
                    "id": change_id, "workspace_id": ws.id, "ts_us": instants[change_id - 1],
                    "path": path, "old_path": None, "change_type": "modify",
                    "lines_added": rng.randrange(1, 40), "lines_removed": rng.randrange(0, 40),
                    "scope": "impl", "language": "python", "old_hash": None, "new_hash": None,
                })  # fmt: skip
            with conn.begin():
                if new_names:
                    conn.execute(t.symbol_names.insert(), new_names)
                conn.execute(t.changes.insert(), changes)
                conn.execute(t.symbol_changes.insert(), symbols)
        conn.exec_driver_sql("ANALYZE")
    print(f"  filled {CHANGES:,} changes in {time.perf_counter() - started:.0f}s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{CACHE}"
    store = Store(url)
    fill(store)
    settle_heap()
    settings = Settings(root=ROOT, db_url=url, host=HOST)
    rng = random.Random(7)

    def one_name() -> object:
        f = rng.randrange(FILES)
        return symbol_history(settings, _name(f, rng.randrange(METHODS)), store=store)

    def with_path() -> object:
        f = rng.randrange(FILES)
        return symbol_history(settings, _name(f, rng.randrange(METHODS)), path=_path(f),
                              store=store)  # fmt: skip

    sample = symbol_history(settings, _name(123, 4), store=store)
    print(f"  {_name(123, 4)}: {sample.status}, {len(sample.versions)} versions")
    cases: dict[str, tuple[Callable[[], object], int]] = {
        "one name (about 6 versions), limit 20": (one_name, args.runs),
        "one name with path": (with_path, args.runs),
        "one name, as the CLI and MCP tool call it": (
            lambda: symbol_history(settings, _name(rng.randrange(FILES), 1)), args.runs // 3),
        "hot name (1,000 versions), limit 20": (
            lambda: symbol_history(settings, "hot.Cls.method", store=store), args.runs // 3),
        "unknown name (closest names)": (
            lambda: symbol_history(settings, "pkg1.mod1.Cls.methd1", store=store), 5),
    }
    for label, (fn, runs) in cases.items():
        p50, p99 = measure(fn, runs)
        print(f"  {label:<48} p50 {p50:8.2f} ms   p99 {p99:8.2f} ms")
    store.close()


if __name__ == "__main__":
    main()
