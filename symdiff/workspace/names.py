"""Every name in the workspace's `.symdiff/` folder, and nothing else: this module imports
nothing, so that `symdiff hook` (on every tool call of an agent) can name the folder without
loading `workspace/layout.py`'s dataclasses. `layout.py` re-exports them with the paths and
the status file's schema.
"""

STATE_DIR = ".symdiff"
INDEX_DB = "index.db"
LOCK_FILE = "daemon.lock"  # flock: one daemon per workspace (workspace/lock.py)
HISTORY_LOCK = "history.lock"  # flock: one history import at a time (workspace/lock.py)
STATUS_FILE = "daemon.json"  # written by the daemon after every batch: DaemonStatus
COOKIES = "cookies"  # read-your-writes cookies (workspace/sync.py)
COOKIE_DIR = f"{STATE_DIR}/{COOKIES}"  # the cookies relative to the root, as the watcher sees them
AGENTS = "agents"  # agent hooks' journals, one per session (agents/journal.py)
AGENTS_DIR = f"{STATE_DIR}/{AGENTS}"
