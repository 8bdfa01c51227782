"""symdiff: what changed here recently, at the level of symbols."""

from symdiff.acp import FilePatch, build_diff
from symdiff.attribute import symbol_changes
from symdiff.duration import parse_go_duration
from symdiff.edits import apply_edits
from symdiff.errors import (
    DurationError,
    EditError,
    FsDenied,
    InvalidArgs,
    LockedError,
    StoreError,
    SymdiffError,
    ToolFailed,
)
from symdiff.extract import extract
from symdiff.linediff import Hunk, LineDiff, diff_lines, git_patch, unified_diff
from symdiff.model import ChangeType, FileChange, Scope, Symbol, SymbolChange, SymbolChangeType
from symdiff.textdiff import text_diff

__all__ = [
    "ChangeType",
    "DurationError",
    "EditError",
    "FileChange",
    "FilePatch",
    "FsDenied",
    "Hunk",
    "InvalidArgs",
    "LineDiff",
    "LockedError",
    "Scope",
    "StoreError",
    "Symbol",
    "SymbolChange",
    "SymbolChangeType",
    "SymdiffError",
    "ToolFailed",
    "apply_edits",
    "build_diff",
    "diff_lines",
    "extract",
    "git_patch",
    "symbol_changes",
    "text_diff",
    "unified_diff",
]
