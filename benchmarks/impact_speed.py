"""Impact's speed targets (issue 26), each beside its peer measured in the same run.

1. The reference index of a Django-size tree, built cold (every file's symbols and references
   extracted through the parse pool and stored), beside the parse floor: one tree-sitter parse
   of every file, in this process. Target: at most 1.5x the floor.
2. `impact` of 20 changed symbols on that tree: p50 over `--rounds` calls in one process (the
   graph held, as the MCP server holds it), beside the first call of a process (the graph
   built from the stored references); the same question asked again (one module's functions,
   and scattered ones), and a different module's functions each call. Target: p50 at most
   50 ms.
3. A recorded change updates the index: on a tree of `--files` small files watched by the
   daemon, the time from each save to its new references being stored, beside the time to its
   record being queryable (today's save-to-queryable budget: p50 at most 50 ms).

Run: .venv/bin/python benchmarks/impact_speed.py [TREE] [--builds 5] [--rounds 50] [--saves 100]
[--files 2000] [--build-only]
TREE defaults to Django's sdist (benchmarks/_corpus.py).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _caches import cold
from _corpus import django_tree
from watch_latency import make_tree, pct, run_daemon

from symdiff import api
from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.impact import index as refindex
from symdiff.model import Scope
from symdiff.parse.testpaths import classify
from symdiff.parse.version import extractor_version
from symdiff.store import Store


def parse_floor(root: Path, paths: list[str]) -> float:
    """Seconds to parse every file once with tree-sitter, in this process (no extraction)."""
    from tree_sitter_language_pack import get_parser

    texts = [(refindex.indexed(p), (root / p).read_bytes()) for p in paths]
    parsers = {lang: get_parser(lang) for lang, _ in texts if lang is not None}  # type: ignore[arg-type]
    start = time.perf_counter()
    for lang, text in texts:
        if lang is not None:
            parsers[lang].parse(text)
    return time.perf_counter() - start


def bench_build(root: Path, db: str, runs: int) -> tuple[Settings, list[str]]:
    """The cold build `runs` times, each on a copy of the baseline's database and beside a
    parse floor measured just before it (this machine's speed drifts by a third between
    minutes: a ratio is only fair within one pair)."""
    settings = Settings.resolve(root, db=db, host="bench")
    api.index(settings)  # the baseline: file states and snapshots, no parse
    version = extractor_version()
    baseline = Path(db.removeprefix("sqlite:///"))
    ratios = []
    for run in range(runs):
        copy = baseline.with_name(f"run{run}.db")
        shutil.copyfile(baseline, copy)
        with Store(f"sqlite:///{copy}") as store:
            ws = store.find_workspace(str(settings.root), settings.host)
            assert ws is not None
            todo = refindex.missing(store, version, store.file_states(ws.id))
            paths = [path for path, _ in todo]
            floor = min(parse_floor(root, paths) for _ in range(2))
            cold()
            start = time.perf_counter()
            refindex.build(store, version, todo, read=False)  # as the daemon builds it
            took = time.perf_counter() - start
            built = store.load_facts(version, sorted({key for _, key in todo}))
        refs = sum(len(r.refs) for _, r in built.values())
        ratios.append(took / floor)
        print(f"reference index, cold, {len(paths)} files ({refs} references): {took:.2f} s; "
              f"parse floor {floor:.2f} s; ratio {took / floor:.2f}x")
        if run + 1 < runs:
            copy.unlink()
        else:
            copy.replace(baseline)
    print(f"cold build over {runs} runs: ratio median {statistics.median(ratios):.2f}x, "
          f"range {min(ratios):.2f}-{max(ratios):.2f}x (target <= 1.5x)")
    functions = sorted(f"{path}:{s.name}" for path, key in todo if key in built
                       if key[0] == "python" and classify(path) is Scope.IMPL
                       for s in built[key][0] if s.kind in ("function", "method"))
    return settings, functions


def samples(functions: list[str]) -> dict[str, list[str]]:
    """20 implementation functions as a turn changes them (of one module with 20 or more),
    and 20 scattered over the tree; both drawn with a fixed seed."""
    rng = random.Random(26)
    by_module: dict[str, list[str]] = {}
    for f in functions:
        by_module.setdefault(f.partition(":")[0], []).append(f)
    module = rng.choice(sorted(m for m, fs in by_module.items() if len(fs) >= 20))
    return {f"one module ({module})": rng.sample(by_module[module], 20),
            "scattered": rng.sample(functions, 20)}


def bench_query(settings: Settings, functions: list[str], rounds: int) -> None:
    """Each line twice, back to back: the held graph computing each node's edges as a
    question first meets them, then the graph numbered in the background first (as the MCP
    server holds it: `refindex.keep_numbered`)."""
    for what, wanted in samples(functions).items():
        for numbered in (False, True):
            bench_sample(settings, what, wanted, rounds, numbered=numbered)
    for numbered in (False, True):
        bench_distinct(settings, functions, rounds, numbered=numbered)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def hold(settings: Settings, *, numbered: bool) -> str:
    """A graph of its own, held (and numbered in the background, waited for); its label."""
    refindex.forget()
    refindex.keep_numbered(numbered)
    with Store(settings.db_url) as store:
        ws = store.find_workspace(str(settings.root), settings.host)
        assert ws is not None
        rss, cpu, start = _rss_mb(), time.process_time(), time.perf_counter()
        refindex.current(settings, store, ws.id)
        if not numbered:
            return "edges as met"
        refindex.wait_numbered()
        return (f"numbered ({time.perf_counter() - start:.1f} s after the graph, "
                f"{time.process_time() - cpu:.1f} s CPU with it, RSS +{_rss_mb() - rss:.0f} MB "
                f"with it)")


def bench_distinct(settings: Settings, functions: list[str], rounds: int, *,
                   numbered: bool) -> None:  # fmt: skip
    """`rounds` questions about 20 functions of a module each, a different module each time
    (drawn with a fixed seed), the graph held: what a question the process has not met
    before costs, beside the same question asked again (bench_sample)."""
    rng = random.Random(2026)
    by_module: dict[str, list[str]] = {}
    for f in functions:
        by_module.setdefault(f.partition(":")[0], []).append(f)
    modules = sorted(m for m, fs in by_module.items() if len(fs) >= 20)
    chosen = rng.sample(modules, min(rounds, len(modules)))
    # A graph of its own, built before the clock starts: no edge cached (unless numbered).
    label = hold(settings, numbered=numbered)
    times, tests = [], []
    for module in chosen:
        start = time.perf_counter()
        found = api.impact(settings, symbols=rng.sample(by_module[module], 20))
        times.append(time.perf_counter() - start)
        assert isinstance(found["tests"], list)
        tests.append(len(found["tests"]))
    print(f"impact of 20 symbols, a different module each call ({len(chosen)} modules), graph "
          f"held, {label}: p50 {statistics.median(times) * 1000:.1f} ms, "
          f"p90 {pct(times, 0.9):.1f} ms (median {statistics.median(tests):.0f} tests) "
          "(target p50 <= 50 ms)")


def bench_sample(settings: Settings, what: str, wanted: list[str], rounds: int, *,
                 numbered: bool) -> None:  # fmt: skip
    start = time.perf_counter()
    label = hold(settings, numbered=numbered)
    first_graph = time.perf_counter() - start
    start = time.perf_counter()
    api.impact(settings, symbols=wanted)
    first = time.perf_counter() - start
    times = []
    found: dict[str, object] = {}
    for _ in range(rounds):
        start = time.perf_counter()
        found = api.impact(settings, symbols=wanted)
        times.append(time.perf_counter() - start)
    callers, tests = found["callers"], found["tests"]
    assert isinstance(callers, list) and isinstance(tests, list)
    print(f"impact of 20 symbols, {what}, graph held, {label}: "
          f"p50 {statistics.median(times) * 1000:.1f} ms, p90 {pct(times, 0.9):.1f} ms "
          f"over {rounds} calls ({len(callers)} callers, "
          f"{len(tests)} tests); first call of a process: graph from the store "
          f"{first_graph * 1000:.0f} ms{' and numbered' if numbered else ''}, then "
          f"{first * 1000:.1f} ms (target p50 <= 50 ms)")


def bench_updates(base: Path, files: int, saves: int) -> None:
    root = base / "watched"
    tree = make_tree(root, files)
    settings = Settings.resolve(root, host="bench")
    d, t = run_daemon(settings)
    version = extractor_version()
    recorded, indexed = [], []
    try:
        if not d.wait_until(lambda s: (s.refindex or {}).get("state") == "built", 300):
            raise RuntimeError("the reference index was not built")
        with Store(settings.db_url) as store:
            ws = store.find_workspace(str(settings.root), settings.host)
            assert ws is not None
            n = store.count_changes(ws.id)
            for k in range(saves):
                time.sleep(random.uniform(0.0, 0.02))
                f = random.choice(tree)
                text = f.read_text() + f"\n\ndef added_{k}(x):\n    return f0(x)\n"
                f.write_text(text)
                start = time.perf_counter()
                blob = blob_id(text.encode())
                n += 1
                while store.count_changes(ws.id) < n:
                    time.sleep(0.001)
                recorded.append(time.perf_counter() - start)
                rel = f.relative_to(root).as_posix()
                while True:
                    state = store.file_states(ws.id, under=[rel])[rel]
                    if state.blob_hash == blob and store.load_facts(
                            version, [("python", state.blob_hash)]):
                        break
                    time.sleep(0.001)
                indexed.append(time.perf_counter() - start)
    finally:
        d.stop()
        t.join(60)
    print(f"{saves} saves in a tree of {files} files: record queryable p50 "
          f"{pct(recorded, 0.5):.1f} ms, p90 {pct(recorded, 0.9):.1f} ms; references stored "
          f"p50 {pct(indexed, 0.5):.1f} ms, p90 {pct(indexed, 0.9):.1f} ms (target p50 <= 50 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--saves", type=int, default=100)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--builds", type=int, default=5, help="cold builds, each beside a floor")
    parser.add_argument("--build-only", action="store_true", help="stop after the cold builds")
    args = parser.parse_args()
    source = args.tree or django_tree()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".git"))
        settings, functions = bench_build(root, f"sqlite:///{tmp}/index.db", args.builds)
        if args.build_only:
            return
        bench_query(settings, functions, args.rounds)
        bench_updates(Path(tmp), args.files, args.saves)


if __name__ == "__main__":
    main()
