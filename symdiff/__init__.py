"""symdiff: what changed here recently, at the level of symbols.

The public API: plain functions that return plain data, the domain values they speak in, and
the error hierarchy. Everything else in the package is an implementation detail.

Names load on first use (PEP 562), so that `import symdiff.query.answer` or `symdiff changes` pay
only for what they run — not for tree-sitter, watchdog, pygit2 or the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Each public name, and the module that defines it.
_EXPORTS = {
    "Answer": "symdiff.query.answer",
    "ChangeRecord": "symdiff.records",
    "ChangeType": "symdiff.model",
    "DiffQuery": "symdiff.query.answer",
    "DurationError": "symdiff.errors",
    "EditError": "symdiff.errors",
    "FileChange": "symdiff.model",
    "FilePatch": "symdiff.diffs.acp",
    "FsDenied": "symdiff.errors",
    "Hunk": "symdiff.diffs.linediff",
    "InvalidArgs": "symdiff.errors",
    "LineDiff": "symdiff.diffs.linediff",
    "LockedError": "symdiff.errors",
    "Scope": "symdiff.model",
    "Settings": "symdiff.config",
    "StoreError": "symdiff.errors",
    "Symbol": "symdiff.model",
    "SymbolChange": "symdiff.model",
    "SymbolChangeType": "symdiff.model",
    "SymbolRecord": "symdiff.records",
    "SymdiffError": "symdiff.errors",
    "ToolFailed": "symdiff.errors",
    "apply_edits": "symdiff.api",
    "build_diff": "symdiff.diffs.acp",
    "diff": "symdiff.query.answer",
    "diff_lines": "symdiff.diffs.linediff",
    "extract": "symdiff.parse.extract",
    "git_patch": "symdiff.diffs.linediff",
    "import_history": "symdiff.api",
    "index": "symdiff.api",
    "parse_go_duration": "symdiff.duration",
    "restore_symbol": "symdiff.symbols.restore",
    "symbol_changes": "symdiff.attribute.spans",
    "symbol_history": "symdiff.symbols.history",
    "symbol_source": "symdiff.symbols.history",
    "text_diff": "symdiff.diffs.textdiff",
    "unified_diff": "symdiff.diffs.linediff",
    "upgrade_database": "symdiff.api",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the same names, for type checkers
    from symdiff.api import apply_edits, import_history, index, upgrade_database  # noqa: F401
    from symdiff.attribute.spans import symbol_changes  # noqa: F401
    from symdiff.config import Settings  # noqa: F401
    from symdiff.diffs.acp import FilePatch, build_diff  # noqa: F401
    from symdiff.diffs.linediff import Hunk, LineDiff, diff_lines, git_patch, unified_diff  # noqa: F401
    from symdiff.diffs.textdiff import text_diff  # noqa: F401
    from symdiff.duration import parse_go_duration  # noqa: F401
    from symdiff.errors import (  # noqa: F401
        DurationError,
        EditError,
        FsDenied,
        InvalidArgs,
        LockedError,
        StoreError,
        SymdiffError,
        ToolFailed,
    )
    from symdiff.model import (  # noqa: F401
        ChangeType,
        FileChange,
        Scope,
        Symbol,
        SymbolChange,
        SymbolChangeType,
    )
    from symdiff.parse.extract import extract  # noqa: F401
    from symdiff.query.answer import Answer, DiffQuery, diff  # noqa: F401
    from symdiff.records import ChangeRecord, SymbolRecord  # noqa: F401
    from symdiff.symbols.history import symbol_history, symbol_source  # noqa: F401
    from symdiff.symbols.restore import restore_symbol  # noqa: F401


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'symdiff' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
