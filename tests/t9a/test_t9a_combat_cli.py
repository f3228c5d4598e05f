"""T9A close combat through the command line: bad input (§C10 ranges, out-of-scope fights) gives one line and
exit 2; the text leads with player sentences; ``--trace`` tells one fight clause by clause; the plot
(docs/t9a.md, "Close combat")."""
import json
import re

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.cli import main
from t9a_helpers import SCENARIOS

COMBAT = SCENARIOS / "knights_charge_spear_block.toml"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def edited(tmp_path, old: str, new: str) -> str:
    text = COMBAT.read_text()
    if old == "[combat]":           # drop the whole table
        old = text[text.index("[combat]"):text.index("[target]")]
    assert old in text, old
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    return str(path)


@pytest.mark.parametrize("old,new,field,allowed", [
    ("models = 25", "models = 0", "target.unit.models", ">= 1"),
    ("models = 25", "models = 1001", "target.unit.models", "<= 1000"),
    ("width = 5\nin_contact", "width = 30\nin_contact", "target.unit.width", "1 to models (25)"),
    ("in_contact = 5", "in_contact = 6", "target.unit.in_contact", "1 to width (5)"),
    ("defensive_skill = 3", "defensive_skill = 11", "target.unit.defensive_skill", "<= 10"),
    ("resilience = 3", "resilience = -1", "target.unit.resilience", ">= 0"),
    ("armour = 2", "armour = 7", "target.unit.armour", "<= 6"),
    ("discipline = 7", "discipline = 11", "target.unit.discipline", "<= 10"),
    ("aegis = 0", "aegis = 1", "target.unit.aegis", "0, 2, 3, 4, 5 or 6"),
    ("agility = 3", "agility = 11", "target.unit.attacks[0].agility", "<= 10"),
    ("armour_penetration = 1\nagility", "armour_penetration = 11\nagility", "target.unit.attacks[0].armour_penetration",
     "<= 10"),
    ("strength = 3", "strength = 12", "target.unit.attacks[0].strength", "<= 10"),
    ("rounds = 3", "rounds = 21", "combat.rounds", "<= 20"),
    ("rounds = 3", "rounds = 0", "combat.rounds", ">= 1"),
    ("rounds = 3", 'rounds = "3"', "combat.rounds", None),
    ("rounds = 3", "round = 3", "combat.round", "rounds, pursue"),
    ('decimated_rally = "halve"', 'decimated_rally = "never"', "combat.decimated_rally", "'halve', 'none'"),
    ('impact_hits = ""', 'impact_hits = "D7"', "target.unit.attacks[0].impact_hits", "dice like D3"),
    ("multiple_wounds = 1", "multiple_wounds = 0", "target.unit.attacks[0].multiple_wounds", "from 1 to 20"),
])
def test_bad_value_one_line_exit_2(tmp_path, old, new, field, allowed):
    """§C10 ranges (models ≥ 1, width 1..models, in_contact 1..width, skills, Str, Res, Agi 0..10, Armour 0..6,
    AP 0..10, Discipline 0..10, saves 2..6, rounds 1..20; unknown keys; wrong types): one line naming the
    file, the field and what is allowed; exit status 2."""
    path = edited(tmp_path, old, new)
    result = run("t9a", path, "-n", "1000")
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and path in lines[0] and f"field '{field}'" in lines[0], lines
    if allowed:
        assert f"allowed: {allowed}" in lines[0] or allowed in lines[0], lines[0]


@pytest.mark.parametrize("old,new,field,says", [
    ("[combat]", "", "target.unit", "only used with a [combat] table"),
    ("distance = 13.0", "distance = 13.0\nin_front_arc = false", "chargers[0].in_front_arc",
     "flank and rear combats are not modelled"),
    ("flank_bonus = 0", "flank_bonus = 1", "combat.flank_bonus", "flank and rear combats are not modelled"),
    ("[[chargers]]", "[[chargers]]\nname = 'Wolves'\nadvance_rate = 9\ndistance = 10.0\n[[chargers]]", "chargers",
     "several charging units"),
])
def test_out_of_scope_fight_one_line(tmp_path, old, new, field, says):
    """§C14 and issue 31 §C1: several chargers in one combat and flank or rear contact are not modelled: the
    file gets one line saying so (and a unit table without [combat] is refused)."""
    result = run("t9a", edited(tmp_path, old, new), "-n", "1000")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"field '{field}'" in lines[0] and says in lines[0], lines


def test_text_leads_with_the_combat_in_player_words():
    """Issue 31 §C2 / §C11: the headline names the units, says who wins, breaks and is caught, and how often the
    fight is still going; Full Ranks, Rank Bonus and Steadfast come first; then the full table."""
    result = run("t9a", COMBAT, "-n", "20000", "-s", "3")
    assert result.exit_code == 0
    text = result.stdout
    start = text.index("At the start of the combat: Knights 5 models, 1 Full Rank (Rank Bonus +0); Spearmen 25 "
                       "models, 5 Full Ranks (Rank Bonus +3), Steadfast.")
    wins = re.search(r"Given the charge arrives, Knights win the combat: [\d.]+ % \[[\d.]+, [\d.]+\]; Spearmen break "
                     r"[\d.]+ % \[[\d.]+, [\d.]+\], caught [\d.]+ % \[[\d.]+, [\d.]+\]; still fighting after 3 rounds",
                     text)
    assert wins and start < wins.start() < text.index("All estimates")
    assert "Close combat (given contact)" in text and "the target is caught by the pursuit" in text
    data = json.loads(run("t9a", COMBAT, "-n", "20000", "-s", "3", "--json").stdout)
    knights = data["melee"]["given_contact"]["a_wins"]
    assert f"Knights win the combat: {100 * knights['p']:.1f} %" in text


def test_trace_tells_one_fight_clause_by_clause():
    """Issue 31 §C2 ``--trace``: each Initiative Step's dice with their clauses, the Combat Score, the Break
    Test, flee and pursuit rolls (a seed whose fight ends in a pursuit)."""
    model = t9a.load(COMBAT)
    for seed in range(40):
        trace = t9a.trace(model, seed=seed)
        if "pursues" in trace:
            break
    for clause in ("§C3.2", "§C4.4 Initiative Step", "§C4.1, §C4.2", "§C5.1", "§C5.2", "§C5.3", "§C6.1 Combat Score",
                   "§C7 Break Test", "§C8.1", "pursues"):
        assert clause in trace, clause
    assert run("t9a", COMBAT, "--trace", "-s", str(seed)).stdout.strip() == trace


def test_plot_outcomes_hp_lost_and_rounds(tmp_path):
    """Issue 31 §C2 plots: outcome bars with intervals, "at least N HP lost" for both units, the round the fight
    ends in (with "unresolved"), beside the charge-range curve."""
    import matplotlib
    matplotlib.use("Agg")
    figure = t9a.simulate(t9a.load(COMBAT), trials=8192, seed=2).plot()
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["Charge range against distance", "How the combat ends", '"At least N HP lost", both units',
                      "When the fight ends"]
    bars, hp_lost, rounds = figure.axes[1:]
    assert "Knights win the combat" in [t.get_text() for t in bars.get_yticklabels()]
    assert {line.get_label() for line in hp_lost.get_lines()} >= {"Knights, whole fight", "Spearmen, round 1"}
    assert [t.get_text() for t in rounds.get_xticklabels()] == ["1", "2", "3", "unresolved"]
    out = tmp_path / "combat.png"
    assert run("t9a", COMBAT, "-n", "4096", "--plot", out).exit_code == 0 and out.stat().st_size > 10_000
    dollars = edited(tmp_path, 'name = "Knights"', 'name = "$x^$"')     # user text is drawn as written
    assert run("t9a", dollars, "-n", "4096", "--plot", out).exit_code == 0


def test_exact_combat_of_the_api_is_the_exact_fight_and_refuses_a_charge_without_combat():
    """``t9a.exact_combat`` (the docs' exact check) gives the exact fight of the scenario's [combat] (§C9),
    as fractions when asked, and names the argument for a scenario without one."""
    from fractions import Fraction

    from wargame_odds.analysis.intake.errors import ArgumentError
    from wargame_odds.analysis.t9a.combat.exact import fight

    scenario = t9a.load(COMBAT)
    exact = t9a.exact_combat(scenario, exact=True)
    assert exact == fight(scenario.combat, exact=True)
    assert isinstance(exact["a_wins"], Fraction) and 0 < exact["a_wins"] < 1
    assert t9a.exact_combat(str(COMBAT))["a_wins"] == pytest.approx(float(exact["a_wins"]), abs=1e-12)
    with pytest.raises(ArgumentError, match="scenario must be a scenario with a \\[combat\\] table"):
        t9a.exact_combat(SCENARIOS / "three_chargers.toml")
