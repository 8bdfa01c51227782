"""`against HEAD` with symbols by content: the three answers issue 25 times, beside their peers.

    .venv/bin/python benchmarks/against_bycontent.py [--changed 200] [--runs 5]

The tree is against_speed.py's: the Django sdist committed, then 200 Python files changed in
the work tree (170 edited, 20 renamed and edited, 10 deleted). In one run, medians of N:

- **first answer**: `diff(against="HEAD", limit=500)` with every in-memory cache of this
  process emptied and an empty database, beside the floor (tree-sitter's parse alone of one
  version per changed file) — target at most 1.5x; the store of what it extracted goes on
  behind the answer (`kept.write_behind`) and is waited for, untimed, before the next step;
- **second call**: the same question again, in the same process (its in-memory caches warm),
  and as a new process would ask it (in-memory caches emptied; the database holds what the
  first answer stored), beside `git diff --numstat -M HEAD` — target at most 3x;
- **with the daemon**: the changes recorded by the indexer first (as a watching daemon does;
  its records store both sides' symbols), then the question with in-memory caches emptied,
  beside the same git — target at most 3x.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _caches import cold
from against_speed import build, changed_texts, git
from tree_sitter_language_pack import get_parser

from symdiff.config import Settings
from symdiff.parse.shelf import SymbolShelf
from symdiff.query.answer import DiffQuery, diff
from symdiff.record.indexer import reconcile
from symdiff.store import Store
from symdiff.store.kept import close_all, settle


def median_ms(fn: Callable[[], object], runs: int, before: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        before()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    failed = _Failures()  # a figure is not printed beside a path that logged a failure
    logging.getLogger("symdiff").addHandler(failed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "django"
        build(root, args.changed)
        os.sync()  # the copy's 6,890 files written out now, not by the kernel mid-measurement
        db = Path(tmp) / "db"
        settings = Settings.resolve(str(root), db=f"sqlite:///{db}/index.db")
        query = DiffQuery(against="HEAD", scope="all", limit=500)

        def ask() -> object:
            return diff(settings, query).records

        def empty_database() -> None:
            close_all()
            shutil.rmtree(db, ignore_errors=True)
            db.mkdir()
            Store(settings.db_url).close()
            cold()

        firsts = changed_texts(root)
        parse = get_parser("python")
        rounds: dict[str, list[float]] = {k: [] for k in
                                          ("first", "floor", "again", "new_process", "git")}
        for _ in range(args.runs):
            rounds["first"].append(median_ms(ask, 1, empty_database))
            settle()  # its symbols' store goes behind the answer: not timed, not overlapping
            rounds["again"].append(median_ms(ask, 1, lambda: None))
            rounds["new_process"].append(median_ms(ask, 1, cold))
            rounds["floor"].append(median_ms(lambda: [parse.parse(v[0]) for v in firsts], 1,
                                             lambda: None))  # fmt: skip
            rounds["git"].append(median_ms(lambda: git(root, "diff", "--numstat", "-M", "HEAD"),
                                           1, lambda: None))  # fmt: skip
        # The daemon: its baseline of the commit, then its records of the 200 changes.
        git(root, "stash", "-q")
        empty_database()
        with Store(settings.db_url) as store:
            reconcile(store, settings)
            git(root, "stash", "pop", "-q")
            recorded = len(reconcile(store, settings).changes)
        daemon, peer = [], []
        parsed: list[int] = []  # changes the daemon's answer parsed (its records lacked)
        fill = SymbolShelf.fill

        def counted(shelf: SymbolShelf, *args: Any, **kwargs: Any) -> int:
            # Whatever `fill` takes: a wrapper that named its parameters failed each time
            # `fill` gained one (the answer then logged its batch parse's failure).
            parsed.append(fill(shelf, *args, **kwargs))
            return parsed[-1]

        SymbolShelf.fill = counted  # type: ignore[method-assign]
        for _ in range(args.runs):
            daemon.append(median_ms(ask, 1, cold))
            peer.append(median_ms(lambda: git(root, "diff", "--numstat", "-M", "HEAD"), 1,
                                  lambda: None))  # fmt: skip
        SymbolShelf.fill = fill  # type: ignore[method-assign]
        med = {k: statistics.median(v) for k, v in rounds.items()}
        ratio = {k: statistics.median(a / b for a, b in zip(rounds[k], rounds[base], strict=True))
                 for k, base in (("first", "floor"), ("again", "git"), ("new_process", "git"))}
        d_ratio = statistics.median(a / b for a, b in zip(daemon, peer, strict=True))
        if failed.messages:
            raise SystemExit("symdiff logged failures during the runs; no figure printed:\n"
                             + "\n".join(sorted(set(failed.messages))))
        print(f"{args.changed} changed files, {recorded} recorded by the indexer; medians of "
              f"{args.runs} rounds (ratios: medians of per-round ratios)")
        print(f"first answer            {med['first']:8.1f} ms  floor (one parse per file) "
              f"{med['floor']:7.1f} ms  ratio {ratio['first']:.2f}x (target 1.5x)")
        print(f"second call, same proc  {med['again']:8.1f} ms  git diff --numstat -M "
              f"{med['git']:7.1f} ms  ratio {ratio['again']:.2f}x (target 3x)")
        print(f"second call, new proc   {med['new_process']:8.1f} ms  git diff --numstat -M "
              f"{med['git']:7.1f} ms  ratio {ratio['new_process']:.2f}x (target 3x)")
        print(f"with the daemon         {statistics.median(daemon):8.1f} ms  git diff "
              f"--numstat -M {statistics.median(peer):7.1f} ms  ratio {d_ratio:.2f}x (target 3x); "
              f"changes parsed {sum(parsed) // args.runs} an answer")


class _Failures(logging.Handler):
    """symdiff's log records at ERROR and above (an answer that fell back after a failure)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


if __name__ == "__main__":
    main()
