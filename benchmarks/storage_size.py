"""Database size on a real history beside `git gc --aggressive`'s pack of the same commits.

Replays the last N first-parent commits of a git repository into a work tree (one `git checkout`
per commit, oldest first) and records each with the real indexer as the daemon records a
checkout batch (`indexer.reconcile` over the tree, provenance from `origins.BatchOrigins`: the
first pass is the baseline, every later one `git` with HEAD before and after). Then builds a
repository holding exactly those N trees (the same trees committed as a linear history, each
commit with its original message and author), packs it with `git gc --aggressive`, and prints
both sizes side by side, with what takes room in the database, and the read time of the
deepest delta chain.

    python benchmarks/storage_size.py /path/to/repo [--commits 300] [--ref HEAD]

The benchmark runs git as a subprocess; the product never does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from symdiff.config import Settings
from symdiff.impact.index import build, missing
from symdiff.parse.version import extractor_version
from symdiff.record.indexer import reconcile
from symdiff.record.origins import BatchOrigins
from symdiff.store import Mutation, Store, compact
from symdiff.store.blobs import git_binary, pack
from symdiff.store.deltas import against


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                         env=None if env is None else {**os.environ, **env})  # fmt: skip
    return out.stdout


def _replay(work: Path, commits: list[str], db: Path) -> tuple[float, float, int]:
    """Check out each commit in turn and record it; (seconds spent recording, seconds spent
    building the reference index after the baseline, records)."""
    _git(work, "checkout", "-q", "--detach", commits[0])
    url = f"sqlite:///{db}"
    settings = Settings.resolve(work, db=url)
    origins = BatchOrigins(work)
    spent = 0.0
    with Store(url) as store:
        origins.next(full=True)
        start = time.perf_counter()
        reconcile(store, settings)  # the baseline: every file's snapshot, no records
        spent += time.perf_counter() - start
        # The daemon's build after its start pass (daemon._build_refindex): every file's
        # symbols and references, stored whole.
        start = time.perf_counter()
        ws = store.workspaces()[0]
        version = extractor_version()
        build(store, version, missing(store, version, store.file_states(ws.id)), read=False)
        indexed = time.perf_counter() - start
        for i, sha in enumerate(commits[1:], start=1):
            _git(work, "checkout", "-q", "--detach", sha)
            provenance = origins.next(full=False)
            start = time.perf_counter()
            reconcile(store, settings, provenance=provenance)
            spent += time.perf_counter() - start
            if i % 50 == 0:
                print(f"  replayed {i}/{len(commits) - 1}", file=sys.stderr)
        records = store.count_changes(ws.id)
    return spent, indexed, records


def _pack(source: Path, commits: list[str], tmp: Path) -> tuple[int, int]:
    """Sizes of the .pack and .idx of a repository holding exactly these commits' trees."""
    linear = tmp / "linear.git"
    _git(tmp, "init", "-q", "--bare", str(linear))
    parent: str | None = None
    for sha in commits:
        meta = _git(source, "log", "-1", "--format=%T%n%an%n%ae%n%aI%n%cn%n%ce%n%cI%n%B", sha)
        tree, an, ae, ad, cn, ce, cd, message = meta.split("\n", 7)
        env = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
               "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
        args = ["commit-tree", tree, "-m", message or "-"] + (["-p", parent] if parent else [])
        parent = _git(source, *args, env=env).strip()
    assert parent is not None
    _git(source, "update-ref", "refs/symdiff-bench/linear", parent)
    _git(linear, "fetch", "-q", str(source), "refs/symdiff-bench/linear:refs/heads/main")
    _git(source, "update-ref", "-d", "refs/symdiff-bench/linear")
    _git(linear, "gc", "-q", "--aggressive", "--prune=now")
    packs = list((linear / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1, packs
    loose = _git(linear, "count-objects", "-v")
    assert "count: 0" in loose, loose
    return packs[0].stat().st_size, packs[0].with_suffix(".idx").stat().st_size


def _breakdown(db: Path) -> list[tuple[str, int]]:
    """Bytes of pages (with their free space) each table and index takes, largest first."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                           "ORDER BY 2 DESC").fetchall()  # fmt: skip
    finally:
        con.close()
    return [(str(n), int(s)) for n, s in rows]


def _deepest_read(db: Path) -> tuple[int, float, int] | None:
    """(chain depth, best read time in ms, size) of the blob with the longest delta chain."""
    con = sqlite3.connect(db)
    try:
        # Hashes are stored as their bytes (revision 0007); the Store takes them as hex.
        base = {h.hex(): b and b.hex() for h, b in con.execute("SELECT hash, base FROM blobs")}
        size = {h.hex(): s for h, s in con.execute("SELECT hash, size FROM blobs")}
    except sqlite3.OperationalError:  # a schema without deltas
        return None
    finally:
        con.close()
    depth: dict[str, int] = {}

    def walk(h: str) -> int:
        n, seen = 0, []
        while h in base and base[h] is not None and h not in depth:
            seen.append(h)
            h = base[h]
        n = depth.get(h, 0)
        for s in reversed(seen):
            n += 1
            depth[s] = n
        return n

    deepest = max(base, key=walk)
    if walk(deepest) == 0:
        return None
    with Store(f"sqlite:///{db}", read_only=True) as store:
        best = float("inf")
        for _ in range(20):
            start = time.perf_counter()
            store.get_blob(deepest)
            best = min(best, time.perf_counter() - start)
    return walk(deepest), best * 1000, size[deepest]


def _text_files(work: Path) -> list[bytes]:
    """The contents of the work tree's text files (as the index would store them)."""
    texts = []
    for dirpath, dirnames, filenames in os.walk(work):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            if len(data) <= 4 << 20 and not git_binary(data):
                texts.append(data)
    return texts


def _levels(texts: list[bytes]) -> tuple[int, int, list[tuple[int, int, float]]]:
    """Whole snapshots of these files at zstd levels 3, 9 and 19: (files, bytes,
    [(level, compressed bytes, seconds)])."""
    out = []
    for level in (3, 9, 19):
        compressor = zstandard.ZstdCompressor(level=level)
        start = time.perf_counter()
        size = sum(len(compressor.compress(data)) for data in texts)
        out.append((level, size, time.perf_counter() - start))
    return len(texts), sum(map(len, texts)), out


def _worst_read(tmp: Path, texts: list[bytes]) -> tuple[int, int, float]:
    """A file just under the 4 MiB read cap (the tree's text files end to end), edited in the
    middle version after version until its chain is re-based: (size, deepest chain, best read
    time in ms of its deepest version)."""
    content = b"".join(texts)
    while len(content) < 4_000_000:
        content += content
    content = content[:4_000_000]
    url = f"sqlite:///{tmp / 'worst.db'}"
    with Store(url) as store:
        ws = store.ensure_workspace("/w", "h").id
        before: str | None = None
        deepest = (0, "")
        for i in range(64):
            mid = len(content) // 2
            content = content[:mid] + b"# edit %d\n" % i + content[mid:]
            whole = pack(content)
            old = store.snapshot(before) if before else None
            blob = against(whole, content, before, old) if before else whole
            store.apply(ws, [Mutation(blobs=(blob,))])
            before = whole.hash
            depth = store.snapshot(whole.hash).depth  # type: ignore[union-attr]
            if depth < deepest[0]:
                break
            deepest = (depth, whole.hash)
        best = float("inf")
        for _ in range(10):
            start = time.perf_counter()
            store.get_blob(deepest[1])
            best = min(best, time.perf_counter() - start)
    return len(content), deepest[0], best * 1000


def _db_bytes(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("repo", type=Path, help="a git repository (bare or not)")
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--keep", type=Path, help="copy the database here afterwards")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        work = tmp / "work"
        _git(tmp, "clone", "-q", "--no-checkout", str(args.repo.resolve()), str(work))
        head = _git(work, "rev-parse", args.ref).strip()
        commits = _git(work, "rev-list", "--first-parent", f"--max-count={args.commits}",
                       head).split()[::-1]  # fmt: skip
        print(f"repository: {args.repo} at {head}: last {len(commits)} first-parent commits "
              f"({commits[0][:12]}..{commits[-1][:12]})")  # fmt: skip
        db = tmp / "state" / "index.db"
        spent, indexed, records = _replay(work, commits, db)
        db_size = _db_bytes(db)
        con = sqlite3.connect(db)
        snapshot = con.execute("SELECT coalesce(sum(length(data)), 0) FROM blobs").fetchone()[0]
        blobs = con.execute("SELECT count(*) FROM blobs").fetchone()[0]
        codecs = con.execute("SELECT codec, count(*), coalesce(avg(length(data)), 0) FROM blobs "
                             "GROUP BY codec ORDER BY 2 DESC").fetchall()  # fmt: skip
        # Revision 0006: one provenance row per distinct (origin_info, git), shared by records;
        # 0011 stores the texts compact (store/compact.py): the texts' length and the stored.
        json_rows, json_total, text_total = 0, 0, 0
        for info, git in con.execute("SELECT origin_info, git FROM provenance"):
            json_rows += 1
            for value in (info, git):
                if value is not None:
                    json_total += len(value)
                    text_total += len(compact.decode(value) if isinstance(value, bytes)
                                      else value)  # fmt: skip
        json_bytes = json_total / max(records, 1)
        names = con.execute("SELECT count(*) FROM symbol_names").fetchone()[0]
        symbol_rows = con.execute("SELECT count(*) FROM symbol_changes").fetchone()[0]
        facts = con.execute(
            "SELECT kind, base IS NULL, count(*), coalesce(sum(length(data)), 0) FROM blob_facts "
            "JOIN fact_sets ON fact_sets.id = set_id GROUP BY 1, 2 ORDER BY 1 DESC, 2 DESC"
        ).fetchall()
        freelist = con.execute("PRAGMA freelist_count").fetchone()[0]
        page = con.execute("PRAGMA page_size").fetchone()[0]
        con.close()
        breakdown = _breakdown(db)
        vacuumed = tmp / "vacuumed.db"
        con = sqlite3.connect(db)
        con.execute(f"VACUUM INTO '{vacuumed}'")
        con.close()
        vacuumed_size = vacuumed.stat().st_size
        pack, idx = _pack(work, commits, tmp)
        texts = _text_files(work)
        levels = _levels(texts)
        worst = _worst_read(tmp, texts)
        deepest = _deepest_read(db)
        if args.keep:
            shutil.copy(db, args.keep)
    print(f"recording: {spent:.1f} s for {len(commits)} commits ({records} change records, "
          f"{blobs} blobs); the reference index's build after the baseline: {indexed:.1f} s")
    print(f"database: {db_size:,} bytes ({freelist * page:,} bytes in free pages); "
          f"after VACUUM: {vacuumed_size:,} bytes")
    print(f"snapshot data (sum of blobs.data): {snapshot:,} bytes; by codec: " + ", ".join(
        f"{codec} {n} (avg {avg:,.0f} bytes)" for codec, n, avg in codecs))
    print(f"origin_info + git JSON: {json_rows} provenance rows, {json_total:,} bytes stored "
          f"for {text_total:,} of text ({json_bytes:.0f} bytes a record on average)")
    print(f"symbol rows: {symbol_rows:,} naming {names:,} distinct (name, kind)")
    print("facts by content (blob_facts): " + ", ".join(
        f"{kind} {'whole' if whole else 'deltas'} {n:,} rows, {size:,} bytes"
        for kind, whole, n, size in facts))
    print(f"git gc --aggressive pack: {pack:,} bytes (+ {idx:,} bytes .idx)")
    print(f"ratio snapshot data / pack: {snapshot / pack:.2f}x   (target <= 1.5x)")
    print(f"ratio database / pack:      {db_size / pack:.2f}x   (target <= 2.5x; after "
          f"VACUUM {vacuumed_size / pack:.2f}x)")
    print("room by table and index (pages, free space inside them included):")
    for name, size in breakdown:
        print(f"  {name:40} {size:>12,}")
    files, size, by_level = levels
    print(f"whole snapshots of the last commit's {files} text files ({size:,} bytes):")
    for level, packed, seconds in by_level:
        print(f"  zstd level {level:2}: {packed:>10,} bytes in {seconds * 1000:8.1f} ms")
    print(f"a {worst[0]:,}-byte file edited {worst[1] + 1} times: its deepest version "
          f"({worst[1]} deltas) read in {worst[2]:.1f} ms (best of 10)")
    if deepest is not None:
        depth, ms, size = deepest
        print(f"deepest delta chain: {depth} deltas, read in {ms:.2f} ms (file of {size:,} "
              "bytes, best of 20)")


if __name__ == "__main__":
    main()
