"""T9A close combat in the decision commands: sweeps and threshold searches over combat fields and
quantities, matchups of unit files on a base scenario (matrix, compare, rank), each against the exact fight
(docs/t9a.md, "Close combat", §C9, §C11)."""
import math

from click.testing import CliRunner

from wargame_odds import analysis
import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.decisions.systems import SYSTEMS
from wargame_odds.analysis.t9a.combat.exact import fight
from combat_cases import KNIGHTS, SPEARMEN
from t9a_helpers import SCENARIOS, SIGMA, assert_p_near

BASE = SCENARIOS / "knights_charge_spear_block.toml"
KNIGHT_UNIT = {"system": "t9a", "name": "Knights", "unit": KNIGHTS, "charge": {"distance": 9.0}}
GREATSWORDS = {"system": "t9a", "name": "Greatswords", "charge": {"advance_rate": 8, "distance": 9.0},
               "unit": {"models": 20, "width": 5, "defensive_skill": 4, "resilience": 3, "armour": 3,
                        "discipline": 8, "standard": True, "stubborn": True,
                        "attacks": [{"name": "greatsword", "offensive_skill": 4, "strength": 5,
                                     "armour_penetration": 2, "strike_step": 0}]}}
SPEAR_UNIT = {"system": "t9a", "name": "Spearmen", "unit": SPEARMEN}


def exact_a_wins(model) -> float:
    return float(fight(model.combat)["a_wins"])


def test_threshold_over_the_spear_block_size_11():
    """§C11, issue 31 §2 ("how many ranks do my spearmen need?"): the fewest spearmen that keep the knights'
    chance of winning the combat (over all trials: the charge from 13" arrives with 30/36) at most 30 %; every
    value's estimate within 5 sigma of the exact fight, and the answer the exact values give."""
    values = [10, 15, 20, 25, 30]
    result = analysis.threshold(BASE, "target.unit.models", values, quantity="melee.unconditional.a_wins",
                                at_most=0.3, trials=20_000, seed=3)
    system = SYSTEMS["t9a"]
    model, source = system.load(BASE)
    exact = {v: exact_a_wins(system.with_value(model, source, "target.unit.models", v).model) * 30 / 36 for v in values}
    assert min(v for v, p in exact.items() if p <= 0.3) == 25
    for point in result.points:
        p = exact[point["value"]]
        assert abs(point["p"] - p) <= SIGMA * math.sqrt(p * (1 - p) / 20_000), point
    assert result.value == 25 and '"target · unit: models"' in result.statement() and ": 25 (" in result.statement()
    text = CliRunner().invoke(main, ["threshold", str(BASE), "target.unit.models", "--values", "20,25",
                                     "--quantity", "melee.given_contact.a_wins", "--at-most", "0.3", "-n", "8192"])
    assert text.exit_code == 0 and '"target · unit: models"' in text.stdout and ": 25 (" in text.stdout


def test_sweep_cells_are_their_own_simulations():
    """§C10: a sweep over a combat field (the spearmen's Discipline) runs each value as its own simulation on
    its own stream, and its melee quantities are in the sweep's table."""
    sweep = analysis.sweep(BASE, "target.unit.discipline", [6, 9], trials=8192, seed=5)
    rows = sweep.frame[(sweep.frame.section == "melee") & (sweep.frame.entity == "given_contact")
                       & (sweep.frame.quantity == "b_breaks")]
    assert len(rows) == 2 and rows.estimate.iloc[0] > rows.estimate.iloc[1]
    text = BASE.read_text().replace("discipline = 7", "discipline = 9", 1)
    alone = t9a.simulate(t9a.loads(text), trials=8192, seed=5, cell=(1,))
    assert alone["melee", "given_contact", "b_breaks"].k == sweep.cells[1]["melee", "given_contact", "b_breaks"].k


def test_matrix_of_unit_files_against_the_exact_fight():
    """§C9: a matrix of 9th Age units on the base scenario's [combat]: each cell's P(attacker wins the combat)
    within 5 sigma of the exact fight of that matchup."""
    matrix = analysis.matrix([KNIGHT_UNIT, GREATSWORDS], [SPEAR_UNIT], base=BASE, trials=20_000, seed=6)
    for i, attacker in enumerate((KNIGHT_UNIT, GREATSWORDS)):
        model = analysis.decisions.matchup(attacker, SPEAR_UNIT, base=BASE)
        assert model.model.chargers[0].name == attacker["name"] and model.model.target_name == "Spearmen"
        assert_p_near(matrix.cells[(i, 0)]["melee", "unconditional", "a_wins"], exact_a_wins(model.model),
                      attacker["name"])
    assert list(matrix._shown().iloc[:, 0]) == ["Knights", "Greatswords"]


def test_compare_is_paired_on_trial_streams():
    """§C9: compare (batch means on one stream per trial) of knights and greatswords charging spearmen: the
    difference of P(wins the combat) within its interval of the exact difference, and pairing helps."""
    result = analysis.compare(KNIGHT_UNIT, GREATSWORDS, [SPEAR_UNIT], base=BASE, trials=20_000, seed=7)
    row = result.frame.iloc[0]
    exact = [exact_a_wins(analysis.decisions.matchup(u, SPEAR_UNIT, base=BASE).model)
             for u in (KNIGHT_UNIT, GREATSWORDS)]
    half = (row.ci95_hi - row.ci95_lo) / 2
    assert abs(row.difference - (exact[0] - exact[1])) <= SIGMA / 1.96 * half
    assert row.variance_ratio > 1
    for name, p in zip(("Knights", "Greatswords"), exact):
        se = math.sqrt(p * (1 - p) / result.trials)
        estimate = row.p_a if name == "Knights" else row.p_b
        assert abs(estimate - p) <= SIGMA * se


def test_rank_orders_by_the_combat_won():
    """§C9: rank of two units against a meta of one: ordered by P(wins the combat)."""
    ranking = analysis.rank([KNIGHT_UNIT, GREATSWORDS], [SPEAR_UNIT], base=BASE, trials=8192, seed=8)
    assert list(ranking.frame.option) == ["Greatswords", "Knights"]
