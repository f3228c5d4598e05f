"""Issue 41 §2 and §4: setups shared with a club mate.  The app listens on one port on every machine (the next free
one, said in one line, when it is taken); "Copy setup" shows a link any install opens, "Paste setup" opens a link
(whatever its host and port) or a scenario's TOML, checked as any input (size cap, one message naming what is
wrong); the GdB tab runs on a player's own rule tables, checked as the CLI checks a table file."""
import errno
import html
import socket

import pytest

pytest.importorskip("panel")

import wargame_odds.analysis.app  # noqa: E402
from wargame_odds.analysis.app import DEFAULT_PORT, address_of, make_default_server  # noqa: E402
from wargame_odds.analysis.app.page import MAX_PASTE_CHARS, Page  # noqa: E402
from wargame_odds.analysis.app.setups import example_setup  # noqa: E402
from wargame_odds.analysis.gdb.tables import template_text  # noqa: E402
from wargame_odds.analysis.intake.scenario import MAX_FILE_BYTES  # noqa: E402

EXAMPLE = "epic/assault_marines_vs_warband"


def _page(query=None) -> Page:
    return Page(query or {}, in_notebook=True)


def _message(page: Page) -> str:
    """The message line's text ("" when there is none)."""
    return html.unescape(page.message.object)


def test_the_default_port_is_the_same_address_on_every_machine(monkeypatch):
    """The command passes no port: serve() takes DEFAULT_PORT; the address in every copied link names it."""
    served = []
    monkeypatch.setattr(wargame_odds.analysis.app, "serve", lambda *args, **kwargs: served.append(args))
    from click.testing import CliRunner

    from wargame_odds.analysis.cli import main

    assert CliRunner().invoke(main, ["app", "--no-browser"]).exit_code == 0
    assert served == [("127.0.0.1", None)]
    page = _page({"example": EXAMPLE})
    assert page.share.value == f"http://127.0.0.1:{DEFAULT_PORT}/?example=epic%2Fassault_marines_vs_warband"


def test_a_taken_default_port_moves_to_the_next_free_one_and_says_so(monkeypatch, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr(wargame_odds.analysis.app, "DEFAULT_PORT", port)
        try:
            server = make_default_server("127.0.0.1")
        except OSError as exc:  # the next port happens to be taken by another program too: try from there
            assert exc.errno == errno.EADDRINUSE
            last = port + wargame_odds.analysis.app.FALLBACK_PORTS
            pytest.skip(f"ports {port} to {last} are all in use on this machine")
        try:
            assert server.port != port
        finally:
            server.stop()
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"note: port {port} is in use (is the app open already?), so this app listens on {server.port}: "
                     f"its address is not the usual {address_of('127.0.0.1', port)}"]


def test_a_copied_link_opens_the_same_setup_on_another_install():
    """The link of an edited setup (any host and port) pasted in a fresh page gives the same setup and run
    settings, and an address that opens it."""
    first = _page({"example": EXAMPLE, "trials": "5000", "seed": "7"})
    first.tabs["epic"].draft.data["formations"][0]["blast_markers"] = 3
    first.tabs["epic"]._changed(("formations", 0, "blast_markers"))
    link = first.share.value.replace(f":{DEFAULT_PORT}/", ":9999/")  # a club mate's app on another port
    assert "setup=" in link
    second = _page()
    second.open_pasted(link)
    assert _message(second) == ""
    assert second.active is second.tabs["epic"]
    assert second.tabs["epic"].valid.data == first.tabs["epic"].valid.data
    assert (second.trials.value, second.seed.value) == (5000, 7)
    assert second.share.value == first.share.value


def test_a_comparison_link_opens_both_options():
    first = _page({"example": "epic/decisions/shoot_first_or_engage_now"})
    link = first.share.value
    second = _page()
    second.open_pasted(link)
    assert _message(second) == "" and second.active is second.tabs["compare"]
    compare = second.tabs["compare"]
    assert compare.current() is not None
    assert [o.data for o in compare.options] == [o.data for o in first.tabs["compare"].options]


def test_a_pasted_scenario_toml_opens_as_an_upload_does():
    page = _page()
    page.open_pasted(example_setup("t9a/stand_and_shoot").toml())
    assert _message(page) == "" and page.active is page.tabs["t9a"]


@pytest.mark.parametrize("text, expected", [
    ("", "the pasted setup: nothing was pasted"),
    ("   \n ", "the pasted setup: nothing was pasted"),
    ("x" * (MAX_PASTE_CHARS + 1), f"{MAX_PASTE_CHARS + 1:,} characters"),
    ("http://127.0.0.1:8642/?trials=5", "the link holds no setup"),
    ("https://example.org/", "the link holds no setup"),
    ("http://127.0.0.1:8642/?" + "&".join(f"k{i}=1" for i in range(100)), "more parts than any the app writes"),
    ("http://127.0.0.1:8642/?setup=AAAA", "the pasted setup (a link): field 'setup': not a setup this app wrote"),
    ("http://127.0.0.1:8642/?example=epic/nope", "epic/nope"),
    ('system = "epic"\ntitle = 3', "the pasted setup"),
    ("not toml at all ===", "the pasted setup"),
])
def test_a_bad_paste_is_one_message_naming_what_is_wrong(text, expected):
    page = _page({"example": EXAMPLE})
    before = page.tabs["epic"].valid.data
    page.open_pasted(text)
    message = _message(page)
    assert expected in message, message
    assert message.count('class="wo-error"') == 1 and "\n" not in message and "Traceback" not in message
    assert "internal error" not in message
    assert page.tabs["epic"].valid.data == before  # nothing else changed


def _tables(tmp_path, placeholder: bool = True, edit=lambda text: text) -> bytes:
    text = template_text()
    if not placeholder:
        text = text.replace("placeholder = true", "placeholder = false")
    return edit(text).encode("utf-8")


def test_the_gdb_tab_runs_on_a_players_own_tables(tmp_path):
    """A table file loaded on the GdB tab: the setup names it and its model runs on those tables (a changed
    fire-table number reaches the model); the shipped tables again with one press."""
    page = _page()
    tab = page.tabs["gdb"]
    assert "gdb-tables template" in tab.tables_line.object and "PLACEHOLDER" in tab.tables_line.object
    mine = _tables(tmp_path, placeholder=False)
    tab.tables_upload.param.update(value=mine, filename="my_tables.toml")
    assert _message(page) == "", _message(page)
    assert tab.valid.data["tables"] == "my_tables.toml"
    model = tab.valid.model(tab.source)
    assert model.tables.placeholder is False and model.tables.source == "my_tables.toml"
    assert "your rulebook values" in tab.tables_line.object
    assert 'tables = "my_tables.toml"' in tab.valid.toml()
    tab.use_tables(None)
    assert tab.valid.data.get("tables", "default") == "default"
    assert tab.valid.model(tab.source).tables.placeholder is True


@pytest.mark.parametrize("content, expected", [
    (b"", "the file is empty"),
    (b"\xff\xfe", "not UTF-8"),
    (b"x" * (MAX_FILE_BYTES + 1), "bytes"),
    (b"placeholder = true\n", "bad.toml"),
])
def test_bad_gdb_tables_are_one_message_and_the_shipped_ones_stay(content, expected):
    page = _page()
    tab = page.tabs["gdb"]
    tab.tables_upload.param.update(value=content, filename="bad.toml")
    assert expected in _message(page) and "\n" not in _message(page)
    assert tab.valid.data.get("tables", "default") == "default"


def test_bad_gdb_bands_are_refused_by_the_clis_own_check(tmp_path):
    """A band gap (the CLI's `gdb-tables check` refuses it) is refused on the page in the same words."""
    from wargame_odds.analysis.gdb.tables import load_tables
    from wargame_odds.analysis.intake.errors import UserError

    gap = _tables(tmp_path, edit=lambda text: text.replace("min = 1", "min = 2", 1))
    path = tmp_path / "gap.toml"
    path.write_bytes(gap)
    with pytest.raises(UserError) as cli:
        load_tables(str(path), source="gap.toml")
    page = _page()
    page.tabs["gdb"].tables_upload.param.update(value=gap, filename="gap.toml")
    assert str(cli.value).split(": ", 1)[1] in _message(page)


def test_a_gdb_link_naming_tables_not_loaded_says_how_to_load_them():
    page = _page()
    page.select("gdb")
    tab = page.tabs["gdb"]
    tab.tables_upload.param.update(value=template_text().encode(), filename="mine.toml")
    link = page.share.value
    assert "tab=gdb" in link
    fresh = _page()
    fresh.open_pasted(link)
    assert "rule tables 'mine.toml'" in _message(fresh) and "Your rule tables (TOML)" in _message(fresh)
