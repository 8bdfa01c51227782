"""The page's test helpers: a real `symdiff ui` process, and Debian's headless Chromium with
its chromedriver (Selenium) on the page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import env

UI = (sys.executable, "-m", "symdiff", "ui")
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")


@dataclass
class Ui:
    """A running `symdiff ui`; `url` is the page's address as it printed it."""

    proc: subprocess.Popen[str]
    url: str
    lines: list[str]

    @property
    def base(self) -> str:
        """The page at 127.0.0.1, whatever address it binds, without the token."""
        port = re.search(r":(\d+)/", self.url)
        assert port is not None
        return f"http://127.0.0.1:{port[1]}"


@contextmanager
def ui(root: Path, *args: str, environ: dict[str, str] | None = None) -> Iterator[Ui]:
    proc = subprocess.Popen([*UI, "--root", str(root), "--http", "127.0.0.1:0", *args],
                            env=environ or env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if "the page is at" in line:
                break
        else:
            raise AssertionError(f"symdiff ui did not start: {''.join(lines)}")
        yield Ui(proc, line.split("the page is at ", 1)[1].strip(), lines)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr is not None:
            proc.stderr.close()


needs_browser = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="no headless browser: install Debian's chromium and chromium-driver "
           "(apt-get install chromium chromium-driver) to run the page's tests",
)


@dataclass
class Live:
    """A workspace with `symdiff watch` and `symdiff ui` running, and a browser on the page."""

    root: Path
    ui: Ui
    driver: Any

    def js(self, script: str) -> Any:
        return self.driver.execute_script(script)

    def rows(self) -> list[dict[str, Any]]:
        """The rows the page shows, newest first: path, who, symbols (and their classes)."""
        return list(self.js(
            "return [...document.querySelectorAll('#rows .row')].map(r => ({"
            "path: r.querySelector('.p').textContent, who: r.querySelector('.who').textContent,"
            "symbols: [...r.querySelectorAll('.sym')].map(s => [s.textContent, s.className])}))"
        ))

    def wait(self, cond: Callable[[], Any], timeout: float = 10, step: float = 0.02) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = cond()
            if value:
                return value
            if time.monotonic() > deadline:
                watch = (self.root.parent / "watch.log").read_text()[-3000:]
                raise AssertionError(f"not within {timeout} s; rows: {self.rows()[:10]}; "
                                     f"symdiff watch said: {watch}")
            time.sleep(step)

    def shown(self, path: str) -> dict[str, Any] | None:
        return next((r for r in self.rows() if r["path"] == path), None)

    def load(self, fragment: str = "") -> None:
        self.driver.get("about:blank")  # a new page, not a change of #fragment
        self.driver.get(f"{self.ui.base}/#{fragment}")
        self.wait(lambda: self.js("return document.body.dataset.conn") == "live")


def chrome() -> Any:
    """Debian's headless Chromium through its chromedriver (Selenium); the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1400,900", "--disable-gpu"):  # fmt: skip
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
