"""Search/replace edits (docs/seeds/004-search-replace-edits.txt): parse, validate against the
files, preview, apply atomically.

    parse.py   the two input forms (marker text, JSON)
    match.py   finding a search text, explaining a miss
    plan.py    paths, reading, running the blocks in memory (nothing written)
    write.py   the all-or-nothing multi-file write
    apply.py   preview and orchestration
"""

from symdiff.edits.apply import Recorder, apply_edits
from symdiff.edits.parse import Block, FileEdit, parse_edits
from symdiff.edits.plan import FilePlan, plan_edits

__all__ = ["Block", "FileEdit", "FilePlan", "Recorder", "apply_edits", "parse_edits", "plan_edits"]
