"""The array walk gives the dict walk's answer, byte for byte (issue 26's impact speed).

Builds the Django reference graph twice from one stored index: one graph answers with the dict
walk (`walk.py`, its edges computed as questions meet them), the other is numbered first
(`Graph.warm`) and answers with the array walk (`sweep.py`). Both are asked the same
questions, and their `impact_json` compared as JSON text:
- the three sample sets of impact_speed.py (one module, scattered, 30 modules' functions);
- `--random` sets of 1-30 definitions of any kind (functions, classes, methods, test code,
  JavaScript) at depths 1-3, and removed symbols (names no definition has);
- after edits inside bodies (a file's uses changed, its shape kept), the same again.
It then runs itself under each of `--seeds` (PYTHONHASHSEED) and checks that every process
printed the same digest of all the answers.

Run: .venv/bin/python benchmarks/impact_identical.py [--db sqlite:///...] [--random 40]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from symdiff.config import Settings
from symdiff.graph import Changed, Graph, sweep, walk
from symdiff.impact import index as refindex
from symdiff.model import Scope
from symdiff.parse.refs import RefKind
from symdiff.parse.testpaths import classify
from symdiff.store import Store


def held(settings: Settings) -> Graph:
    refindex.forget()
    with Store(settings.db_url) as store:
        ws = store.find_workspace(str(settings.root), settings.host)
        assert ws is not None
        return refindex.current(settings, store, ws.id)


def questions(graph: Graph) -> list[tuple[str, list[Changed], int]]:
    """The benchmark's samples, then random sets of any definitions, at depths 1-3."""
    ix = graph._ix
    functions = sorted(f"{p}:{s.name}" for p, e in ix.files.items()
                       if e.facts.language == "python" and classify(p) is Scope.IMPL
                       for s in e.facts.symbols if s.kind in ("function", "method"))  # fmt: skip
    rng = random.Random(26)
    by_module: dict[str, list[str]] = {}
    for f in functions:
        by_module.setdefault(f.partition(":")[0], []).append(f)
    module = rng.choice(sorted(m for m, fs in by_module.items() if len(fs) >= 20))
    out = [("one module", _found(graph, rng.sample(by_module[module], 20)), 2),
           ("scattered", _found(graph, rng.sample(functions, 20)), 2)]
    rng = random.Random(2026)
    modules = sorted(m for m, fs in by_module.items() if len(fs) >= 20)
    for m in rng.sample(modules, min(30, len(modules))):
        out.append((f"module {m}", _found(graph, rng.sample(by_module[m], 20)), 2))
    return out


def random_sets(graph: Graph, count: int, seed: int) -> list[tuple[str, list[Changed], int]]:
    ix = graph._ix
    every = sorted((p, s.name) for p, e in ix.files.items() for s in e.facts.symbols)
    tests = [n for n in every if ix.files[n[0]].test_scope]
    js = [n for n in every if ix.files[n[0]].facts.language in ("javascript", "typescript")]
    rng = random.Random(seed)
    out = []
    for k in range(count):
        size = rng.randint(1, 30)
        pool = [every, tests, js, every][k % 4]
        chosen = rng.sample(pool, min(size, len(pool)))
        if k % 5 == 0:  # a removed symbol: no definition of that name is left
            chosen.append((chosen[0][0], chosen[0][1] + "_removed"))
        changed = [Changed(p, n, "modified") for p, n in dict.fromkeys(chosen)]
        out.append((f"random {k}", changed, rng.randint(1, 3)))
    return out


def _found(graph: Graph, names: list[str]) -> list[Changed]:
    out: dict[tuple[str, str], Changed] = {}
    for name in names:
        for hit in graph.find(name):
            out.setdefault((hit.path, hit.name), hit)
    return list(out.values())


def edit(graph: Graph, path: str) -> bool:
    """An edit inside bodies: the file's last call dropped, its shape kept (False: the
    edit changed the file's shape, and every cache was dropped)."""
    ix = graph._ix
    facts = ix.files[path].facts
    calls = [k for k, r in enumerate(facts.refs.refs) if r.kind is RefKind.CALL]
    if not calls:
        return False
    refs = facts.refs.refs[: calls[-1]] + facts.refs.refs[calls[-1] + 1 :]
    version = ix.version
    graph.update(dataclasses.replace(facts, refs=dataclasses.replace(facts.refs, refs=refs)))
    return ix.version == version


def compare(old: Graph, new: Graph, asked: list[tuple[str, list[Changed], int]],
            digest: hashlib._Hash) -> int:  # fmt: skip
    differ = 0
    for what, changed, depth in asked:
        a = json.dumps(old.impact_json(changed, depth=depth))
        b = json.dumps(new.impact_json(changed, depth=depth))
        assert new.warmed, "the numbered graph was dropped"
        digest.update(a.encode())
        if a != b:
            differ += 1
            print(f"DIFFERENT: {what} (depth {depth}, {len(changed)} symbols)")
        # The fallback's question, asked of every start (the answers show it only for the
        # starts no test reached first).
        for c in changed:
            node = (c.path, c.name)
            n = new._numbered.add(node)  # type: ignore[union-attr]
            assert n is not None
            if walk.reaches_a_test(old._edges, node) != sweep.reaches_a_test(
                    new._edges, new._numbered, n):  # type: ignore[arg-type]  # fmt: skip
                differ += 1
                print(f"DIFFERENT: whether a test reaches {node}")
    return differ


def run(settings: Settings, count: int) -> None:
    old = held(settings)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    new = held(settings)
    rss_graph = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
    start = time.process_time()
    steps = sum(1 for _ in new.warm())
    cpu = time.process_time() - start
    rss_warm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss - rss_graph
    assert new.warmed
    print(f"numbered in {steps} steps, {cpu:.2f} s CPU; max RSS +{rss_warm / 1024:.0f} MB "
          f"(a graph: {rss_graph / 1024:.0f} MB)")
    digest = hashlib.sha256()
    asked = questions(old) + random_sets(old, count, seed=1)
    differ = compare(old, new, asked, digest)
    n = len(asked)
    rng = random.Random(7)
    paths = sorted(p for p, e in old._ix.files.items()
                   if e.facts.language == "python" and e.facts.refs.refs)  # fmt: skip
    for round_ in range(3):
        for path in rng.sample(paths, 5):
            edit(old, path)
            if not edit(new, path):
                print(f"an edit of {path} changed its shape: the graph is numbered again")
                sum(1 for _ in new.warm())
        again = rng.sample(asked, 8) + random_sets(old, 4, seed=100 + round_)
        differ += compare(old, new, again, digest)
        n += len(again)
    print(f"{n} questions, {differ} different; digest {digest.hexdigest()[:16]}")
    if differ:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite:////tmp/walk-dj/index.db")
    parser.add_argument("--root", default="/tmp/walk-dj/tree")
    parser.add_argument("--random", type=int, default=40)
    parser.add_argument("--seeds", default="1,2", help="PYTHONHASHSEED values to run under")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    settings = Settings.resolve(Path(args.root), db=args.db, host="bench")
    if args.child:
        run(settings, args.random)
        return
    digests = set()
    for seed in args.seeds.split(","):
        print(f"PYTHONHASHSEED={seed}", flush=True)
        done = subprocess.run([sys.executable, __file__, "--child", "--db", args.db, "--root",
                               args.root, "--random", str(args.random)],
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=False,
                              capture_output=True, text=True)  # fmt: skip
        print(done.stdout + done.stderr, end="", flush=True)
        if done.returncode:
            sys.exit(done.returncode)
        digests.add(done.stdout.rpartition("digest ")[2].strip())
    print("every seed gave the same answers" if len(digests) == 1 else "SEEDS DIFFER")
    if len(digests) != 1:
        sys.exit(1)


if __name__ == "__main__":
    main()
