"""Which one definition a selector names, `[PATH:]NAME[#N|:LINE][@VERSION]`
(docs/symbol_history.md, "Which definition a name means").

`lineage.py` groups a name's rows by definition across renames; here the groups are narrowed
by path and version, and a file that defines the name more than once (conditional `def`s,
overloads, a property's getter and setter) is split by occurrence: each row is placed among
the same-named definitions of its snapshot, in source order. The split costs one extraction
per snapshot, so it is made only where needed: a selector that asks for an occurrence or a
line, a change that touched two definitions of the name, or a newest snapshot that holds the
name twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.store import Store, Workspace
from symdiff.store.versions import SymbolRow
from symdiff.symbols.lineage import Group, Lineage, Version, clean_path, find, workspace
from symdiff.symbols.texts import Texts

__all__ = ["Selector", "definitions", "lineage", "parse_selector"]

_VERSION = re.compile(r"@(\d+)$")
_OCCURRENCE = re.compile(r"#(\d+)$")
_LINE = re.compile(r"(?<!:):L?(\d+)$")  # `:120` or `:L120`, never the tail of Rust's `a::b`


@dataclass(frozen=True, slots=True)
class Selector:
    """One definition as a person names it: its qualified name, and what tells it apart."""

    name: str
    path: str | None = None
    occurrence: int | None = None  # the Nth definition of the name in its file, from 1
    line: int | None = None  # the definition whose lines hold this line of the file now
    version: int | None = None  # a version id the definition has


def _path_prefix(text: str) -> tuple[str | None, str]:
    """`PATH:NAME` split at its first lone colon when what precedes it is a file name (holds a
    `/` or has a language's extension): Lua's `M:greet` and Rust's `a::b` stay names."""
    from symdiff.parse.languages import language_for

    for m in re.finditer(r"(?<!:):(?!:)", text):
        head, tail = text[: m.start()], text[m.end() :]
        if head and tail and ("/" in head or language_for(head) is not None):
            return head, tail
    return None, text


def _cut(pattern: re.Pattern[str], text: str) -> tuple[str, int | None]:
    m = pattern.search(text)
    if m is None or m.start() == 0:
        return text, None
    return text[: m.start()], int(m[1])


def parse_selector(spec: str, *, path: str | None = None, version: int | None = None) -> Selector:
    """Read `[PATH:]NAME[#N|:LINE][@VERSION]`; `path` and `version` are the same parts given
    as separate arguments (`--path`, `--to`, MCP's `path` and `version`)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidArgs("name must be a qualified symbol name, e.g. Session.refresh")
    text, at = _cut(_VERSION, spec.strip())
    text, occurrence = _cut(_OCCURRENCE, text)
    line = None
    if occurrence is None:
        text, line = _cut(_LINE, text)
    where, name = _path_prefix(text)
    if 0 in (occurrence, line):
        raise InvalidArgs(f"{spec!r}: occurrences (#N) and lines (:LINE) count from 1")
    if at is not None and version is not None and at != version:
        raise InvalidArgs(f"{spec!r} names version {at}, and the version argument says {version}")
    if where is not None and path not in (None, "", where):
        raise InvalidArgs(f"{spec!r} names the file {where}, and the path argument says {path}")
    return Selector(name, where or path or None, occurrence, line,
                    at if at is not None else version)  # fmt: skip


def _place(texts: Texts, r: SymbolRow) -> tuple[int, int] | None:
    """(occurrence, count): where the row's definition stands among the definitions of its name
    in its snapshot (the old one for a removal); None when no text of it is kept."""
    if r.language is None:
        return None
    symbols = texts.symbols(r.old_hash if r.change_type == "removed" else r.new_hash, r.language)
    starts = sorted(s.start_line for s in symbols or () if s.name == r.name)
    if not starts:
        return None
    k = min(range(len(starts)), key=lambda i: abs(starts[i] - r.start_line))
    return k + 1, len(starts)


def _split(texts: Texts, g: Group) -> list[Lineage]:
    """The group's rows dealt out to the same-named definitions of its file, by occurrence."""
    buckets: dict[int, list[SymbolRow]] = {}
    unplaced: list[SymbolRow] = []
    for r in g.rows:
        place = _place(texts, r)
        if place is None:
            unplaced.append(r)
        else:
            buckets.setdefault(place[0], []).append(r)
    if not buckets:  # no snapshot to tell them apart: each version is a candidate of its own
        return [Lineage((Version(r),)) for r in g.rows if r.renamed_to is None]
    for r in unplaced:  # beside the definition whose rows stood nearest
        near = min(buckets, key=lambda k: min(abs(x.start_line - r.start_line)
                                              for x in buckets[k]))  # fmt: skip
        buckets[near].append(r)
    if len(buckets) == 1 and not g.overloaded:
        return [g.lineage(occurrence=None if set(buckets) == {1} else next(iter(buckets)))]
    order = {id(r): i for i, r in enumerate(g.rows)}
    return [g.lineage(sorted(rows, key=lambda r: order[id(r)]), k)
            for k, rows in sorted(buckets.items())]  # fmt: skip


def _occurrence_at(root: str, g: Group, line: int) -> int | str:
    """The occurrence of the group's definition whose lines hold `line` in its file now, or
    where its definitions are when none does."""
    from symdiff.parse.extract import extract

    r = g.newest
    name = r.renamed_to or r.name
    try:
        source = (Path(root) / r.path).read_bytes()
    except OSError as err:
        return f"{r.path} cannot be read ({err.strerror or err})"
    named = sorted((s for s in extract(r.language, source) if s.name == name)
                   if r.language else (), key=lambda s: s.start_line)  # fmt: skip
    holding = [k for k, s in enumerate(named, 1) if s.start_line <= line <= s.end_line]
    if not holding:
        spans = ", ".join(f"{s.start_line}-{s.end_line}" for s in named) or "none"
        return f"in {r.path} at lines {spans}"
    return holding[-1]


def _of_group(texts: Texts, root: str, g: Group, sel: Selector,
              misses: list[str]) -> list[Lineage]:  # fmt: skip
    """The definitions in one group that the selector leaves (an occurrence it lacks or a line
    that none of them holds leaves none, and says what there is in `misses`)."""
    newest = _place(texts, g.newest)
    if not (sel.occurrence or sel.line or g.overloaded or (newest and newest[1] > 1)):
        return [g.lineage()]
    lineages = _split(texts, g)
    wanted = sel.occurrence
    if sel.line is not None:
        at = _occurrence_at(root, g, sel.line)
        if isinstance(at, str):
            misses.append(at)
            return []
        wanted = at
    if wanted is None:
        return lineages
    chosen = [lin for lin in lineages if (lin.occurrence or 1) == wanted]
    if not chosen:
        misses.extend(lin.selector() for lin in lineages)
    return chosen


def definitions(store: Store, ws: Workspace, sel: Selector) -> tuple[list[Lineage], list[str]]:
    """The definitions the selector leaves (several: it is ambiguous), and, when it leaves
    none, the closest recorded names."""
    found = find(store, sel.name, clean_path(sel.path, ws), [ws.id])
    groups = found.groups
    if sel.version is not None and groups:
        having = [g for g in groups if any(r.change_id == sel.version for r in g.rows)]
        if not having and len(groups) == 1:
            having = groups  # its own "has no version" names its newest versions
        elif not having:
            names = ", ".join(sorted({f"{g.newest.path}:{g.newest.name}" for g in groups}))
            raise InvalidArgs(f"no definition of {sel.name} has version {sel.version} "
                              f"(`symdiff log` lists each one's versions): {names}")
        groups = having
    texts = Texts(store, ws.root)
    misses: list[str] = []
    lineages = [lin for g in groups for lin in _of_group(texts, ws.root, g, sel, misses)]
    if groups and not lineages and misses:
        if sel.line is not None:
            raise InvalidArgs(f"no definition of {sel.name} holds line {sel.line} as the files "
                              f"are now; its definitions are {'; '.join(misses)}")
        raise InvalidArgs(f"no file has a definition #{sel.occurrence} of {sel.name} with a "
                          f"recorded version; there are {', '.join(misses)}")
    if sel.version is not None:
        kept = [lin for lin in lineages if any(v.id == sel.version for v in lin.versions)]
        lineages = kept or lineages
    return lineages, found.suggestions


def ambiguity(sel: Selector, lineages: Sequence[Lineage]) -> str:
    """The reason an ambiguous selector is refused: each definition with the selector that
    names it alone, one a line, to copy."""
    rows = [lin.candidate(sel.version) for lin in lineages]
    width = max(len(str(c["selector"])) for c in rows)
    return f"{sel.name} names {len(rows)} definitions; name one of them:\n" + "\n".join(
        f"  {c['selector']!s:<{width}}  {c['kind']}, {c['versions']} version(s), lines "
        f"{c['start_line']}-{c['end_line']} at version {c['newest_version']}" for c in rows)


def lineage(store: Store, settings: Settings, spec: str | Selector, *,
            path: str | None = None) -> tuple[Workspace, Lineage]:  # fmt: skip
    """The one definition `spec` names; InvalidArgs when it names several or none."""
    sel = spec if isinstance(spec, Selector) else parse_selector(spec, path=path)
    ws = workspace(store, settings)
    if ws is None:
        raise ToolFailed(f"nothing is indexed at {settings.root}; run `symdiff index` first")
    lineages, suggestions = definitions(store, ws, sel)
    if not lineages:
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        where = f" in {sel.path}" if sel.path else ""
        raise InvalidArgs(f"no recorded version of {sel.name}{where}{hint}")
    if len(lineages) > 1:
        raise InvalidArgs(ambiguity(sel, lineages))
    return ws, lineages[0]
