"""`symdiff hook claude-code` per event kind beside its floor, `python3 -c pass`, in one run.

    .venv/bin/python benchmarks/hook_latency.py [--runs 40] [--no-daemon]

Makes a small indexed git tree, starts `symdiff watch` on it (unless --no-daemon), and runs
each event's hook in a fresh process, alternating with `python3 -c pass` (the same
interpreter), printing the p50 and p90 of each and the ratio of p50s. Issue 24 asks for p50 at
most 3x the floor on the common path (a daemon runs). UserPromptSubmit after a turn reads the
database for its context: measured apart ("prompt+ctx"). Without a daemon PostToolUse records
the tree itself, as `symdiff index` would.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
SYMDIFF = str(Path(PYTHON).with_name("symdiff"))


def _time(cmd: list[str], stdin: bytes = b"") -> float:
    started = time.perf_counter()
    subprocess.run(cmd, input=stdin, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _event(root: Path, name: str, session: str, n: int, **extra: object) -> bytes:
    body = {"session_id": session, "transcript_path": "/t", "cwd": str(root),
            "hook_event_name": name, "permission_mode": "default", **extra}
    if name in ("PreToolUse", "PostToolUse"):
        body.update(tool_name="Edit", tool_use_id=f"toolu_{n}",
                    tool_input={"file_path": str(root / "a.py")})
    return json.dumps(body).encode()


def _ready(root: Path, proc: subprocess.Popen[bytes]) -> None:
    status = root / ".symdiff" / "daemon.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = json.loads(status.read_text())
            if data.get("pid") == proc.pid and data.get("progress") is None:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise SystemExit("the daemon did not get ready")


def _p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--no-daemon", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "ws").resolve()
        root.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        for i in range(20):
            (root / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (root / "a.py").write_text("def a():\n    return 1\n")
        subprocess.run([SYMDIFF, "index", str(root)], check=True, capture_output=True)
        daemon = None
        if not args.no_daemon:
            daemon = subprocess.Popen([SYMDIFF, "watch", "-q", "--no-history", str(root)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _ready(root, daemon)
        hook = [SYMDIFF, "hook", "claude-code", "--root", str(root)]
        kinds = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
        times: dict[str, list[float]] = {k: [] for k in (*kinds, "prompt+ctx", "floor")}
        try:
            for n in range(args.runs):
                session = f"bench-{n}"
                times["floor"].append(_time([PYTHON, "-c", "pass"]))
                for kind in kinds:
                    times[kind].append(_time(hook, _event(root, kind, session, n)))
                # A second prompt after a person's save: the context path reads the database.
                (root / "m0.py").write_text(f"def f0():\n    return {n + 100}\n")
                times["prompt+ctx"].append(
                    _time(hook, _event(root, "UserPromptSubmit", session, n)))
                _time(hook, _event(root, "Stop", session, n))
        finally:
            if daemon is not None:
                daemon.terminate()
                daemon.wait(30)
    floor = statistics.median(times["floor"]) * 1000
    mode = "no daemon" if args.no_daemon else "daemon running"
    print(f"symdiff hook claude-code, {args.runs} runs each, {mode}")
    print(f"{'event':<18} {'p50 ms':>8} {'p90 ms':>8} {'p50/floor':>10}")
    for kind, values in times.items():
        p50 = _p(values, 0.5)
        print(f"{kind:<18} {p50:8.1f} {_p(values, 0.9):8.1f} {p50 / floor:10.2f}")


if __name__ == "__main__":
    main()
