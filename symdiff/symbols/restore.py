"""Put one definition back as it was at a version, leaving the rest of the file as it is now.

The restore is a SEARCH/REPLACE edit handed to `apply_recorded` (what `api.apply_edits` runs), so
it gets that path's validation, atomic write, ACP preview, symbol preview and `edit` recording
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from symdiff.config import Settings
from symdiff.errors import InvalidArgs, ToolFailed
from symdiff.model import Symbol
from symdiff.store import Store
from symdiff.symbols.history import current
from symdiff.symbols.lineage import Lineage, Version, version_of
from symdiff.symbols.select import lineage as select_lineage
from symdiff.symbols.select import parse_selector
from symdiff.symbols.texts import Texts, definition_text, split_lines

__all__ = ["restore_symbol"]


def _same_ending(text: str, like: str) -> str:
    """`text` ending in a newline exactly when `like` does (a definition may have been the
    file's last line, without one)."""
    if like.endswith("\n") and not text.endswith("\n"):
        return text + "\n"
    if not like.endswith("\n") and text.endswith("\n"):
        return text[:-1]
    return text


def _neighbour_block(old_source: bytes, old_sym: Symbol, old_symbols: Sequence[Symbol],
                     now_source: bytes, now_symbols: Sequence[Symbol]) -> dict[str, str]:
    """A block that puts a definition no longer there back beside a former neighbour that still
    is: after the one that preceded it, else before the one that followed it."""
    siblings = [s for s in old_symbols if s.parent == old_sym.parent and s != old_sym]
    before = [s for s in siblings if s.end_line < old_sym.start_line]
    after = [s for s in siblings if s.start_line > old_sym.end_line]
    lines = split_lines(old_source)
    text = definition_text(old_source, old_sym).decode("utf-8")
    for neighbour in reversed(before[-1:]):
        now = [s for s in now_symbols if s.name == neighbour.name]
        if len(now) == 1:
            gap = b"".join(lines[neighbour.end_line : old_sym.start_line - 1]).decode("utf-8")
            found = definition_text(now_source, now[0]).decode("utf-8")
            head = found if found.endswith("\n") else found + "\n"
            return {"search": found, "replace": _same_ending(head + gap + text, found)}
    for neighbour in after[:1]:
        now = [s for s in now_symbols if s.name == neighbour.name]
        if len(now) == 1:
            gap = b"".join(lines[old_sym.end_line : neighbour.start_line - 1]).decode("utf-8")
            found = definition_text(now_source, now[0]).decode("utf-8")
            body = text if text.endswith("\n") else text + "\n"
            return {"search": found, "replace": body + gap + found}
    raise ToolFailed(f"{old_sym.name} is no longer in the file, and neither of its former "
                     "neighbours is there (once each) to place it beside")


def _block(store: Store, root: str, lin: Lineage, target: Version) -> dict[str, str]:
    from symdiff.parse.extract import extract

    found = Texts(store, root).side(target, new=True)
    if found is None:
        why = "removed the definition" if target.removed else "kept no text of it"
        raise ToolFailed(f"version {target.id} of {target.row.name} {why}: nothing to restore")
    old_source, old_sym = found
    now_source, now_sym = current(root, lin)
    if now_sym is not None:
        search = definition_text(now_source, now_sym).decode("utf-8")
        wanted = definition_text(old_source, old_sym).decode("utf-8")
        return {"search": search, "replace": _same_ending(wanted, search)}
    language = target.row.language
    assert language is not None  # a version with a text has a language
    return _neighbour_block(old_source, old_sym, extract(language, old_source), now_source,
                            extract(language, now_source))  # fmt: skip


def restore_symbol(
    settings: Settings,
    name: str,
    *,
    to: int,
    path: str | None = None,
    dry_run: bool = True,
    client: Mapping[str, object] | str = "cli",
    allow_write: Sequence[Path] = (),
) -> dict[str, object]:
    """Replace the definition `name` by its text at version `to` (docs/symbol_history.md).

    `name` is a selector, `[PATH:]NAME[#N|:LINE][@VERSION]` (`select.py`); without a version
    of its own, `to` tells same-named definitions apart. Returns what `apply_edits` returns (a
    preview when `dry_run`, the default), plus `restored`: {name, path, version}. Raises
    InvalidArgs for a name that names no single definition or a version it does not have,
    ToolFailed when there is nothing to restore.
    """
    if isinstance(to, bool) or not isinstance(to, int):
        raise InvalidArgs(f"to must be a version id (an integer), got {to!r}")
    sel = parse_selector(name, path=path)
    if sel.version is None:
        sel = replace(sel, version=to)
    from symdiff.record.applied import apply_recorded
    from symdiff.store.kept import reader

    store = reader(settings.db_url)
    if store is None:
        raise ToolFailed(f"nothing is indexed at {settings.root}; run `symdiff index` first")
    ws, lin = select_lineage(store, settings, sel)
    target = version_of(lin, to)
    block = _block(store, ws.root, lin, target)
    where = lin.newest.row.path
    edits = [{"file": where, "blocks": [block]}]
    result = apply_recorded(edits, settings=replace(settings, root=Path(ws.root)),
                         allow_write=allow_write, dry_run=dry_run, client=client)  # fmt: skip
    result["restored"] = {"name": target.row.name, "path": where, "version": to}
    return result

