"""symdiff: what changed here recently, at the level of symbols."""

from symdiff.attribute import symbol_changes
from symdiff.duration import parse_go_duration
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
from symdiff.model import ChangeType, FileChange, Scope, Symbol, SymbolChange, SymbolChangeType

__all__ = [
    "ChangeType",
    "DurationError",
    "EditError",
    "FileChange",
    "FsDenied",
    "InvalidArgs",
    "LockedError",
    "Scope",
    "StoreError",
    "Symbol",
    "SymbolChange",
    "SymbolChangeType",
    "SymdiffError",
    "ToolFailed",
    "extract",
    "symbol_changes",
]
