"""Watcher latency: from a file's save to its change record being queryable, and a 5,000-file burst.

symdiff's daemon (inotify via watchdog, settle window, reconcile of the dirty paths) runs
in-process on a thread over a temporary tree of `--files` files with a real SQLite store; the
benchmark saves one file at a time and polls the store every millisecond until the record is
there. Then it writes 5,000 files into 50 new directories and times until all 5,000 `add`
records exist.

Peer, measured in the same run on its own copy of the tree: naive polling, as
codebase-memory-mcp does it (it polls git every 5-60 s): a full reconcile every `--peer-interval`
seconds (default 5, that tool's fastest), the same saves and the same poll of the store.

Run: .venv/bin/python benchmarks/watch_latency.py [--saves 300] [--files 2000]
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from symdiff.config import Settings
from symdiff.record.daemon import Daemon
from symdiff.record.indexer import reconcile
from symdiff.store import Store


def make_tree(root: Path, files: int) -> list[Path]:
    """A tree of small Python files, 50 per directory."""
    paths = []
    for i in range(files):
        p = root / f"pkg{i // 50:03}" / f"mod{i:05}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"def f{i}(x):\n    return x + {i}\n")
        paths.append(p)
    return paths


def change_count(store: Store, settings: Settings) -> int:
    ws = store.find_workspace(str(settings.root), settings.host)
    return 0 if ws is None else store.count_changes(ws.id)


def wait_count(store: Store, settings: Settings, want: int, timeout: float = 60) -> float:
    """Poll the store every millisecond until `want` changes exist; the time it took."""
    start = time.perf_counter()
    while change_count(store, settings) < want:
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"fewer than {want} changes after {timeout}s")
        time.sleep(0.001)
    return time.perf_counter() - start


def measure_saves(settings: Settings, files: list[Path], saves: int,
                  gap: Callable[[], float]) -> list[float]:
    """Seconds from each save's return to its record being queryable."""
    out = []
    with Store(settings.db_url) as store:
        n = change_count(store, settings)
        for k in range(saves):
            time.sleep(gap())
            f = random.choice(files)
            f.write_text(f.read_text() + f"# save {k}\n")
            n += 1
            out.append(wait_count(store, settings, n))
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000


def run_daemon(settings: Settings) -> tuple[Daemon, threading.Thread]:
    d = Daemon(settings)
    t = threading.Thread(target=d.run, daemon=True)
    t.start()
    if not d.ready.wait(120):
        raise RuntimeError("daemon did not start")
    return d, t


def bench_symdiff(base: Path, files: int, saves: int) -> None:
    root = base / "symdiff"
    tree = make_tree(root, files)
    settings = Settings.resolve(root, host="bench")
    d, t = run_daemon(settings)
    try:
        lat = measure_saves(settings, tree, saves, gap=lambda: random.uniform(0.0, 0.02))
        print(f"symdiff daemon (settle {settings.settle_ms} ms), {saves} saves in a tree of "
              f"{files} files: p50 {pct(lat, 0.5):.1f} ms, p90 {pct(lat, 0.9):.1f} ms, "
              f"p99 {pct(lat, 0.99):.1f} ms, max {max(lat) * 1000:.1f} ms")
        with Store(settings.db_url) as store:
            n = change_count(store, settings)
            start = time.perf_counter()
            for i in range(5000):
                p = root / "burst" / f"d{i // 100:02}" / f"f{i:04}.py"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(f"x = {i}\n")
            written = time.perf_counter() - start
            wait_count(store, settings, n + 5000, timeout=120)
            total = time.perf_counter() - start
        print(f"symdiff daemon, 5,000-file burst into 50 new dirs: written in {written:.2f}s, "
              f"all 5,000 recorded {total:.2f}s after the first write "
              f"({total - written:.2f}s after the last); {d.stats.full_rescans} full rescans, "
              f"{d.stats.overflows} overflows")
    finally:
        d.stop()
        t.join(60)


def bench_polling(base: Path, files: int, saves: int, interval: float) -> None:
    root = base / "poller"
    tree = make_tree(root, files)
    settings = Settings.resolve(root, host="bench")
    stop = threading.Event()
    scans: list[float] = []

    def poll() -> None:
        with Store(settings.db_url) as store:
            while True:
                t0 = time.perf_counter()
                reconcile(store, settings)
                scans.append(time.perf_counter() - t0)
                if stop.wait(interval):
                    return

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    while not scans:
        time.sleep(0.01)
    # Saves arrive at random moments relative to the polling phase.
    lat = measure_saves(settings, tree, saves, gap=lambda: random.uniform(0, interval))
    stop.set()
    t.join(60)
    print(f"peer: full reconcile every {interval:g}s (codebase-memory-mcp-style polling), "
          f"{saves} saves: p50 {pct(lat, 0.5):.0f} ms, p99 {pct(lat, 0.99):.0f} ms; "
          f"one scan of {files} files takes {statistics.median(scans[1:] or scans) * 1000:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saves", type=int, default=300)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--peer-saves", type=int, default=12)
    ap.add_argument("--peer-interval", type=float, default=5.0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    random.seed(1)
    with tempfile.TemporaryDirectory(prefix="symdiff-watch-") as tmp:
        bench_symdiff(Path(tmp), args.files, args.saves)
        if args.peer_saves:
            bench_polling(Path(tmp), args.files, args.peer_saves, args.peer_interval)


if __name__ == "__main__":
    main()
