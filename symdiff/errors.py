"""The one error hierarchy of symdiff.

    SymdiffError                 code "error"; base of everything symdiff raises on purpose
    ├── InvalidArgs              code "invalid_args"  (also a ValueError)
    │   └── DurationError        a string Go's time.ParseDuration rejects
    ├── FsDenied                 code "fs_denied"     a path outside the allowed roots
    ├── ToolFailed               code "tool_failed"   the operation could not be carried out
    │   └── EditError            code "edit_failed"   a search/replace edit that does not fit
    ├── StoreError               code "store_error"   the database refused or is unreachable
    └── LockedError              code "locked"        another daemon owns the workspace

Every error has a stable `code`; adapters show it as `code: reason`.
"""

from __future__ import annotations


class SymdiffError(Exception):
    """Base of every error symdiff raises on purpose."""

    code = "error"

    @property
    def reason(self) -> str:
        """The human-readable reason, without the code."""
        return super().__str__()

    def render(self) -> str:
        """`code: reason`, as adapters show it."""
        return f"{self.code}: {self.reason}"


class InvalidArgs(SymdiffError, ValueError):
    """An argument is malformed or out of range."""

    code = "invalid_args"


class DurationError(InvalidArgs):
    """A duration string that Go's time.ParseDuration rejects."""


class FsDenied(SymdiffError):
    """A path resolves outside the allowed roots."""

    code = "fs_denied"


class ToolFailed(SymdiffError):
    """The operation could not be carried out (missing file, directory, over a cap, ...)."""

    code = "tool_failed"


class EditError(ToolFailed):
    """A search/replace edit that cannot be applied as given."""

    code = "edit_failed"


class StoreError(SymdiffError):
    """The database refused an operation or cannot be reached."""

    code = "store_error"


class LockedError(SymdiffError):
    """Another live daemon already owns this workspace."""

    code = "locked"
