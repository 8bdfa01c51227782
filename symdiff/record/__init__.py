"""The write side: watching the tree and recording each change (docs/daemon.md).

    watcher.py     watchdog's events as settled, coalesced batches
    walk.py        which paths are tracked (git's ignore rules), and the walk that finds them
    fileread.py    a safe read of one file (no links, no FIFOs, re-read while it changes)
    origins.py     who wrote a batch: git (and which operation), watch or scan
    indexer.py     a reconcile pass or an event batch -> FileChanges -> the store, in one
                   transaction
    daemon.py      the watch loop: start pass, batches, retries, poison paths, the status file
    applied.py     recording an applied edit (apply_edits' Recorder, its intents)
    retention.py   what a collection keeps, one collection, the daemon's daily Collector
    progress.py    the progress bar of long passes
    heap.py        garbage-collector tuning for the long-running processes
"""
