"""Storage: tables, migrations, snapshots and the Store."""

from symdiff.store.blobs import Blob, git_blob_hash
from symdiff.store.store import FileState, Mutation, Store, Workspace, from_us, to_us

__all__ = [
    "Blob",
    "FileState",
    "Mutation",
    "Store",
    "Workspace",
    "from_us",
    "git_blob_hash",
    "to_us",
]
