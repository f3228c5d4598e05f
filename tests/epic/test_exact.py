"""The worked exact values of the Epic rules (regroup, rally, result roll, single assault die), as fractions.

Each value is computed by running the reference engine's own functions under every dice sequence
they can consume (the ``exact`` fixture), so these check the engine code, not a second formula.
"""
from fractions import Fraction as F

import pytest

from wargame_odds.analysis.epic.compile import ATTACKER
from wargame_odds.analysis.epic.reference import (
    new_trial, rally, rally_test, regroup_roll, result_score, roll_assault_attacks)


def probability(distribution, event):
    return sum(p for value, p in distribution.items() if event(value))


# -- 8.1 regroup -----------------------------------------------------------------------------------

def test_regroup_highest_die_distribution_and_mean(exact):
    """§8.1 / TP 1.13.1: P(highest of 2D6 = k) = (2k−1)/36, E = 161/36."""
    removed = exact(lambda rng: regroup_roll(rng, blast_markers=100, leaders=0))
    assert removed == {k: F(2 * k - 1, 36) for k in range(1, 7)}
    assert sum(k * p for k, p in removed.items()) == F(161, 36)


def test_regroup_at_least_table_with_and_without_leader(exact):
    """§8.1 / TP 1.13.1, 2.1.8: P(removes ≥ k) = 1, 35/36, 8/9, 3/4, 5/9, 11/36; a Leader shifts it by 1."""
    table = [F(1), F(35, 36), F(8, 9), F(3, 4), F(5, 9), F(11, 36)]
    plain = exact(lambda rng: regroup_roll(rng, 100, 0))
    leader = exact(lambda rng: regroup_roll(rng, 100, 1))
    for k, expected in enumerate(table, start=1):
        assert probability(plain, lambda r: r >= k) == expected
        assert probability(leader, lambda r: r >= k + 1) == expected
    assert probability(leader, lambda r: r >= 7) == F(11, 36)


def test_regroup_is_capped_at_the_markers_held(exact):
    """§8.1 / TP 1.13.1: removed = min(die + Leaders, BMs held)."""
    removed = exact(lambda rng: regroup_roll(rng, blast_markers=3, leaders=1))
    assert removed == {2: F(1, 36), 3: F(35, 36)}


# -- 8.2 rally and action test ---------------------------------------------------------------------

RALLY_TABLE = {  # initiative: pass probability at total modifier 0, −1, −2, −3
    1: [F(1), F(5, 6), F(2, 3), F(1, 2)],
    2: [F(5, 6), F(2, 3), F(1, 2), F(1, 3)],
    3: [F(2, 3), F(1, 2), F(1, 3), F(1, 6)],
    4: [F(1, 2), F(1, 3), F(1, 6), F(0)],
}


@pytest.mark.parametrize("initiative", RALLY_TABLE)
def test_rally_table(exact, initiative):
    """§8.2 / TP 1.14.1, 1.6.2: D6 + modifier ≥ initiative, a natural 1 is no automatic failure."""
    for column, modifier in enumerate((0, -1, -2, -3)):
        passed = exact(lambda rng: rally_test(rng, initiative, modifier))
        assert passed.get(True, 0) == RALLY_TABLE[initiative][column]


def test_rally_natural_one_fails_variant(exact):
    """§8.2 / §9.9 switch: if a natural 1 always failed, 1+ with no modifier passes 5/6."""
    assert exact(lambda rng: rally_test(rng, 1, 0, natural_one_fails=True))[True] == F(5, 6)


@pytest.mark.parametrize("initiative, modifier, expected",
                         [(1, -2, F(8, 9)), (2, -2, F(3, 4)), (2, -3, F(5, 9)), (3, -2, F(5, 9))])
def test_supreme_commander_reroll(exact, initiative, modifier, expected):
    """§8.2 / TP 2.1.15: one re-roll of a failed test gives 1 − (1 − p)²."""
    assert exact(lambda rng: rally_test(rng, initiative, modifier, reroll=True))[True] == expected


def ork_formation(compile_epic, boyz: int, broken: bool, units_out: int = 0):
    return compile_epic(
        units={"boyz": {"type": "INF", "armour": 6, "cc": 4, "ff": 6},
               "marine": {"type": "INF", "armour": 4, "cc": 4, "ff": 4}},
        formations=[
            {"name": "Marines", "side": "attacker", "initiative": 1,
             "units": [{"unit": "marine", "count": 1, "engaged": "bc"}]},
            {"name": "Warband", "side": "defender", "initiative": 3, "broken": broken,
             "army_rules": ["mob-rule"], "enemy_within_30cm": False,
             "units": [{"unit": "boyz", "count": boyz, "engaged": "bc"}]
             + ([{"unit": "boyz", "count": units_out, "engaged": "out"}] if units_out else [])},
        ])


@pytest.mark.parametrize("boyz, expected", [(6, F(1, 2)), (11, F(2, 3)), (5, F(1, 3))])
def test_mob_rule_broken_ork_rally(exact, compile_epic, boyz, expected):
    """§8.2 / TP-SR Mob Rule: Ork 3+, broken (−2): +1 with > 5 units → 1/2, +2 with > 10 → 2/3."""
    compiled = ork_formation(compile_epic, boyz, broken=True)

    def rally_warband(rng):
        trial = new_trial(compiled, rng)
        return rally(trial, trial.formations[1])

    assert exact(rally_warband)[True] == expected


@pytest.mark.parametrize("n, kept", list(zip(range(1, 11), [0, 1, 1, 2, 2, 3, 3, 4, 4, 5])))
def test_broken_rally_keeps_half_the_units_as_markers(exact, compile_epic, n, kept):
    """§8.2 / TP 1.14.1: a broken n-unit formation that rallies keeps ⌊n/2⌋ BMs (no Leaders)."""
    compiled = ork_formation(compile_epic, n, broken=True)

    def rally_warband(rng):
        trial = new_trial(compiled, rng)
        passed = rally(trial, trial.formations[1])
        return passed, trial.formations[1].broken, trial.formations[1].blast_markers

    outcomes = {value for value in exact(rally_warband) if value[0]}
    assert outcomes == {(True, False, kept)}


# -- 8.3 the result roll -----------------------------------------------------------------------------

def margins(exact, d, result_dice="highest"):
    """Distribution of attacker score − defender score with modifier difference d (engine dice core)."""
    return exact(lambda rng: result_score(rng, d, result_dice)[1] - result_score(rng, 0, result_dice)[1])


RESULT_TABLE = {  # d: P(attacker wins), P(tie), P(defender wins), P(attacker wins | ties re-rolled)
    -3: (F(53, 1296), F(89, 1296), F(577, 648), F(53, 1207)),
    -2: (F(71, 648), F(37, 324), F(503, 648), F(71, 574)),
    -1: (F(145, 648), F(215, 1296), F(791, 1296), F(290, 1081)),
    0: (F(505, 1296), F(143, 648), F(505, 1296), F(1, 2)),
    1: (F(791, 1296), F(215, 1296), F(145, 648), F(791, 1081)),
    2: (F(503, 648), F(37, 324), F(71, 648), F(503, 574)),
    3: (F(577, 648), F(89, 1296), F(53, 1296), F(1154, 1207)),
    4: (F(1243, 1296), F(7, 216), F(11, 1296), F(113, 114)),
    5: (F(1285, 1296), F(11, 1296), F(0), F(1)),
    6: (F(1), F(0), F(0), F(1)),
    9: (F(1), F(0), F(0), F(1)),
}


@pytest.mark.parametrize("d", RESULT_TABLE)
def test_result_table(exact, d):
    """§8.3 / TP 1.12.7: highest of 2D6 + modifiers each; higher wins, equal is a tie."""
    margin = margins(exact, d)
    win = probability(margin, lambda m: m > 0)
    tie = probability(margin, lambda m: m == 0)
    lose = probability(margin, lambda m: m < 0)
    assert (win, tie, lose, win / (win + lose)) == RESULT_TABLE[d]


def test_winning_margin_distribution_at_d0(exact):
    """§8.3: with d = 0 the attacker wins by 1..5 with 215/1296, 37/324, 89/1296, 7/216, 11/1296;
    the defender's side is symmetric."""
    margin = margins(exact, 0)
    expected = {1: F(215, 1296), 2: F(37, 324), 3: F(89, 1296), 4: F(7, 216), 5: F(11, 1296)}
    assert {m: p for m, p in margin.items() if m > 0} == expected
    assert {-m: p for m, p in margin.items() if m < 0} == expected


def test_expected_extra_hits_at_d_plus_2(exact):
    """§8.3: with d = +2, E[extra hits on the defender] (0 when the attacker does not win) = 1399/648."""
    margin = margins(exact, 2)
    assert sum(m * p for m, p in margin.items() if m > 0) == F(1399, 648)


@pytest.mark.parametrize("d, win, tie, lose", [
    (0, F(575, 1296), F(73, 648), None),
    (1, F(721, 1296), F(35, 324), F(145, 432)),
    (2, F(287, 432), None, None),
])
def test_summed_2d6_variant(exact, d, win, tie, lose):
    """§8.3 comparison values for the non-TP switch result_dice = "sum" (§9.1)."""
    margin = margins(exact, d, "sum")
    assert probability(margin, lambda m: m > 0) == win
    if tie is not None:
        assert probability(margin, lambda m: m == 0) == tie
    if lose is not None:
        assert probability(margin, lambda m: m < 0) == lose


# -- 8.4 single assault die ------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [(2, F(5, 6)), (3, F(2, 3)), (4, F(1, 2)), (5, F(1, 3)), (6, F(1, 6))])
@pytest.mark.parametrize("weapon", ["cc", "ff"])
def test_single_assault_die(exact, compile_epic, weapon, value, expected):
    """§8.4 / TP 1.12.5: one die per unit, hit on D6 ≥ CC in contact (FF not in contact), no modifiers."""
    compiled = compile_epic(
        units={"a": {"type": "INF", "armour": 4, weapon: value}, "d": {"type": "INF", "armour": 4, "cc": 4}},
        formations=[
            {"name": "A", "side": "attacker", "initiative": 1,
             "units": [{"unit": "a", "count": 1, "engaged": "bc" if weapon == "cc" else "ff"}]},
            {"name": "D", "side": "defender", "initiative": 1, "units": [{"unit": "d", "count": 1, "engaged": "bc"}]},
        ])
    hits = exact(lambda rng: len(roll_assault_attacks(new_trial(compiled, rng), ATTACKER, first_strike=False)))
    assert hits == {1: expected, 0: 1 - expected}
