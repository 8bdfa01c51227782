"""The history import beside `git log --first-parent -M --numstat` over the same commits.

    .venv/bin/python benchmarks/history_speed.py REPO [--since 720h | --max-commits N] [--runs N]

REPO is any git repository (bare or not; e.g. a clone of elixir-lang/elixir). It is cloned
(`--no-checkout --shared`) into a temporary directory; the window ends at the newest commit, so
the figures do not drift with the date. Prints the wall time of `import_history` into a fresh
SQLite database (the whole import: git's diffs, line counts, symbols, storing) beside the git
command that prints the same files and counts, the import without symbol extraction, and the
floor of any tree-sitter-based import: tree-sitter's parse alone of every distinct version of
the changed files, each once, and of the first version met of each file alone (a lower bound:
the other versions may be re-parsed from its tree); and tree-sitter's parse of every version
chained as the import chains them (each file's first version met parsed fresh, every later one
re-parsed from the tree of the one before it, with the edits `symdiff.parse.reparse` gives
tree-sitter): what any tree-sitter-based import must spend, whatever else it does. Wall and CPU
time (this process's and git's, which is a child): CPU time is what other work on a shared
machine disturbs least.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pygit2
from _caches import cold
from pygit2.enums import SortMode
from tree_sitter_language_pack import get_parser

from symdiff.attribute import filechange
from symdiff.config import Settings
from symdiff.duration import parse_go_duration
from symdiff.git.importer import import_history
from symdiff.parse import reparse
from symdiff.parse.extract import extract
from symdiff.parse.languages import language_for
from symdiff.parse.pool import chains as pool_chains
from symdiff.parse.shelf import SymbolShelf
from symdiff.store import Store

T = TypeVar("T")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


Times = tuple[float, float]  # (wall, cpu) seconds


def clocked(fn: Callable[[], T]) -> tuple[Times, T]:
    """Wall time and CPU time (this process's and its children's: git runs as a child)."""
    before, started = os.times(), time.perf_counter()
    out = fn()
    wall, after = time.perf_counter() - started, os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    return (wall, cpu), out


def median(runs: list[Times]) -> Times:
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def run_import(clone: Path, db: Path, since: timedelta | None, max_commits: int | None,
               now: datetime, *, fresh: bool = True) -> tuple[Times, int, int]:  # fmt: skip
    """One import into `db` (emptied first unless not `fresh`), this process's in-memory
    symbol caches emptied first: what a new process would spend."""
    settings = Settings.resolve(str(clone), db=f"sqlite:///{db}")
    if fresh:
        db.unlink(missing_ok=True)
    cold()  # every run parses as the first one does
    with Store(settings.db_url) as store:
        times, report = clocked(lambda: import_history(settings, store, since=since,
                                                       max_commits=max_commits, now=now))
        return times, report.commits, report.recorded


def versions_of(clone: Path, commits: int) -> tuple[dict[str, tuple[str, bytes]],
                                                  list[list[str]]]:  # fmt: skip
    """The distinct text versions (by blob id: language, bytes) of the files symdiff parses in
    the newest `commits` first-parent commits, and their chains as the import forms them: the
    blobs linked by a change from one to the other (across renames too), each chain in the
    order its blobs were met, newest first."""
    repo = pygit2.Repository(str(clone))
    walker = repo.walk(repo.head.target, SortMode.NONE)
    walker.simplify_first_parent()
    blobs: dict[str, tuple[str, bytes]] = {}
    links: list[tuple[bytes | None, bytes | None]] = []  # each change's (new, old) blob ids
    for commit in itertools.islice(walker, commits):
        base = commit.parents[0].tree if commit.parents else None
        diff = base.diff_to_tree(commit.tree) if base else commit.tree.diff_to_tree(swap=True)
        diff.find_similar()
        for patch in diff.deltas:
            link: list[bytes | None] = []
            for side in (patch.new_file, patch.old_file):  # newest first
                language = language_for(side.path)
                oid = str(side.id)
                if language is None or side.id.raw == bytes(20):
                    link.append(None)
                    continue
                if oid not in blobs:
                    data = repo[side.id].read_raw()
                    if b"\0" in data:
                        link.append(None)
                        continue
                    blobs[oid] = (language, data)
                link.append(oid.encode() if oid in blobs else None)
            links.append((link[0], link[1]))
    chains = []
    for group in pool_chains(links):
        met = dict.fromkeys(oid.decode() for i in group for oid in links[i] if oid is not None)
        if met:
            chains.append(list(met))
    return blobs, chains


def chained_floor(clone: Path, commits: int, *, extracting: bool = False) -> tuple[Times, int]:
    """Seconds that tree-sitter alone takes to parse every version of each file in a chain:
    the first met fresh, each later one re-parsed from the tree of the one before it (edited
    by `reparse.edited`, as the import edits it; a tree with errors is not re-used, as in
    symdiff); and how many parses.

    `extracting`: symdiff's `extract` of each version instead (its parse, chained the same way,
    and its walk of the definitions), in this process, its caches emptied first: the part of
    an import that no pool can make cheaper, only spread over the cores."""
    blobs, paths = versions_of(clone, commits)
    parsers = {lang: get_parser(lang) for lang, _ in blobs.values()}  # type: ignore[arg-type]
    if extracting:
        cold()

        def extracted() -> int:
            done = 0
            for oids in paths:
                before = None
                for oid in oids:
                    language, text = blobs[oid]
                    extract(language, text, base=before)
                    before = text
                    done += 1
            return done

        return clocked(extracted)

    def run() -> int:
        done = 0
        for oids in paths:
            before = None  # (language, tree, text) of the version before, while re-usable
            for oid in oids:
                language, text = blobs[oid]
                parser = parsers[language]
                if before is None or before[0] != language:
                    tree = parser.parse(text)
                else:
                    tree = parser.parse(text, reparse.edited(before[1], before[2], text))
                    if tree.root_node.has_error:
                        tree = parser.parse(text)
                before = None if tree.root_node.has_error else (language, tree, text)
                done += 1
        return done

    return clocked(run)


def parse_floor(clone: Path, commits: int, *, once: bool = False) -> tuple[Times, int]:
    """Seconds that tree-sitter alone takes to parse every distinct version (old and new) of the
    files symdiff parses in the newest `commits` first-parent commits, each once; and how many.

    `once`: only the first version met of each path (newest first), a lower bound of any
    tree-sitter-based import, which may re-parse a file's other versions from its tree."""
    repo = pygit2.Repository(str(clone))
    walker = repo.walk(repo.head.target, SortMode.NONE)
    walker.simplify_first_parent()
    blobs: dict[str, tuple[str, bytes]] = {}
    firsts: dict[str, str] = {}  # path -> the blob id of the first version met
    for commit in itertools.islice(walker, commits):
        base = commit.parents[0].tree if commit.parents else None
        diff = base.diff_to_tree(commit.tree) if base else commit.tree.diff_to_tree(swap=True)
        diff.find_similar()
        for patch in diff.deltas:
            for side in (patch.old_file, patch.new_file):
                language = language_for(side.path)
                if language is None or side.id.raw == bytes(20) or str(side.id) in blobs:
                    continue
                data = repo[side.id].read_raw()
                if b"\0" not in data:
                    blobs[str(side.id)] = (language, data)
                    firsts.setdefault(side.path, str(side.id))
    parsers = {lang: get_parser(lang) for lang, _ in blobs.values()}  # type: ignore[arg-type]
    chosen = blobs if not once else {oid: blobs[oid] for oid in firsts.values()}
    times, _ = clocked(lambda: [parsers[lang].parse(data) for lang, data in chosen.values()])
    return times, len(chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--since", default=None, help="a Go duration (default 720h)")
    parser.add_argument("--max-commits", type=int, default=None)
    parser.add_argument("--runs", type=int, default=1, help="median of this many runs")
    args = parser.parse_args()
    since_text = args.since or (None if args.max_commits else "720h")
    since = None if since_text is None else timedelta(
        microseconds=parse_go_duration(since_text) // 1000)
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        git(Path(tmp), "clone", "-q", "--no-checkout", "--shared", str(args.repo), str(clone))
        newest = datetime.fromtimestamp(int(git(clone, "log", "-1", "--format=%ct")), UTC)
        limit = []
        if since is not None:
            limit.append(f"--since={int((newest - since).timestamp())}")
        if args.max_commits:
            limit.append(f"--max-count={args.max_commits}")
        log_args = ["log", "--first-parent", "--diff-merges=first-parent", "-M", "--numstat",
                    "--format=%x00%H", *limit, "HEAD", "--"]  # fmt: skip
        peers = [clocked(lambda: git(clone, *log_args)) for _ in range(args.runs)]
        peer, out = median([t for t, _ in peers]), peers[0][1]
        commits = out.count("\0")
        lines = sum(1 for ln in out.splitlines() if ln and not ln.startswith("\0"))
        db = Path(tmp) / "a.db"
        runs = [run_import(clone, db, since, args.max_commits, newest) for _ in range(args.runs)]
        ours, walked, recorded = median([r[0] for r in runs]), runs[0][1], runs[0][2]
        # A second import of a window twice as long, into the same database: the first window's
        # records are skipped unread and every blob met before is read, not parsed.
        wider = None if since is None else since * 2
        more = None if args.max_commits is None else args.max_commits * 2
        again = run_import(clone, db, wider, more, newest, fresh=False)[0]
        longer = run_import(clone, db, wider, more, newest)[0]
        real, fill, head = filechange.file_symbols, SymbolShelf.fill, SymbolShelf.head_start
        filechange.file_symbols = lambda *a: ()
        setattr(SymbolShelf, "fill", lambda *a: 0)  # noqa: B010  (the batch parse too,
        setattr(SymbolShelf, "head_start", lambda *a: None)  # noqa: B010  and its head start)
        try:
            bare = median([run_import(clone, db, since, args.max_commits, newest)[0]
                           for _ in range(args.runs)])  # fmt: skip
        finally:
            filechange.file_symbols = real
            setattr(SymbolShelf, "fill", fill)  # noqa: B010
            setattr(SymbolShelf, "head_start", head)  # noqa: B010
        floor = median([parse_floor(clone, walked)[0] for _ in range(args.runs)])
        versions = parse_floor(clone, walked)[1]
        least = median([parse_floor(clone, walked, once=True)[0] for _ in range(args.runs)])
        paths = parse_floor(clone, walked, once=True)[1]
        chained = median([chained_floor(clone, walked)[0] for _ in range(args.runs)])
        links = chained_floor(clone, walked)[1]
        walked_too = median([chained_floor(clone, walked, extracting=True)[0]
                             for _ in range(args.runs)])  # fmt: skip
        window = f"{since_text} before the newest commit" if since_text else ""
        print(f"{args.repo.name}: {walked} first-parent commits {window}"
              f"{'' if not args.max_commits else f' (at most {args.max_commits})'}; "
              f"{recorded} records (git log: {commits} commits, {lines} numstat lines); "
              f"median of {args.runs}")
        print("                                         wall      cpu")
        rows = [("history import", ours), ("  without symbols", bare),
                ("git log --first-parent -M --numstat", peer),
                (f"tree-sitter parse alone ({versions} versions)", floor),
                (f"  one version per file ({paths})", least),
                (f"  chained, as the import re-parses ({links})", chained),
                ("  the same, with symdiff's extraction", walked_too),
                ("import of twice the window, fresh", longer),
                ("  the same after the first window's import", again)]  # fmt: skip
        for label, (wall, cpu) in rows:
            print(f"{label:38} {wall:7.2f} s {cpu:7.2f} s")
        for k, name in ((0, "wall"), (1, "cpu")):
            print(f"ratio to git log, {name}: {ours[k] / peer[k]:.2f}x (without symbols "
                  f"{bare[k] / peer[k]:.2f}x, parse alone {floor[k] / peer[k]:.2f}x, one "
                  f"version per file {least[k] / peer[k]:.2f}x)")
            print(f"ratio to its floor (one version per file), {name}: "
                  f"{ours[k] / least[k]:.2f}x (target 1.5x); to the chained parse "
                  f"{ours[k] / chained[k]:.2f}x")


if __name__ == "__main__":
    main()
