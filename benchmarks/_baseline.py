"""The attribution module as a git revision has it, loaded beside the working one.

The speed benchmark and the oracle compare `attribute()` of this tree with the one of a revision
(default `main`): `git show REV:symdiff/attribute/spans.py` is written to a temporary file and
imported under another name, so both run in one process on the same symbols and diffs.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
SPANS = "symdiff/attribute/spans.py"


def baseline_spans(rev: str = "main") -> ModuleType:
    """`symdiff.attribute.spans` as of `rev`, imported as `_spans_at_rev`."""
    source = subprocess.run(["git", "show", f"{rev}:{SPANS}"], cwd=REPO, check=True,
                            capture_output=True).stdout  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="symdiff-baseline-"))
    path = folder / "_spans_at_rev.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("_spans_at_rev", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_spans_at_rev"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module
