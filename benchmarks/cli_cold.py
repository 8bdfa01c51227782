"""Cold `symdiff changes --json` beside its floor, `python -c "import sqlalchemy, click"`.

    .venv/bin/python benchmarks/cli_cold.py [--runs 30]

Indexes a small tree with the real CLI (three Python files, one edit), then runs the two
commands alternately, each in a fresh process, and prints the median and p90 wall time of each
and their ratio. Triage scripts call the CLI in loops: the read side must pay for reading only.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
SYMDIFF = str(Path(PYTHON).with_name("symdiff"))


def _time(cmd: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        for i in range(3):
            (tree / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        subprocess.run([SYMDIFF, "index", "."], cwd=tree, check=True, capture_output=True)
        (tree / "m0.py").write_text("def f0():\n    return 10\n")
        subprocess.run([SYMDIFF, "index", "."], cwd=tree, check=True, capture_output=True)
        out = subprocess.run([SYMDIFF, "changes", "--json"], cwd=tree, check=True,
                             capture_output=True, text=True).stdout
        assert '"m0.py"' in out, out
        cli = [SYMDIFF, "changes", "--json"]
        floor = [PYTHON, "-c", "import sqlalchemy, click"]
        for cmd in (cli, floor):  # warm the page cache
            _time(cmd, tree)
        times: dict[str, list[float]] = {"cli": [], "floor": []}
        for _ in range(args.runs):
            times["cli"].append(_time(cli, tree))
            times["floor"].append(_time(floor, tree))
    for name, label in (("cli", "symdiff changes --json"),
                        ("floor", 'python -c "import sqlalchemy, click"')):
        xs = sorted(times[name])
        p90 = xs[int(0.9 * (len(xs) - 1))]
        print(f"{label:40} median {statistics.median(xs) * 1000:6.1f} ms   "
              f"p90 {p90 * 1000:6.1f} ms")
    ratio = statistics.median(times["cli"]) / statistics.median(times["floor"])
    print(f"ratio (median): {ratio:.2f}x  (target: at most 1.50x)")


if __name__ == "__main__":
    main()
