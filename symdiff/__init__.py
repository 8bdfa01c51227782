"""symdiff: what changed here recently, at the level of symbols.

The public API: plain functions that return plain data (all from `symdiff.api`, the door the
adapters use too), the domain values they speak in, and the error hierarchy. Everything else in
the package is an implementation detail.

Names load on first use (PEP 562), so that `import symdiff.query.answer` or `symdiff changes` pay
only for what they run — not for tree-sitter, watchdog, pygit2 or the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Each public name, and the module that defines it.
_EXPORTS = {
    "Answer": "symdiff.api",
    "ChangeRecord": "symdiff.records",
    "ChangeType": "symdiff.model",
    "DiffQuery": "symdiff.api",
    "DurationError": "symdiff.errors",
    "EditError": "symdiff.errors",
    "FileChange": "symdiff.model",
    "FilePatch": "symdiff.api",
    "FsDenied": "symdiff.errors",
    "Hunk": "symdiff.api",
    "InvalidArgs": "symdiff.errors",
    "LineDiff": "symdiff.api",
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
    "build_diff": "symdiff.api",
    "diff": "symdiff.api",
    "diff_lines": "symdiff.api",
    "extract": "symdiff.api",
    "git_patch": "symdiff.api",
    "import_history": "symdiff.api",
    "index": "symdiff.api",
    "parse_go_duration": "symdiff.api",
    "restore_symbol": "symdiff.api",
    "symbol_changes": "symdiff.api",
    "symbol_history": "symdiff.api",
    "symbol_source": "symdiff.api",
    "text_diff": "symdiff.api",
    "unified_diff": "symdiff.api",
    "upgrade_database": "symdiff.api",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the same names, for type checkers
    from symdiff.api import (  # noqa: F401
        Answer,
        DiffQuery,
        FilePatch,
        Hunk,
        LineDiff,
        apply_edits,
        build_diff,
        diff,
        diff_lines,
        extract,
        git_patch,
        import_history,
        index,
        parse_go_duration,
        restore_symbol,
        symbol_changes,
        symbol_history,
        symbol_source,
        text_diff,
        unified_diff,
        upgrade_database,
    )
    from symdiff.config import Settings  # noqa: F401
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
    from symdiff.records import ChangeRecord, SymbolRecord  # noqa: F401


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'symdiff' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
