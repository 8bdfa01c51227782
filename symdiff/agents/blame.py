"""Blame that knows uncommitted work: for each line of a file, the record that last wrote it.

The file's recorded versions are walked oldest to newest, and line ownership is carried through
each version's line diff, as `git blame` maps lines: unchanged lines keep their owner, added
and replaced lines get the version's record. Renames are followed back to the old path.
Imported commits (`origin: commit`) give the lines that are older than live recording; a
commit that does not continue the work tree's chain of contents (one recorded after the saves
it committed) changes nothing, since the saves already own those lines (docs/agents.md,
"Blame").

The walk (`lineage`, `walk`, `carry`, `ranges`) is pure; `blame_file` reads the store and the
file on disk around it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from symdiff.diffs.linediff import count_lines, diff_lines
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.store.filehistory import FileRow, oldest_first

# Owners that are not records (a record is its index in the walk's list, ≥ 0).
BEFORE = -1  # written before anything recorded of the file
UNRECORDED = -2  # on disk (or in a commit) but in no record yet
UNKNOWN = -3  # a change no record holds, or a version whose text is not kept

NOTES = {BEFORE: "before recording", UNRECORDED: "not recorded yet", UNKNOWN: "not known"}
MAX_RENAMES = 16

Read = Callable[[str | None], bytes | None]


@dataclass(slots=True)
class Lines:
    """The owner of each line of one text, and the owners of the lines each one replaced."""

    hash: str | None = None
    text: bytes | None = b""
    owners: list[int] = field(default_factory=list)
    replaced: list[frozenset[int]] = field(default_factory=list)


def lineage(rows_of: Callable[[str], list[FileRow]], path: str) -> list[FileRow]:
    """The records of the file now at `path`, oldest first, back through its renames.

    The file at a path begins after the last record that deleted it there or moved it away;
    the first rename into the path after that is the move that brought it (a later one is the
    same move seen again: the history import's record of a rename the watcher recorded live;
    and the import's record that comes first only by its time, `_into`, is that too).
    """
    out: list[FileRow] = []
    current, until, again = path, None, set[int]()
    for _ in range(MAX_RENAMES):
        rows = [r for r in rows_of(current) if (until is None or oldest_first(r) < until)
                and r.id not in again]  # fmt: skip
        ends = [r for r in rows if (r.path == current and r.new_hash is None)
                or (r.path != current and r.old_path == current)]  # fmt: skip
        begun = oldest_first(ends[-1]) if ends else None
        seg = [r for r in rows if r.path == current and (begun is None or oldest_first(r) > begun)]
        into = _into(seg, current)
        if into is None:
            out[:0] = seg
            break
        out[:0] = seg[into:]
        moved = seg[into]
        # the same move recorded before it (by time alone) is no end of the file back there
        again = {r.id for r in seg[:into] if r.old_path == moved.old_path}
        current, until = str(moved.old_path), oldest_first(moved)
    return out


def _into(seg: list[FileRow], path: str) -> int | None:
    """Which of a path's records is the move that brought the file there: the first rename
    into it; but an imported commit's record of a move takes its second's first moment as its
    time, so a live record of the same move made within that second is the move itself (and
    what was written before it, in that second, is the file's history at its old path)."""
    moves = [i for i, r in enumerate(seg) if r.old_path not in (None, path)]
    if not moves or seg[moves[0]].origin != "commit":
        return moves[0] if moves else None
    first = seg[moves[0]]
    return next((i for i in moves[1:] if seg[i].origin != "commit"
                 and seg[i].old_path == first.old_path
                 and seg[i].ts_us < first.ts_us + 1_000_000), moves[0])  # fmt: skip


def carry(before: Lines, old: bytes, new: bytes, owner: int) -> Lines:
    """`new`'s owners: the lines `old` → `new` keeps stay `before`'s, the rest are `owner`'s."""
    owners: list[int] = []
    replaced: list[frozenset[int]] = []
    i = 0  # old lines copied so far
    for h in diff_lines(old, new).hunks:
        first = h.old_start - 1 if h.old_count else h.old_start  # 0-based first old line
        owners.extend(before.owners[i:first])
        replaced.extend(before.replaced[i:first])
        gone = frozenset(before.owners[n - 1] for n in h.removed)
        owners.extend([owner] * len(h.added))
        replaced.extend([gone] * len(h.added))
        i = first + h.old_count
    owners.extend(before.owners[i:])
    replaced.extend(before.replaced[i:])
    return Lines(None, new, owners, replaced)


def walk(versions: Sequence[FileRow], read: Read) -> Iterator[tuple[int, Lines]]:
    """The file's lines after each record that changed them: (index of the record, lines)."""
    state = Lines()
    started = live = False  # any record applied yet; any record of the work tree (not commit)
    for i, row in enumerate(versions):
        if row.new_hash is None:  # deleted: nothing left here
            state, started = Lines(), True
            yield i, state
            continue
        if row.new_hash == state.hash:
            continue  # already so: a commit of saves recorded before it, a pure rename
        if row.old_hash != state.hash:
            if row.origin == "commit" and started:
                continue  # history that does not continue the work tree's chain
            # A change no record holds came first: before live recording began (uncommitted
            # work it found, or records retention collected), else while none was kept.
            old = b"" if row.old_hash is None else read(row.old_hash)
            state = _to(state, old, UNKNOWN if live else BEFORE, row.old_hash)
        new = read(row.new_hash)
        if new is None or state.text is None:  # a text not kept: its lines are no one's known
            n = 0 if new is None else count_lines(new)
            state = Lines(row.new_hash, new, [UNKNOWN] * n, [frozenset()] * n)
        else:
            state = carry(state, state.text, new, i)
            state.hash = row.new_hash
        started = True
        live = live or row.origin != "commit"
        yield i, state


def _to(state: Lines, text: bytes | None, owner: int, digest: str | None) -> Lines:
    """`state` carried to `text`, the lines it changed given `owner`."""
    if text is None or state.text is None:
        n = 0 if text is None else count_lines(text)
        return Lines(digest, text, [UNKNOWN] * n, [frozenset()] * n)
    out = carry(state, state.text, text, owner)
    out.hash = digest
    return out


def finish(state: Lines, text: bytes, digest: str) -> Lines:
    """The lines of `text` (the file now, or a commit's version) from the last recorded state:
    what no record holds yet is UNRECORDED."""
    if state.hash == digest and state.text is not None:
        return state
    return _to(state, text, UNRECORDED, digest)


@dataclass(frozen=True, slots=True)
class Range:
    """Consecutive lines (1-based, inclusive) with one owner."""

    start_line: int
    end_line: int
    owner: int


def ranges(owners: Sequence[int], start: int = 1, end: int | None = None) -> list[Range]:
    """Lines `start`..`end` grouped into runs of one owner."""
    end = len(owners) if end is None else min(end, len(owners))
    out: list[Range] = []
    for n in range(start, end + 1):
        owner = owners[n - 1]
        if out and out[-1].owner == owner and out[-1].end_line == n - 1:
            out[-1] = Range(out[-1].start_line, n, owner)
        else:
            out.append(Range(n, n, owner))
    return out


def contributor(origin: str | None, info: dict[str, Any] | None) -> str:
    """Agent Trace's contributor type of one record's lines: `ai` for an agent's write
    (`agent`, and `apply_edits` from an MCP client or inside a session), `human` for a
    person's (`watch`, `scan`, and `symdiff apply` at the command line), else `unknown`
    (git operations, imported commits, nothing recorded)."""
    info = info or {}
    if origin == "agent":
        return "ai"
    if origin == "edit":
        return "human" if info.get("client") == "cli" and not info.get("session") else "ai"
    if origin in ("watch", "scan"):
        return "human"
    return "unknown"


def record_view(row: FileRow | None, owner: int) -> dict[str, Any]:
    """What a range says of its owner: the record (version, time, origin, who) or a note."""
    from symdiff.timestamps import format_us

    if row is None:
        return {"version": None, "timestamp": None, "origin": None, "origin_info": None,
                "path": None, "contributor": "unknown", "note": NOTES[owner]}  # fmt: skip
    return {"version": row.id, "timestamp": format_us(row.ts_us), "origin": row.origin,
            "origin_info": row.origin_info, "path": row.path,
            "contributor": contributor(row.origin, row.origin_info), "note": None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class FileBlame:
    """A file's lines and the records their owners index."""

    path: str
    versions: list[FileRow]
    lines: Lines


def relative_path(root: Path, path: str | Path) -> str:
    """`path` (absolute, or relative to `root`) as the records name it: POSIX, under root."""
    if isinstance(path, str) and (not path or "\0" in path):
        raise InvalidArgs(f"path must be a file path, got {path!r}")
    full = Path(root, path).resolve()
    try:
        return full.relative_to(root.resolve()).as_posix()
    except ValueError:
        raise InvalidArgs(f"path {str(path)!r} is outside the workspace {root}") from None


def file_lines(rows_of: Callable[[str], list[FileRow]], read: Read, path: str, text: bytes,
               digest: str) -> FileBlame:  # fmt: skip
    """The owners of `text` (the file `path` now, or a version of it) from its records: those
    of the newest recorded state with that content, else of the newest state."""
    versions = lineage(rows_of, path)
    state, match = Lines(), None
    for _, state in walk(versions, read):
        if state.hash == digest and state.text is not None:
            match = state
    return FileBlame(path, versions, finish(match or state, text, digest))


def answer(found: FileBlame, start: int | None, end: int | None) -> dict[str, Any]:
    """The blame answer: the file's line count and its ranges, each with its owner."""
    total = len(found.lines.owners)
    first = 1 if start is None else start
    last = total if end is None else min(end, total)
    if first < 1 or (end is not None and end < first):
        raise InvalidArgs(f"lines must be START,END with 1 <= START <= END, got {first},{end}")
    if total and first > total:
        raise InvalidArgs(f"{found.path} has {total} lines; line {first} is past its end")
    out = []
    for r in ranges(found.lines.owners, first, last):
        row = found.versions[r.owner] if r.owner >= 0 else None
        out.append({"start_line": r.start_line, "end_line": r.end_line,
                    **record_view(row, r.owner)})
    return {"path": found.path, "lines": total, "ranges": out}


def read_text(path: Path) -> bytes:
    """The file as it is now (ToolFailed: missing, not a file, binary)."""
    from symdiff.diffs.linediff import is_binary

    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise ToolFailed(f"{path} is a directory") from None
    except OSError as err:
        raise ToolFailed(f"cannot read {path}: {err.strerror or err}") from None
    if is_binary(data):
        raise ToolFailed(f"{path} is binary: blame is for text files")
    return data


def blame_file(settings: Any, path: str | Path, *, start_line: int | None = None,
               end_line: int | None = None) -> dict[str, Any]:
    """For each line of `path` as it is now (absolute, or relative to the workspace root), the
    record that last wrote it, grouped into ranges (docs/agents.md, "Blame")."""
    from symdiff.diffs.blobid import blob_id

    root = settings.root
    rel = relative_path(root, path)
    text = read_text(root / rel)
    rows_of, read, indexed = history_reader(settings, root)
    found = file_lines(rows_of, read, rel, text, blob_id(text))
    out = answer(found, start_line, end_line)
    out["indexed"] = indexed
    return out


def history_reader(settings: Any, root: Path
                   ) -> tuple[Callable[[str], list[FileRow]], Read, bool]:  # fmt: skip
    """How to read a path's records and a version's text in the workspace at `root`, and
    whether anything is indexed there."""
    from symdiff.store.filehistory import file_rows
    from symdiff.store.kept import reader
    from symdiff.symbols.texts import Texts

    store = reader(settings.db_url)
    ws = None if store is None else store.find_workspace(str(root), settings.host)
    if store is None or ws is None:
        return (lambda _path: []), (lambda _digest: None), False
    texts = Texts(store, str(root))
    ids = [ws.id]
    return (lambda p: file_rows(store, ids, p)), texts.blob, True
