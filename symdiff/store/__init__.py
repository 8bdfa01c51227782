"""Storage: tables, migrations, snapshots and the Store."""

from symdiff.store.blobs import Blob
from symdiff.store.store import FileState, Mutation, Store, Workspace, from_us, to_us

__all__ = [
    "Blob",
    "FileState",
    "Mutation",
    "Store",
    "Workspace",
    "from_us",
    "to_us",
]
