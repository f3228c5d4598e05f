"""Issue 41 §3: the List tab says which turn plan each detachment plays (docs/decisions.md, "Turn plans"): by default
its job (a shooting formation shoots, any other assaults), scored on the opponent broken or destroyed after the end
phase; every detachment assaulting is scored on the chance to win the assault.  The definition it downloads carries
the plan, and ``wargame-odds list-search`` runs it unchanged with the page's numbers.  No browser."""
import json
import tomllib

import pytest

pytest.importorskip("panel")

from click.testing import CliRunner  # noqa: E402

from wargame_odds.analysis.app import runs  # noqa: E402
from wargame_odds.analysis.app.list_tab import PLANS  # noqa: E402
from wargame_odds.analysis.app.page import Page  # noqa: E402
from wargame_odds.analysis.cli import main  # noqa: E402

BUDGET = 50_000_000
ASSAULTS = "every detachment assaults (one assault, every unit in base contact)"
ADVANCE = "every detachment shoots: Advance"


@pytest.fixture
def tab():
    tab = Page(in_notebook=True).tabs["list"]
    tab.cap.value = 150  # Codex Astartes at 150 points: Bikes or Scouts, two candidates
    return tab


def test_the_plan_box_writes_the_plan_and_what_it_is_scored_on(tab):
    assert tab.plan.value == next(iter(PLANS)) and tab.plan.value.startswith("each detachment's job")
    data = tab.definition()
    assert (data["plan"], data["action"], data["objective"]) == ("job", "sustained_fire", "break")
    tab.plan.value = ASSAULTS
    data = tab.definition()
    assert (data["plan"], data["objective"]) == ("assault", "win")
    tab.plan.value = ADVANCE
    assert tomllib.loads(tab.toml()) == tab.definition() and tab.definition()["action"] == "advance"
    assert tab.problem is None


def test_a_shooting_plan_runs_as_the_cli_runs_it_and_the_ranking_names_it(tab, tmp_path):
    tab.plan.value = ADVANCE
    path = tmp_path / "list.toml"
    path.write_text(tab.toml(), encoding="utf-8")
    shown = runs.submit(tab.work(100_000, 4, None), runs.Progress()).result(timeout=600)
    run = CliRunner().invoke(main, ["list-search", str(path), "--seed", "4", "--max-trials", str(BUDGET), "--json"])
    assert run.exit_code == 0, run.output
    cli = json.loads(run.stdout)
    assert shown.result.sentences == cli["sentences"]
    assert set(shown.result.table().plan) == {"Advance"} and {r["plan"] for r in cli["ranking"]} == {"Advance"}
    assert "each candidate scored by its plan" in shown.result.sentences[-1]
    assert "<th>plan</th>" in shown.fold and "<td>Advance</td>" in shown.fold
    assert shown.csv.splitlines()[0].endswith(",plan")
