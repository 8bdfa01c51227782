"""text_diff on cold 4 MiB pairs of short lines, beside GNU `diff -u` in the same run.

Run: .venv/bin/python benchmarks/textdiff_speed.py [--rounds N] [--edits N] [--default-heap]

Every round makes a fresh pair (about 66,000 lines of 20 to 110 bytes, a few holding UTF-8
letters, then N scattered substitutions, deletions and insertions), writes it to new files for
each contender, and times `diff -u` (a process) and `text_diff` in path mode (the MCP tool:
unified diff, line counts and the ACP diff with its git patch) on files that this process has
never read, with no in-process cache to hit. The page cache holds the files as after any
write; it is not dropped, since that would slow every other process on the machine.

`text_diff` runs as `symdiff serve` runs it, in a process that settled its heap once ready
(`settle_heap(keep_freed_memory=True)`: malloc keeps what one call frees for the next);
`--default-heap` measures it in a process left with glibc's defaults instead, as a script
calling the library would be.

Rounds alternate which contender goes first. Each figure is the median over rounds, in wall
time, in CPU time (this process, or the diff process) and in minor page faults (fresh pages
the kernel zeroes and maps, a large part of the system time of both); the ratio column is the
median of the per-round ratios, which moves far less on a loaded machine than either time does.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from symdiff.diffs.textdiff import READ_CAP, text_diff
from symdiff.record.heap import settle_heap

_LETTERS = "abcdefghijklmnopqrstuvwxyz_"
_UNICODE_WORDS = ["café", "naïve", "→", "Straße", "日本", "µs"]


def short_lines(rng: random.Random, limit: int) -> bytes:
    """Indented lines of words from a 4,000-word vocabulary, mostly distinct, under `limit`."""
    vocabulary = [
        "".join(rng.choice(_LETTERS) for _ in range(rng.randint(2, 9))) for _ in range(4000)
    ]
    lines, size = [], 0
    while True:
        words = rng.choices(vocabulary, k=rng.randint(3, 16))
        if rng.random() < 0.005:
            words.append(rng.choice(_UNICODE_WORDS))
        line = ("    " * rng.randint(0, 3) + " ".join(words) + "\n").encode()
        if rng.random() < 0.05:
            line = b"\n"
        if size + len(line) > limit:
            return b"".join(lines)
        lines.append(line)
        size += len(line)


def scatter_edits(old: bytes, edits: int, rng: random.Random) -> bytes:
    """`old` with `edits` line edits (substitution, insertion, deletion) over the whole text."""
    lines = old.splitlines(keepends=True)
    for _ in range(edits):
        i = rng.randrange(len(lines))
        kind = rng.random()
        if kind < 0.34:
            lines[i] = lines[i].rstrip(b"\n") + b" # changed\n"
        elif kind < 0.67:
            lines.insert(i, b"inserted line %d\n" % rng.randrange(1000))
        else:
            del lines[i]
    return b"".join(lines)[:READ_CAP]


def _usage(children: bool) -> tuple[float, int]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_minflt


def timed(run: Callable[[], object], *, children: bool) -> tuple[float, float, float]:
    """Wall and CPU seconds and minor page faults of one call; the children's for a process."""
    wall, (cpu, faults) = time.perf_counter(), _usage(children)
    run()
    cpu_after, faults_after = _usage(children)
    return time.perf_counter() - wall, cpu_after - cpu, faults_after - faults


def one_round(
    tmp: Path, seed: int, edits: int, gnu_first: bool
) -> dict[str, tuple[float, float, float]]:
    """Time both contenders on one fresh pair, each on its own never-read copy."""
    rng = random.Random(seed)
    old = short_lines(rng, READ_CAP - 4096)
    new = scatter_edits(old, edits, rng)
    paths = {}
    for who in ("gnu", "ours"):
        a, b = tmp / f"{seed}-{who}-a.txt", tmp / f"{seed}-{who}-b.txt"
        a.write_bytes(old)
        b.write_bytes(new)
        paths[who] = (str(a), str(b))
    del old, new
    gnu_a, gnu_b = paths["gnu"]
    ours_a, ours_b = paths["ours"]
    contenders: list[tuple[str, Callable[[], object], bool]] = [
        ("gnu", lambda: subprocess.run(["diff", "-u", gnu_a, gnu_b], capture_output=True), True),
        ("ours", lambda: text_diff(path_a=ours_a, path_b=ours_b, allowed_roots=[tmp]), False),
    ]
    if not gnu_first:
        contenders.reverse()
    figures = {name: timed(run, children=children) for name, run, children in contenders}
    for pair in paths.values():
        for name in pair:
            Path(name).unlink()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--edits", type=int, default=400)
    parser.add_argument("--default-heap", action="store_true", help="glibc's malloc defaults")
    args = parser.parse_args()
    if not args.default_heap:
        settle_heap(keep_freed_memory=True)  # as `symdiff serve` does once it is ready
    rounds = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for i in range(args.rounds):
            rounds.append(one_round(tmp, 1000 + i, args.edits, gnu_first=i % 2 == 0))
    sample = short_lines(random.Random(1000), READ_CAP - 4096)
    lines = sample.count(b"\n")
    print(
        f"{args.rounds} cold pairs of {len(sample):,} bytes, {lines:,} lines, "
        f"{args.edits} scattered edits; medians"
        + ("; glibc's malloc defaults" if args.default_heap else "; heap settled as the server's")
    )
    for measure, index in (("wall", 0), ("CPU", 1)):
        gnu = statistics.median(r["gnu"][index] for r in rounds)
        ours = statistics.median(r["ours"][index] for r in rounds)
        ratio = statistics.median(r["ours"][index] / r["gnu"][index] for r in rounds)
        print(
            f"  {measure:4s} GNU diff -u {gnu * 1000:7.1f} ms   text_diff path mode "
            f"{ours * 1000:7.1f} ms   ratio {ratio:.2f}x"
        )
    gnu_faults = statistics.median(r["gnu"][2] for r in rounds)
    our_faults = statistics.median(r["ours"][2] for r in rounds)
    print(f"  page faults GNU diff -u {gnu_faults:,.0f}   text_diff path mode {our_faults:,.0f}")


if __name__ == "__main__":
    main()
