"""`symdiff ui` (issue 18): real `symdiff ui` processes, their endpoints spoken to over raw HTTP
(the door, the event stream, the reads), the stream followed in-process on a real SQLite
database, the page in a real headless Chromium (Debian's `chromium` and `chromedriver`,
driven by Selenium) beside a real `symdiff watch`, and the wheel's static files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from browser import CHROMEDRIVER, CHROMIUM, Live, Ui, chrome, needs_browser, ui
from conftest import cli_entry, git, wait_until
from mcp.client.session import ClientSession
from mcp_servers import call, env, run_stdio, text_of

from symdiff.config import Settings
from symdiff.query.follow import Follower, View

# ---- helpers: a real `symdiff ui`, its event stream ----------------------------------------






def get(url: str, **headers: str) -> httpx2.Response:
    with httpx2.Client(timeout=10) as client:
        return client.get(url, headers=headers)


def events(url: str, until: Callable[[list[tuple[str, Any]]], bool], *, timeout: float = 10,
           **headers: str) -> list[tuple[str, Any]]:  # fmt: skip
    """The stream's events, read until `until` holds for those read (or the stream ends)."""
    seen: list[tuple[str, Any]] = []
    name, data, last_id = "message", "", None
    deadline = time.monotonic() + timeout
    with httpx2.Client(timeout=httpx2.Timeout(timeout)) as client, \
            client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line.startswith("id: "):
                last_id = line[4:]
            elif line == "" and data:
                payload = json.loads(data)
                if isinstance(payload, dict) and last_id is not None:
                    payload["_id"] = last_id
                seen.append((name, payload))
                name, data, last_id = "message", "", None
                if until(seen):
                    return seen
            if time.monotonic() > deadline:
                break
    return seen


def names(seen: list[tuple[str, Any]]) -> list[str]:
    return [n for n, _ in seen]


def paths(seen: list[tuple[str, Any]]) -> list[str]:
    return [r["path"] for n, d in seen if n == "records" for r in d["records"]]


def has(name: str) -> Callable[[list[tuple[str, Any]]], bool]:
    return lambda seen: name in names(seen)


def settings_of(root: Path) -> Settings:
    """The settings `symdiff ui` resolves in the tests' environment (its host name)."""
    return Settings.resolve(root, host=env()["SYMDIFF_HOST"])


def indexed(root: Path) -> None:
    """One pass of the real indexer, in this process (as `symdiff index` runs it)."""
    from symdiff.api import index

    index(settings_of(root), show_progress=False)


def make_tree(root: Path) -> Path:
    """An indexed tree with two recorded changes: mod.py (impl) and test_mod.py (test)."""
    root.mkdir(parents=True)
    (root / "mod.py").write_text("def f():\n    return 1\n\n\nclass A:\n    def m(self, x):\n"
                                 "        return x\n")  # fmt: skip
    (root / "test_mod.py").write_text("def test_f():\n    assert True\n")
    indexed(root)
    (root / "mod.py").write_text("def f():\n    return 2\n\n\nclass A:\n    def m(self, x, y):\n"
                                 "        return x\n")  # fmt: skip
    (root / "test_mod.py").write_text("def test_f():\n    assert 1\n")
    indexed(root)
    return root.resolve()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree the tests only read (a test that writes makes its own)."""
    return make_tree(tmp_path_factory.mktemp("ui") / "ws")


@pytest.fixture(scope="module")
def served(tree: Path) -> Iterator[Ui]:
    """`symdiff ui` on `tree`, with its defaults (loopback, no token)."""
    with ui(tree, "--allow-host", "symdiff.example") as running:
        yield running


# ---- the door: Host, Origin, token ---------------------------------------------------------


def test_the_page_is_served_with_headers_that_keep_it_to_itself(served: Ui) -> None:
    assert served.url.startswith("http://127.0.0.1:") and "token" not in served.url
    page = get(served.base + "/")
    assert page.status_code == 200 and "<script src=\"/static/ui.js\">" in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp and page.headers["x-frame-options"] == "DENY"
    for name in ("ui.js", "ui.css"):
        asset = get(f"{served.base}/static/{name}")
        assert asset.status_code == 200 and asset.headers["x-content-type-options"] == "nosniff"
    # Nothing the page loads comes from another origin (it works offline).
    for name in ("index.html", "ui.js", "ui.css"):
        text = get(f"{served.base}/static/{name}").text
        assert not re.search(r"(?:src|href)=\"?(?:https?:)?//", text), name
        assert "@import" not in text and "fonts.googleapis" not in text
    assert get(served.base + "/static/../feed.py").status_code == 404
    assert get(served.base + "/api/nothing").status_code == 404


def test_a_foreign_host_or_origin_is_refused(served: Ui) -> None:
    port = served.base.rsplit(":", 1)[1]
    for path in ("/", "/api/events", "/static/ui.js", "/api/symbol?name=f"):
        refused = get(served.base + path, host=f"evil.example:{port}")
        assert refused.status_code == 421, path
        assert "host not allowed" in refused.json()["error"]["message"]
        assert "symdiff ui with --allow-host" in refused.json()["error"]["message"]
        assert get(served.base + path, origin="http://evil.example").status_code == 403
    assert get(served.base + "/", host=f"symdiff.example:{port}").status_code == 200
    assert get(served.base + "/", origin=served.base).status_code == 200


def test_a_token_is_required_on_a_non_loopback_bind(tree: Path) -> None:
    proc_env = env()
    with ui(tree, "--http", "0.0.0.0:0", environ=proc_env) as served:
        err = "".join(served.lines)
        assert "warning: the page at http://0.0.0.0:" in err and "token" in err
        token = served.url.split("?token=", 1)[1]
        assert len(token) >= 40 and served.url.startswith("http://0.0.0.0:")
        for path in ("/", "/api/events", "/static/ui.js", "/api/change?version=1"):
            refused = get(served.base + path)
            assert refused.status_code == 401, path
            assert "/?token=" in refused.json()["error"]["message"]
            assert get(served.base + path + ("&" if "?" in path else "?") + "token=guess"
                       ).status_code == 401  # fmt: skip
        # The URL it printed opens the page and leaves a cookie that the page's requests carry.
        opened = get(f"{served.base}/?token={token}")
        assert opened.status_code == 200
        cookie = opened.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token in cookie
        jar = cookie.split(";", 1)[0]
        assert get(served.base + "/static/ui.js", cookie=jar).status_code == 200
        assert get(served.base + "/static/ui.js", cookie=jar.replace(token, "x")
                   ).status_code == 401  # fmt: skip
        seen = events(served.base + "/api/events", has("live"), cookie=jar)
        assert paths(seen) == ["mod.py", "test_mod.py"]
        assert get(served.base + "/", authorization=f"Bearer {token}").status_code == 200
        # The token does not stand in for the Host check (DNS rebinding).
        assert get(f"{served.base}/?token={token}", host="evil.example").status_code == 421


def test_a_given_token_is_asked_on_loopback_too_and_open_opens_its_url(tree: Path,
                                                                     tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    # Python's webbrowser runs $BROWSER with the URL for %s: here, a program that notes it.
    browser = (f"{sys.executable} -c \"import sys; open({str(opened)!r}, 'w')"
               ".write(sys.argv[1])\" %s")
    with ui(tree, "--token", "s3cret", "--open", environ=env(BROWSER=browser)) as served:
        assert served.url.endswith("/?token=s3cret")
        assert get(served.base + "/").status_code == 401
        assert get(served.base + "/?token=s3cret").status_code == 200
        deadline = time.monotonic() + 10
        while not (opened.exists() and opened.read_text()):
            assert time.monotonic() < deadline, "the browser was not started"
            time.sleep(0.05)
        assert opened.read_text() == served.url


# ---- the event stream and the reads --------------------------------------------------------


def test_the_stream_sends_the_window_then_each_new_record(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "ws")
    with ui(tree) as served:
        seen = events(served.base + "/api/events", has("live"))
        assert names(seen) == ["hello", "records", "live"]
        hello = seen[0][1]
        assert hello["root"] == str(tree) and hello["resumed"] is False
        assert hello["watched"] is False
        assert paths(seen) == ["mod.py", "test_mod.py"]  # oldest first, in the cursor's order
        record = seen[1][1]["records"][0]
        assert isinstance(record["version"], int)
        assert [s["name"] for s in record["symbols"]] == ["f", "A.m"]
        cursor = seen[2][1]["cursor"]

        # Resuming with the last event's id sends only what was recorded after it.
        (tree / "new.py").write_text("def g():\n    pass\n")

        def recorded_later(seen: list[tuple[str, Any]]) -> bool:
            if names(seen) == ["hello", "live"]:  # caught up before the write was indexed
                indexed(tree)
            return "new.py" in paths(seen)

        resumed = events(served.base + "/api/events", recorded_later,
                         **{"last-event-id": cursor})  # fmt: skip
        assert resumed[0][1]["resumed"] is True
        assert paths(resumed) == ["new.py"]


def test_the_filters_are_the_querys(served: Ui) -> None:
    base = served.base + "/api/events"
    assert paths(events(base + "?scope=test", has("live"))) == ["test_mod.py"]
    assert paths(events(base + "?scope=impl", has("live"))) == ["mod.py"]
    assert paths(events(base + "?path=test_*", has("live"))) == ["test_mod.py"]
    assert paths(events(base + "?path=*.py&path=!mod.py", has("live"))) == ["test_mod.py"]
    assert paths(events(base + "?origin=edit", has("live"))) == []
    assert paths(events(base + "?origin=scan&origin=edit", has("live"))) == [
        "mod.py", "test_mod.py"]
    assert paths(events(base + "?since=1us", has("live"))) == []
    for bad, words in (("since=7d", "no day unit"), ("scope=everything", "scope must be"),
                       ("origin=robot", "origin must be")):  # fmt: skip
        seen = events(f"{base}?{bad}", lambda s: False)
        assert names(seen) == ["problem"], bad
        assert words in seen[0][1]["message"] and "invalid_args" in seen[0][1]["message"]


def test_a_records_patch_and_a_symbols_history_and_diff(served: Ui) -> None:
    seen = events(served.base + "/api/events", has("live"))
    record = seen[1][1]["records"][0]
    q = {"version": record["version"], "path": "mod.py", "timestamp": record["timestamp"]}
    with httpx2.Client(timeout=10) as client:
        change = client.get(served.base + "/api/change", params=q).json()
        assert change["record"] == record and change["truncated"] is False
        assert change["patch"].startswith("diff --git a/mod.py b/mod.py\n")
        assert "-    return 1\n+    return 2\n" in change["patch"]
        wrong = client.get(served.base + "/api/change", params={**q, "path": "test_mod.py"})
        assert wrong.status_code == 400 and "no record" in wrong.json()["error"]
        bad = client.get(served.base + "/api/change", params={**q, "version": "x"})
        assert bad.status_code == 400 and bad.json()["error"].startswith("invalid_args:")

        symbol = client.get(served.base + "/api/symbol", params={
            "name": "A.m", "path": "mod.py", "version": record["version"]}).json()
        assert symbol["history"]["status"] == "found" and symbol["note"] is None
        [version] = symbol["history"]["versions"]
        assert version["version"] == record["version"]
        assert version["change_type"] == "signature_changed"
        assert symbol["diff"] == ("--- a/mod.py\n+++ b/mod.py\n@@ -6,2 +6,2 @@\n"
                                  "-    def m(self, x):\n+    def m(self, x, y):\n"
                                  "         return x\n")  # fmt: skip
        unknown = client.get(served.base + "/api/symbol", params={"name": "Nowhere"}).json()
        assert unknown["history"]["status"] == "unknown" and unknown["diff"] is None


def test_a_follower_reads_its_window_then_whatever_is_written_after(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "ws")
    settings = settings_of(tree)
    follower = Follower(settings, View())
    first = follower.step()
    assert [r["path"] for r in first.records] == ["mod.py", "test_mod.py"]
    assert not first.more and follower.step().records == []
    # A window that starts after the records leaves them out, and takes what comes next.
    later = Follower(settings, View(since="1h"), now=datetime.now(UTC) + timedelta(hours=2))
    assert later.step().records == []
    (tree / "mod.py").write_text("def f():\n    return 3\n")
    indexed(tree)
    assert [r["path"] for r in follower.step().records] == ["mod.py"]
    assert later.step().records == []  # recorded before its window starts


def test_ctrl_c_ends_the_open_streams_and_stops(tree: Path) -> None:
    import signal
    import socket

    with ui(tree) as served:
        port = int(served.base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            received = b""
            while b"event: live" not in received:
                received += conn.recv(65536)
            served.proc.send_signal(signal.SIGINT)
            served.proc.wait(timeout=10)  # (click's "Aborted!", as for any command)
            while chunk := conn.recv(65536):  # the stream was ended, not cut
                received += chunk
            assert received.endswith(b"0\r\n\r\n")  # the chunked body's last chunk
        assert served.proc.stderr is not None
        said = served.proc.stderr.read()
        assert "ERROR" not in said and "Traceback" not in said, said


@pytest.mark.postgres
def test_the_reads_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    settings = Settings.resolve(root, db=pg_url, host=env()["SYMDIFF_HOST"])
    from symdiff.api import index

    (root / "mod.py").write_text("def f():\n    return 1\n")
    index(settings, show_progress=False)
    follower = Follower(settings, View())
    assert follower.step().records == []
    for n in (2, 3):
        (root / "mod.py").write_text(f"def f(x):\n    return {n}\n")
        index(settings, show_progress=False)
    # A transaction open anywhere on the server holds a cursor page back (docs/query.md:
    # late, never lost), so the follower steps until both records are there.
    records: list[dict[str, Any]] = []
    wait_until(lambda: records.extend(follower.step().records) or len(records) >= 2,
               timeout=30, message=lambda: f"two records, got {records}")
    assert [r["symbols"][0]["change_type"] for r in records] == ["signature_changed", "modified"]
    from symdiff.api import change_view, symbol_view

    first = change_view(settings, version=records[0]["version"], path="mod.py",
                        timestamp=records[0]["timestamp"])  # fmt: skip
    assert "-def f():\n-    return 1\n+def f(x):\n+    return 2\n" in first["patch"]
    symbol = symbol_view(settings, name="f", path="mod.py", version=records[1]["version"])
    assert [v["version"] for v in symbol["history"]["versions"]] == [
        records[1]["version"], records[0]["version"]]
    assert symbol["diff"].endswith("-    return 2\n+    return 3\n")


# ---- the package ships the page ------------------------------------------------------------


def test_the_package_ships_the_static_files(tmp_path: Path) -> None:
    # setuptools' build_py lays out what the wheel holds (packages and package data), from a
    # fresh copy of the sources (no egg-info from an earlier build to fill the gaps).
    repo = Path(__file__).resolve().parent.parent
    src = tmp_path / "src"
    for name in ("symdiff", "migrations"):
        shutil.copytree(repo / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, src / name)
    build = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q",
                            "build_py", "--build-lib", str(tmp_path / "lib")], cwd=src,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert build.returncode == 0, build.stderr
    static = tmp_path / "lib" / "symdiff" / "ui" / "static"
    assert sorted(p.name for p in static.iterdir()) == ["index.html", "ui.css", "ui.js"]
    # The page served from that layout alone (not this checkout): -S skips the editable
    # install's path hook; the dependencies come from this environment's site-packages.
    site = next(p for p in sys.path if p.endswith("site-packages"))
    entry = cli_entry()
    code = ("import sys; sys.path[:0] = sys.argv[1:3]; del sys.argv[1:3]; "
            "import symdiff.ui.app as a; assert a.STATIC.is_relative_to(sys.path[0]), a.STATIC; "
            f"from {entry.__module__} import {entry.__name__} as main; "
            "sys.argv[0] = 'symdiff'; main()")
    root = tmp_path / "ws"
    root.mkdir()
    proc = subprocess.Popen([sys.executable, "-S", "-c", code, str(tmp_path / "lib"), site,
                             "ui", "--root", str(root), "--http", "127.0.0.1:0"],
                            env=env(), stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "the page is at" in line, line + proc.stderr.read()
        base = line.split("the page is at ", 1)[1].strip().rstrip("/")
        for path in ("/", "/static/ui.js", "/static/ui.css"):
            assert get(base + path).status_code == 200, path
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr is not None:
            proc.stderr.close()


# ---- the page in a real browser ------------------------------------------------------------





def _daemon_ready(root: Path) -> bool:
    try:
        status = json.loads((root / ".symdiff" / "daemon.json").read_text())
    except (OSError, ValueError):
        return False
    return status.get("progress") is None and status.get("last_reconcile") is not None


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no headless browser (chromium, chromedriver)")
    root = (tmp_path_factory.mktemp("live") / "ws").resolve()
    for name in ("src", "agent", "branch"):
        (root / name).mkdir(parents=True)
    (root / "src" / "app.py").write_text("def serve(port):\n    return port\n\n\n"
                                         "def stop():\n    return None\n")  # fmt: skip
    (root / "agent" / "job.py").write_text("def run():\n    return 0\n")
    (root / "branch" / "work.py").write_text("def work():\n    return 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    log = (root.parent / "watch.log").open("w")
    daemon = subprocess.Popen([sys.executable, "-m", "symdiff", "watch", str(root),
                               "--no-history"], env=env(), stdout=log, stderr=log)  # fmt: skip
    driver = None
    try:
        deadline = time.monotonic() + 30
        while not _daemon_ready(root):
            assert daemon.poll() is None and time.monotonic() < deadline, "watch did not start"
            time.sleep(0.05)
        with ui(root) as served:
            driver = chrome()
            yield Live(root, served, driver)
    finally:
        if driver is not None:
            driver.quit()
        daemon.terminate()
        daemon.wait(timeout=20)
        log.close()


@needs_browser
def test_a_save_on_disk_shows_on_the_page_within_a_second(live: Live) -> None:
    live.load()
    assert live.js("return document.getElementById('watched').textContent") == "daemon watching"
    (live.root / "src" / "app.py").write_text("def serve(port, host):\n    return port\n\n\n"
                                              "def stop():\n    return 0\n")  # fmt: skip
    saved = time.monotonic()
    row = live.wait(lambda: live.shown("src/app.py"), timeout=5, step=0.01)
    took = time.monotonic() - saved
    assert took < 1.0, f"the save showed after {took:.2f} s"
    assert row["who"] == "watch"
    assert row["symbols"] == [["serve", "sym signature_changed"], ["stop", "sym modified"]]
    # A new file is the newest row, above it.
    (live.root / "src" / "util.py").write_text("def helper():\n    return 1\n")
    live.wait(lambda: live.rows()[0]["path"] == "src/util.py")
    assert live.rows()[0]["symbols"] == [["helper", "sym added"]]


@needs_browser
def test_an_agents_apply_edits_shows_with_its_origin(live: Live) -> None:
    live.load()

    async def edit(session: ClientSession) -> None:
        result = await call(session, "apply_edits", {"dry_run": False, "edits": [
            {"file": "agent/job.py", "blocks": [{"search": "def run():\n",
                                                 "replace": "def run(task):\n"}]}]})
        assert not result.is_error, text_of(result)

    run_stdio(["--root", str(live.root)], edit, cwd=live.root)
    row = live.wait(lambda: live.shown("agent/job.py"))
    assert row["who"].startswith("edit by ") and row["who"] != "edit by "
    assert row["symbols"] == [["run", "sym signature_changed"]]


@needs_browser
def test_a_branch_switch_shows_as_git(live: Live) -> None:
    root = live.root
    git(root, "checkout", "-qb", "topic")
    (root / "branch" / "work.py").write_text("def work():\n    return 2\n")
    git(root, "commit", "-qm", "topic work", "--", "branch/work.py")
    live.load()
    # The daemon records a git operation once git has let go of the tree (origins.py), which
    # may take longer than a plain save: the page shows it when it is recorded.
    first = live.wait(lambda: live.shown("branch/work.py"), timeout=30)
    git(root, "checkout", "-q", "main")
    row = live.wait(lambda: (r := live.shown("branch/work.py")) != first and r, timeout=30)
    assert row["who"] == "git checkout" and row["symbols"] == [["work", "sym modified"]]
    assert (root / "branch" / "work.py").read_text() == "def work():\n    return 1\n"


@needs_browser
def test_filters_change_what_is_shown(live: Live) -> None:
    from selenium.webdriver.support.ui import Select

    (live.root / "filt" / "tests").mkdir(parents=True)
    (live.root / "filt" / "impl.py").write_text("def a():\n    return 1\n")
    (live.root / "filt" / "tests" / "test_impl.py").write_text("def test_a():\n    pass\n")
    both = {"filt/impl.py", "filt/tests/test_impl.py"}

    def shown_paths() -> set[str]:
        return {r["path"] for r in live.rows()}

    live.load("path=filt/")
    assert live.driver.find_element("id", "f-path").get_attribute("value") == "filt/"
    live.wait(lambda: shown_paths() == both)
    scope = Select(live.driver.find_element("id", "f-scope"))
    scope.select_by_value("test")
    live.wait(lambda: shown_paths() == {"filt/tests/test_impl.py"})
    scope.select_by_value("impl")
    live.wait(lambda: shown_paths() == {"filt/impl.py"})
    scope.select_by_value("all")
    live.wait(lambda: shown_paths() == both)
    path = live.driver.find_element("id", "f-path")
    path.clear()
    path.send_keys("filt/  !*/tests/")
    live.wait(lambda: shown_paths() == {"filt/impl.py"})
    path.clear()
    path.send_keys("filt/")
    live.wait(lambda: shown_paths() == both)
    origins = {o: live.driver.find_element("css selector", f"#f-origin input[value={o}]")
               for o in ("edit", "git", "watch", "scan", "commit")}  # fmt: skip
    origins["watch"].click()  # no watch: these were saves the daemon saw
    live.wait(lambda: shown_paths() == set())
    assert live.js("return document.getElementById('empty').hidden") is False
    assert "origin=edit" in live.driver.current_url  # the filters are kept in the URL
    live.driver.refresh()
    live.wait(lambda: live.js("return document.body.dataset.conn") == "live")
    assert live.driver.find_element("id", "f-path").get_attribute("value") == "filt/"
    assert shown_paths() == set()
    live.driver.find_element("css selector", "#f-origin input[value=watch]").click()
    live.wait(lambda: shown_paths() == both)
    live.load("path=filt/&since=1us")  # a window too short for any record
    assert live.rows() == []


@needs_browser
def test_a_change_and_a_symbol_open_with_their_diffs(live: Live) -> None:
    calc = live.root / "calc.py"
    calc.write_text("def total(x):\n    return x\n")
    live.load("path=calc.py")
    live.wait(lambda: live.shown("calc.py"))
    calc.write_text("def total(x, rate):\n    return x * rate\n")
    live.wait(lambda: len(live.rows()) == 2)
    newest = live.driver.find_element("css selector", "#rows .row .p")
    newest.click()
    live.wait(lambda: "+def total(x, rate):" in live.js(
        "return document.getElementById('d-diff').textContent"))
    lines = live.js("return [...document.querySelectorAll('#d-diff .l')].map("
                    "l => [l.className, l.textContent])")
    assert ["l d", "-def total(x):"] in lines and ["l a", "+    return x * rate"] in lines
    assert lines[0] == ["l m", "diff --git a/calc.py b/calc.py"]
    assert live.js("return document.querySelector('#d-diff .l.a .k').textContent") == "def"

    live.driver.find_element("css selector", "#rows .row .sym").click()
    live.wait(lambda: live.js("return document.body.dataset.detail") == "symbol"
              and live.js("return document.querySelectorAll('#d-history tr').length") == 2)
    title = live.js("return document.getElementById('d-title').textContent")
    assert title == "total (function) in calc.py"
    assert live.js("return document.getElementById('d-diff').textContent") == (
        "--- a/calc.py+++ b/calc.py@@ -1,2 +1,2 @@-def total(x):-    return x"
        "+def total(x, rate):+    return x * rate")
    history = live.js("return [...document.querySelectorAll('#d-history tr')].map("
                      "t => [t.className, t.textContent])")
    assert [cls for cls, _ in history] == ["selected", ""]
    assert "signature changed" in history[0][1] and "added" in history[1][1]
    assert all("watch" in text for _, text in history)
    # A click on the older version shows its own diff: the definition added.
    live.driver.find_elements("css selector", "#d-history tr")[1].click()
    live.wait(lambda: live.js("return document.getElementById('d-diff').textContent") == (
        "--- /dev/null+++ b/calc.py@@ -0,0 +1,2 @@+def total(x):+    return x"))
    assert [t.get_attribute("class") for t in live.driver.find_elements(
        "css selector", "#d-history tr")] == ["", "selected"]


@needs_browser
def test_the_page_loads_nothing_from_the_network(live: Live) -> None:
    live.load()
    resources = live.js("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources and all(r.startswith(live.ui.base + "/") for r in resources), resources
    errors = [e for e in live.driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
