"""The workspace's `.symdiff/` folder, created in one place: with a `.gitignore` of `*`.

The folder holds the index, the daemon's lock, status and cookies; none of it belongs in the
user's repository, so `git status` must not list it (`?? .symdiff/`). The `.gitignore` inside
it ignores the folder's whole content, itself included, as `python -m venv` does for a venv.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from symdiff.config import STATE_DIR

GITIGNORE = "# symdiff's index and daemon state: nothing here belongs in version control\n*\n"
# Agent hooks' journals, one per session (symdiff/agents/journal.py, which spells it out so
# that a hook imports nothing else).
AGENTS_DIR = f"{STATE_DIR}/agents"


def ensure_state_dir(folder: Path) -> Path:
    """Create `folder` (and its parents) if missing; a `.symdiff` folder gets its `.gitignore`.

    Raises OSError when the folder cannot be created. The `.gitignore` is written whenever it
    is missing, so a workspace made by an older symdiff gains it too; a folder where it
    cannot be written (read-only) is left as it is.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if folder.name == STATE_DIR:
        ignore = folder / ".gitignore"
        if not ignore.exists():
            with contextlib.suppress(OSError), open(ignore, "x", encoding="utf-8") as f:
                f.write(GITIGNORE)
    return folder
