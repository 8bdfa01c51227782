"""What the command line shows a person: the changes table, `watch`'s line per change, the
status text, the notes of an answer. Records and plain data in, rich `Text` or lines out;
the commands in `cli/` decide what to show and where.

Names are never cut inside a word: a table cell and `watch`'s line wrap at spaces, and a name
wider than what is left of the line goes to a line of its own; only a name wider than the
whole column is broken, after a `/`, `.` or `_` (`Wrapped`). Off a terminal the table is as
wide as its content and a watch line is one line. Times are the local time of the machine,
the zone named in the table's header.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich loads when a table or a line is drawn, not for --json's notes
    from rich.console import Console, ConsoleOptions
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    from symdiff.api import Answer, Note, Stale
    from symdiff.records import ChangeRecord, SymbolRecord

# Off a terminal, rich would wrap at 80 columns; as wide as the content instead.
_PIPE_WIDTH = 10_000
CHANGE_STYLES = {"add": "green", "delete": "red", "modify": "yellow", "rename": "cyan"}
SYMBOL_STYLES = {"added": "green", "removed": "red", "modified": "yellow",
                 "signature_changed": "magenta", "renamed": "cyan"}  # fmt: skip


# A word (a name, or a parenthesised `(git stash)`, up to the spaces after it), and the pieces a
# word wider than a whole line is broken into: each up to and including a `/`, `.` or `_`.
_WORD = re.compile(r"\([^()]*\) *|[^ ]+ *| +")
_PIECE = re.compile(r"[^/._]*[/._]|[^/._]+")


def _cuts(line: str, width: int, indent: int) -> Iterator[int]:
    """Where to break `line` so that each part fits `width` cells: between words, a word that
    does not fit beginning the next line; a word wider than a whole line on lines of its own,
    broken after a `/`, `.` or `_` (inside a piece, every `width` cells, only when the piece
    alone is wider). Lines after the first are `indent` cells narrower."""
    from rich.cells import cell_len

    start, room, full = 0, max(width, 1), max(width - indent, 1)

    def fits(end: int) -> bool:
        return cell_len(line[start:end].rstrip()) <= room

    for word in _WORD.finditer(line):
        if fits(word.end()):
            continue
        if word.start() > start:
            yield word.start()
            start, room = word.start(), full
        if fits(word.end()):
            continue
        for piece in _PIECE.finditer(line, word.start(), word.end()):
            if fits(piece.end()):
                continue
            if piece.start() > start:
                yield piece.start()
                start, room = piece.start(), full
            while not fits(piece.end()):  # one piece wider than a line: folded
                end = start + 1
                while end < piece.end() and cell_len(line[start : end + 1]) <= room:
                    end += 1
                yield end
                start, room = end, full


class Wrapped:
    """Text that wraps between the parts of names, never inside one (`_cuts`): a cell of the
    changes table, or a `watch` line whose continuation lines are indented by `indent`."""

    def __init__(self, text: Text, *, indent: int = 0) -> None:
        self.text = text
        self.indent = indent

    def lines(self, width: int) -> Text:
        """The text broken to `width` cells, each continuation line indented."""
        from rich.text import Text

        out: list[Text] = []
        for line in self.text.split("\n", allow_blank=True):
            for k, part in enumerate(line.divide(_cuts(line.plain, width, self.indent))):
                part.rstrip()
                out.append(Text(" " * self.indent) + part if k else part)
        wrapped = Text("\n").join(out)
        wrapped.no_wrap = True
        return wrapped

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield self.lines(options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """As wide as its widest line; no narrower than its widest piece, kept whole."""
        from rich.cells import cell_len
        from rich.measure import Measurement

        lines = self.text.plain.split("\n")
        widest = max(cell_len(line) for line in lines)
        piece = max((cell_len(p[0].rstrip()) for line in lines for w in _WORD.finditer(line)
                     for p in _PIECE.finditer(line, w.start(), w.end())), default=0)  # fmt: skip
        return Measurement(min(piece, options.max_width), min(widest, options.max_width))


def console() -> Console:
    """A console for stdout: the terminal's width and colours on a terminal; plain text, never
    wrapped, when piped."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(file=sys.stdout, width=_PIPE_WIDTH, no_color=True, highlight=False,
                   soft_wrap=False, color_system=None)  # fmt: skip


def show(out: Console, renderable: Table | Text) -> None:
    """Print on a console; off a terminal without the cells' trailing padding."""
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as captured:
        out.print(renderable)
    out.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def local_time(timestamp: str) -> datetime:
    """A record's RFC 3339 UTC timestamp as the machine's local time."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone()


def when(timestamp: str) -> str:
    """`2025-01-31 14:02:11 CET`: a timestamp as a person reads it here."""
    t = local_time(timestamp)
    return f"{t:%Y-%m-%d %H:%M:%S} {t.tzname() or ''}".rstrip()


def symbol_lines(symbols: Sequence[SymbolRecord]) -> list[tuple[str, str]]:
    """(name, change) per symbol in line order; a rename pair is one `old → new` `renamed`."""
    pairs = {(s["name"], s["renamed_to"]) for s in symbols
             if s["change_type"] == "removed" and "renamed_to" in s}  # fmt: skip
    pairs &= {(s["renamed_from"], s["name"]) for s in symbols
              if s["change_type"] == "added" and "renamed_from" in s}  # fmt: skip
    out: list[tuple[str, str]] = []
    for s in symbols:
        if s["change_type"] == "removed" and (s["name"], s.get("renamed_to")) in pairs:
            out.append((f"{s['name']} → {s['renamed_to']}", "renamed"))
        elif s["change_type"] == "added" and (s.get("renamed_from"), s["name"]) in pairs:
            continue  # shown with its old name
        else:
            out.append((s["name"], s["change_type"]))
    return out


def origin_label(record: ChangeRecord) -> str:
    """Who made a change, in a word or three: `watch`, `git checkout`, `edit by claude-code`."""
    origin = str(record["origin"])
    info: dict[str, Any] = record.get("origin_info") or {}
    if origin == "git" and info.get("operation"):
        return f"git {info['operation']}"
    if origin == "edit":
        client = info.get("client")
        name = client.get("name") if isinstance(client, dict) else client
        return f"edit by {name}" if name else "edit"
    return origin


def _path(record: ChangeRecord) -> str:
    old = record["old_path"]
    return str(record["path"]) if old is None else f"{old} → {record['path']}"


def short_when(timestamp: str, *, today: datetime | None = None) -> str:
    """A table's time: `14:02:11` today, `01-30 14:02:11` this year, else the whole date."""
    t = local_time(timestamp)
    now = today or datetime.now().astimezone()
    if t.date() == now.date():
        return f"{t:%H:%M:%S}"
    return f"{t:%m-%d %H:%M:%S}" if t.year == now.year else f"{t:%Y-%m-%d %H:%M:%S}"


def changes_table(records: Sequence[ChangeRecord]) -> Table:
    """The records as a table: when, change, path with +/- and origin, one symbol per line."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    zone = local_time(str(records[0]["timestamp"])).tzname() if records else None
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column(f"when ({zone})" if zone else "when", no_wrap=True)
    table.add_column("change", no_wrap=True)
    table.add_column("path")
    table.add_column("symbols")
    for r in records:
        kind = str(r["change_type"])
        path = Text(_path(r))
        path.append(f"\n+{r['lines_added']} -{r['lines_removed']}  {origin_label(r)}",
                    style="dim")
        names = Text()
        for i, (name, change) in enumerate(symbol_lines(r["symbols"])):
            # Text, not markup: symbol names may contain brackets (generics, indexers).
            names.append(("\n" if i else "") + name)
            names.append(f" {change}", style=SYMBOL_STYLES.get(change, "dim"))
        table.add_row(Text(short_when(str(r["timestamp"]))),
                      Text(kind, style=CHANGE_STYLES.get(kind, "")), Wrapped(path),
                      Wrapped(names))  # fmt: skip
    return table


def watch_line(record: ChangeRecord) -> Wrapped:
    """One recorded change on one line: time, change, path, +/-, symbols, who (on a terminal
    narrower than that, continued on indented lines, names whole)."""
    from rich.text import Text

    line = Text()
    line.append(f"{local_time(str(record['timestamp'])):%H:%M:%S} ", style="dim")
    kind = str(record["change_type"])
    line.append(f"{kind:<6} ", style=CHANGE_STYLES.get(kind, ""))
    line.append(_path(record), style="bold")
    line.append(f"  +{record['lines_added']} -{record['lines_removed']}")
    for i, (name, change) in enumerate(symbol_lines(record["symbols"])):
        line.append(", " if i else "  ")
        line.append(name)
        line.append(f" {change}", style=SYMBOL_STYLES.get(change, "dim"))
    line.append(f"  ({origin_label(record)})", style="dim")
    return Wrapped(line, indent=9)  # under the change, after the time


def _maybe_when(value: object) -> str:
    try:
        return when(str(value))
    except ValueError:
        return str(value)


def size(n: int) -> str:
    """Bytes as a person reads them: 812 B, 3.4 MB."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def status_lines(info: dict[str, object]) -> list[str]:
    """`symdiff status` as text: the daemon, the baseline, what is recorded, the database."""
    lines = []
    if info["running"]:
        last = info.get("last_reconcile")
        lines.append(f"daemon running (pid {info.get('pid')} on {info.get('host')}) since "
                     f"{_maybe_when(info.get('started_at'))}; last reconcile "
                     f"{_maybe_when(last) if last else 'not yet'}")
        if info.get("degraded"):
            lines.append("warning: some directories cannot be watched; rescanning periodically")
        if info.get("failing"):
            lines.append(f"warning: recording has failed since {info.get('failing_since')} "
                         f"({info.get('attempts')} attempts); last error: "
                         f"{info.get('last_error')}")
        unrecorded = info.get("unrecorded")
        if isinstance(unrecorded, list) and unrecorded:
            lines.append(f"warning: changes at {', '.join(map(str, unrecorded))} could not be "
                         "recorded; see the daemon's log")
    else:
        lines.append(f"no daemon watches {info['root']}")
    if "error" in info:
        return lines
    lines.extend(_recorded_lines(info))
    return lines


def _recorded_lines(info: dict[str, object]) -> list[str]:
    lines = []
    progress = info.get("progress")
    if isinstance(progress, dict):
        done, total = progress.get("done"), progress.get("total")
        what = "baseline" if progress.get("pass") == "baseline" else "start reconcile"
        count = f"{done}/{total} files read" if total else "walking the tree"
        lines.append(f"{what} in progress: {count}")
    refindex = info.get("refindex")
    if isinstance(refindex, dict) and info.get("running"):
        done, total = refindex.get("done"), refindex.get("total")
        if refindex.get("state") == "built":
            lines.append(f"reference index built ({total} files extracted at start)")
        else:
            lines.append(f"reference index being built: {done}/{total} files")
    changes = info.get("changes")
    if changes is None:
        lines.append("not indexed yet")
    else:
        noun = "change" if changes == 1 else "changes"
        newest = info.get("newest_record")
        at = f", the newest at {when(newest)}" if isinstance(newest, str) else ""
        if info.get("baseline_done"):
            baseline = "baseline done"
        elif isinstance(progress, dict):
            baseline = "baseline not finished"
        else:
            baseline = "baseline not finished (`symdiff watch` or `symdiff index` completes it)"
        lines.append(f"{baseline}; {changes} {noun} recorded{at}")
    nbytes = info.get("database_bytes")
    if isinstance(nbytes, int):
        lines.append(f"database {info.get('database')} ({size(nbytes)})")
    return lines


def patch_text(text: str) -> Text:
    """A git patch, its added and removed lines coloured (on a terminal)."""
    from rich.text import Text

    out = Text()
    for line in text.splitlines(keepends=True):
        if line.startswith(("+++", "---", "diff --git", "index ")):
            out.append(line, style="bold")
        elif line.startswith("+"):
            out.append(line, style="green")
        elif line.startswith("-"):
            out.append(line, style="red")
        elif line.startswith("@@"):
            out.append(line, style="cyan")
        else:
            out.append(line)
    return out


def changes_notes(answer: Answer) -> list[str]:
    """What `symdiff changes` says on stderr beside its answer (its notes, worded), so that
    nothing surprises."""
    return [note_text(note) for note in answer.notes]


def note_text(note: Note) -> str:
    """One note of an answer as `symdiff changes` words it."""
    from symdiff.api import (
        STALE_WARNING,
        BaselineTaken,
        Hidden,
        LimitReplaced,
        NothingIndexed,
        SinceCut,
        Stale,
        Unwatched,
    )

    if isinstance(note, LimitReplaced):
        return (f"--limit is a whole number from 1 to {note.maximum}, got {note.given!r}: "
                f"showing at most {note.used}; page on with --cursor")
    if isinstance(note, SinceCut):
        return (f"--since {note.given} is longer than {note.longest}, the longest window: "
                f"showing the last {note.longest} (`symdiff log SYMBOL` follows a symbol "
                "through older records)")
    if isinstance(note, Stale):
        return f"warning: {_start_pass(note) or STALE_WARNING}"
    if isinstance(note, NothingIndexed):
        return (f"nothing indexed under {note.root}: run `symdiff watch` or `symdiff index` "
                "there first")
    if isinstance(note, BaselineTaken):
        files = "file" if note.scanned == 1 else "files"
        return (f"took the baseline of {note.scanned} {files} under {note.root}: what changes "
                "from now on shows once recorded (`symdiff watch`, or --refresh)")
    if isinstance(note, Unwatched):
        shown = (f"this is what was recorded up to {when(note.until)}" if note.until
                 else "changes since it was last indexed are not shown")
        return (f"no daemon watches {note.root}: {shown}; run `symdiff watch` to keep it "
                "current, or add --refresh")
    assert isinstance(note, Hidden)
    noun = "change" if note.count == 1 else "changes"
    return f"{note.count} {note.scope} {noun} hidden: --scope all shows them"


def _start_pass(note: Stale) -> str | None:
    """Why a daemon does not answer yet, when it is still making its start pass."""
    started = note.start_pass
    if started is None:
        return None
    what = "baseline" if started.name == "baseline" else "start reconcile"
    count = f"{started.done}/{started.total} files read" if started.total else "walking the tree"
    return (f"the daemon watching {note.root} is still making its {what} ({count}); the "
            "answer may miss changes until it is done (`symdiff status` shows its progress)")


def window_of(answer: Answer, since: str) -> str:
    """The window a valid --since stands for, as a person reads it: 720h for anything longer."""
    from symdiff.api import SinceCut

    return next((n.longest for n in answer.notes if isinstance(n, SinceCut)), since)
