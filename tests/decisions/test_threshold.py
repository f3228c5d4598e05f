"""Issue 12 §4 "what would it take": ``threshold`` and ``analysis.threshold`` on a case whose answer is
exactly computable, the T9A charge range (rules: charge range = Advance Rate + 2D6 reaches the
distance; exact values from the full enumeration of the dice, analysis.t9a.exact)."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import analysis
from analysis.cli import main
from analysis.errors import UserError
from analysis.t9a.exact import charge_table

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
    assert f"= {expected}:" in result.statement() and "clears the target" in result.statement()


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
                                           ({"at_least": 1.5}, "target"),
                                           ({"at_least": 0.5, "quantity": "sides.attacker_wins"}, "quantity")])
def test_threshold_bad_arguments_are_one_error(kwargs, field):
    with pytest.raises(UserError) as err:
        analysis.threshold(SCENARIO, FIELD, DISTANCES, trials=4096, **kwargs)
    assert f"field '{field}'" in str(err.value)
