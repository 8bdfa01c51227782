"""Shared fixtures: stores on real SQLite and PostgreSQL, and temporary repositories."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

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


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
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


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite database file in a temporary directory."""
    return f"sqlite:///{tmp_path / 'db' / 'index.db'}"


def git(repo: Path, *args: str) -> str:
    """Run git in a repository and return its stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository in a temporary directory."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


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
