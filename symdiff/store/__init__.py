"""Storage: tables, migrations, snapshots and the Store."""

from symdiff.store.blobs import Blob
from symdiff.store.changes import ChangeFilter, StoredChange
from symdiff.store.store import FileState, Mutation, Store, Workspace

__all__ = [
    "Blob",
    "ChangeFilter",
    "FileState",
    "Mutation",
    "Store",
    "StoredChange",
    "Workspace",
]
