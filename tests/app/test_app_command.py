"""Issue 30 §1: ``wargame-odds app`` starts on 127.0.0.1 and prints its address; without the [app] extra it
says which extra to install in one line (exit 2); another host prints a warning; the notebook function
gives the same page with its scripts inline."""
import socket

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.app
from wargame_odds.analysis.cli import main


def _invoke(*args):
    result = CliRunner().invoke(main, ["app", *args])
    return result.exit_code, result.stdout, result.stderr


def test_without_the_extra_the_command_says_which_extra_to_install(monkeypatch):
    monkeypatch.setattr(wargame_odds.analysis.app, "missing_extra", lambda: "panel")
    code, out, err = _invoke("--no-browser")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == ["error: the app needs the [app] extra (panel is not installed): "
                                        "pip install 'wargame-odds[app]'"]


@pytest.mark.parametrize("host, warned", [("127.0.0.1", False), ("0.0.0.0", True)])
def test_a_host_other_than_loopback_prints_a_warning(monkeypatch, host, warned):
    served = []
    monkeypatch.setattr(wargame_odds.analysis.app, "missing_extra", lambda: None)
    monkeypatch.setattr(wargame_odds.analysis.app, "serve", lambda *args, **kwargs: served.append((args, kwargs)))
    code, out, err = _invoke("--host", host, "--no-browser", "--port", "8123")
    assert code == 0, err
    assert served == [((host, 8123), {"open_browser": False})]
    assert ("warning: listening on 0.0.0.0" in err) is warned


def test_the_default_is_loopback_and_a_free_port(monkeypatch):
    served = []
    monkeypatch.setattr(wargame_odds.analysis.app, "serve", lambda *args, **kwargs: served.append((args, kwargs)))
    assert _invoke()[0] == 0
    assert served == [(("127.0.0.1", 0), {"open_browser": True})]


def test_a_port_in_use_is_one_line_exit_2():
    pytest.importorskip("panel")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = _invoke("--no-browser", "--port", str(port))
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"cannot listen on 127.0.0.1:{port}" in err, err


def test_the_notebook_app_is_the_page_with_its_scripts_inline():
    """§1: ``wo.app()`` is the page as a notebook output, with Bokeh's and Panel's scripts inline (no CDN)."""
    pn = pytest.importorskip("panel")
    import wargame_odds as wo

    layout = wo.app({"example": "gdb/column_vs_line"})
    assert isinstance(layout, pn.Column)
    assert pn.config.inline is True
