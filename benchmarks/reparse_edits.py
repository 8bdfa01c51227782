"""The incremental re-parse of a file's new version from its old tree, beside a fresh parse.

    .venv/bin/python benchmarks/reparse_edits.py [--changed 200] [--repo REPO --commits N]
                                                [--rounds 5]

The pairs (old, new) of every changed file that symdiff parses: by default those of
against_speed.py's Django tree (200 Python files changed in the work tree: a function inserted
and a `return` edited in each); with `--repo`, those of the newest N first-parent commits of
REPO (any git repository, e.g. a clone of elixir-lang/elixir), each commit's file against its
parent's. For each pair the old version is parsed and held (parse/reparse.py), then the new one
is re-parsed from its tree; the peer is tree-sitter's fresh parse of the same new versions.

Prints CPU time (the fastest of `--rounds`, each pair timed alone) and the tokens tree-sitter
lexed, counted by its own logger: the tokens are a count of the work the re-parse could not
re-use, the same on any machine. Every re-parsed tree is checked against the fresh one.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

import pygit2
from pygit2.enums import SortMode
from tree_sitter import Parser
from tree_sitter_language_pack import get_parser

from symdiff.parse import reparse
from symdiff.parse.languages import language_for

Pair = tuple[str, bytes, bytes]


def django_pairs(changed: int) -> list[Pair]:
    from against_speed import build  # the Django corpus, downloaded once into .cache

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "django"
        build(root, changed)
        repo = pygit2.Repository(str(root))
        head = repo.revparse_single("HEAD").peel(pygit2.Tree)
        pairs = []
        for delta in head.diff_to_workdir().deltas:
            path = delta.new_file.path
            if delta.status_char() == "M" and language_for(path) is not None:
                pairs.append((language_for(path) or "", repo[delta.old_file.id].read_raw(),
                              (root / path).read_bytes()))  # fmt: skip
        return pairs


def history_pairs(path: Path, commits: int) -> list[Pair]:
    repo = pygit2.Repository(str(path))
    walker = repo.walk(repo.head.target, SortMode.NONE)
    walker.simplify_first_parent()
    pairs = []
    for commit in itertools.islice(walker, commits):
        if not commit.parents:
            continue
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        diff.find_similar()
        for delta in diff.deltas:
            language = language_for(delta.new_file.path)
            if language is None or bytes(20) in (delta.old_file.id.raw, delta.new_file.id.raw):
                continue
            old, new = repo[delta.old_file.id].read_raw(), repo[delta.new_file.id].read_raw()
            if b"\0" not in old + new:
                pairs.append((language, old, new))
    return pairs


def lexed(parser: Parser, parse: object) -> int:
    """Tokens tree-sitter lexes while `parse()` runs."""
    count = 0

    def log(_kind: object, message: str) -> None:
        nonlocal count
        count += message.startswith("lexed_lookahead")

    parser.logger = log
    try:
        parse()  # type: ignore[operator]
    finally:
        parser.logger = None
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changed", type=int, default=200)
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--commits", type=int, default=111)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    pairs = history_pairs(args.repo, args.commits) if args.repo else django_pairs(args.changed)
    parsers = {language: get_parser(language) for language, _, _ in pairs}  # type: ignore[misc]

    def held(language: str, old: bytes) -> None:
        reparse.forget()
        reparse.parse(parsers[language], language, old, b"old", None)

    fresh_cpu, again_cpu = [], []
    for _ in range(args.rounds):
        fresh = again = 0.0
        for language, old, new in pairs:
            started = time.process_time()
            parsers[language].parse(new)
            fresh += time.process_time() - started
            held(language, old)
            started = time.process_time()
            reparse.parse(parsers[language], language, new, b"new", b"old")
            again += time.process_time() - started
        fresh_cpu.append(fresh)
        again_cpu.append(again)
    fresh_tokens = again_tokens = differing = 0
    for language, old, new in pairs:
        p = parsers[language]
        fresh_tokens += lexed(p, lambda p=p, new=new: p.parse(new))
        held(language, old)
        again_tokens += lexed(p, lambda p=p, language=language, new=new: reparse.parse(
            p, language, new, b"new", b"old"))
        tree = reparse.parse(p, language, new, b"new", b"old")
        differing += str(tree.root_node) != str(p.parse(new).root_node)
    source = f"{args.repo} (newest {args.commits} commits)" if args.repo else "Django tree"
    print(f"{len(pairs)} changed files of the {source}; CPU: fastest of {args.rounds} rounds")
    print(f"tree-sitter, fresh parse of the new versions {min(fresh_cpu) * 1000:8.1f} ms "
          f"{fresh_tokens:9,} tokens lexed")  # fmt: skip
    print(f"re-parsed from the old version's tree        {min(again_cpu) * 1000:8.1f} ms "
          f"{again_tokens:9,} tokens lexed")  # fmt: skip
    print(f"ratio: {min(again_cpu) / min(fresh_cpu):.2f}x CPU, "
          f"{again_tokens / fresh_tokens:.3f}x tokens; trees differing from fresh: {differing}")


if __name__ == "__main__":
    main()
