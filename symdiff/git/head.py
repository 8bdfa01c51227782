"""Which blobs HEAD's tree holds at some paths of a work tree: the versions `against HEAD` will
ask about, so the daemon keeps their symbols when its records supersede them
(docs/storage.md, "Symbols by content")."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pygit2

_BROKEN = (pygit2.GitError, KeyError, ValueError, OSError)


def blobs_at_head(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """The git blob id HEAD holds at each of these paths (relative to `root`, a work tree or a
    folder inside one). A path HEAD lacks, or holds as a tree or submodule, is left out; so is
    every path outside a repository, before its first commit, or in one that does not read."""
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    try:
        found = pygit2.discover_repository(str(root))
        if found is None:
            return {}
        handle = pygit2.Repository(found)
        if handle.workdir is None or handle.head_is_unborn:
            return {}
        tree = handle.head.peel(pygit2.Commit).tree
        prefix = PurePosixPath(Path(root).resolve().relative_to(Path(handle.workdir).resolve())
                               .as_posix())  # fmt: skip
    except _BROKEN:
        return {}
    out = {}
    for rel in wanted:
        try:
            entry = tree[str(prefix / rel)]
        except (KeyError, ValueError):
            continue
        if entry.type_str == "blob":
            out[rel] = str(entry.id)
    return out
