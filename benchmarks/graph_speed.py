"""The reference graph's speed on Django: build, one file's update, `impact` of 20 symbols.

Run: .venv/bin/python benchmarks/graph_speed.py [TREE] [--repeat N] [--seed S]
(default tree: the Django 5.2.8 sdist, benchmarks/.cache). The files' facts come from
`symdiff.parse.extract.extract_with_refs_uncached` (one parse for symbols and references).
Figures are CPU seconds of this process (steadier than wall time on a shared machine), beside
the peer measured in the same run: the tree's parse + extract of symbols alone.

`impact` is asked for 20 changed functions, two ways: **one module** (20 functions of one
implementation file: an agent's turn) and **scattered** (20 functions anywhere). For each, the
first query after the build (every edge it meets is computed) and the steady state (an
unrelated file updated between queries, as the daemon does; the edges cached by earlier
queries kept), with the default policy and with `name_max_depth=1`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from _corpus import django_tree

from symdiff.graph import Changed, FileFacts, Graph, Policy
from symdiff.parse.extract import extract_uncached, extract_with_refs_uncached

cpu = time.process_time


def timed(run: Callable[[], object]) -> float:
    """CPU seconds of one call."""
    start = cpu()
    run()
    return cpu() - start


def _sets(
    facts: list[FileFacts], rng: random.Random, rounds: int
) -> dict[str, list[list[Changed]]]:
    by_file: dict[str, list[str]] = defaultdict(list)
    for f in facts:
        if "/tests/" not in f"/{f.path}":
            by_file[f.path].extend(s.name for s in f.symbols if s.kind in ("function", "method"))
    everything = [(p, n) for p, names in by_file.items() for n in names]
    modules = [p for p, names in by_file.items() if len(names) >= 20]
    clustered = []
    for _ in range(rounds):
        path = rng.choice(modules)
        clustered.append([Changed(path, n, "modified") for n in rng.sample(by_file[path], 20)])
    scattered = [[Changed(p, n, "modified") for p, n in rng.sample(everything, 20)]
                 for _ in range(rounds)]  # fmt: skip
    return {"one module": clustered, "scattered": scattered}


def _impact(facts: list[FileFacts], policy: Policy, sets: list[list[Changed]],
            rng: random.Random) -> str:  # fmt: skip
    graph = Graph(facts, policy=policy)
    first = timed(lambda: graph.impact(sets[0]))
    times, tests = [], []
    for changed in sets[1:]:
        graph.update(facts[rng.randrange(len(facts))])
        start = cpu()
        answer = graph.impact(changed)
        times.append(cpu() - start)
        tests.append(len(answer.tests))
    p50 = statistics.median(times)
    return (f"first {first * 1000:.0f} ms, then p50 {p50 * 1000:.0f} ms, max "
            f"{max(times) * 1000:.0f} ms; median {statistics.median(tests):.0f} tests")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tree", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    tree = args.tree or django_tree()
    texts = {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*.py"))}
    floor = timed(lambda: [extract_uncached("python", t) for t in texts.values()])
    facts: list[FileFacts] = []

    def read() -> None:
        for path, text in texts.items():
            symbols, refs = extract_with_refs_uncached("python", text)
            facts.append(FileFacts(path, "python", tuple(symbols), refs))

    both = timed(read)
    print(f"{len(facts)} files, {sum(len(f.refs.refs) for f in facts)} references; "
          f"symbols alone (parse + extract): {floor:.2f} s CPU; symbols and references: "
          f"{both:.2f} s ({both / floor:.2f}x)")  # fmt: skip
    build = statistics.median(timed(lambda: Graph(facts)) for _ in range(args.repeat))
    print(f"graph build: p50 {build:.2f} s CPU ({build / floor:.2f}x the symbols' parse + "
          f"extract)")  # fmt: skip
    rng = random.Random(args.seed)
    graph = Graph(facts)
    updates = sorted(timed(lambda f=f: graph.update(f)) for f in rng.sample(facts, 200))
    print(f"update of one file: p50 {statistics.median(updates) * 1000:.2f} ms, "
          f"p95 {updates[int(len(updates) * 0.95)] * 1000:.2f} ms")  # fmt: skip
    for label, sets in _sets(facts, rng, 12).items():
        for policy_label, policy in (("default policy", Policy()),
                                     ("name_max_depth=1", Policy(name_max_depth=1))):  # fmt: skip
            print(f"impact, 20 functions, {label}, {policy_label}: "
                  f"{_impact(facts, policy, sets, rng)}")  # fmt: skip


if __name__ == "__main__":
    main()
