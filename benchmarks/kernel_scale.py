"""Kernel-scale figures: the Linux tree from Debian's `linux-source` package, beside `ctags -R`.

Downloads the tree once (`apt-get download linux-source-<v>`, unpacked into
benchmarks/.cache/linux/), unpacks a fresh copy into a temporary directory, then measures:

- the cold baseline (`symdiff index` on an empty SQLite database): wall time, files/s, MB/s,
  peak RSS, database size; and `ctags -R` on the same copy in the same run;
- the daemon's start on that baselined tree (`symdiff watch`, a real process): time until it
  logs that it is watching (the start reconcile of every file plus one inotify watch per
  directory), its RSS once settled, and its RSS after the saves;
- save -> queryable: `--saves` appends to random `.c` files, each timed from the write's
  return until its record is in the database (polled every millisecond).

    python benchmarks/kernel_scale.py [--version 6.1] [--tree DIR] [--saves 100]

`--tree DIR` uses an already unpacked tree instead of the download (it is copied first).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from _corpus import CACHE

from symdiff.store import Store


def linux_tarball(version: str) -> Path:
    """Debian's linux-source tarball, downloaded with apt-get on first use."""
    where = CACHE / "linux"
    tarball = where / f"linux-source-{version}.tar.xz"
    if tarball.exists():
        return tarball
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", f"linux-source-{version}"], cwd=where, check=True)
    deb = next(where.glob(f"linux-source-{version}_*.deb"))
    unpacked = where / "deb"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    shutil.move(str(unpacked / "usr" / "src" / tarball.name), tarball)
    shutil.rmtree(unpacked)
    deb.unlink()
    return tarball


def fresh_tree(args: argparse.Namespace, into: Path) -> Path:
    """A fresh copy of the tree under `into`."""
    if args.tree:
        work = into / "linux"
        shutil.copytree(args.tree, work, symlinks=True)
        return work
    subprocess.run(["tar", "-xf", str(linux_tarball(args.version)), "-C", str(into)], check=True)
    root = next(p for p in into.iterdir() if p.is_dir() and p.name.startswith("linux"))
    drop_debian_block(root / ".gitignore")
    return root


def drop_debian_block(gitignore: Path) -> None:
    """Cut Debian's packaging block (`/*`: "ignore everything at the top level") from the tree's
    top `.gitignore`: it is Debian's rule for its packaging repository, not the kernel's, and
    would make symdiff (as git) ignore the whole tree."""
    text = gitignore.read_text()
    cut = text.find("# Debian packaging")
    if cut >= 0:
        gitignore.write_text(text[: text.rfind("#\n", 0, cut)])


def tree_size(root: Path) -> tuple[int, int, int]:
    files = size = dirs = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".symdiff")]
        dirs += 1
        for name in filenames:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size, dirs


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    """Wall time and the peak RSS (KiB) of the children so far."""
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def count(store: Store, root: Path) -> int:
    ws = store.find_workspace(str(root), "bench")
    return 0 if ws is None else store.count_changes(ws.id)


def drain(stream: IO[str]) -> None:
    """Read the daemon's log to its end, so that a full pipe never blocks it."""
    for _ in stream:
        pass


def start_daemon(root: Path, db: str) -> tuple[subprocess.Popen[str], float]:
    """`symdiff watch` as a real process; the seconds until it logs that it watches."""
    env = dict(os.environ, SYMDIFF_HOST="bench")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "symdiff", "watch", str(root), "--db", db, "--no-history"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if "watching" in line:
            ready = time.perf_counter() - start
            threading.Thread(target=drain, args=(proc.stderr,), daemon=True).start()
            return proc, ready
    raise RuntimeError(f"the daemon exited ({proc.wait()}) before it watched")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000


def saves(root: Path, db: str, n: int) -> list[float]:
    sources = [p for p in root.rglob("*.c") if ".symdiff" not in p.parts]
    random.seed(7)
    out = []
    with Store(db, read_only=True) as store:
        have = count(store, root)
        for k in range(n):
            time.sleep(random.uniform(0.0, 0.05))
            path = random.choice(sources)
            with path.open("a") as f:
                f.write(f"/* save {k} */\n")
            have += 1
            start = time.perf_counter()
            while count(store, root) < have:
                if time.perf_counter() - start > 60:
                    raise TimeoutError(f"save {k} of {path} not recorded after 60 s")
                time.sleep(0.001)
            out.append(time.perf_counter() - start)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="6.1", help="linux-source-VERSION (Debian's package)")
    ap.add_argument("--tree", type=Path, help="an unpacked tree to use instead of the download")
    ap.add_argument("--saves", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        base = Path(tmp)
        root = fresh_tree(args, base)
        files, size, dirs = tree_size(root)
        print(f"tree: {root.name}: {files:,} files, {dirs:,} directories, {size / 1e9:.2f} GB; "
              f"load average {os.getloadavg()[0]:.1f}")
        subprocess.run(["sync"], check=True)
        db_path = base / "index.db"
        db = f"sqlite:///{db_path}"
        env_host = os.environ.get("SYMDIFF_HOST")
        os.environ["SYMDIFF_HOST"] = "bench"
        try:
            t, peak = timed([sys.executable, "-m", "symdiff", "index", str(root), "--db", db], root)
        finally:
            if env_host is None:
                os.environ.pop("SYMDIFF_HOST")
            else:
                os.environ["SYMDIFF_HOST"] = env_host
        db_size = sum(p.stat().st_size for p in base.glob("index.db*"))
        print(f"symdiff index (cold baseline): {t:.1f} s ({files / t:,.0f} files/s, "
              f"{size / 1e6 / t:.1f} MB/s), peak RSS {peak / 1024:.0f} MiB, "
              f"database {db_size / 1e6:.0f} MB")
        ct, _ = timed(["ctags", "-R", "-f", str(base / "tags"), "."], root)
        print(f"ctags -R (universal-ctags), same tree: {ct:.1f} s; ratio symdiff / ctags "
              f"{t / ct:.2f}x")
        proc, ready = start_daemon(root, db)
        try:
            time.sleep(5)
            settled = rss_mib(proc.pid)
            print(f"symdiff watch start on the baselined tree: watching after {ready:.1f} s; "
                  f"RSS {settled:.0f} MiB once settled")
            lat = saves(root, db, args.saves)
            print(f"save -> queryable, {args.saves} saves to random .c files: "
                  f"p50 {pct(lat, 0.5):.1f} ms, p90 {pct(lat, 0.9):.1f} ms, "
                  f"p99 {pct(lat, 0.99):.1f} ms; daemon RSS after them {rss_mib(proc.pid):.0f} MiB")
        finally:
            proc.terminate()
            proc.wait(60)


if __name__ == "__main__":
    main()
