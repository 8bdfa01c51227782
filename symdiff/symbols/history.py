"""One definition's history: every recorded version of it, newest first, each with its
symbol-scoped diff, and its source text at any version (docs/symbol_history.md).

Which definition a name means is `symbols/lineage.py`'s and `symbols/select.py`'s job; the
texts and diffs are `symbols/texts.py`'s. Versions are change ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError, ToolFailed
from symdiff.model import Symbol
from symdiff.store import Store
from symdiff.store.kept import reader
from symdiff.symbols.lineage import Lineage, Version, clean_path, version_of, workspace
from symdiff.symbols.select import Selector, definitions, lineage, parse_selector
from symdiff.symbols.texts import Texts, definition_text, find_symbol
from symdiff.timestamps import format_us, to_us

__all__ = ["History", "current", "symbol_history", "symbol_source", "symbol_view"]

DEFAULT_LIMIT = 20
MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class History:
    """What `symbol_history` answers.

    `status`: "found" (`versions`, newest first, at most the limit; `more` when older ones
    match), "ambiguous" (`candidates`: the definitions the name matches, each with the
    `selector` that names it alone), or "unknown" (`suggestions`: the closest recorded names).
    """

    name: str
    status: str
    versions: list[dict[str, object]]
    candidates: list[dict[str, object]]
    suggestions: list[str]
    more: bool = False

    def as_dict(self) -> dict[str, object]:
        """The JSON-ready answer the adapters print."""
        return {"name": self.name, "status": self.status, "versions": self.versions,
                "candidates": self.candidates, "suggestions": self.suggestions,
                "more": self.more}  # fmt: skip


def _record(v: Version, texts: Texts, *, diffs: bool) -> dict[str, object]:
    r = v.row
    out: dict[str, object] = {
        "version": r.change_id, "timestamp": format_us(r.ts_us), "change_type": r.change_type,
        "file_change_type": r.file_change_type, "origin": r.origin,
        "origin_info": None if r.origin_info is None else json.loads(r.origin_info),
        "path": r.path, "old_path": v.old_path, "name": r.name, "kind": r.kind,
        "start_line": r.start_line, "end_line": r.end_line,
    }  # fmt: skip
    if r.renamed_from is not None:
        out["renamed_from"] = r.renamed_from
    if r.renamed_to is not None:
        out["renamed_to"] = r.renamed_to
    if diffs:
        out["diff"] = texts.scoped_diff(v)
    return out


def _since_us(since: str | None, now: datetime | None) -> int:
    if since is None:
        return 0
    from symdiff.duration import parse_duration_arg

    return to_us(now or datetime.now(UTC)) - parse_duration_arg(since, name="since") // 1000


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgs(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def symbol_history(
    settings: Settings,
    name: str,
    *,
    path: str | None = None,
    since: str | None = None,
    limit: int | None = None,
    diffs: bool = True,
    store: Store | None = None,
    now: datetime | None = None,
) -> History:
    """Every recorded version of the definition `name`, newest first (docs/symbol_history.md).

    `name` is a selector, `[PATH:]NAME[#N|:LINE][@VERSION]`: the file, the occurrence of the
    name in it or a line it holds now, a version the definition has (`select.py`).

    Args:
        path: the file (relative to the workspace root) when the name is in several.
        since: a Go duration: only versions recorded within it (default: all).
        diffs: False leaves out each version's diff (and reads at most the newest snapshot,
            to see whether its file defines the name more than once).
    """
    sel = parse_selector(name, path=path)
    first_us, wanted = _since_us(since, now), _limit(limit)
    store = store or reader(settings.db_url)  # kept open: a server pays no connection a call
    if store is None:  # no database yet: nothing is indexed
        return History(sel.name, "unknown", [], [], [])
    return _history(store, settings, sel, first_us, wanted, diffs)


def _history(store: Store, settings: Settings, sel: Selector, first_us: int,
             limit: int, diffs: bool) -> History:  # fmt: skip
    ws = workspace(store, settings)
    if ws is None:
        return History(sel.name, "unknown", [], [], [])
    lineages, suggestions = definitions(store, ws, sel)
    if not lineages:
        return History(sel.name, "unknown", [], [], suggestions)
    if len(lineages) > 1:
        candidates = [lin.candidate(sel.version) for lin in lineages]
        return History(sel.name, "ambiguous", [], candidates, [])
    newest_first = [v for v in reversed(lineages[0].versions) if v.row.ts_us >= first_us]
    texts = Texts(store, ws.root)
    page = [_record(v, texts, diffs=diffs) for v in newest_first[:limit]]
    return History(sel.name, "found", page, [], [], more=len(newest_first) > limit)


def symbol_source(
    settings: Settings,
    name: str,
    *,
    version: int | None = None,
    path: str | None = None,
    store: Store | None = None,
) -> dict[str, object]:
    """A definition's source text at a version (None: as the file is now on disk).

    `name` is a selector, `[PATH:]NAME[#N|:LINE][@VERSION]` (`select.py`). Returns name,
    path, kind, version, start_line, end_line and source.
    """
    sel = parse_selector(name, path=path, version=version)
    store = store or reader(settings.db_url)
    if store is None:
        raise ToolFailed(f"nothing is indexed at {settings.root}; run `symdiff index` first")
    return _source(store, settings, sel)


def current(root: str, lin: Lineage) -> tuple[bytes, Symbol | None]:
    """The definition's file as it is now on disk, and the definition in it (None: gone)."""
    r = lin.newest.row
    try:
        source = (Path(root) / r.path).read_bytes()
    except OSError as err:
        raise ToolFailed(f"cannot read {r.path}: {err.strerror or err}") from None
    if r.language is None:
        return source, None
    from symdiff.parse.extract import extract

    symbols = extract(r.language, source)
    named = sorted((s for s in symbols if s.name == r.name), key=lambda s: s.start_line)
    if lin.occurrence is not None and len(named) >= lin.occurrence:
        return source, named[lin.occurrence - 1]
    return source, find_symbol(symbols, r.name, r.start_line)


def _source(store: Store, settings: Settings, sel: Selector) -> dict[str, object]:
    version = sel.version
    try:
        ws, lin = lineage(store, settings, sel)
    except InvalidArgs:
        # A definition that never changed since the baseline has no version; in a named
        # file, it is still shown as it is now.
        unchanged = None if version is not None or sel.path is None else _on_disk(
            store, settings, sel)  # fmt: skip
        if unchanged is None:
            raise
        return unchanged
    if version is None:
        newest = lin.newest.row
        if lin.newest.removed:
            raise ToolFailed(f"{newest.name} was removed from {newest.path} at version "
                             f"{newest.change_id}; ask for an earlier version")
        source, sym = current(ws.root, lin)
        if sym is None:
            raise ToolFailed(f"{newest.name} is not in {newest.path} now; it was last recorded "
                             f"at version {newest.change_id}")
        where = newest.path
    else:
        v = version_of(lin, version)
        found = Texts(store, ws.root).side(v, new=True)
        if found is None:
            why = "removed it" if v.removed else "kept no text of it"
            raise ToolFailed(f"version {version} of {v.row.name} {why}")
        source, sym = found
        where = v.row.path
    return {"name": sym.name, "path": where, "kind": sym.kind, "version": version,
            "start_line": sym.start_line, "end_line": sym.end_line,
            "source": definition_text(source, sym).decode("utf-8", "replace")}  # fmt: skip


def _on_disk(store: Store, settings: Settings, sel: Selector) -> dict[str, object] | None:
    """The definition the selector names in its file as it is now, if the name is there once
    (or the selector picks one of several by occurrence or line)."""
    from symdiff.parse.extract import extract
    from symdiff.parse.languages import language_for

    ws = workspace(store, settings)
    rel = clean_path(sel.path, ws)
    if ws is None or rel is None or (language := language_for(rel)) is None:
        return None
    try:
        source = (Path(ws.root) / rel).read_bytes()
    except OSError:
        return None
    found = sorted((s for s in extract(language, source) if s.name == sel.name),
                   key=lambda s: s.start_line)  # fmt: skip
    if sel.occurrence is not None:
        found = found[sel.occurrence - 1 : sel.occurrence]
    elif sel.line is not None:
        found = [s for s in found if s.start_line <= sel.line <= s.end_line][-1:]
    if len(found) != 1:
        return None
    sym = found[0]
    return {"name": sym.name, "path": rel, "kind": sym.kind, "version": None,
            "start_line": sym.start_line, "end_line": sym.end_line,
            "source": definition_text(source, sym).decode("utf-8", "replace")}  # fmt: skip


VIEW_VERSIONS = 200  # versions listed beside a symbol's diff


def symbol_view(settings: Settings, *, name: str, path: str | None,
                version: int | None) -> dict[str, object]:  # fmt: skip
    """A definition's versions (newest first, without their diffs) and the symbol-scoped diff
    of `version` (None: the newest), or why there is none."""
    history = symbol_history(settings, name, path=path, limit=VIEW_VERSIONS,
                             diffs=False).as_dict()  # fmt: skip
    out: dict[str, object] = {"history": history, "version": version, "diff": None, "note": None}
    store = reader(settings.db_url)
    if history["status"] != "found" or store is None:
        return out
    try:
        ws, lin = lineage(store, settings, name, path=path)
        v = lin.newest if version is None else version_of(lin, version)
        out["version"] = v.id
        out["diff"] = Texts(store, ws.root).scoped_diff(v)
    except SymdiffError as err:
        out["note"] = err.reason
    if out["diff"] is None and out["note"] is None:
        out["note"] = "no text of this version is kept (a binary file or one over 4 MiB)"
    return out
