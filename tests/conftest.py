"""Shared fixtures and helpers: stores on real SQLite and PostgreSQL, real git repositories
(one empty per test, or a session-built template copied per test), the command line run in the
process or as a real process, the daemon on a thread, and a deadline-bounded wait.

Test modules import helpers from here (`from conftest import git, symdiff_cli`), never from
each other.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from symdiff.config import Settings
    from symdiff.record.daemon import Daemon

T = TypeVar("T")

PG_ADMIN_URL = os.environ.get(
    "SYMDIFF_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _pg_reachable() -> str | None:
    """None when the server answers, else why not."""
    try:
        import psycopg

        with psycopg.connect(
            PG_ADMIN_URL.replace("postgresql+psycopg", "postgresql"), connect_timeout=3
        ):
            return None
    except Exception as exc:  # any failure to connect means: not reachable here
        return f"{exc.__class__.__name__}: {exc}"


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The admin URL of the PostgreSQL server; skips (or fails under CI) when unreachable."""
    why = _pg_reachable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is not reachable under CI: {why}")
        pytest.skip(f"PostgreSQL at {PG_ADMIN_URL} is not reachable: {why}")
    return PG_ADMIN_URL


class _PgTurn:
    """One test at a time on the PostgreSQL server, across pytest-xdist's workers.

    Each test has a database of its own, but a PostgreSQL snapshot's xmin is the server's: a
    transaction open in any database holds back what cursors and gc may see as settled (see
    symdiff.store.changes). So tests that use the server take turns (an flock on a file the
    workers share), as they would in one process, while the other worker runs tests that do
    not. Re-entrant within a process (a template made while a test holds the turn).
    """

    def __init__(self) -> None:
        self.depth = 0
        self.fd: int | None = None

    @contextmanager
    def held(self, lock_file: Path) -> Iterator[None]:
        import fcntl

        if self.depth == 0:
            self.fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0 and self.fd is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
                self.fd = None


_PG_TURN = _PgTurn()


@pytest.fixture(scope="session")
def pg_lock_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file in the folder this session's workers share (the session's own folder when it
    runs without workers)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "postgres.lock"


@pytest.fixture
def _pg_turn(pg_server: str, pg_lock_file: Path) -> Iterator[None]:
    """This test's turn on the PostgreSQL server (see _PgTurn)."""
    with _PG_TURN.held(pg_lock_file):
        yield


@pytest.fixture
def pg_url(pg_server: str, _pg_turn: None) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards."""
    import psycopg

    name = f"symdiff_t_{uuid.uuid4().hex[:12]}"
    admin = pg_server.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = pg_server.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_head_template(pg_server: str, pg_lock_file: Path) -> Iterator[str]:
    """The name of a database at the current schema, made once per session (per worker) for
    pg_head_url to clone; nothing stays connected to it."""
    import psycopg

    from symdiff.store import Store

    name = f"symdiff_tpl_{uuid.uuid4().hex[:12]}"
    admin = pg_server.replace("postgresql+psycopg", "postgresql")
    with _PG_TURN.held(pg_lock_file):
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        with Store(f"{pg_server.rsplit('/', 1)[0]}/{name}"):  # migrates the empty database
            pass
    yield name
    with _PG_TURN.held(pg_lock_file), psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_head_url(pg_server: str, _pg_turn: None, pg_head_template: str) -> Iterator[str]:
    """A fresh PostgreSQL database for one test, already at the current schema (a copy of a
    session template: what a Store makes of pg_url's empty database on opening it, without
    running the migrations per test), dropped afterwards. Tests of the migrations themselves
    take pg_url."""
    import psycopg

    name = f"symdiff_t_{uuid.uuid4().hex[:12]}"
    admin = pg_server.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_head_template}"')
    yield f"{pg_server.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite database file in a temporary directory."""
    return f"sqlite:///{tmp_path / 'db' / 'index.db'}"


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run git in a repository and return its stdout; `env` adds to (or overrides) a fixed
    identity and an empty global config."""
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True,
        env={**os.environ, **GIT_ENV, **(env or {})},
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository in a temporary directory."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


class Templates:
    """Directories (git repositories, say) built once per session by a builder, copied per test.

    `copy(name, build, dest)` builds `name` with `build(path)` the first time, then copies it to
    `dest` (a plain copy: the copy's .git is its own, so tests may commit, index and watch in it).
    """

    def __init__(self, base: Path) -> None:
        self.base = base
        self.built: dict[str, Path] = {}

    def get(self, name: str, build: Callable[[Path], object]) -> Path:
        """The template itself: for tests that only read it."""
        if name not in self.built:
            path = self.base / name
            path.mkdir()
            build(path)
            self.built[name] = path
        return self.built[name]

    def copy(self, name: str, build: Callable[[Path], object], dest: Path) -> Path:
        shutil.copytree(self.get(name, build), dest, symlinks=True)
        return dest


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    """Session-built directories, copied per test (see Templates)."""
    return Templates(tmp_path_factory.mktemp("templates"))


def make_settings(root: Path, db: str | None = None, **kw: Any) -> Settings:
    """Settings for `root` with the database beside it (ROOT/../db/index.db, outside the tree,
    so the tree holds only what the test wrote) unless `db` names one."""
    from symdiff.config import Settings

    return Settings.resolve(root, db=db or f"sqlite:///{root.parent / 'db' / 'index.db'}", **kw)


def daemon_settings(root: Path, **kw: Any) -> Settings:
    """Settings for a daemon watching `root`, as `symdiff watch` makes them (the database in
    ROOT/.symdiff/), with a short settle window so that tests wait less."""
    from symdiff.config import Settings

    return Settings.resolve(root, db=f"sqlite:///{root}/.symdiff/index.db",
                            **{"settle_ms": 20, **kw})


def wait_until(condition: Callable[[], T], *, timeout: float = 30, interval: float = 0.02,
               message: str | Callable[[], object] = "the condition") -> T:
    """Poll `condition` until it returns something truthy (returned), or fail at the deadline.
    For waits on other processes and threads that offer no event to wait on."""
    deadline = time.monotonic() + timeout
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            what = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


@contextmanager
def daemon_thread(settings: Settings, **kw: Any) -> Iterator[Daemon]:
    """The daemon in-process on a thread; stopped (and its errors raised) on exit."""
    from symdiff.record.daemon import Daemon

    d = Daemon(settings, **kw)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            d.run()
        except BaseException as exc:  # handed to the test thread
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert d.ready.wait(30)
    if errors:
        raise errors[0]
    try:
        yield d
    finally:
        d.stop()
        t.join(30)
        assert not t.is_alive()
    if errors:
        raise errors[0]


# ---- a database's rows, for upgrade tests ---------------------------------------------------

Rows = dict[str, list[tuple[object, ...]]]


def table_columns(url: str) -> dict[str, tuple[str, ...]]:
    """The tables of the database and their columns (Alembic's own table aside)."""
    from sqlalchemy import inspect

    from symdiff.store.engine import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            found = inspect(conn)
            return {n: tuple(c["name"] for c in found.get_columns(n))
                    for n in found.get_table_names() if n != "alembic_version"}  # fmt: skip
    finally:
        engine.dispose()


def table_rows(url: str, columns: Mapping[str, tuple[str, ...]]) -> Rows:
    """Every row of the given tables, in the given columns, in a stable order. Provenance texts
    are read as texts: revision 0011 stores them in `store.compact`'s form (tests/test_compact.py
    holds that form to the texts)."""
    from sqlalchemy import text

    from symdiff.store import compact
    from symdiff.store.engine import make_engine

    def read(table: str, column: str, value: object) -> object:
        if table == "provenance" and column in ("origin_info", "git") and isinstance(
                value, bytes | memoryview):  # fmt: skip
            return compact.decode(bytes(value))
        return value

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            out: Rows = {}
            for table, cols in columns.items():
                quoted = ", ".join(f'"{c}"' for c in cols)  # `binary` is a keyword on PostgreSQL
                rows = conn.execute(text(f"SELECT {quoted} FROM {table}"))
                out[table] = sorted((tuple(read(table, c, v) for c, v in zip(cols, r, strict=True))
                                     for r in rows), key=repr)  # fmt: skip
            return out
    finally:
        engine.dispose()


# ---- language fixtures -----------------------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
LANGUAGES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def sample_of(language: str) -> bytes:
    """The sample source file of a language's fixture directory (tests/fixtures/languages)."""
    (path,) = (p for p in (FIXTURES / language).iterdir() if p.name.startswith("sample"))
    return path.read_bytes()


# ---- the command line ----------------------------------------------------------------------


def head_starts(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Spy on `ParsePool.head_start`: whether each call started one (True) or declined, in
    order, in the list returned (the real method still runs)."""
    from symdiff.parse.pool import ParsePool

    started: list[bool] = []
    real = ParsePool.head_start

    def spy(pool: ParsePool, jobs: Any, change: Any) -> Any:
        head = real(pool, jobs, change)
        started.append(head is not None)
        return head

    monkeypatch.setattr(ParsePool, "head_start", spy)
    return started


def cli_entry() -> Callable[[], None]:
    """The console script's entry point (pyproject's [project.scripts] symdiff): the one place
    the tests name it."""
    from symdiff.cli.main import main

    return main


def cli_group() -> Any:
    """The click group behind the entry point (for walking its commands and options)."""
    from symdiff.cli.main import cli

    return cli


@contextmanager
def _fresh_logging() -> Iterator[None]:
    """Logging as a new process has it (no handlers, default levels) for the duration, then as
    it was: the commands configure logging as a process that exits afterwards would."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items()
              if isinstance(lg, logging.Logger)}
    root.handlers = []
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers, root.level = handlers, level
        for name, lg in logging.root.manager.loggerDict.items():
            if isinstance(lg, logging.Logger):
                lg.setLevel(levels.get(name, logging.NOTSET))


def symdiff_cli(*args: str, cwd: Path | None = None, input: str | None = None,
                env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`symdiff ARGS` run in this process through the console script's entry point, in `cwd`,
    with `env` laid over os.environ (None unsets), `input` on stdin; stdout and stderr apart.

    Gives what a real run gives (exit code, both streams) in milliseconds instead of half a
    second: use it wherever the process boundary is not what a test checks.
    """
    from click.testing import CliRunner

    entry = cli_entry()
    runner = CliRunner()
    old_cwd, old_argv = os.getcwd(), sys.argv
    code: int = 0
    with _fresh_logging(), runner.isolation(input=input, env=env) as (out, err, _):
        sys.argv = ["symdiff", *args]
        try:
            if cwd is not None:
                os.chdir(cwd)
            entry()
        except SystemExit as done:
            if done.code is None or isinstance(done.code, int):
                code = done.code or 0
            else:
                sys.stderr.write(f"{done.code}\n")
                code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.argv = old_argv
            os.chdir(old_cwd)
        stdout = out.getvalue().decode()
        stderr = err.getvalue().decode()
    return subprocess.CompletedProcess(["symdiff", *args], code, stdout, stderr)


def stored(
    store: object,
    *,
    workspace_ids: list[int] | None = None,
    since: object = None,
    scope: object = None,
    limit: int = 10**7,
) -> list[object]:
    """Every change a store holds (newest first) as domain values, as tests inspect them."""
    from datetime import UTC, datetime

    from symdiff.store import ChangeFilter, Store
    from symdiff.timestamps import to_us

    assert isinstance(store, Store)
    start = since if isinstance(since, datetime) else datetime(2000, 1, 1, tzinfo=UTC)
    return store.changes(ChangeFilter(workspace_ids, to_us(start), scope, limit))  # type: ignore[arg-type, return-value]


@pytest.fixture(autouse=True)
def _close_kept_readers() -> Iterator[None]:
    """The query keeps read-only stores open for the process; each test starts without any."""
    yield
    from symdiff.store.kept import close_all

    close_all()


# ---- the order the two workers take the files in ---------------------------------------------

# The files that take longest (seconds on this 2-core machine, `pytest --durations=0`, summed
# per file), given out first: `--dist loadfile` hands a worker its next file when it is free, so
# a long file taken last leaves the other worker idle to the end.
SLOWEST_FIRST = ("test_agents_replay.py", "test_daemon.py", "test_blame.py", "test_ui.py",
                 "test_indexer_edges.py", "test_gc.py", "test_httpguard.py", "test_status.py",
                 "test_query.py", "test_cli.py", "test_impact.py", "test_ui_agents.py",
                 "test_mcp.py")  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: k for k, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest as found
