"""The List tab without a browser: the definition it builds is the file ``wargame-odds list-search`` runs unchanged
(same seed, same sentences), its bounds are the command's and the page's, its run reports progress and stops when
cancelled, and names are shown as data."""
import json
import time
import tomllib

import pytest

pytest.importorskip("panel")

from click.testing import CliRunner  # noqa: E402

from wargame_odds.analysis.app import runs  # noqa: E402
from wargame_odds.analysis.app.list_tab import MAX_CANDIDATES, render_search  # noqa: E402
from wargame_odds.analysis.app.page import Page  # noqa: E402
from wargame_odds.analysis.cli import main  # noqa: E402
from wargame_odds.analysis.decisions import list_search  # noqa: E402
from wargame_odds.analysis.decisions.list_search_core import ListSearchDefinition  # noqa: E402
from wargame_odds.analysis.intake.errors import UserError  # noqa: E402

BUDGET = 50_000_000


@pytest.fixture
def tab():
    tab = Page(in_notebook=True).tabs["list"]
    tab.cap.value = 150  # Codex Astartes at 150 points: Bikes or Scouts, two candidates
    return tab


def test_the_downloaded_definition_runs_unchanged_in_the_cli_with_the_pages_numbers(tab, tmp_path):
    assert tab.problem is None
    assert "2 candidates × 2 opponents = 4 matchups" in tab.count.object
    tab.weights[next(iter(tab.weights))].value = 3  # the Warband three times as common
    text = tab.toml()
    data = tomllib.loads(text)
    assert data == tab.definition()
    assert [o["weight"] for o in data["opponents"]] == [3, 1]
    ListSearchDefinition.model_validate(data)
    path = tmp_path / "list.toml"
    path.write_text(text, encoding="utf-8")
    progress = runs.Progress()
    shown = runs.submit(tab.work(100_000, 5, None), progress).result(timeout=600)
    run = CliRunner().invoke(main, ["list-search", str(path), "--seed", "5", "--max-trials", str(BUDGET), "--json"])
    assert run.exit_code == 0, run.stderr
    cli = json.loads(run.stdout)
    assert shown.result.sentences == cli["sentences"]
    assert shown.result.guarantee["met"] and shown.result.guarantee["statement"] in shown.result.sentences
    assert [r["candidate"] for r in cli["ranking"]] == list(shown.result.table().candidate)
    assert shown.trials == cli["race"]["trials"] and progress.total == BUDGET and progress.done > 0
    assert shown.csv.splitlines()[0].startswith("rank,candidate,formation,upgrades,points,score,ci95_lo,ci95_hi")


def test_the_page_bounds_what_a_player_starts(tab):
    tab.cap.value = 600  # 818 candidates
    assert f"at most {MAX_CANDIDATES} on this page" in tab.problem
    with pytest.raises(UserError, match="field 'max_points'"):
        tab.work(100_000, 0, None)
    tab.cap.value = 150
    assert tab.problem is None
    with pytest.raises(UserError, match="field 'precision'"):
        tab.work(100_000, 0, 0.01)
    tab.meta.value = []
    assert "field 'opponents': the meta is empty" in tab.problem
    tab.meta.value = [next(iter(tab.meta.options))]
    tab.indifference.value = 0.1
    assert tab.problem is None


def test_cancel_stops_the_race(tab):
    tab.cap.value = 300  # 153 candidates: a race long enough to cancel
    progress = runs.Progress()
    future = runs.submit(tab.work(100_000, 0, None), progress)
    deadline = time.monotonic() + 600
    while progress.done == 0 and not future.done():  # wait for the race to be under way
        assert time.monotonic() < deadline
        time.sleep(0.05)
    progress.cancel()
    with pytest.raises(runs.Cancelled):
        future.result(timeout=600)


def test_names_are_shown_as_data():
    hostile = "<script>alert(1)</script> $x$"
    result = list_search("epic/decisions/list_search_two_choices", seed=1, indifference=5,
                         candidates=[{"name": hostile, "formations": [
                             {"library": "netea:space-marine-codex-astartes/tactical", "points": 325}]},
                                     "netea:space-marine-codex-astartes/assault"])
    html = render_search(result).html
    assert "<script>" not in html and "&lt;script&gt;" in html and "$x$" not in html and "&#36;x&#36;" in html
