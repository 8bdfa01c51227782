"""The page's agent sessions (issue 24, item 8), in a real headless Chromium beside a real
`symdiff ui`: the session and turn selectors narrow the list to what that agent did, the turns
bar shows each turn's counts, the "by" filter sets the agent's changes apart from the
person's, and all of it is kept in the URL. The session is driven through the real `symdiff
hook claude-code` with no daemon (the hooks record); the person's saves by `symdiff index`."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from agent_hooks import hook, symdiff, tool
from browser import CHROMEDRIVER, CHROMIUM, Live, chrome, needs_browser, ui
from conftest import git


@pytest.fixture(scope="module")
def agent_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no headless browser (chromium, chromedriver)")
    root = (tmp_path_factory.mktemp("agentui") / "ws").resolve()
    root.mkdir()
    (root.parent / "watch.log").write_text("(no daemon: the hooks record)\n")
    git(root, "init", "-q")
    (root / "app.py").write_text("def serve():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    symdiff("index", str(root), cwd=root)
    s = "sess-page"
    hook(root, {"session_id": s, "hook_event_name": "SessionStart", "model": "claude-x"})
    hook(root, {"session_id": s, "hook_event_name": "UserPromptSubmit", "prompt": "1"})
    tool(root, s, "Edit", {"file_path": str(root / "app.py")},
         lambda: (root / "app.py").write_text("def serve(port):\n    return port\n"))
    tool(root, s, "Write", {"file_path": str(root / "new.py")},
         lambda: (root / "new.py").write_text("def fresh():\n    return 0\n"))
    hook(root, {"session_id": s, "hook_event_name": "Stop", "stop_hook_active": False})
    (root / "mine.py").write_text("def by_hand():\n    return 1\n")  # a person, between turns
    symdiff("index", str(root), cwd=root)
    hook(root, {"session_id": s, "hook_event_name": "UserPromptSubmit", "prompt": "2"})
    tool(root, s, "Bash", {"command": "gen"},
         lambda: (root / "gen.py").write_text("def generated():\n    return 2\n"))
    hook(root, {"session_id": s, "hook_event_name": "Stop", "stop_hook_active": False})
    driver = None
    try:
        with ui(root) as served:
            driver = chrome()
            yield Live(root, served, driver)
    finally:
        if driver is not None:
            driver.quit()


def _paths(live: Live) -> set[str]:
    return {r["path"] for r in live.rows()}


def test_the_sessions_endpoint_lists_sessions_and_turns(agent_live: Live) -> None:
    got = httpx2.get(agent_live.ui.base + "/api/sessions", timeout=10).json()
    [s] = got["sessions"]
    assert (s["session"], s["agent"], s["model"]) == ("sess-page", "claude-code", "claude-x")
    assert [(t["turn"], t["files"], t["by_origin"]) for t in s["turns"]] == [
        (1, 2, {"agent": 2}), (2, 1, {"agent": 1})]


@needs_browser
def test_sessions_turns_and_who_narrow_the_list(agent_live: Live) -> None:
    live = agent_live
    live.load()
    live.wait(lambda: _paths(live) == {"app.py", "new.py", "mine.py", "gen.py"})
    edit = live.shown("app.py")
    assert edit is not None and edit["who"] == "agent claude-code t1 Edit"
    # who: a person / an agent (the origin groups)
    live.wait(lambda: _select(live, "f-group", "person"))
    live.wait(lambda: _paths(live) == {"mine.py"})
    assert "origin=person" in live.driver.current_url
    live.wait(lambda: _select(live, "f-group", "agent"))
    live.wait(lambda: _paths(live) == {"app.py", "new.py", "gen.py"})
    live.wait(lambda: _select(live, "f-group", ""))
    live.wait(lambda: len(_paths(live)) == 4)
    # a session, then one of its turns (the page redraws its lists as they arrive: they are
    # read in the page and chosen through `_select`, never through a handle kept across)
    live.wait(lambda: live.js("return document.getElementById('f-session').options.length")
              == 2)  # fmt: skip
    option = live.js("return document.getElementById('f-session').options[1].text")
    assert "claude-x" in option and "2 turns" in option
    live.wait(lambda: _select(live, "f-session", "sess-page"))
    live.wait(lambda: _paths(live) == {"app.py", "new.py", "gen.py"})
    turns = live.js("return [...document.querySelectorAll('#turns .turn')]"
                    ".map(b => b.textContent)")  # fmt: skip
    assert [t.split(" · ")[0] for t in turns] == ["turn 1", "turn 2"]
    assert "2 files" in turns[0] and "agent 2" in turns[0]
    live.wait(lambda: _select(live, "f-turn", "2"))
    live.wait(lambda: _paths(live) == {"gen.py"})
    live.driver.find_element("css selector", "#turns .turn[data-turn='1']").click()
    live.wait(lambda: _paths(live) == {"app.py", "new.py"})
    assert "session=sess-page" in live.driver.current_url and "turn=1" in live.driver.current_url
    # a reload (or a shared link) keeps the session and the turn
    live.driver.refresh()
    live.wait(lambda: live.js("return document.body.dataset.conn") == "live")
    live.wait(lambda: _paths(live) == {"app.py", "new.py"})
    # Read in the page, not through an element handle: the page may redraw the turn list once
    # more after the rows arrive, and a handle to the old list is then stale.
    live.wait(lambda: live.js("const s = document.getElementById('f-turn');"
                              "return s.selectedOptions.length ? s.selectedOptions[0].text : null")
              == "turn 1")  # fmt: skip
    live.wait(lambda: _select(live, "f-session", ""))  # a new page's
    live.wait(lambda: len(_paths(live)) == 4)
    assert live.js("return document.getElementById('turns').hidden") is True


def _select(live: Live, element: str, value: str) -> bool:
    """Choose `value` in a select the page may be redrawing: False (try again) when the
    element went stale under us, or does not offer the value yet."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import Select

    try:
        Select(live.driver.find_element("id", element)).select_by_value(value)
    except (StaleElementReferenceException, NoSuchElementException):
        return False
    return True


def test_a_bad_session_is_the_querys_refusal(agent_live: Live) -> None:
    with httpx2.stream("GET", agent_live.ui.base + "/api/events?turn=1", timeout=10) as r:
        body = r.read().decode()
    assert "event: problem" in body and "turn and since_turn need session" in body



@needs_browser
def test_a_turns_undo_preview_shows_its_dry_run_and_writes_nothing(agent_live: Live) -> None:
    live = agent_live
    live.load("session=sess-page")
    live.wait(lambda: live.js("return document.querySelectorAll('#turns .undo').length") == 2)
    live.driver.find_element("css selector", "#turns .undo[data-turn='2']").click()
    title = "Undo preview: session sess-page turn 2"
    live.wait(lambda: live.js("return document.getElementById('d-title').textContent") == title)
    patch = live.wait(lambda: live.js("return document.getElementById('d-diff').textContent")
                      if "gen.py" in live.js("return document.getElementById('d-diff')"
                                             ".textContent") else None)  # fmt: skip
    assert "deleted file mode" in patch and "-def generated():" in patch
    files = live.js("return document.querySelector('.undo-files').textContent")
    assert "delete gen.py" in files and "generated" in files and "app.py" not in files
    assert "symdiff undo --session sess-page --turn 2 --apply" in live.js(
        "return document.querySelector('.undo-note').textContent")
    assert (live.root / "gen.py").exists()  # a preview writes nothing


def test_the_undo_endpoint_is_the_dry_run_and_its_rules(agent_live: Live) -> None:
    base = agent_live.ui.base
    got = httpx2.get(base + "/api/undo?session=sess-page&turn=1", timeout=30).json()
    assert got["applied"] is False and not got["conflicts"]
    assert {f["path"]: f["change_type"] for f in got["files"]} == {"app.py": "modify",
                                                                  "new.py": "delete"}
    assert (agent_live.root / "new.py").exists()
    bad = httpx2.get(base + "/api/undo?turn=1", timeout=30)
    assert bad.status_code == 400 and bad.json()["error"].startswith("invalid_args: ")
