"""libgit2's patch of two texts handed over as blobs, which it does not hash.

`pygit2.Patch.create_from` on two buffers hashes both with libgit2's collision-detecting SHA-1
to fill the patch's ids (`git_diff_file_content__init_from_src`, libgit2's diff_file.c): 22 ms
of the 51 ms it takes on a pair of 4 MiB texts. Given two blobs, it takes their ids as they
are. So here each text becomes a blob of a repository that lives for one call, in memory, under
a made-up id: an object database backend serves exactly those bytes under it, and libgit2
reads them back with its hash verification off. The ids are labels, not hashes: libgit2 only
compares them (two equal ids would make the pair unchanged, so the two labels differ and the
caller never asks about two equal texts) and writes them on the patch's `index` line, which
the caller cuts off. The caller hashes the texts itself (`blobid.blob_ids_aside`), beside the
diff rather than before it.

That switch is process-wide in libgit2 (`GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION`, on by
default, and symdiff never turns it off): it is off only while the two blobs are read, under
a lock, and on again right after. An object that another thread reads from a real repository
in that millisecond is not re-hashed; zlib's checksum still guards it against corruption.
"""

from __future__ import annotations

import threading

import pygit2
from pygit2.enums import DiffOption, ObjectType, Option

_verification = threading.Lock()
# Two distinct labels, neither the null id (which libgit2 reads as "no blob").
_OLD_LABEL = pygit2.Oid(hex="1".zfill(40))
_NEW_LABEL = pygit2.Oid(hex="2".zfill(40))


class _Texts(pygit2.OdbBackend):
    """An object database backend that serves a few texts as blobs, under the ids given."""

    def __init__(self, blobs: dict[pygit2.Oid, bytes]) -> None:
        super().__init__()
        self._blobs = blobs

    def read_cb(self, oid: pygit2.Oid) -> tuple[int, bytes]:
        return ObjectType.BLOB, self._blobs[oid]

    def forget(self) -> None:
        """Let go of the texts: libgit2 holds its own copies once it has read them."""
        self._blobs = {}


def blob_patch(old: bytes, new: bytes, *, context: int, flags: DiffOption) -> pygit2.Patch:
    """The patch of `old` to `new`, which differ; its file ids are labels, not the blob ids.

    The hunks are those `pygit2.Patch.create_from(old, new, ...)` gives, byte for byte; the
    header names no file (an empty path): libgit2 looks a path up in the user's attributes
    (`~/.config/git/attributes`) to pick a diff driver, which could change the hunk headers.
    """
    texts = _Texts({_OLD_LABEL: old, _NEW_LABEL: new})
    odb = pygit2.Odb()
    odb.add_backend(texts, 1)
    repo = pygit2.Repository()
    repo.set_odb(odb)
    with _verification:
        pygit2.option(Option.ENABLE_STRICT_HASH_VERIFICATION, False)
        try:
            old_blob, new_blob = repo[_OLD_LABEL], repo[_NEW_LABEL]
        finally:
            pygit2.option(Option.ENABLE_STRICT_HASH_VERIFICATION, True)
    # A pygit2.Repository sits in a reference cycle (its References, Branches... point back at
    # it), so it, its object database and this backend outlive the call until the garbage
    # collector's next pass: without this, both texts too, 8 MiB a call for a 4 MiB pair.
    texts.forget()
    assert isinstance(old_blob, pygit2.Blob) and isinstance(new_blob, pygit2.Blob)
    return pygit2.Patch.create_from(
        old_blob, new_blob, old_as_path="", new_as_path="", flag=flags, context_lines=context
    )
