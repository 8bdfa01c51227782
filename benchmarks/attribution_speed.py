"""attribute() over the 200 changed files of against_speed.py's Django tree, before and after.

    .venv/bin/python benchmarks/attribution_speed.py [--rev main] [--changed 200] [--runs 7]

Builds the tree of against_speed.py (the Django sdist committed, then 200 Python files edited,
renamed or deleted), extracts both sides of every changed file and diffs them once, then times
`attribute(old_symbols, new_symbols, old_source, new_source, diff)` alone over all the files —
what is left of `against HEAD` besides git when the daemon has stored both sides' symbols — for
this tree's module and for REV's (benchmarks/_baseline.py), interleaved in one process. Prints
the medians and checks that both give the same records.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _baseline import baseline_spans
from against_speed import build, changed_texts

from symdiff.attribute import spans
from symdiff.diffs.linediff import LineDiff, diff_lines
from symdiff.model import Symbol
from symdiff.parse.extract import extract_uncached

Case = tuple[Sequence[Symbol], Sequence[Symbol], bytes, bytes, LineDiff]


def cases(root: Path) -> list[Case]:
    """Per changed file: both sides' symbols and sources, and their line diff."""
    out = []
    for versions in changed_texts(root):
        old, new = (versions if len(versions) == 2 else (versions[0], b""))
        old_symbols = extract_uncached("python", old)
        new_symbols = extract_uncached("python", new) if new else []
        out.append((old_symbols, new_symbols, old, new, diff_lines(old, new)))
    return out


def run_all(attribute: Callable[..., object], work: list[Case]) -> tuple[float, float]:
    """(wall, CPU) seconds of attributing every file once."""
    wall, cpu = time.perf_counter(), time.process_time()
    for case in work:
        attribute(*case)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="main", help="the revision to compare with")
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    before = baseline_spans(args.rev)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "django"
        build(root, args.changed)
        work = cases(root)
    same = all(before.attribute(*c) == spans.attribute(*c) for c in work)
    times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
    for _ in range(args.runs):  # interleaved, so both see the same load on a shared machine
        times["before"].append(run_all(before.attribute, work))
        times["after"].append(run_all(spans.attribute, work))
    lines = sum(c[2].count(b"\n") + c[3].count(b"\n") for c in work)
    symbols = sum(len(c[0]) + len(c[1]) for c in work)
    print(f"{len(work)} changed files, {lines} lines and {symbols} symbols on both sides; "
          f"medians of {args.runs} runs; same records: {same}")
    print(f"{'':24}{'wall':>10}{'cpu':>10}{'cpu a file':>12}")
    medians = {}
    for name, label in (("before", f"attribute() at {args.rev}"), ("after", "attribute() now")):
        wall, cpu = (statistics.median(t[k] for t in times[name]) for k in (0, 1))
        medians[name] = (wall, cpu)
        print(f"{label:24}{wall * 1000:7.1f} ms{cpu * 1000:7.1f} ms{cpu / len(work) * 1e6:8.0f} us")
    (bw, bc), (aw, ac) = medians["before"], medians["after"]
    print(f"speedup: {bw / aw:.1f}x wall, {bc / ac:.1f}x cpu")


if __name__ == "__main__":
    main()
