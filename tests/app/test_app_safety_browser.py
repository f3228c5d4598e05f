"""Issue 40 §1 and §4 in a real (headless) Chromium: a closed tab's run is cancelled and the server goes back to
idle; four abandoned runs leave a fifth page answering; another site cannot frame the app or reach it under a
name of its own; an address with hostile digits opens the page with one message; the downloaded CSV is
spreadsheet-safe; names show their control and bidi characters as escapes; an empty upload says so."""
import csv
from xml.etree import ElementTree
import http.client
import http.server
import io
import re
import threading
import time
from urllib.parse import urlparse

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails on CI, saying why
    expect = None

from wargame_odds.analysis.app.setups import example_setup, to_toml
from wargame_odds.analysis.intake.user_text import FORMULA_STARTS

from conftest import cpu_seconds, wait_until_idle

LONG = "?example=epic/assault_marines_vs_warband&trials=1000000000"  # about ten minutes of one core


def _busy(pid: int, window_s: float = 1.0) -> float:
    """The share of a core process ``pid`` used over the next ``window_s``."""
    before = cpu_seconds(pid)
    threading.Event().wait(window_s)  # the measuring window
    return (cpu_seconds(pid) - before) / window_s


def test_a_closed_tabs_run_is_cancelled_and_the_server_goes_idle(app_pages, app_server, capsys):
    _, server = app_server
    page = app_pages()
    page.open(LONG)
    page.start_run()  # its trials are counting
    busy = _busy(server.pid)  # recorded for the report (a busy machine gives the server less)
    page.page.close()
    took, share = wait_until_idle(server.pid, timeout_s=60)
    with capsys.disabled():
        print(f"\nserver CPU: {busy:.0%} of a core while the run ran; {share:.0%} over 1 s, {took:.1f} s after "
              "the tab closed")


def test_four_abandoned_runs_leave_a_fifth_page_answering(app_pages, app_server):
    """Four pages run for minutes; a fifth page's short run answers while they run; their tabs closed, their runs
    stop."""
    _, server = app_server
    long_runs = [app_pages() for _ in range(4)]
    for page in long_runs:  # the four pages built first, so that no page waits for the cores the runs take
        page.open(LONG)
    for page in long_runs:
        page.start_run()
    fresh = app_pages()
    fresh.open("?example=gdb/column_vs_line&trials=2000")
    assert "2,000 trials in" in fresh.run()
    for page in long_runs:
        page.page.close()
    wait_until_idle(server.pid, timeout_s=60)
    again = app_pages()
    again.open("?example=epic/assault_marines_vs_warband&trials=2000")
    assert "2,000 trials in" in again.run()


@pytest.fixture
def other_site(app_url):
    """A page of another origin (another port) that frames the app with an address that asks for a run."""
    framed = app_url + "?example=epic/assault_marines_vs_warband&trials=1000000000&run=1"
    body = f'<html><body><h1>other site</h1><iframe id="app" src="{framed}" width="900" height="600"></iframe>' \
           "</body></html>"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_framed_app_refuses_to_render_or_run(app_pages, app_server, other_site):
    """Another site's page frames the app with an address asking for a 10⁹-trial run: the browser refuses to
    show the frame (it becomes the browser's error page), and the server runs nothing."""
    _, server = app_server
    page = app_pages()
    with page.page.expect_response(lambda response: urlparse(response.url).path == "/" and
                                   response.url.startswith(page.url)) as answer:
        page.page.goto(other_site)
    headers = answer.value.headers
    assert headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in headers["content-security-policy"]
    expect(page.page.get_by_text("other site")).to_be_visible()
    frame = next(f for f in page.page.frames if f is not page.page.main_frame)
    deadline = time.monotonic() + 60
    while not frame.url.startswith("chrome-error://"):  # wait for the state: the frame refused
        assert time.monotonic() < deadline, f"the frame shows {frame.url}"
        page.page.wait_for_timeout(100)
    assert page.page.frame_locator("#app").get_by_role("button", name="Run").count() == 0
    wait_until_idle(server.pid, timeout_s=60)  # nothing runs


def test_a_foreign_host_is_refused(app_url):
    """DNS rebinding: a name of another site resolving to this machine reaches the server with its own Host."""
    address = urlparse(app_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    connection.request("GET", "/?example=epic/assault_marines_vs_warband", headers={"Host": f"evil.example:"
                                                                                           f"{address.port}"})
    answer = connection.getresponse()
    body = answer.read().decode()
    assert answer.status == 403 and "refuses" in body and "<script" not in body
    connection.request("GET", "/")
    ours = connection.getresponse()
    ours.read()
    assert ours.status == 200 and ours.getheader("X-Frame-Options") == "DENY"


@pytest.mark.parametrize("query, field", [("trials=%C2%B2", "trials"), ("trials=1" + "0" * 5000, "trials"),
                                          ("seed=%D9%A3%C2%B9", "seed"), ("precision=nan", "precision"),
                                          ("seed=-1", "seed")])
def test_an_address_with_hostile_digits_opens_the_page_with_one_message(app_page, query, field):
    app_page.open(f"?example=epic/assault_marines_vs_warband&{query}")
    message = app_page.message()
    assert message.startswith(f"the page address: field '{field}'"), message
    assert len(message) < 300 and "Traceback" not in app_page.text()
    assert "Assault Detachment (attacker)" in app_page.text()  # the page opens as usual


HOSTILE = '=HYPERLINK("http://evil","x")\x07\u202e'


@pytest.fixture
def hostile_upload(tmp_path):
    data = example_setup("epic/assault_marines_vs_warband").data
    data["formations"][2]["name"] = HOSTILE
    path = tmp_path / "hostile.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    return path


def test_the_downloaded_csv_is_spreadsheet_safe_and_names_show_escapes(app_page, hostile_upload, tmp_path):
    app_page.open("?trials=2000")
    app_page.page.get_by_role("button", name="Open a scenario file").set_input_files(str(hostile_upload))
    expect(app_page.page.get_by_label("name", exact=True).filter(visible=True).nth(2)).to_have_value(HOSTILE)
    text = app_page.run()
    for raw in ("\x07", "\u202e"):
        assert raw not in text  # the results, the cards and the option text of every choice
    assert 'assaults =HYPERLINK("http://evil","x")\\x07\\u202e (defender).' in text
    with app_page.page.expect_download() as download:
        app_page.click("Results (CSV)")
    saved = tmp_path / "results.csv"
    download.value.save_as(saved)
    content = saved.read_text(encoding="utf-8")
    assert "\x07" not in content and "\u202e" not in content
    rows = list(csv.reader(io.StringIO(content)))
    assert rows[0][:2] == ["section", "entity"] and len(rows) > 3
    for row in rows:
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                float(cell)  # only a number may start with - or +: never a formula
    assert any(cell == "'" + '=HYPERLINK("http://evil","x")\\x07\\u202e' for row in rows for cell in row)
    for kind in ("PNG", "SVG"):  # issue 41 §2: the figure as PNG and SVG, the SVG well-formed XML
        button = app_page.page.get_by_role("button", name=f"Figure ({kind})")
        expect(button).to_be_visible()
        with app_page.page.expect_download() as download:
            button.click()
        figure = tmp_path / f"figure.{kind.lower()}"
        download.value.save_as(figure)
        data = figure.read_bytes()
        if kind == "PNG":
            assert data.startswith(b"\x89PNG")
        else:
            ElementTree.fromstring(data)
            assert b"\x07" not in data and "\u202e".encode() not in data


def test_an_empty_upload_is_one_message(app_page, tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_bytes(b"")
    app_page.open()
    app_page.page.get_by_role("button", name="Open a scenario file").set_input_files(str(empty))
    expect(app_page.page.get_by_text("empty.toml: the file is empty", exact=False)).to_have_count(1)
    assert app_page.message().startswith("empty.toml: the file is empty")


def test_a_run_option_name_is_shown_with_escapes(app_page, tmp_path):
    """The option text of a choice (the T9A target's charger list) shows a BEL and U+202E as escapes."""
    data = example_setup("t9a/stand_and_shoot").data
    data["chargers"][0]["name"] = "Knights\x07\u202e"
    path = tmp_path / "named.toml"
    path.write_text(to_toml(data), encoding="utf-8")
    app_page.open()
    app_page.page.get_by_role("button", name="Open a scenario file").set_input_files(str(path))
    expect(app_page.page.locator("option", has_text=re.compile(r"Knights\\x07\\u202e"))).not_to_have_count(0)
    assert "\x07" not in app_page.text() and "\u202e" not in app_page.text()
