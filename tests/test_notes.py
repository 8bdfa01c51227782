"""The query decides which notes an answer carries; the adapters only word them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from symdiff.config import Settings
from symdiff.model import ChangeType, FileChange, Scope
from symdiff.query.answer import DiffQuery, diff
from symdiff.query.result import (
    BaselineTaken,
    Hidden,
    LimitReplaced,
    NothingIndexed,
    Refreshed,
    SinceCut,
    Stale,
    StartPass,
    Unwatched,
)
from symdiff.store import Mutation, Store

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
HOST = "host-a"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'index.db'}") as s:
        yield s


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    root = tmp_path / "ws"
    root.mkdir()
    return Settings(root=root.resolve(), db_url="sqlite://", host=HOST)


def add(store: Store, settings: Settings, path: str, scope: Scope = Scope.IMPL) -> None:
    ws = store.ensure_workspace(str(settings.root), HOST)
    change = FileChange(path=path, old_path=None, timestamp=NOW - timedelta(minutes=5),
                        change_type=ChangeType.MODIFY, lines_added=1, lines_removed=0,
                        scope=scope, language="python", symbols=())  # fmt: skip
    store.apply(ws.id, [Mutation(blobs=(), change=change)])


def notes(settings: Settings, store: Store, **kwargs: object) -> tuple[object, ...]:
    refreshed = kwargs.pop("refreshed", None)
    query = DiffQuery(**kwargs)  # type: ignore[arg-type]
    return diff(settings, query, store=store, now=NOW, explain=True,
                refreshed=refreshed).notes  # type: ignore[arg-type]  # fmt: skip


def test_an_unindexed_workspace_says_so_and_nothing_else(settings: Settings,
                                                          store: Store) -> None:  # fmt: skip
    root = str(settings.root)
    assert notes(settings, store) == (NothingIndexed(root),)
    assert diff(settings, DiffQuery(), store=store, now=NOW).notes == ()  # only when asked


def test_an_unwatched_index_says_up_to_when(settings: Settings, store: Store) -> None:
    add(store, settings, "a.py")
    assert notes(settings, store) == (Unwatched(str(settings.root), "2026-11-22T11:55:00.000000Z"),)
    mine = notes(settings, store, workspace=str(settings.root))  # its own root, by name
    assert mine == notes(settings, store)
    assert notes(settings, store, workspace="all") == ()  # not the caller's own workspace


def test_a_refresh_that_took_the_baseline_replaces_the_daemon_note(settings: Settings,
                                                                   store: Store) -> None:
    add(store, settings, "a.py")
    root = str(settings.root)
    assert notes(settings, store, refreshed=Refreshed(True, 3)) == (BaselineTaken(root, 3),)
    assert notes(settings, store, refreshed=Refreshed(False, 3)) == ()


def test_the_arguments_notes_come_first_and_the_hidden_count_last(settings: Settings,
                                                                   store: Store) -> None:
    add(store, settings, "a.py")
    add(store, settings, "tests/test_a.py", Scope.TEST)
    got = notes(settings, store, limit="lots", since="1000h")
    assert got[:2] == (LimitReplaced("lots", 50, 500), SinceCut("1000h", "720h"))
    assert isinstance(got[2], Unwatched) and got[3] == Hidden(1, "test")
    assert notes(settings, store, limit="10", since="720h", scope="all")[:-1] == ()
    # After a cursor the window does not bound the answer: no cut to tell.
    cursor = diff(settings, DiffQuery(), store=store, now=NOW).cursor
    assert not any(isinstance(n, SinceCut)
                   for n in notes(settings, store, since="1000h", cursor=cursor))  # fmt: skip


def test_the_adapters_word_the_same_notes_their_own_way(settings: Settings) -> None:
    from symdiff.cli.display import note_text as cli_text
    from symdiff.mcp.server import note_text as mcp_text

    root = settings.root
    stale = Stale(str(root), StartPass("baseline", 3, 10))
    assert cli_text(stale) == (
        f"warning: the daemon watching {root} is still making its baseline (3/10 files read); "
        "the answer may miss changes until it is done (`symdiff status` shows its progress)")
    assert mcp_text(stale) is None  # the tool's `stale` field and warning say it
    unwatched = Unwatched(str(root), None)
    assert cli_text(unwatched) == (
        f"no daemon watches {root}: changes since it was last indexed are not shown; run "
        "`symdiff watch` to keep it current, or add --refresh")
    assert mcp_text(unwatched) == (
        f"note: no symdiff daemon watches {root}: changes made since it was last indexed are "
        "missing; start `symdiff watch` there to keep the answer current")
