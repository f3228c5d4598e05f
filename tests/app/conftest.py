"""The app's browser tests: one app server (``wargame-odds app``) and one headless Chromium per test session.

The browser is the one found on the machine (Chromium or Chrome on the PATH), driven by Playwright through
``executable_path``: nothing is downloaded.  Without a browser (or without Playwright) the browser tests are
skipped with one line saying so, except on CI (``CI=true``), where that fails.  Every request a page makes
is recorded; a test fails when one leaves 127.0.0.1."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: The flags this machine needs (no sandbox as root, no GPU, no network of its own), and a fresh profile.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
ON_CI = os.environ.get("CI") == "true"
#: Set to a folder (docs) to keep the screenshots docs/app.md shows.
SCREENSHOTS = os.environ.get("APP_SCREENSHOTS")


def _skip_or_fail(reason: str):
    if ON_CI:
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> str:
    found = next((shutil.which(name) for name in BROWSER_NAMES if shutil.which(name)), None)
    if found is None:
        _skip_or_fail(f"no Chromium or Chrome on the PATH (looked for {', '.join(BROWSER_NAMES)}); install one "
                      "(Debian/Ubuntu: sh scripts/install-chromium.sh) to run the app's browser tests")
    return found


@pytest.fixture(scope="session")
def app_server():
    """``wargame-odds app --no-browser`` on a free port: (the address it prints, its process); the server stops
    with the session."""
    pytest.importorskip("panel")
    script = Path(sys.executable).with_name("wargame-odds")
    server = subprocess.Popen([str(script), "app", "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        url = None
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            assert line or server.poll() is None, f"the app did not start: {server.stderr.read()}"
            found = re.search(r"wargame-odds app: (http://127\.0\.0\.1:\d+/)", line)
            url = found.group(1) if found else None
        assert url is not None, "the app printed no address"
        yield url, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def app_url(app_server) -> str:
    return app_server[0]


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system, every thread) process ``pid`` has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_idle(pid: int, timeout_s: float = 120, window_s: float = 1.0, busy_share: float = 0.1) -> tuple:
    """Poll process ``pid`` until it uses at most ``busy_share`` of one core over a window of ``window_s``;
    returns (seconds it took, the share of a core in that last window).  Fails after ``timeout_s``."""
    start = time.monotonic()
    while True:
        before, at = cpu_seconds(pid), time.monotonic()
        time.sleep(window_s)  # the measuring window itself, not a wait for a state
        share = (cpu_seconds(pid) - before) / (time.monotonic() - at)
        if share <= busy_share:
            return time.monotonic() - start, share
        assert time.monotonic() - start < timeout_s, f"the server still uses {share:.0%} of a core"


@pytest.fixture(scope="session")
def browser(chromium):
    """A headless Chromium context with a fresh profile folder."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_or_fail("Playwright is not installed (the test extra installs it: pip install -e '.[test]')")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_FLAGS, accept_downloads=True,
            viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(60_000)
        from playwright.sync_api import expect

        expect.set_options(timeout=60_000)  # a busy machine: the server may take seconds to answer
        yield context
        context.close()


#: The text of the page, shadow roots included (Panel draws each widget in a shadow root).
DEEP_TEXT = """() => { const out = []; const walk = (n) => {
  if (n.nodeType === 3) {
    const p = n.parentElement; if (!p || !['STYLE', 'SCRIPT'].includes(p.tagName)) out.push(n.textContent); }
  if (n.shadowRoot) walk(n.shadowRoot);
  for (const c of n.childNodes) walk(c); };
  walk(document.body); return out.join(' ').replace(/\\s+/g, ' '); }"""

#: The text of the message line, in whichever shadow root it is.
MESSAGE = """() => { const find = (root) => {
  const hit = root.querySelector('.wo-error'); if (hit) return hit.textContent;
  for (const e of root.querySelectorAll('*')) { if (e.shadowRoot) { const t = find(e.shadowRoot); if (t) return t; } }
  return ''; }; return find(document); }"""


#: Whether the run's progress bar has moved (the kernel is running trials).
PROGRESS_MOVED = """() => { const find = (root) => {
  for (const e of root.querySelectorAll('progress')) { if (e.value > 0) return true; }
  for (const e of root.querySelectorAll('*')) { if (e.shadowRoot && find(e.shadowRoot)) return true; }
  return false; }; return find(document); }"""


class Page:
    """A browser page on the app, with every request it made."""

    def __init__(self, page, url: str):
        self.page = page
        self.url = url
        self.requests: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("websocket", lambda socket: self.requests.append(socket.url))

    def open(self, query: str = "") -> None:
        self.page.goto(self.url + query)
        self.page.get_by_role("button", name="Run").wait_for()

    def text(self) -> str:
        return self.page.evaluate(DEEP_TEXT)

    def message(self) -> str:
        """The page's message line ("" when there is none)."""
        return self.page.evaluate(MESSAGE)

    def click(self, name: str, nth: int = 0) -> None:
        self.page.get_by_role("button", name=name, exact=True).filter(visible=True).nth(nth).click()
        self.settle()

    def settle(self) -> None:
        """Let the server's answer to the last event arrive."""
        self.page.wait_for_timeout(400)

    def choose(self, option: str) -> None:
        """Pick the option whose text starts with ``option`` in the drop-down or list that has it."""
        item = self.page.locator("option", has_text=re.compile("^" + re.escape(option))).first
        label = item.inner_text()
        self.page.locator("select", has=item).select_option(label=label)
        self.settle()

    def fill(self, label: str, value, nth: int = 0) -> None:
        box = self.page.get_by_label(label, exact=True).filter(visible=True).nth(nth)
        box.fill(str(value))
        box.press("Enter")
        self.settle()

    def run(self, timeout_s: float = 300) -> str:
        """Press Run, wait for the results, and return the page's text."""
        self.page.get_by_role("button", name="Run", exact=True).click()
        self.page.get_by_text(re.compile(r"trials in \d")).wait_for(timeout=timeout_s * 1000)
        return self.text()

    def start_run(self) -> None:
        """Press Run and wait until the run is under way: its trials are counting (a cold kernel compiled)."""
        self.page.get_by_role("button", name="Run", exact=True).click()
        self.page.wait_for_function(PROGRESS_MOVED, timeout=300_000)

    def screenshot(self, name: str) -> None:
        if SCREENSHOTS:
            self.page.screenshot(path=str(Path(SCREENSHOTS) / f"app-{name}.png"))

    def outside_requests(self) -> list[str]:
        """Requests to anything but 127.0.0.1 (data: and blob: URLs stay in the page)."""
        return [u for u in self.requests
                if urlparse(u).scheme not in ("data", "blob") and urlparse(u).hostname != "127.0.0.1"]


@pytest.fixture
def app_pages(browser, app_url):
    """Opens pages on the app (``app_pages()``); each is closed after the test, which fails if one of them
    requested anything outside 127.0.0.1."""
    pages = []

    def new_page() -> Page:
        pages.append(Page(browser.new_page(), app_url))
        return pages[-1]

    yield new_page
    outside = [u for page in pages for u in page.outside_requests()]
    for page in pages:
        page.page.close()
    assert outside == [], f"the page requested something outside 127.0.0.1: {outside}"


@pytest.fixture
def app_page(app_pages):
    return app_pages()
