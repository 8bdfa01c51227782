"""Parse+extract time of symdiff over a real Python tree, beside `ctags -R` on the same tree.

Run: .venv/bin/python benchmarks/extract_speed.py [TREE]   (default: this venv's site-packages)
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from symdiff.extract import extract


def main() -> None:
    default = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else default / "site-packages"
    files = sorted(tree.rglob("*.py"))
    sources = [p.read_bytes() for p in files]  # read first: time parsing, not the disk
    size = sum(map(len, sources))
    lines = sum(s.count(b"\n") for s in sources)

    started = time.perf_counter()
    symbols = sum(len(extract("python", s)) for s in sources)
    ours = time.perf_counter() - started

    started = time.perf_counter()
    subprocess.run(
        ["ctags", "-R", "--languages=Python", "--fields=+neKZ", "-f", "/dev/null", str(tree)],
        check=True,
    )
    theirs = time.perf_counter() - started

    print(f"tree: {tree} — {len(files)} files, {lines} lines, {size / 1e6:.1f} MB")
    print(f"symdiff extract: {ours:.2f} s ({lines / ours / 1e3:.0f} klines/s), {symbols} symbols")
    print(f"ctags -R:        {theirs:.2f} s ({lines / theirs / 1e3:.0f} klines/s)")
    print(f"ratio symdiff/ctags: {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
