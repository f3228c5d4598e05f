"""The app works offline: every stylesheet a page's components name is served by the app itself, also for a
page whose first session was discarded before it connected (a busy machine), so that Bokeh built it a new
one for its websocket.  Bokeh's own client plays the page (no browser needed), then Chromium does (skipped
without one, as the other browser tests)."""
import asyncio
import re
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urljoin, urlparse

import pytest

pytest.importorskip("panel")

from bokeh.client import pull_session  # noqa: E402  (after the skip: the app extra brings Bokeh)
from bokeh.models import ImportedStyleSheet  # noqa: E402
from bokeh.util.token import get_session_id  # noqa: E402

from wargame_odds.analysis.app import UNUSED_LIFETIME_MS, make_server  # noqa: E402

TIMEOUT_S = 120


@pytest.fixture
def server():
    """The app's server (:func:`make_server`) on a free port, its event loop in a thread of its own:
    (the server, that loop)."""
    started = threading.Event()
    held = {}

    def serve():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        held["server"], held["loop"] = make_server("127.0.0.1", 0), loop
        held["server"].start()
        started.set()
        held["server"].io_loop.start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(TIMEOUT_S), "the app's server did not start"
    yield held["server"], held["loop"]
    held["server"].io_loop.add_callback(held["server"].stop)
    held["server"].io_loop.add_callback(held["server"].io_loop.stop)
    thread.join(TIMEOUT_S)


def session_count(server, loop) -> int:
    """The sessions of the page ``/`` the server holds now (asked on the server's own loop)."""
    async def count():
        return len(server.get_sessions("/"))

    return asyncio.run_coroutine_threadsafe(count(), loop).result(TIMEOUT_S)


def open_page(url: str) -> str:
    """GET the page as a browser does first; the id of the session the server made for it."""
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:
        html = answer.read().decode("utf-8")
    return get_session_id(re.search(r'"token":\s*"([^"]+)"', html).group(1))


def stylesheets(url: str, session_id: str) -> list[str]:
    """Connect to session ``session_id`` as the page's websocket does; every stylesheet its document names,
    as an absolute URL.  Bokeh's client runs an event loop of its own, which cannot start in a thread where
    another runs (Playwright's, once a browser test ran in this process): it connects from a thread of its own."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_stylesheets, url, session_id).result(TIMEOUT_S)


def _stylesheets(url: str, session_id: str) -> list[str]:
    session = pull_session(session_id=session_id, url=url)
    try:
        found = {sheet.url for sheet in session.document.select({"type": ImportedStyleSheet})}
    finally:
        session.close()
    assert found, "the page's document names no stylesheet"
    return sorted(urljoin(url, sheet) for sheet in found)


def assert_served_by_the_app(url: str, sheets: list[str]) -> None:
    outside = [sheet for sheet in sheets if urlparse(sheet).netloc != urlparse(url).netloc]
    assert outside == [], f"the page's stylesheets come from outside the app: {outside}"
    for sheet in sheets:
        with urllib.request.urlopen(sheet, timeout=TIMEOUT_S) as answer:
            assert answer.status == 200 and answer.read(), sheet


def test_a_page_that_connects_at_once_has_the_apps_own_stylesheets(server):
    server, loop = server
    url = f"http://127.0.0.1:{server.port}/"
    assert_served_by_the_app(url, stylesheets(url, open_page(url)))


def test_a_page_whose_session_expired_before_it_connected_still_has_the_apps_own_stylesheets(server):
    """The page is slower to connect than UNUSED_LIFETIME_MS (its scripts take long to load on a busy machine):
    Bokeh discards its session and builds a new one when the websocket comes.  Before the fix every stylesheet
    of that new session came from cdn.holoviz.org."""
    server, loop = server
    url = f"http://127.0.0.1:{server.port}/"
    session_id = open_page(url)
    assert session_count(server, loop) == 1
    deadline = time.monotonic() + TIMEOUT_S
    while session_count(server, loop):  # the server discards it after UNUSED_LIFETIME_MS without a connection
        assert time.monotonic() < deadline, f"the unconnected session outlived {UNUSED_LIFETIME_MS} ms by far"
        threading.Event().wait(0.1)  # polling the state above, not a wait for it
    assert_served_by_the_app(url, stylesheets(url, session_id))


def test_a_browser_page_slower_than_its_session_requests_nothing_outside_the_app(server, browser):
    """The same in Chromium, as a player sees it: the page's Bokeh script is held back until the server has
    discarded the page's session (a busy machine); the page then opens on a new session and requests nothing
    outside 127.0.0.1 (before the fix: nine stylesheets from cdn.holoviz.org)."""
    server, loop = server
    url = f"http://127.0.0.1:{server.port}/"
    page = browser.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))

    def after_the_session_is_discarded(route):
        deadline = time.monotonic() + TIMEOUT_S
        while session_count(server, loop):
            assert time.monotonic() < deadline, "the unconnected session was never discarded"
            threading.Event().wait(0.1)  # polling the state above, not a wait for it
        route.continue_()

    try:
        page.route("**/static/js/bokeh.min.js*", after_the_session_is_discarded)
        page.goto(url)
        page.get_by_role("button", name="Run").wait_for()
        assert any("bokeh.min.js" in request for request in requests), "the held script was never asked for"
        outside = sorted({request for request in requests if urlparse(request).scheme not in ("data", "blob")
                          and urlparse(request).hostname != "127.0.0.1"})
        assert outside == [], f"the page requested something outside 127.0.0.1: {outside}"
    finally:
        page.close()
