"""Turn plans as options of ``rank`` and ``matrix`` (issue 41 §3; docs/decisions.md, "Turn plans"): a shooting
formation is scored by its shooting action (TP 1.6.1: Sustained Fire, Advance, Double) at the enemy, not by charging
with it; a plan may shoot with one formation and engage with another (a formation acts once a turn, TP 1.6); the
output says which plan scored each option and on what.  When a plan has no assault, every option is scored on the
enemy formation broken or destroyed after the end phase (TP 1.14), as ``compare`` scores a turn without one."""
import json
import math
from importlib.resources import files
from pathlib import Path

import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.decisions import matrix, rank
from wargame_odds.analysis.decisions.api import ENEMY_BROKEN
from wargame_odds.analysis.decisions.systems import SYSTEMS
from wargame_odds.analysis.epic.decisions_plans import Plan, assault_hits, ranged_hits, shooting_job
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.output.headline import decision_sentences
from wargame_odds.analysis.reports.definition import to_toml

from decisions_cli import one_error_line, run

SCENARIOS = Path(str(files("wargame_odds.analysis").joinpath("scenarios")))
BASE = SCENARIOS / "epic" / "assault_marines_vs_warband.toml"
MARINES = "netea:space-marine-codex-astartes/"
DEVASTATORS, ASSAULT, TACTICAL = MARINES + "devastator", MARINES + "assault", MARINES + "tactical"
WARBAND = "netea:ork-war-horde/warband"
EPIC = SYSTEMS["epic"]


def _matchup(option: str, plan=None, then=None):
    force = EPIC.force(option, "attacker")
    if plan is not None:
        force = EPIC.with_plan(force, Plan(**plan), then and EPIC.force(then, "attacker"))
    return EPIC.matchup(force, EPIC.force(WARBAND, "defender"), epic.load(BASE))


@pytest.mark.parametrize("option, ranged, close, shoots", [
    (DEVASTATORS, 4 * 2 * 2 / 6, 4 * 2 / 6, True),  # 4 units, two missile launchers AP5+ each; CC 5+
    (ASSAULT, 0.0, 4 * 4 / 6, False),  # no ranged weapon; CC 3+
    (TACTICAL, 6 * 2 / 6, 6 * 3 / 6, False),  # one missile launcher AP5+ each; CC 4+
    (MARINES + "land-raider", None, None, True),  # lascannons, CC 6+
])
def test_a_formations_job_is_shooting_when_its_volley_hits_more_than_its_close_combat(option, ranged, close, shoots):
    """The default plan's reading of the data: one volley's expected hits (weapons × shots × chance to hit on the better
    of AP/AT/MW, TP 1.9) against close combat's (each unit's CC attack, TP 1.12.4)."""
    model = _matchup(option)
    formation = model.formations[0]
    if ranged is not None:
        assert math.isclose(ranged_hits(model, formation), ranged)
        assert math.isclose(assault_hits(model, formation), close)
    assert shooting_job(model, formation) is shoots


def test_a_shooting_plan_is_the_turn_a_player_would_write():
    """The Devastators' job: a Sustained Fire at the Warband (TP 1.6.1), then the end phase of the base; the same
    scenario as one written by hand with [[turn]], and the assault formation's job is the assault scenario as before."""
    planned = _matchup(DEVASTATORS, {})
    written = epic.loads(to_toml({
        "system": "epic", "title": planned.title,
        "formations": [{"library": DEVASTATORS, "side": "attacker"}, {"library": WARBAND, "side": "defender"}],
        "turn": [{"formation": "Devastator", "action": "sustained_fire", "target": "Warband"}],
        "rules": epic.load(BASE).rules.model_dump(), "end_phase": epic.load(BASE).end_phase.model_dump()}))
    assert planned.model_dump() == written.model_dump()
    assert _matchup(ASSAULT, {}).model_dump() == _matchup(ASSAULT).model_dump()  # its job: the assault, unchanged
    both = _matchup(DEVASTATORS, {"plan": "shoot_then_assault", "action": "advance"}, then=ASSAULT)
    assert [(a.formation, a.action, a.target) for a in both.turn] == [("Devastator", "advance", "Warband"),
                                                                     ("Assault", "engage", "Warband")]
    assert EPIC.plan_words(both, "attacker") == "Advance, then assault"


def test_rank_scores_a_shooting_option_by_its_plan_and_says_so():
    """Devastators by their job (Sustained Fire) against Assault Marines by theirs: no assault to win in the first,
    so both are scored on the Warband broken or destroyed after the end phase; the score equals an independent run of
    the turn written by hand (5 sigma), and the headline names each option's plan."""
    result = rank([DEVASTATORS, ASSAULT], [WARBAND], base=BASE, trials=20_000, seed=3)
    frame = result.table().set_index("option")
    assert frame.plan.to_dict() == {"Devastator": "Sustained Fire", "Assault": "assault"}
    assert result.meta["outcome"] == "breaks or destroys the enemy"
    turn = epic.simulate(_matchup(DEVASTATORS, {}), trials=20_000, seed=11, progress=False)
    alone = turn["formations", "Warband", "destroyed"].p + turn["formations", "Warband", "broken_after_end_phase"].p
    score = frame.score["Devastator"]
    sigma = math.sqrt(score * (1 - score) / result.trials + alone * (1 - alone) / 20_000)
    assert abs(score - alone) < 5 * sigma and 0 < alone < 1
    lines = decision_sentences(result)
    assert lines[0] == ("Options are scored by their plan (Devastator: Sustained Fire; Assault: assault), on the "
                        "chance that the enemy formation is broken or destroyed after the end phase (a plan without an "
                        "assault has none to win).")
    assert any(line.startswith("1. ") and "breaks or destroys the enemy" in line for line in lines)
    assert "plan" in str(result) and "chance to break or destroy (meta)" in str(result)


def test_assault_plans_keep_the_chance_to_win_and_the_same_numbers():
    """Every option an assault formation: its job is the assault, scored on the chance to win it, with the very
    numbers of plans="assault"."""
    by_job = rank([ASSAULT, TACTICAL], [WARBAND], base=BASE, trials=3000, seed=2)
    by_assault = rank([ASSAULT, TACTICAL], [WARBAND], base=BASE, plans="assault", trials=3000, seed=2)
    assert by_job.meta["outcome"] == "wins" and by_job.meta["quantity"] == "sides/attacker_wins"
    assert by_job.table().equals(by_assault.table())
    assert decision_sentences(by_job)[0].endswith("on the chance to win the assault.")
    charge = rank([DEVASTATORS], [WARBAND], base=BASE, plans="assault", trials=3000, seed=2)
    assert charge.table().plan.tolist() == ["assault"]  # asked for: the Devastators charge


def test_matrix_grid_is_the_plans_score_with_each_rows_plan():
    result = matrix([DEVASTATORS, ASSAULT], [WARBAND], base=BASE, trials=3000, seed=2)
    grid = result.pivot()
    rows = result.table()
    score = rows[(rows.section == "score") & (rows.quantity == ENEMY_BROKEN)]
    assert len(score) == 2 and list(grid["Warband"]) == list(score.estimate)
    cell = result.cells[(0, 0)]
    assert grid.at["Devastator", "Warband"] == pytest.approx(
        cell["formations", "Warband", "destroyed"].p + cell["formations", "Warband", "broken_after_end_phase"].p)
    shown = str(result)
    assert "P(enemy broken or destroyed)" in shown and "Sustained Fire" in shown
    assert decision_sentences(result)[0].startswith("Options are scored by their plan (Devastator: Sustained Fire; "
                                                    "Assault: assault)")


@pytest.mark.parametrize("options, kwargs, needles", [
    ([ASSAULT], {"plans": "shoot"}, ["'Assault' has no ranged weapon", 'plan = "assault"']),
    ([DEVASTATORS], {"plans": "shoot_then_assault"}, ["options[0].then", "acts once a turn (TP 1.6)"]),
    ([DEVASTATORS], {"plans": {"plan": "shoot", "then": ASSAULT}}, ["options[0].then", "shoot_then_assault"]),
    ([DEVASTATORS], {"plans": "shoot", "side": "defender"}, ["field 'plans'", "play the attacker"]),
    ([DEVASTATORS], {"plans": ["shoot", "job"]}, ["2 plans for 1 options"]),
    ([DEVASTATORS], {"plans": "charge"}, ["unknown plan 'charge'", "job, assault, shoot, shoot_then_assault"]),
    ([DEVASTATORS], {"plans": {"plan": "shoot", "action": "march"}}, ["options[0].plan", "'action'", "advance"]),
])
def test_a_bad_plan_is_one_error_naming_it(options, kwargs, needles):
    with pytest.raises(UserError) as caught:
        rank(options, [WARBAND], trials=3000, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and all(n in message for n in needles), message


def test_the_cli_takes_a_plan_per_option_and_names_it(tmp_path):
    out = run("rank", "epic/decisions/marine_turn_plans", "-n", "3000", "--json")
    assert out.exit_code == 0, out.output
    rows = {r["option"]: r["plan"] for r in json.loads(out.output)["rows"]}
    assert rows == {"Devastator": "Sustained Fire", "Assault": "assault", "Tactical": "Advance",
                    "Devastator + Assault": "Sustained Fire, then assault"}
    text = run("rank", "epic/decisions/marine_turn_plans", "-n", "3000")
    assert text.exit_code == 0 and text.output.startswith("Options are scored by their plan (")
    bad = tmp_path / "bad.toml"
    bad.write_text(f'options = [{{ force = "{DEVASTATORS}", plan = "charge" }}]\n'
                   f'[[opponents]]\nforce = "{WARBAND}"\n')
    one_error_line(run("rank", bad), "bad.toml", "options")
    grid = tmp_path / "grid.toml"
    grid.write_text(f'attackers = [{{ force = "{TACTICAL}", plan = "shoot", action = "double" }}]\n'
                    f'defenders = ["{WARBAND}"]\n')
    out = run("matrix", grid, "-n", "2000", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["plans"] == {"Tactical": "Double"}


def test_a_list_search_plays_each_candidates_plan():
    """A list search with ``plan = "job"``: the Devastators shoot, the Assault Marines assault, the ranking says so,
    and a plan that may shoot needs the objective "break" (a shooting turn has no assault to win)."""
    from wargame_odds.analysis.decisions import list_search

    definition = {"system": "epic", "candidates": [DEVASTATORS, ASSAULT], "opponents": [{"force": WARBAND}],
                  "plan": "job", "objective": "break", "indifference": 5, "base": str(BASE)}
    result = list_search(definition, seed=1)
    frame = result.table()
    assert sorted(zip(frame.formation, frame.plan)) == [("Assault", "assault"), ("Devastator", "Sustained Fire")]
    assert "each candidate scored by its plan" in result.sentences[-1]
    with pytest.raises(UserError, match="no assault to win") as caught:
        list_search(dict(definition, objective="win"), seed=1)
    assert "\n" not in str(caught.value) and 'objective = "break"' in str(caught.value)
    plain = list_search(dict(definition, plan=None, objective="win"), seed=1)
    assert "plan" not in plain.table() and "one assault per matchup" in plain.sentences[-1]


def test_then_refuses_a_unit_name_the_option_defines_otherwise(tmp_path):
    """The formation ``then`` brings joins the option's force: a unit name both define differently is one error."""
    for name, cc in (("shooters", 5), ("chargers", 3)):
        (tmp_path / f"{name}.toml").write_text(to_toml({
            "name": name, "units": {"marine": {"type": "INF", "armour": 4, "cc": cc, "ff": 4, "weapons": [
                {"name": "launcher", "range": 45, "ap": 5, "at": 6}]}},
            "formations": [{"name": name, "initiative": 1, "units": [{"unit": "marine", "count": 4}]}]}))
    with pytest.raises(UserError, match="units.marine") as caught:
        rank([str(tmp_path / "shooters.toml")], [WARBAND], trials=3000,
             plans={"plan": "shoot_then_assault", "then": str(tmp_path / "chargers.toml")})
    assert "\n" not in str(caught.value) and "shooters.toml" in str(caught.value)
