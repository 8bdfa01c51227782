"""Recording an applied edit in the workspace index: the Recorder that apply_edits is given.

The edited paths are reconciled once before the write, so that an earlier, unrecorded change to
them is recorded as its own record (or, in a workspace never indexed, taken as their baseline),
and once after it with `baseline=False`, so that the edit is always a record of its own.

Before the write the recorder also leaves an *edit intent* per file (path, new blob id, who
edits): a watching daemon that sees the write first records it as `origin: "edit"` too, and
the edit is recorded once, whoever is first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from symdiff.config import Settings
from symdiff.diffs.blobid import blob_id
from symdiff.errors import SymdiffError
from symdiff.record.indexer import reconcile
from symdiff.record.origins import scan_provenance
from symdiff.records import of_change
from symdiff.store import Store


class IndexRecorder:
    """Records edits in the workspace's open `store`."""

    def __init__(self, store: Store, settings: Settings,
                 origin_info: Mapping[str, object] | None = None) -> None:  # fmt: skip
        self._store = store
        self._settings = settings
        self._origin_info = origin_info
        self._provenance = scan_provenance(settings.root)  # the git state the edit is made in

    def before(self, writes: Mapping[str, bytes]) -> None:
        """Snapshot the files as they are before the write; leave the edit's intents."""
        reconcile(self._store, self._settings, paths=list(writes), provenance=self._provenance)
        ws = self._store.ensure_workspace(str(self._settings.root), self._settings.host)
        self._store.add_intents(ws.id, [(path, blob_id(new)) for path, new in writes.items()],
                                self._origin_info)  # fmt: skip

    def after(self, paths: Sequence[str]) -> list[dict[str, object]]:
        """Record the write of `paths`; the change records now in the index."""
        report = reconcile(self._store, self._settings, paths=paths, baseline=False,
                           provenance=self._provenance)  # its intents make the change an edit
        return [dict(of_change(c)) for c in report.changes]


class UnavailableRecorder:
    """Stands in for an index that could not be opened: the edit still applies, and the
    result's `record_error` says why it was not recorded."""

    def __init__(self, error: SymdiffError) -> None:
        self._error = error

    def before(self, writes: Mapping[str, bytes]) -> None:
        """Fail with the error that kept the index closed."""
        raise self._error

    def after(self, paths: Sequence[str]) -> list[dict[str, object]]:
        """Fail with the error that kept the index closed."""
        raise self._error


def apply_recorded(
    edits: object,
    *,
    settings: Settings,
    allow_write: Sequence[Path] = (),
    dry_run: bool = True,
    backup: bool = False,
    record: bool = True,
    client: Mapping[str, object] | str = "cli",
) -> dict[str, object]:
    """Apply (or preview) `edits` in the workspace and record a real apply in its index at
    once: `symdiff.api.apply_edits`, which documents the arguments and the result."""
    from symdiff.edits import Recorder
    from symdiff.edits import apply_edits as apply_core

    def run(recorder: Recorder | None) -> dict[str, object]:
        return apply_core(edits, root=settings.root, write_roots=allow_write, dry_run=dry_run,
                          backup=backup, recorder=recorder)  # fmt: skip

    if dry_run or not record:
        return run(None)
    try:
        store = Store(settings.db_url)
    except SymdiffError as err:
        return run(UnavailableRecorder(err))
    with store:
        return run(IndexRecorder(store, settings, {"client": client}))
