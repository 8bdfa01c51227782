"""Symbols read from the database are the symbols extracted afresh, over real release pairs.

    .venv/bin/python benchmarks/bycontent_oracle.py REPO [--pairs 10]

REPO is any git repository with release tags (e.g. a clone of pallets/jinja or
elixir-lang/elixir). For the newest N pairs of consecutive tags (by creation date), every
changed file that symdiff parses is taken: each side's symbols are extracted afresh
(`extract_uncached`), stored through a real SQLite Store (`keep_shelf`; a modified file's new
side as a delta against its old side's, as the daemon stores it), read back into a new
shelf in a new Store connection with every in-memory cache emptied (`load_shelf`), and
compared field for field; each change is built afresh and again from what the database holds
(its stored pair, and from the stored symbols alone), and the records compared. Prints the
counts and every mismatch; exits 1 on any.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from datetime import UTC, datetime

import pygit2
from _caches import cold

from symdiff.attribute.filechange import build_change
from symdiff.diffs.blobid import blob_id
from symdiff.model import ChangeType
from symdiff.parse.extract import extract_uncached
from symdiff.parse.languages import language_for
from symdiff.parse.shelf import SymbolShelf
from symdiff.store import Store
from symdiff.store.blobs import git_binary

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def release_pairs(repo: pygit2.Repository, count: int) -> list[tuple[str, str]]:
    tags = []
    for ref in repo.references:
        if ref.startswith("refs/tags/"):
            commit = repo.revparse_single(ref).peel(pygit2.Commit)
            tags.append((commit.commit_time, ref.removeprefix("refs/tags/"), str(commit.id)))
    tags.sort()
    pairs = [(a[2], b[2]) for a, b in itertools.pairwise(tags) if a[2] != b[2]]
    return pairs[-count:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    repo = pygit2.Repository(args.repo)
    files = blobs = mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/index.db"
        for old_sha, new_sha in release_pairs(repo, args.pairs):
            diff = repo[old_sha].peel(pygit2.Tree).diff_to_tree(repo[new_sha].peel(pygit2.Tree))
            sides = []
            for delta in diff.deltas:
                language = language_for(delta.new_file.path)
                if language is None or delta.status_char() not in "AMD":
                    continue
                read = [None if f.id == pygit2.Oid(hex="0" * 40) else repo[f.id].read_raw()
                        for f in (delta.old_file, delta.new_file)]  # fmt: skip
                old, new = (None if b is None or git_binary(b) else b for b in read)
                sides.append((delta.new_file.path, language, old, new))
            fresh = {}
            shelf = SymbolShelf()
            for _, language, old, new in sides:  # the new side stored against the old
                base = None
                for text in (old, new):
                    if text is not None:
                        found = extract_uncached(language, text)
                        fresh[(language, blob_id(text))] = tuple(found)
                        shelf.add((language, blob_id(text)), found, base)
                        base = blob_id(text)
            records = []
            for path, _, old, new in sides:
                kind = (ChangeType.ADD if old is None else ChangeType.DELETE if new is None
                        else ChangeType.MODIFY)  # fmt: skip
                records.append(build_change(
                    kind, path, old_path=None, old=old, new=new, timestamp=WHEN,
                    old_hash=None if old is None else blob_id(old),
                    new_hash=None if new is None else blob_id(new), shelf=shelf))  # fmt: skip
            with Store(url) as store:
                store.keep_shelf(shelf)
            cold()
            with Store(url) as store:
                again = SymbolShelf()
                store.load_shelf(again, list(fresh))
                paired = SymbolShelf()
                store.load_shelf(paired, [], [(language, blob_id(old), blob_id(new))
                                              for _, language, old, new in sides
                                              if old is not None and new is not None])
            for key, symbols in fresh.items():
                blobs += 1
                if again.get(key) != symbols:
                    mismatches += 1
                    print(f"symbols differ: {key}")
            for record, (path, _, old, new) in zip(records, sides, strict=True):
                files += 1
                for via in (again, paired):
                    rebuilt = build_change(
                        record.change_type, path, old_path=None, old=old, new=new,
                        timestamp=WHEN, old_hash=record.old_hash, new_hash=record.new_hash,
                        shelf=via)  # fmt: skip
                    if rebuilt != record:
                        mismatches += 1
                        print(f"record differs: {path} ({old_sha[:12]}..{new_sha[:12]})")
    print(f"{args.pairs} release pairs: {files} changed files, {blobs} blobs; symbols and "
          f"records read from the database: {mismatches} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
