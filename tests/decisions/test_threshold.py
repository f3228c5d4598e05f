"""Issue 12 §4 "what would it take": ``threshold`` and ``wargame_odds.analysis.threshold`` on a case whose answer is
exactly computable, the T9A charge range (rules: charge range = Advance Rate + 2D6 reaches the
distance; exact values from the full enumeration of the dice, wargame_odds.analysis.t9a.charge.exact)."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wargame_odds import analysis
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.t9a.charge.exact import charge_table

SCENARIO = str(Path(__file__).resolve().parents[2] / "analysis" / "scenarios" / "t9a" / "single_charge_9in.toml")
FIELD = "chargers[Swordsmen].distance"
QUANTITY = "chargers[Swordsmen].reaches"
DISTANCES = list(range(6, 14))
TRIALS = 100_000


def _exact() -> dict:
    table = charge_table(DISTANCES, [4], ["2d6"])  # the shipped charger: Advance Rate 4, 2D6
    return {int(d): float(p) for d, p in zip(table.distance, table.p_success)}


@pytest.mark.parametrize("largest, target", [(True, 0.5), (True, 0.8), (False, 0.3)])
def test_threshold_finds_the_exact_answer(largest, target):
    """Charge range (Advance Rate + 2D6 ≥ distance): the largest distance charged with P ≥ target (and,
    with at_most, the smallest distance with P ≤ target) equals the answer read from the exact table;
    the targets lie far (> 10 σ) from every exact value, so the search is sure and says so."""
    exact = _exact()
    if largest:
        result = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_least=target, largest=True,
                                    trials=TRIALS, seed=3)
        expected = max(d for d, p in exact.items() if p >= target)
    else:
        result = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_most=target, trials=TRIALS,
                                    seed=3)
        expected = min(d for d, p in exact.items() if p <= target)
    assert result.reached and result.value == expected and result.confident
    for point in result.points:  # every estimate within 5 σ of the exact value
        p = exact[point["value"]]
        assert abs(point["p"] - p) <= 5 * (p * (1 - p) / TRIALS) ** 0.5
    assert f": {expected} (" in result.statement() and "clears the target" in result.certainty()


def test_threshold_not_reached_and_common_random_numbers():
    """No distance reaches an impossible target: reached is false and value null; every value runs on
    the same streams, so the estimates are monotone in the distance like the exact values."""
    result = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_least=1.0, largest=True,
                                trials=20_000, seed=1)
    assert (result.value, result.reached) == (6, True)  # 6 inches: always reached (AR 4 + at least 2)
    none = analysis.threshold(SCENARIO, FIELD, DISTANCES[2:], quantity=QUANTITY, at_least=0.999, trials=20_000)
    assert not none.reached and none.value is None and none.statement().startswith("No value")
    p = [pt["p"] for pt in none.points]
    assert p == sorted(p, reverse=True)


def test_threshold_cli_json_shape():
    """§4: --json gives {"value", "reached", "points": [{"value", "p", "ci95"}, ...]}."""
    out = CliRunner().invoke(main, ["threshold", SCENARIO, FIELD, "--values", "6:13", "--quantity", QUANTITY,
                                    "--at-least", "0.5", "--largest", "-n", "20000", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["value"] == max(d for d, p in _exact().items() if p >= 0.5) and data["reached"] is True
    assert [pt["value"] for pt in data["points"]] == DISTANCES
    assert all(set(pt) == {"value", "p", "ci95"} and pt["ci95"][0] <= pt["p"] <= pt["ci95"][1]
               for pt in data["points"])


@pytest.mark.parametrize("kwargs, field", [({"at_least": 0.5, "at_most": 0.5}, "target"),
                                           ({"at_least": 150}, "target"),
                                           ({"at_least": 0.5, "quantity": "sides.attacker_wins"}, "quantity")])
def test_threshold_bad_arguments_are_one_error(kwargs, field):
    with pytest.raises(UserError) as err:
        analysis.threshold(SCENARIO, FIELD, DISTANCES, trials=4096, **kwargs)
    assert f"field '{field}'" in str(err.value)


def test_threshold_answers_the_side_the_chance_points_to():
    """Issue 28 §3: without largest=, "at least" on a chance that falls as the value grows (the charge range
    reaching farther distances) answers the largest value that still reaches it, and "at most" the smallest value;
    a target above 1 is a percentage (50 is 0.5), with the same numbers."""
    exact = _exact()
    falling = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_least=50, trials=20_000, seed=3)
    assert falling.largest and falling.chosen == "auto" and falling.trend == -1 and falling.monotone
    assert falling.value == max(d for d, p in exact.items() if p >= 0.5)
    assert "falls as the value grows" in falling.why() and "largest" in falling.why()
    same = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_least=0.5, trials=20_000, seed=3)
    assert same.to_dict() | {"run": None} == falling.to_dict() | {"run": None}
    at_most = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_most=30, trials=20_000, seed=3)
    assert not at_most.largest and at_most.value == min(d for d, p in exact.items() if p <= 0.3)
    forced = analysis.threshold(SCENARIO, FIELD, DISTANCES, quantity=QUANTITY, at_least=50, largest=False,
                                trials=20_000, seed=3)
    assert forced.chosen == "given" and forced.value == DISTANCES[0] and "as asked" in forced.why()
    cli = CliRunner().invoke(main, ["threshold", SCENARIO, FIELD, "--values", "6:13", "--quantity", QUANTITY,
                                    "--at-least", "50", "-n", "20000", "-s", "3", "--json"])
    assert cli.exit_code == 0 and json.loads(cli.stdout)["value"] == falling.value
    assert json.loads(cli.stdout)["search"] == "largest" and json.loads(cli.stdout)["search_chosen"] == "auto"


def test_a_chance_that_is_not_monotone_gets_a_warning():
    """The trend is read from the ends; a step clearly against it (beyond both intervals' half-widths) warns."""
    from wargame_odds.analysis.decisions.results import ThresholdResult

    points = [{"value": v, "p": p, "ci95": [p - 0.01, p + 0.01]} for v, p in enumerate([0.2, 0.6, 0.4, 0.8])]
    result = ThresholdResult(field="x", quantity="q", target=0.5, direction="at_least", largest=None, points=points,
                             system="t9a", trials=10_000, seed=0)
    assert result.trend == 1 and not result.largest and not result.monotone
    assert result.value == 1 and "not monotone" in result.warning() and "60.0 %" in result.warning()
    steady = ThresholdResult(field="x", quantity="q", target=0.5, direction="at_least", largest=None,
                             points=[dict(pt, p=pt["value"] / 4) for pt in points], system="t9a", trials=1, seed=0)
    assert steady.monotone and steady.warning() is None


def test_plateaus_are_explained_from_the_model():
    """Issue 28 §3: neighbouring values with the very same chance get one line saying why.  Epic blast markers before
    an assault reach the winner only through the result roll's blast-marker modifiers (TP 1.12.7): the line is
    derived from those modifiers at each value; elsewhere it states what the common random numbers prove."""
    epic = analysis.threshold("epic/assault_marines_vs_warband", "formations[Warband].blast_markers", [0, 1, 2, 3],
                              quantity="sides.defender_wins", at_least=60, trials=8192, seed=1)
    assert epic.largest and epic.value == 0  # more blast markers on the defender: its chance falls
    assert [(p["from"], p["to"]) for p in epic.plateaus] == [(1, 3)]
    why = epic.plateaus[0]["why"]
    assert "TP 1.12.7" in why and "+1 to the attacker, whose side has fewer (0 against 1 to 3)" in why
    assert why in str(epic) and epic.to_dict()["plateaus"][0]["why"] == why
    t9a = analysis.threshold(SCENARIO, FIELD, [2, 3, 4, 5], quantity=QUANTITY, at_least=0.5, trials=4096, seed=1)
    assert [(p["from"], p["to"]) for p in t9a.plateaus] == [(2, 5)]  # Advance Rate 4 + 2D6 always reaches 5
    assert "exactly 4,096 of 4,096 trials reach it at each" in t9a.plateaus[0]["why"]
