"""A git repository, read through pygit2: its moving parts, tree diffs, renames, history.

    state.py      HEAD, reflogs, locks and half-done operations, read cheaply (who moved)
    head.py       the blobs HEAD holds at some paths (whose symbols the daemon keeps)
    treediff.py   a revision's tree against another tree or the work tree -> file changes
    renames.py    renames paired as git pairs them (exact, basenames, span-hash similarity); pure
    importer.py   the history import: first-parent commits -> `commit` records
"""
