"""The live page's routes (Starlette): the static page, the event stream of records, a record's
patch, a symbol's versions and diff. Each endpoint parses, calls one function of
`symdiff.api`, formats; the door in front of them (Host, Origin, token) is `server.py`'s.

Events (`GET /api/events?scope=&origin=&path=&since=`, server-sent events): `hello` (the
workspace, the window's start, whether a daemon watches), `records` (a batch, oldest first;
its SSE id is the query cursor after it, so a page that reconnects resumes with
`Last-Event-ID` where it stopped), `live` (the window's backlog is all sent), `status` (a
daemon started or stopped watching), `trouble` (the database could not be read; retried) and
`problem` (a filter the query's rules refuse; the stream ends).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from symdiff.api import Follower, View, change_view, decode_cursor, symbol_view
from symdiff.api import watched as is_watched
from symdiff.config import Settings
from symdiff.errors import InvalidArgs, SymdiffError
from symdiff.timestamps import format_us

STATIC = Path(__file__).parent / "static"
POLL_S = 0.2  # how often a caught-up stream reads the store again
RETRY_MS = 1000  # how soon a page whose connection dropped reconnects
_BEAT_S = 15.0  # a comment line this often keeps proxies and dead peers honest
_STATUS_S = 2.0  # how often a stream looks whether a daemon watches


def _event(name: str, data: object, *, id_: str | None = None) -> str:
    head = f"event: {name}\n" + (f"id: {id_}\n" if id_ else "")
    return f"{head}data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def _view(request: Request) -> View:
    q = request.query_params
    return View(scope=q.get("scope", "all"), origin=q.getlist("origin") or None,
                path=[p for p in q.getlist("path") if p.strip()] or None,
                since=q.get("since", "24h"))  # fmt: skip


def _resume(request: Request) -> str | None:
    """The cursor a reconnecting page asks to resume from, if it is one."""
    last = request.headers.get("last-event-id")
    if not last:
        return None
    try:
        decode_cursor(last)
    except InvalidArgs:
        return None
    return last


class Routes:
    """The endpoints, over one workspace's settings."""

    def __init__(self, settings: Settings, *, poll_s: float = POLL_S,
                 stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.poll_s = poll_s
        self.stop = stop or threading.Event()  # set: the server stops, every stream ends

    def watched(self) -> bool:
        return is_watched(self.settings)

    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})

    async def events(self, request: Request) -> Response:
        after = _resume(request)
        try:
            follower = Follower(self.settings, _view(request), after=after)
        except SymdiffError as err:
            body = _event("problem", {"message": err.render()})
            return StreamingResponse(iter([body]), media_type="text/event-stream")
        return StreamingResponse(self._stream(follower, resumed=after is not None),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-store",
                                          "x-accel-buffering": "no"})  # fmt: skip

    async def _stream(self, follower: Follower, *, resumed: bool) -> AsyncIterator[str]:
        watched = self.watched()
        yield f"retry: {RETRY_MS}\n\n"
        yield _event("hello", {"root": str(self.settings.root),
                               "start": format_us(follower.start_us), "resumed": resumed,
                               "watched": watched})  # fmt: skip
        live = False
        beat = looked = time.monotonic()
        while not self.stop.is_set():
            try:
                step = await run_in_threadpool(follower.step)
            except SymdiffError as err:  # a database that went away: say so, try again
                yield _event("trouble", {"message": err.render()})
                await anyio.sleep(1.0)
                continue
            if step.records:
                yield _event("records", {"records": step.records}, id_=step.cursor)
                beat = time.monotonic()
            if step.more:
                continue
            if not live:
                live = True
                yield _event("live", {"cursor": step.cursor}, id_=step.cursor)
            now = time.monotonic()
            if now - looked > _STATUS_S:
                looked = now
                if (seen := await run_in_threadpool(self.watched)) != watched:
                    watched = seen
                    yield _event("status", {"watched": watched})
            if now - beat > _BEAT_S:
                beat = now
                yield ": beat\n\n"
            await anyio.sleep(self.poll_s)

    async def change(self, request: Request) -> Response:
        q = request.query_params
        return await _answer(lambda: change_view(
            self.settings, version=_int(q.get("version"), "version"), path=q.get("path", ""),
            timestamp=q.get("timestamp", "")))  # fmt: skip

    async def symbol(self, request: Request) -> Response:
        q = request.query_params
        version = q.get("version")
        return await _answer(lambda: symbol_view(
            self.settings, name=q.get("name", ""), path=q.get("path") or None,
            version=None if not version else _int(version, "version")))  # fmt: skip


def _int(value: str | None, name: str) -> int:
    if value is None or not value.isdigit():
        raise InvalidArgs(f"{name} must be a record's version number, got {value!r}")
    return int(value)


async def _answer(work: Callable[[], dict[str, object]]) -> Response:
    """Run a read in the thread pool: its answer as JSON, or `{"error": "code: reason"}`."""
    try:
        return JSONResponse(await run_in_threadpool(work), headers={"cache-control": "no-store"})
    except SymdiffError as err:
        status = 400 if isinstance(err, InvalidArgs) else 500
        return JSONResponse({"error": err.render()}, status_code=status)


def build_app(settings: Settings, *, poll_s: float = POLL_S,
              stop: threading.Event | None = None) -> Starlette:
    """The page's app for one workspace (without its door: see `server.guarded`); `stop`, once
    set, ends the event streams (so that a server can stop while pages are open)."""
    r = Routes(settings, poll_s=poll_s, stop=stop)
    return Starlette(routes=[
        Route("/", r.index),
        Route("/api/events", r.events),
        Route("/api/change", r.change),
        Route("/api/symbol", r.symbol),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])  # fmt: skip
