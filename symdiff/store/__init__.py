"""Storage: tables, migrations, snapshots and the Store."""

from symdiff.store.blobs import Blob
from symdiff.store.changes import ChangeFilter, Page, PathFilter, Position, StoredChange
from symdiff.store.store import FileState, Mutation, Store, Workspace

__all__ = [
    "Blob",
    "ChangeFilter",
    "FileState",
    "Mutation",
    "Page",
    "PathFilter",
    "Position",
    "Store",
    "StoredChange",
    "Workspace",
]
