"""Finding a block's search text in a file, and explaining the nearest miss when it is absent."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence

# A line as common as `}` or `return` votes for too many places to say anything.
_MAX_VOTES_PER_LINE = 64
_CANDIDATES = 12
_MIN_RATIO = 0.5
_DIFF_LINES = 12
_SHOWN_HITS = 5


def occurrences(content: str, search: str, *, whole_lines: bool) -> list[int]:
    """Offsets where `search` occurs (overlaps included); whole-line searches start a line."""
    found = []
    pos = content.find(search)
    while pos != -1:
        if not whole_lines or pos == 0 or content[pos - 1] == "\n":
            found.append(pos)
        pos = content.find(search, pos + 1)
    return found


def line_of(content: str, offset: int) -> int:
    """The 1-based line number of a character offset."""
    return content.count("\n", 0, offset) + 1


def lines_list(numbers: Sequence[int]) -> str:
    """`12, 40 and 77`, the first few of them."""
    shown = [str(n) for n in numbers[:_SHOWN_HITS]]
    more = len(numbers) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _norm(line: str) -> str:
    return " ".join(line.split())


def _bare(line: str) -> str:
    """A line with every whitespace character removed: equal bare lines differ only in it."""
    return "".join(line.split())


def _search_lines(search: str) -> list[str]:
    lines = search.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line opens no new line
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _kind(found: Sequence[str], wanted: Sequence[str]) -> str:
    """What separates two texts that are equal modulo whitespace."""
    pairs = list(zip(found, wanted, strict=True))
    if all(a.rstrip("\r") == b.rstrip("\r") for a, b in pairs):
        return "line endings"
    if all(a.rstrip() == b.rstrip() for a, b in pairs):
        return "trailing whitespace"
    if all(a.lstrip() == b.lstrip() for a, b in pairs):
        return "indentation"
    return "whitespace"


def _whitespace_hits(file_lines: list[str], wanted: list[str]) -> list[int]:
    norm_f = [_bare(x) for x in file_lines]
    norm_s = [_bare(x) for x in wanted]
    n = len(norm_s)
    return [i for i in range(len(norm_f) - n + 1)
            if norm_f[i] == norm_s[0] and norm_f[i:i + n] == norm_s]


def _candidates(file_lines: list[str], wanted: list[str]) -> list[int]:
    """Window starts worth scoring: where many search lines line up, and where the longest
    search line has a close match."""
    where: dict[str, list[int]] = {}
    for i, line in enumerate(file_lines):
        key = _norm(line)
        if key:
            where.setdefault(key, []).append(i)
    votes: Counter[int] = Counter()
    for j, line in enumerate(wanted):
        hits = where.get(_norm(line), [])
        if 0 < len(hits) <= _MAX_VOTES_PER_LINE:
            votes.update(i - j for i in hits)
    starts = [s for s, _ in votes.most_common(_CANDIDATES)]
    if starts:
        return list(dict.fromkeys(max(0, s) for s in starts))
    # No line in common: fall back to the closest spellings of the longest search line.
    longest = max(range(len(wanted)), key=lambda j: len(wanted[j].strip()))
    close = difflib.get_close_matches(
        _norm(wanted[longest]), list(where), n=3, cutoff=0.6
    )
    starts += [i - longest for key in close for i in where[key][:_CANDIDATES]]
    return list(dict.fromkeys(max(0, s) for s in starts))


def _similar(file_lines: list[str], wanted: list[str]) -> tuple[int, float] | None:
    """The most similar window of the search's length: (start index, ratio)."""
    target = "\n".join(_norm(x) for x in wanted)
    best: tuple[int, float] | None = None
    for start in _candidates(file_lines, wanted):
        window = file_lines[start:start + len(wanted)]
        ratio = difflib.SequenceMatcher(
            None, "\n".join(_norm(x) for x in window), target, autojunk=False
        ).ratio()
        if best is None or ratio > best[1]:
            best = (start, ratio)
    return best if best is not None and best[1] >= _MIN_RATIO else None


def _short_diff(found: list[str], wanted: list[str], first_line: int) -> str:
    last = first_line + len(found) - 1
    diff = list(difflib.unified_diff(
        [x.rstrip("\r") for x in found], wanted,
        f"file lines {first_line}-{last}", "search", lineterm="", n=0,
    ))[2:]  # drop the ---/+++ header: the message names both sides
    if len(diff) > _DIFF_LINES:
        diff = [*diff[:_DIFF_LINES], f"... ({len(diff) - _DIFF_LINES} more diff lines)"]
    return "\n".join("    " + x for x in diff)


def near_match(content: str, search: str) -> str:
    """A sentence (and a short diff) about where the search text nearly occurs, for errors."""
    wanted = _search_lines(search)
    if not wanted:
        return "the search text is only blank lines"
    file_lines = content.split("\n")
    n = len(wanted)
    hits = _whitespace_hits(file_lines, wanted)
    if hits:
        kind = _kind(file_lines[hits[0]:hits[0] + n], wanted)
        spans = lines_list([i + 1 for i in hits])
        noun = "line" if n == 1 else f"{n} lines starting at line"
        return (f"nearest match: the {noun} {spans} differ only in {kind}; "
                "copy the file's text exactly")
    best = _similar(file_lines, wanted)
    if best is None:
        return "nothing in the file resembles it; re-read the file before editing"
    start, ratio = best
    found = file_lines[start:start + n]
    span = f"line {start + 1}" if len(found) == 1 else f"lines {start + 1}-{start + len(found)}"
    return (f"most similar region: {span} "
            f"({ratio:.0%} similar; - file, + search):\n{_short_diff(found, wanted, start + 1)}")
