"""The extractor's version: what a blob's stored symbols were made by (docs/storage.md).

Symbols are a pure function of a blob's bytes, its language and the code that extracts them, so
they are stored once per (blob, language, extractor version) and read back by whoever meets the
blob again. The version is a digest of that code itself — every module of `symdiff/parse/` that
can change what `extract` returns, or the references `extract_with_refs` reads — and of the
grammars' and tree-sitter's versions: any edit to the extractor, or an upgrade of its grammars,
is a new version, and symbols stored by an older one are never read again (retention deletes
them). Nobody has to remember to bump it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from pathlib import Path

# Modules of symdiff/parse/ that decide neither what `extract` returns nor how it is stored
# (codec.py is in: a change to the stored form is a new version too, whatever its FORMAT says).
_NOT_EXTRACTION = frozenset({"version.py", "pool.py", "shelf.py", "testpaths.py"})
_DISTRIBUTIONS = ("tree-sitter", "tree-sitter-language-pack")


@functools.cache
def extractor_version() -> str:
    """A 16-hex-digit digest of the extractor's code and its grammars' versions."""
    versions = [f"{name}=={importlib.metadata.version(name)}" for name in _DISTRIBUTIONS]
    return code_digest(Path(__file__).resolve().parent, versions)


def code_digest(here: Path, versions: list[str]) -> str:
    """The digest of the modules under `here` that decide extraction, and of `versions`."""
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(here.rglob("*.py")):
        rel = path.relative_to(here).as_posix()
        if rel in _NOT_EXTRACTION:
            continue
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    for version in versions:
        digest.update(version.encode() + b"\0")
    return digest.hexdigest()
