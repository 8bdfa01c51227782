"""Oracle: attribute() of this tree against a git revision's, on every changed file of real commits.

Run: .venv/bin/python benchmarks/attribution_oracle.py REPO [--commits N] [--rev main]
     .venv/bin/python benchmarks/attribution_oracle.py --django

REPO is any git repository: its last N first-parent commits (default 300) are each compared with
their first parent; every added, deleted, modified or renamed file in a language symdiff parses
is attributed by both modules — this tree's `symdiff.attribute.spans` and REV's
(benchmarks/_baseline.py) — from the same symbols, sources and line diff, and every record is
compared (all fields, in order). `--django` does the same on the .py files of consecutive Django
sdists (DJANGO_PAIRS, downloaded into benchmarks/.cache/sdists like attribution_accuracy.py's),
paired by path. Prints the counts and the first mismatches; exits 1 unless there are none.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pygit2
from _baseline import baseline_spans

from symdiff.attribute import spans
from symdiff.diffs.linediff import diff_lines, is_binary
from symdiff.model import Symbol
from symdiff.parse.extract import extract_uncached
from symdiff.parse.languages import language_for

DJANGO_PAIRS: tuple[tuple[str, str], ...] = (
    ("5.2.7", "5.2.8"),
    ("5.1.14", "5.2.8"),
    ("4.2.26", "5.0.14"),
)

# (language, old bytes or None, new bytes or None, label)
FilePair = tuple[str, bytes | None, bytes | None, str]


@dataclass
class Tally:
    files: int = 0
    records: int = 0
    mismatches: list[str] = field(default_factory=list)
    languages: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=lambda: {"before": 0.0, "after": 0.0})


class Symbols:
    """Extracted symbols by content, for the last few thousand versions (a commit's new side is
    the next commit's old side)."""

    def __init__(self, size: int = 4000) -> None:
        self._held: OrderedDict[tuple[str, bytes], list[Symbol]] = OrderedDict()
        self._size = size

    def of(self, language: str, source: bytes) -> list[Symbol]:
        key = (language, source)
        if key not in self._held:
            self._held[key] = extract_uncached(language, source)
            if len(self._held) > self._size:
                self._held.popitem(last=False)
        return self._held[key]


def compare(before: ModuleType, pair: FilePair, symbols: Symbols, tally: Tally) -> None:
    """Attribute one file change with both modules and note any difference."""
    language, old, new, label = pair
    if old == new or any(side is not None and is_binary(side) for side in (old, new)):
        return
    old_source, new_source = old or b"", new or b""
    old_symbols = symbols.of(language, old) if old is not None else []
    new_symbols = symbols.of(language, new) if new is not None else []
    diff = diff_lines(old_source, new_source)
    args = (old_symbols, new_symbols, old_source, new_source, diff)
    got = {}
    for name, attribute in (("before", before.attribute), ("after", spans.attribute)):
        started = time.perf_counter()
        got[name] = attribute(*args)
        tally.seconds[name] += time.perf_counter() - started
    tally.files += 1
    tally.languages[language] += 1
    tally.records += len(got["before"])
    if got["before"] != got["after"]:
        tally.mismatches.append(f"{label}: {len(got['before'])} records before, "
                                f"{len(got['after'])} now")  # fmt: skip


def commit_pairs(path: Path, commits: int) -> Iterator[FilePair]:
    """Every changed file of the last `commits` first-parent commits, against the first parent."""
    repo = pygit2.Repository(str(path))
    commit = repo.revparse_single("HEAD").peel(pygit2.Commit)
    for _ in range(commits):
        if not commit.parents:
            return
        parent = commit.parents[0]
        diff = repo.diff(parent, commit)
        diff.find_similar()
        for delta in diff.deltas:
            language = language_for(delta.new_file.path) or language_for(delta.old_file.path)
            if language is None:
                continue
            old = None if delta.status == pygit2.enums.DeltaStatus.ADDED else (
                repo[delta.old_file.id].read_raw())  # fmt: skip
            new = None if delta.status == pygit2.enums.DeltaStatus.DELETED else (
                repo[delta.new_file.id].read_raw())  # fmt: skip
            yield language, old, new, f"{str(commit.id)[:10]} {delta.new_file.path}"
        commit = parent


def django_pairs() -> Iterator[FilePair]:
    """The .py files of consecutive Django sdists, paired by path."""
    from attribution_accuracy import python_files, sdist

    for old_version, new_version in DJANGO_PAIRS:
        old_files = python_files(sdist("django", old_version))
        new_files = python_files(sdist("django", new_version))
        for path in sorted(old_files.keys() | new_files.keys()):
            label = f"django {old_version}->{new_version} {path}"
            yield "python", old_files.get(path), new_files.get(path), label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", type=Path, help="a git repository")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--rev", default="main", help="the revision to compare with")
    parser.add_argument("--django", action="store_true", help="Django sdist pairs instead")
    parser.add_argument("--show", type=int, default=10, help="how many mismatches to print")
    args = parser.parse_args()
    if (args.repo is None) == (not args.django):
        parser.error("give a REPO or --django")
    before = baseline_spans(args.rev)
    pairs: Callable[[], Iterator[FilePair]] = (
        django_pairs if args.django else lambda: commit_pairs(args.repo, args.commits))
    tally, symbols = Tally(), Symbols()
    for pair in pairs():
        compare(before, pair, symbols, tally)
    source = "Django sdist pairs" if args.django else f"{args.repo} (last {args.commits} commits)"
    print(f"{source}: {tally.files} changed files "
          f"({', '.join(f'{n} {lang}' for lang, n in tally.languages.most_common())}), "
          f"{tally.records} records")  # fmt: skip
    print(f"attribute() time: {args.rev} {tally.seconds['before']:.2f} s, "
          f"now {tally.seconds['after']:.2f} s")  # fmt: skip
    print(f"mismatches: {len(tally.mismatches)}")
    for line in tally.mismatches[: args.show]:
        print("  " + line)
    sys.exit(1 if tally.mismatches else 0)


if __name__ == "__main__":
    main()
