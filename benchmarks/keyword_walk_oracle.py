"""The keyword walk beside the query walk it replaces, on every version of a language's files in
a real history: the same symbols, and the time of each.

    .venv/bin/python benchmarks/keyword_walk_oracle.py REPO [--language elixir] [--commits 400]

REPO is any git repository (e.g. a clone of elixir-lang/elixir). Every distinct blob of the
language's files in the newest `--commits` first-parent commits' trees is parsed once; the
family's walk (from keyword to keyword, in a tree without errors) and the same family without
keywords (the query finds every candidate node) must give equal symbol lists. Prints how many
blobs differ (0 is the only right answer), and each walk's CPU time over all of them.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import cast

import pygit2
from tree_sitter_language_pack import SupportedLanguage, get_language, get_parser

from symdiff.parse.extract import _family
from symdiff.parse.languages import language_for
from symdiff.parse.languages.engine import definition_query, walk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--language", default="elixir")
    parser.add_argument("--commits", type=int, default=400)
    args = parser.parse_args()
    found = _family(args.language)
    assert found is not None and found[0].keywords, f"{args.language} has no keyword walk"
    family, query = found
    plain = dataclasses.replace(family, keywords=(), keyword_field=None)
    plain_query = definition_query(plain, get_language(cast(SupportedLanguage, args.language)))
    repo = pygit2.Repository(args.repo)
    commit = repo.revparse_single("HEAD").peel(pygit2.Commit)
    texts: dict[pygit2.Oid, tuple[str, bytes]] = {}
    for _ in range(args.commits):
        stack = [("", commit.tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = prefix + (entry.name or "")
                if isinstance(entry, pygit2.Tree):
                    stack.append((path + "/", entry))
                elif entry.id not in texts and language_for(path) == args.language:
                    texts[entry.id] = (path, repo[entry.id].read_raw())
        if not commit.parents:
            break
        commit = commit.parents[0]
    ts = get_parser(cast(SupportedLanguage, args.language))
    trees = [ts.parse(data) for _, data in texts.values()]
    started = time.process_time()
    blobs = list(texts.values())
    ours = [walk(family, data, t.root_node, query)
            for (_, data), t in zip(blobs, trees, strict=True)]  # fmt: skip
    middle = time.process_time()
    oracle = [walk(plain, data, t.root_node, plain_query)
              for (_, data), t in zip(blobs, trees, strict=True)]  # fmt: skip
    done = time.process_time()
    differ = [path for (path, _), a, b in zip(blobs, ours, oracle, strict=True) if a != b]
    errors = sum(t.root_node.has_error for t in trees)
    print(f"{args.repo} ({args.language}): {len(texts)} blobs, {errors} with syntax errors "
          f"(walked by the query either way), {sum(map(len, ours))} symbols")
    print(f"differing blobs: {len(differ)} {differ[:5]}")
    print(f"keyword walk {middle - started:.2f} s CPU, query walk {done - middle:.2f} s CPU")


if __name__ == "__main__":
    main()
