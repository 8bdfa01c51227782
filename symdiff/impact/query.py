"""`impact`: the callers and the tests that changed symbols reach (docs/impact.md).

The changed symbols come from a `diff` window (`since`), the work tree `against` a revision, an
agent's `session` (and `turn`), or are given by name; the reference index (index.py) is walked
from them by `symdiff.graph`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from symdiff.config import Settings
from symdiff.errors import InvalidArgs
from symdiff.graph import Changed, Graph
from symdiff.records import ChangeRecord
from symdiff.store.store import Store

DEFAULT_DEPTH = 2
MAX_DEPTH = 10
MAX_SYMBOLS = 200  # names given at once
SESSION_WINDOW = "720h"  # the longest window a diff reads


@dataclass(frozen=True, slots=True)
class ImpactQuery:
    """What to start from: at most one of `since`, `against`, `session` (with `turn`) and
    `symbols`; none means `since` at the diff's default window (24h). A session without
    `turn` reads its records of the last 720h."""

    since: object = None
    against: object = None
    session: object = None
    turn: object = None
    symbols: object = ()
    depth: object = DEFAULT_DEPTH


def check(query: ImpactQuery) -> tuple[int, tuple[str, ...]]:
    """The depth and the given names of a query whose arguments hold; InvalidArgs otherwise."""
    depth = query.depth
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidArgs(f"depth is a whole number from 0 to {MAX_DEPTH}, got {depth!r}")
    symbols = query.symbols
    if isinstance(symbols, str):
        symbols = (symbols,)
    if not isinstance(symbols, (list, tuple)) or not all(
            isinstance(s, str) and s.strip() for s in symbols):  # fmt: skip
        raise InvalidArgs("symbols is a list of names: 'Name', 'Class.method' or 'path:Name'")
    if len(symbols) > MAX_SYMBOLS:
        raise InvalidArgs(f"at most {MAX_SYMBOLS} symbols at once, got {len(symbols)}")
    given = [name for name, value in (("since", query.since), ("against", query.against),
                                      ("session", query.session), ("symbols", symbols))
             if value not in (None, (), [])]  # fmt: skip
    if len(given) > 1:
        raise InvalidArgs("give one of since, against, session and symbols, not "
                          + " and ".join(given))
    if query.turn is not None and query.session is None:
        raise InvalidArgs("turn needs session: the turn of which agent session")
    return depth, tuple(s.strip() for s in symbols)


def changed_of(records: Sequence[ChangeRecord]) -> list[Changed]:
    """The changed symbols of records, newest first: each (path, name) once, as its newest
    record has it; a renamed symbol's old name is also a change (its callers name it)."""
    seen: dict[tuple[str, str], Changed] = {}
    for record in records:
        for symbol in record["symbols"]:
            key = (record["path"], symbol["name"])
            if key not in seen:
                seen[key] = Changed(record["path"], symbol["name"], symbol["change_type"])
            old = symbol.get("renamed_from")
            if isinstance(old, str) and (record["path"], old) not in seen:
                seen[(record["path"], old)] = Changed(record["path"], old, "removed")
    return list(seen.values())


def impact(settings: Settings, query: ImpactQuery, *, store: Store | None = None
           ) -> dict[str, object]:  # fmt: skip
    """The impact of the query's changed symbols, as the issue's JSON: `changed`, `callers`,
    `tests`, `run`. InvalidArgs on bad arguments or a name that no definition has."""
    depth, names = check(query)
    with _opened(settings, store) as (store, graph):
        changed = _given(graph, names) if names else _recorded(settings, query, store)
        return graph.impact_json(changed, depth=depth)


def impact_of(settings: Settings, records: Sequence[ChangeRecord], *, depth: int = DEFAULT_DEPTH,
              store: Store | None = None) -> dict[str, object]:  # fmt: skip
    """The impact of the symbols these records changed (`diff(include_impact=true)`)."""
    with _opened(settings, store) as (_, graph):
        return graph.impact_json(changed_of(records), depth=depth)


@contextmanager
def _opened(settings: Settings, store: Store | None) -> Iterator[tuple[Store, Graph]]:
    """The store (unless given, the process's kept one: a server asking many questions opens
    it once) and the workspace's graph, brought up to date."""
    from symdiff.impact.index import LOCK, current
    from symdiff.store.kept import writer

    store = store if store is not None else writer(settings.db_url)
    ws = store.find_workspace(str(settings.root), settings.host)
    if ws is None:
        raise InvalidArgs(f"{settings.root} is not indexed: run `symdiff index` or "
                          "`symdiff watch` there first")
    with LOCK:  # another thread's call must not update the graph mid-walk
        yield store, current(settings, store, ws.id)


def _given(graph: Graph, names: Sequence[str]) -> list[Changed]:
    out: dict[tuple[str, str], Changed] = {}
    for name in names:
        found = graph.find(name)
        if not found:
            raise InvalidArgs(f"no definition named {name!r} in the reference index")
        for hit in found:
            out.setdefault((hit.path, hit.name), hit)
    return list(out.values())


def _recorded(settings: Settings, query: ImpactQuery, store: Store) -> list[Changed]:
    from symdiff.query.answer import diff
    from symdiff.query.args import DEFAULT_SINCE, MAX_LIMIT, DiffQuery

    since = query.since
    if since is None:  # a session's window is the session; else the diff's default
        since = SESSION_WINDOW if query.session is not None else DEFAULT_SINCE
    found = diff(settings, DiffQuery(since=since, limit=MAX_LIMIT, scope="all",
                                     against=query.against, session=query.session,
                                     turn=query.turn), store=store)  # fmt: skip
    return changed_of(found.records)
