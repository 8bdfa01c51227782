"""symdiff: what changed here recently, at the level of symbols.

The public API: plain functions that return plain data, the domain values they speak in, and
the error hierarchy. Everything else in the package is an implementation detail.
"""

from symdiff.acp import FilePatch, build_diff
from symdiff.api import index, upgrade_database
from symdiff.attribute import symbol_changes
from symdiff.config import Settings
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
from symdiff.query import diff
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
    "Settings",
    "StoreError",
    "Symbol",
    "SymbolChange",
    "SymbolChangeType",
    "SymdiffError",
    "ToolFailed",
    "apply_edits",
    "build_diff",
    "diff",
    "diff_lines",
    "extract",
    "git_patch",
    "index",
    "parse_go_duration",
    "symbol_changes",
    "text_diff",
    "unified_diff",
    "upgrade_database",
]
