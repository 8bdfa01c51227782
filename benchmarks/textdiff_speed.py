"""text_diff on two 4 MiB files with scattered edits, against GNU `diff -u` in the same run.

Run: .venv/bin/python benchmarks/textdiff_speed.py [--repeat N] [--edits N]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from symdiff.diffs import linediff
from symdiff.diffs.linediff import diff_lines, unified_diff
from symdiff.diffs.textdiff import READ_CAP, text_diff


def real_source(limit: int) -> bytes:
    """Real Python source from the installed site-packages, whole lines, under `limit` bytes."""
    chunks, size = [], 0
    for path in sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py")):
        data = path.read_bytes()
        chunks.append(data if data.endswith(b"\n") else data + b"\n")
        size += len(chunks[-1])
        if size > limit:
            break
    text = b"".join(chunks)[:limit]
    return text[: text.rfind(b"\n") + 1]


def synthetic_source(limit: int, rng: random.Random) -> bytes:
    """Lines drawn from an 11-word vocabulary: many repeated lines, xdiff's hard case."""
    words = [b"self", b"value", b"return", b"def", b"if", b"for", b"in", b"x", b"items", b"None"]
    lines, size = [], 0
    while size < limit - 200:
        n = rng.randint(2, 10)
        line = b"    " * rng.randint(0, 3) + b" ".join(rng.choice(words) for _ in range(n)) + b"\n"
        lines.append(line)
        size += len(line)
    return b"".join(lines)


def scatter_edits(old: bytes, edits: int, rng: random.Random) -> bytes:
    """`old` with `edits` line edits (change, insert, delete) spread over the whole text."""
    lines = old.splitlines(keepends=True)
    for _ in range(edits):
        i = rng.randrange(len(lines))
        kind = rng.random()
        if kind < 0.33:
            lines[i] = lines[i].rstrip(b"\n") + b" # changed\n"
        elif kind < 0.66:
            lines.insert(i, b"inserted line\n")
        else:
            del lines[i]
    return b"".join(lines)[: READ_CAP - 1]


def best_of(repeat: int, contenders: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The fastest of `repeat` runs of each contender, in seconds.

    Runs are interleaved (one of each per round), so a burst of load on a shared machine
    hits every contender alike instead of skewing one ratio.
    """
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeat):
        for name, fn in contenders.items():
            # The engine caches the last pairs it diffed; every run must do the work afresh.
            linediff._hunk_text.cache_clear()
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def run(label: str, old: bytes, new: bytes, repeat: int) -> None:
    """Time every contender on one pair and print figures and ratios to GNU diff."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.txt", Path(tmp) / "b.txt"
        a.write_bytes(old)
        b.write_bytes(new)
        text_a, text_b = old.decode(), new.decode()
        gnu_name = "GNU diff -u (process, files)"
        figures = best_of(
            repeat,
            {
                gnu_name: lambda: subprocess.run(
                    ["diff", "-u", str(a), str(b)], capture_output=True
                ),
                "text_diff path mode (with acp)": lambda: text_diff(
                    path_a=str(a), path_b=str(b), allowed_roots=[Path(tmp)]
                ),
                "text_diff text mode": lambda: text_diff(text_a=text_a, text_b=text_b),
                "unified_diff (engine)": lambda: unified_diff(old, new),
                "diff_lines (hunks, numstat)": lambda: diff_lines(old, new),
            },
        )
    gnu = figures[gnu_name]
    size = len(unified_diff(old, new))
    print(f"{label}: {len(old):,} and {len(new):,} bytes, diff {size:,} bytes, best of {repeat}")
    for name, secs in figures.items():
        print(f"  {name:32s} {secs * 1000:8.1f} ms   {secs / gnu:5.2f}x GNU diff")


def main() -> None:
    """Build the pairs, time every contender on each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--edits", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    real = real_source(READ_CAP - 4096)
    run(f"real source, {args.edits} edits", real, scatter_edits(real, args.edits, rng), args.repeat)
    synth = synthetic_source(READ_CAP - 4096, rng)
    run(
        f"synthetic repetitive, {args.edits} edits",
        synth,
        scatter_edits(synth, args.edits, rng),
        args.repeat,
    )


if __name__ == "__main__":
    main()
