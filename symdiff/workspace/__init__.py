"""The workspace on disk: its `.symdiff/` folder and the gate around the allowed roots.

    layout.py   every name in `.symdiff/` (StateDir) and the daemon's status file (DaemonStatus)
    lock.py     one daemon per workspace, one history import at a time; whether a daemon runs
    sync.py     read-your-writes: the cookie a reader drops and the daemon answers
    gate.py     the path gate of text_diff and apply_edits: resolve, check the roots, open
                beneath them without races
"""
