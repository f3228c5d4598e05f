"""Issue 28 §3: a probability typed by a player is a percentage when above 1 (60 is 60 %, 0.6 still works), for every
option, scenario key and API argument that takes one; results print in percent in the API's repr too."""
import json

import pytest
from click.testing import CliRunner

from wargame_odds import analysis
from wargame_odds.analysis.intake.bounds import as_precision, as_probability
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import ArgumentError, UserError
from wargame_odds.analysis.output.estimates import Probability

WARBAND = open("analysis/scenarios/epic/assault_marines_vs_warband.toml", encoding="utf-8").read()


def test_the_rule():
    assert [as_probability(v) for v in (0, 0.6, 1, 60, 100)] == [0, 0.6, 1, 0.6, 1.0]
    assert as_probability(150) == 150 and as_probability(True) is True  # left for the caller's check
    assert [as_precision(v) for v in (0.005, 1, 2.5)] == [0.005, 0.01, 0.025]


@pytest.mark.parametrize("typed, expected", [("0.25", 0.25), ("25", 0.25), ("1", 1.0)])
def test_scenario_probability_keys_take_percent(typed, expected):
    text = WARBAND.replace('name = "Warband"', f'name = "Warband"\ntrapped = {typed}', 1)
    assert analysis.epic.loads(text).formations[-1].trapped == expected


def test_a_probability_key_above_100_is_one_error():
    text = WARBAND.replace('name = "Warband"', 'name = "Warband"\ntrapped = 150', 1)
    with pytest.raises(UserError, match=r"trapped'.*got 150.*a percentage from 1 to 100"):
        analysis.epic.loads(text)


def test_precision_in_percentage_points_on_the_command_line_and_in_the_api():
    data = json.loads(CliRunner().invoke(main, ["t9a", "t9a/single_charge_9in", "--precision", "1", "--json"]).stdout)
    assert data["run"]["precision"] == 0.01 and data["run"]["precision_reached"]
    result = analysis.t9a.simulate(analysis.t9a.load("t9a/single_charge_9in"), precision=1)
    assert result.info.precision == 0.01 and result.to_dict()["run"] == data["run"]
    with pytest.raises(ArgumentError, match="percentage points from 1 to 50"):
        analysis.t9a.simulate(analysis.t9a.load("t9a/single_charge_9in"), precision=60)
    bad = CliRunner().invoke(main, ["threshold", "t9a/single_charge_9in", "chargers[Swordsmen].distance",
                                    "--values", "6:8", "--at-least", "150"])
    assert bad.exit_code == 2 and "neither a probability from 0 to 1 nor a percentage" in bad.stderr


def test_an_estimate_reads_in_percent():
    """The notebook/API repr of an estimate is the CLI's percent text; the fraction stays in .p and to_json."""
    estimate = Probability(827_700, 1_000_000)
    assert repr(estimate) == str(estimate) == "82.77 % [82.70, 82.84]"
    assert estimate.p == 0.8277 and estimate.to_json()["p"] == 0.8277
