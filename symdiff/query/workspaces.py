"""Which workspaces of the database a read covers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from symdiff.errors import InvalidArgs
from symdiff.query.args import ALL_WORKSPACES
from symdiff.store import Workspace


def _within(root: Path, ws_root: str) -> bool:
    ws = Path(ws_root)
    return root == ws or ws in root.parents


def select_workspaces(
    workspaces: Sequence[Workspace], *, root: Path, host: str, workspace: str | None
) -> list[int] | None:
    """Workspace ids the query covers; None means every workspace.

    Default: the workspace on this host whose root is `root` or its nearest ancestor (none
    indexed yet: no workspace, so no records). "all": every workspace in the database.
    A path: the workspaces rooted there, on any host.
    """
    if workspace == ALL_WORKSPACES:
        return None
    if workspace is not None:
        wanted = Path(workspace).expanduser().resolve()
        ids = [w.id for w in workspaces if Path(w.root) == wanted]
        if not ids:
            raise InvalidArgs(f'no workspace is rooted at {json.dumps(str(wanted))}; '
                              'pass "all" or the root of an indexed tree')
        return ids
    mine = [w for w in workspaces if w.host == host and _within(root, w.root)]
    if not mine:
        return []
    nearest = max(mine, key=lambda w: len(Path(w.root).parts))
    return [nearest.id]


def is_own(workspace: object, root: Path) -> bool:
    """Whether a `workspace` argument names the caller's own workspace (absent, or its root)."""
    if workspace is None:
        return True
    if isinstance(workspace, str) and workspace and "\0" not in workspace:
        try:
            return Path(workspace).expanduser().resolve() == root.resolve()
        except (OSError, RuntimeError):  # RuntimeError: no home directory for `~user`
            return False
    return False
