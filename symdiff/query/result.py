"""What a query answers: the `Answer` and its notes, inert values.

A note is what a person needs to read an answer right (no daemon watches, nothing is indexed,
`since` was cut to 720h, the scope hid some records, ...). The query decides which notes an
answer gets; each adapter (CLI, MCP, page) only words them.
"""

from __future__ import annotations

from dataclasses import dataclass

from symdiff.records import ChangeRecord

__all__ = ["STALE_WARNING", "Answer", "BaselineTaken", "Hidden", "LimitReplaced", "Note",
           "NothingIndexed", "Refreshed", "SinceCut", "Stale", "StartPass", "Unwatched"]

STALE_WARNING = (
    "the symdiff daemon watching this tree did not confirm within 1 s that it had recorded "
    "the latest saves; the answer may miss the most recent changes"
)


@dataclass(frozen=True, slots=True)
class LimitReplaced:
    """The limit given is not a whole number from 1 to `maximum`: `used` records at most
    instead."""

    given: object
    used: int
    maximum: int


@dataclass(frozen=True, slots=True)
class SinceCut:
    """`since` asks for more than the longest window (720h); the answer covers `longest`."""

    given: str
    longest: str


@dataclass(frozen=True, slots=True)
class StartPass:
    """A running daemon's start pass: `baseline` or `reconcile`, files read of `total`."""

    name: str
    done: object = None
    total: object = None


@dataclass(frozen=True, slots=True)
class Stale:
    """The daemon watching `root` did not confirm in time that it had recorded the latest
    saves; `start_pass` when it is still making its start pass."""

    root: str
    start_pass: StartPass | None = None


@dataclass(frozen=True, slots=True)
class NothingIndexed:
    """Nothing is indexed for the caller's workspace `root`."""

    root: str


@dataclass(frozen=True, slots=True)
class BaselineTaken:
    """The refresh before the answer took the baseline of `scanned` files under `root`."""

    root: str
    scanned: int


@dataclass(frozen=True, slots=True)
class Unwatched:
    """No daemon watches `root`: the index is current up to `until` (None: not known)."""

    root: str
    until: str | None


@dataclass(frozen=True, slots=True)
class Hidden:
    """The scope filter hid `count` records of the other scope (`scope`: the hidden one)."""

    count: int
    scope: str


Note = LimitReplaced | SinceCut | Stale | NothingIndexed | BaselineTaken | Unwatched | Hidden


@dataclass(frozen=True, slots=True)
class Refreshed:
    """The reconcile pass made before a query: whether it took the baseline, files scanned."""

    baseline: bool
    scanned: int


@dataclass(frozen=True, slots=True)
class Answer:
    """What a diff query answers.

    `records`: newest first, or oldest first after a cursor or for a reader. `stale`: a running
    daemon did not confirm in time that it had recorded the latest saves. `cursor`: pass it
    back to get what was recorded after this answer. `more`: records beyond the limit match.
    `indexed`: False when nothing is indexed where the query looks (no database, or no
    workspace at or above the root). `watched`: a daemon watches the caller's workspace.
    With `diff(..., explain=True)` only: `hidden`, how many records the scope filter left out
    of an answer short of its limit; `recorded_until`, when no daemon watches, the time up to
    which the index is known to be current (the newest record, or the last reconcile); and
    `notes`, what a person needs to read the answer right, in the order a person reads them.
    With `diff(..., git_patches=True)`: `patches`, each record's patch as `git diff` writes it
    (see `change_git_patch`), in the records' order.
    """

    records: list[ChangeRecord]
    stale: bool = False
    cursor: str = ""
    more: bool = False
    indexed: bool = True
    watched: bool = False
    hidden: int = 0
    recorded_until: str | None = None
    patches: tuple[str, ...] = ()
    notes: tuple[Note, ...] = ()
