"""How the live page (`symdiff ui`) holds up with 10,000 records in view and a 5,000-file burst
arriving, in Debian's headless Chromium; beside it, its peers measured in the same run: the
idle page's frame interval, and the same rows rendered as a plain list (every row in the DOM).

    .venv/bin/python benchmarks/ui_page.py [--files 5000] [--screenshots]

A tree of FILES small Python files is indexed by the real indexer (baseline), then every file
is modified twice, one `index` pass each: 2 x FILES records. `symdiff ui` serves them; the
page is opened and timed until all are shown (the stream's backlog in pages of 500). Then: the
frame interval of the idle page (what the machine gives any page), a scroll of 100 px a frame
(a mouse wheel) and one through the whole list two screens a frame (each frame's interval
and the page's render time), every file
modified once more and indexed while the page is open (the burst: from the pass's end until
the page shows it all, the longest main-thread task meanwhile, from Chrome's long-task
timing), and the plain list: the same rows' HTML put into the DOM at once, until laid out.

With --screenshots it also writes docs/ui-timeline.png and docs/ui-symbol.png from a small
workspace with a watch, an agent's edit (apply_edits) and a branch switch.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from symdiff.api import index
from symdiff.config import Settings

HERE = Path(__file__).resolve().parent


def write_tree(root: Path, files: int, version: int) -> None:
    for i in range(files):
        d = root / f"pkg{i % 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"mod{i}.py").write_text(
            f"def handler_{i}(request):\n    return {version}\n\n\n"
            f"class Service{i}:\n    def run(self, x):\n        return x + {version}\n")


@contextmanager
def ui(root: Path, environ: dict[str, str] | None = None) -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, "-m", "symdiff", "ui", "--root", str(root),
                             "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True,
                            env=environ)
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        yield line.split("the page is at ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        proc.stderr.close()


def browser(width: int = 1400, height: int = 900) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--disable-gpu"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def wait_count(driver: webdriver.Chrome, count: int, timeout: float = 300) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if int(driver.execute_script("return Number(document.body.dataset.count || 0)")) >= count:
            return time.monotonic() - start
        time.sleep(0.01)
    raise SystemExit(f"the page did not reach {count} records in {timeout} s")


SCROLL = """
const [stepPx, maxFrames, done] = arguments;
const list = document.getElementById('list');
list.scrollTop = 0;
const frames = [];
let last = performance.now();
function step() {
  const now = performance.now();
  frames.push(now - last);
  last = now;
  if (list.scrollTop + list.clientHeight >= list.scrollHeight - 1 || frames.length > maxFrames) {
    done({frames: frames.length, worst: Math.max(...frames.slice(1)),
          p50: frames.slice(1).sort((a, b) => a - b)[Math.floor(frames.length / 2)],
          render: window.symdiffUi.stats.maxRenderMs});
    return;
  }
  list.scrollTop += stepPx || list.clientHeight * 2;
  requestAnimationFrame(step);
}
window.symdiffUi.stats.maxRenderMs = 0;
requestAnimationFrame(step);
"""

IDLE = """
const done = arguments[arguments.length - 1];
const frames = [];
let last = performance.now();
function step() {
  const now = performance.now();
  frames.push(now - last);
  last = now;
  if (frames.length > 120) {
    const f = frames.slice(1).sort((a, b) => a - b);
    done({p50: f[Math.floor(f.length / 2)], worst: f[f.length - 1]});
    return;
  }
  requestAnimationFrame(step);
}
requestAnimationFrame(step);
"""

LONGTASKS = """
window.__long = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
  .observe({type: 'longtask', buffered: false});
window.symdiffUi.stats.maxRenderMs = 0;
"""

PEER = """
const recs = window.symdiffUi.state.records;
const box = document.createElement('div');
box.className = 'rows';
box.style.position = 'static';
const t0 = performance.now();
let html = '';
for (let i = recs.length - 1; i >= 0; i--) html += window.symdiffUi.rowHtml(recs[i], i);
box.innerHTML = html;
document.getElementById('list').appendChild(box);
void box.offsetHeight;  // layout
const took = performance.now() - t0;
box.remove();
return {rows: recs.length, ms: took, nodes: html.length};
"""


def measure(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        settings = Settings.resolve(root)
        write_tree(root, files, 0)
        index(settings, show_progress=False)
        for version in (1, 2):
            write_tree(root, files, version)
            index(settings, show_progress=False)
        total = 2 * files
        with ui(root) as url:
            driver = browser()
            try:
                t0 = time.monotonic()
                driver.get(url)
                loaded = wait_count(driver, total)
                print(f"{total:,} records: shown {loaded:.2f} s after the page was opened "
                      f"(page load, event stream in pages of 500, render)")
                driver.set_script_timeout(300)
                idle = driver.execute_async_script(IDLE)
                print(f"peer, the same page idle (nothing scrolls or arrives): frames p50 "
                      f"{idle['p50']:.1f} ms, worst {idle['worst']:.1f} ms")
                wheel = driver.execute_async_script(SCROLL, 100, 300)
                print(f"scrolling 100 px a frame (a mouse wheel), {wheel['frames']} frames: "
                      f"p50 {wheel['p50']:.1f} ms, worst {wheel['worst']:.1f} ms per frame; "
                      f"longest render {wheel['render']:.1f} ms")
                scroll = driver.execute_async_script(SCROLL, 0, 100000)
                in_dom = driver.execute_script("return document.querySelectorAll('.row').length")
                print(f"scrolling through all {total:,} rows two screens a frame: "
                      f"{scroll['frames']} frames, p50 {scroll['p50']:.1f} ms, worst "
                      f"{scroll['worst']:.1f} ms per frame; longest render "
                      f"{scroll['render']:.1f} ms; rows in the DOM: {in_dom}")
                driver.execute_script("document.getElementById('list').scrollTop = 0")
                driver.execute_script(LONGTASKS)
                write_tree(root, files, 3)
                t1 = time.monotonic()
                index(settings, show_progress=False)
                indexed = time.monotonic() - t1
                shown = wait_count(driver, total + files)
                longest = driver.execute_script("return Math.max(0, ...window.__long)")
                render = driver.execute_script("return window.symdiffUi.stats.maxRenderMs")
                print(f"burst of {files:,} files: indexed in {indexed:.2f} s, then all shown "
                      f"{shown:.2f} s later; longest main-thread task meanwhile "
                      f"{longest:.0f} ms, longest render {render:.1f} ms")
                peer = driver.execute_script(PEER)
                print(f"peer, the same {peer['rows']:,} rows as a plain list (every row in "
                      f"the DOM): {peer['ms']:.0f} ms to build and lay out once "
                      f"(vs {render:.1f} ms for the virtual list's longest render)")
                print(f"(total {time.monotonic() - t0:.0f} s in the browser)")
            finally:
                driver.quit()


def screenshots() -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from conftest import git
    from mcp_servers import call, env, run_stdio

    docs = HERE.parent / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "shop"
        (root / "src" / "shop").mkdir(parents=True)
        (root / "tests").mkdir()
        cart = root / "src" / "shop" / "cart.py"
        cart.write_text('"""The cart."""\n\n\nclass Cart:\n    def __init__(self):\n'
                        "        self.items = []\n\n    def add(self, item, qty=1):\n"
                        "        self.items.append((item, qty))\n\n    def total(self):\n"
                        "        return sum(i.price * q for i, q in self.items)\n")
        pay = root / "src" / "shop" / "payment.py"
        pay.write_text("import os\n\n\ndef charge(card, amount):\n"
                       "    # TODO: retries\n    return gateway().charge(card, amount)\n\n\n"
                       "def gateway():\n    return os.environ['GATEWAY']\n")
        (root / "tests" / "test_cart.py").write_text(
            "from shop.cart import Cart\n\n\ndef test_total():\n    assert Cart().total() == 0\n")
        git(root, "init", "-q", "-b", "main")
        git(root, "add", ".")
        git(root, "commit", "-qm", "shop")
        # One host name for the daemon, the MCP server and the page (run_stdio's), so that
        # they share the workspace and the agent's edit is recorded as its own.
        daemon = subprocess.Popen([sys.executable, "-m", "symdiff", "watch", str(root), "-q",
                                   "--no-history"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env())
        try:
            while not (root / ".symdiff" / "daemon.json").exists() or '"progress": null' \
                    not in (root / ".symdiff" / "daemon.json").read_text():
                time.sleep(0.1)
            time.sleep(0.5)
            git(root, "checkout", "-qb", "discounts")
            cart.write_text(cart.read_text().replace(
                "    def total(self):\n        return sum(i.price * q for i, q in self.items)\n",
                "    def total(self, discount=0):\n"
                "        gross = sum(i.price * q for i, q in self.items)\n"
                "        return gross * (1 - discount)\n"))
            time.sleep(1)
            git(root, "commit", "-qam", "discounts")
            time.sleep(1)
            git(root, "checkout", "-q", "main")
            time.sleep(2)
            git(root, "checkout", "-q", "discounts")
            time.sleep(2)
            (root / "tests" / "test_cart.py").write_text(
                "from shop.cart import Cart\n\n\ndef test_total():\n"
                "    assert Cart().total() == 0\n\n\ndef test_discount():\n"
                "    assert Cart().total(discount=0.5) == 0\n")
            time.sleep(1)

            async def edit(session: object) -> None:
                await call(session, "apply_edits", {"dry_run": False, "edits": [  # type: ignore[arg-type]
                    {"file": "src/shop/payment.py", "blocks": [{
                        "search": "def charge(card, amount):\n    # TODO: retries\n"
                                  "    return gateway().charge(card, amount)\n",
                        "replace": "def charge(card, amount, *, retries=3):\n"
                                   "    for attempt in range(retries):\n"
                                   "        try:\n"
                                   "            return gateway().charge(card, amount)\n"
                                   "        except TimeoutError:\n"
                                   "            if attempt == retries - 1:\n"
                                   "                raise\n"}]}]})

            run_stdio(["--root", str(root)], edit, cwd=root)
            time.sleep(1)
            (root / "src" / "shop" / "receipt.py").write_text(
                "def render(cart):\n    return f'total: {cart.total():.2f}'\n")
            time.sleep(1.5)
            with ui(root, env()) as url:
                driver = browser(1400, 760)
                try:
                    driver.get(url)
                    wait_count(driver, 5, timeout=30)
                    time.sleep(0.5)
                    rows = driver.find_elements("css selector", "#rows .row .p")
                    rows[1].click()  # the agent's edit
                    time.sleep(1)
                    driver.save_screenshot(str(docs / "ui-timeline.png"))
                    chip = driver.find_element("xpath", "//span[@class='sym signature_changed']"
                                                        "[text()='Cart.total']")
                    chip.click()
                    time.sleep(1.2)
                    driver.save_screenshot(str(docs / "ui-symbol.png"))
                finally:
                    driver.quit()
        finally:
            daemon.terminate()
            daemon.wait(timeout=20)
    print("wrote docs/ui-timeline.png and docs/ui-symbol.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--screenshots", action="store_true")
    args = parser.parse_args()
    if args.screenshots:
        screenshots()
        return
    measure(args.files)


if __name__ == "__main__":
    main()
