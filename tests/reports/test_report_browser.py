"""The report page in a real headless Chromium or Chrome (any found on the machine; on Debian and
Ubuntu ``scripts/install-chromium.sh`` installs one), driven over the Chrome DevTools protocol with
tornado's websocket client: every image must load and the console must stay free of errors.

Without a browser the tests are skipped with one line saying so, except on CI (``CI=true``), which
has one: there a missing browser fails."""
import asyncio
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from tornado.websocket import websocket_connect

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
BROWSER_PATHS = ("/Applications/Chromium.app/Contents/MacOS/Chromium",
                 "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")


def find_browser() -> str | None:
    """A Chromium or Chrome executable: on the PATH by one of :data:`BROWSER_NAMES`, or a macOS app."""
    found = next((shutil.which(name) for name in BROWSER_NAMES if shutil.which(name)), None)
    return found or next((p for p in BROWSER_PATHS if os.access(p, os.X_OK)), None)


CHROMIUM = find_browser()
ON_CI = os.environ.get("CI") == "true"
pytestmark = pytest.mark.skipif(
    CHROMIUM is None and not ON_CI,
    reason=f"no Chromium or Chrome found (looked for {', '.join(BROWSER_NAMES)} on the PATH and the macOS apps); "
           "install one (Debian/Ubuntu: sh scripts/install-chromium.sh) to run the report page test")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1280,1000"]
IMAGES = "Array.from(document.images).map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0}))"


async def _inspect(ws_url: str, page_url: str, timeout: float) -> dict:
    ws = await websocket_connect(ws_url, max_message_size=1 << 26)
    events, replies, next_id = [], {}, iter(range(1, 1 << 30))

    async def read_until(done):
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not done():
            message = await asyncio.wait_for(ws.read_message(), end - loop.time())
            assert message is not None, "the browser closed the connection"
            data = json.loads(message)
            if "id" in data:
                replies[data["id"]] = data
            else:
                events.append(data)

    async def call(method, **params):
        n = next(next_id)
        await ws.write_message(json.dumps({"id": n, "method": method, "params": params}))
        await read_until(lambda: n in replies)
        assert "error" not in replies[n], replies[n]
        return replies[n]["result"]

    for domain in ("Page", "Runtime", "Log", "Network"):
        await call(f"{domain}.enable")
    await call("Page.navigate", url=page_url)
    await read_until(lambda: any(e["method"] == "Page.loadEventFired" for e in events))
    images = (await call("Runtime.evaluate", expression=IMAGES, returnByValue=True))["result"]["value"]
    title = (await call("Runtime.evaluate", expression="document.title", returnByValue=True))["result"]["value"]
    ws.close()
    problems = []
    for e in events:
        method, params = e["method"], e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            problems.append(f"console.{params['type']}: {[a.get('value') for a in params['args']]}")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params['exceptionDetails'].get('text')}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(f"log: {params['entry']['text']}")
        elif method == "Network.loadingFailed":
            problems.append(f"failed to load: {params.get('errorText')}")
    return {"title": title, "images": images, "problems": problems}


def open_page(path: Path, timeout: float = 60) -> dict:
    """Load ``path`` in headless Chromium; returns its title, its images and every console error."""
    assert CHROMIUM is not None, "CI=true but no Chromium or Chrome found: run scripts/install-chromium.sh"
    # Chromium's helper processes may still write to the profile as they exit: the whole process
    # group is killed, and a file that appears during clean-up does not fail the test.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        browser = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port_file = Path(profile) / "DevToolsActivePort"
            deadline = time.monotonic() + timeout
            while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
                assert browser.poll() is None, "chromium exited at start"
                assert time.monotonic() < deadline, "chromium did not open its DevTools port"
                time.sleep(0.05)
            port = int(port_file.read_text().split()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as response:
                pages = [t for t in json.load(response) if t["type"] == "page"]
            inspection = _inspect(pages[0]["webSocketDebuggerUrl"], path.resolve().as_uri(), timeout)
            # A thread of its own: in a process whose main thread already runs an event loop (the app's
            # Playwright browser, tests/app/conftest.py, when xdist puts both on one worker) asyncio.run fails.
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as thread:
                return thread.submit(asyncio.run, inspection).result()
        finally:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()


def test_report_page_loads_every_image_without_console_errors(local_build, small_definition):
    from wargame_odds.analysis.reports import load_report

    seen = open_page(local_build / "index.html")
    assert seen["title"] == "Small test report"
    assert seen["problems"] == []
    cells = load_report(small_definition).cells
    assert sorted(Path(i["src"]).name for i in seen["images"]) == sorted(f"{c.name}.png" for c in cells)
    assert all(i["ok"] for i in seen["images"]), seen["images"]


def test_the_browser_check_sees_broken_images_and_console_errors(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><title>broken</title><img src="missing.png">'
                    '<script>console.error("boom")</script>')
    seen = open_page(page)
    assert [i["ok"] for i in seen["images"]] == [False]
    assert any("boom" in p for p in seen["problems"])
