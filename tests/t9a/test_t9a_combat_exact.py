"""T9A close combat: the rule tables and every worked figure of the rules reference's §C12, exactly
(docs/t9a.md, "Close combat": §C5 attacks, §C7 Break Test, §C8 flee, pursuit and rally)."""
from fractions import Fraction as F

import pytest

from wargame_odds.analysis.t9a.combat.exact import (
    attack_probability, automatic_hit_probability, binomial, p_break, p_caught, p_discipline_test, p_rally, save_fails,
    step_damage, two_dice)
from wargame_odds.analysis.t9a.combat.model import armour_need, to_hit_need, to_wound_need
from combat_cases import KNIGHTS, SPEARMEN, combat_model

#: §C12.1's attacker (Off 4, Str 3, AP 1) against a Def 3, Res 4, Armour 2 (5+) target, ten attacks at step 3.
TEN_ATTACKS = dict(KNIGHTS, models=10, width=10, attacks=[{"name": "sword", "attacks": 1, "offensive_skill": 4,
                                                          "strength": 3, "armour_penetration": 1}])
TARGET_12_1 = dict(SPEARMEN, defensive_skill=3, resilience=4, armour=2)


@pytest.mark.parametrize("offensive,defensive,need", [(10, 2, 2), (7, 3, 2), (6, 3, 3), (4, 3, 3), (3, 3, 4),
                                                       (3, 6, 4), (3, 7, 5), (0, 7, 5), (0, 8, 6), (0, 10, 6)])
def test_to_hit_table_5_1(offensive, defensive, need):
    """§C5.1: Off − Def ≥4 → 2+, 1..3 → 3+, 0..−3 → 4+, −4..−7 → 5+, ≤−8 → 6+."""
    assert to_hit_need(offensive, defensive) == need


@pytest.mark.parametrize("offensive,defensive,need", [(3, 7, 5), (0, 8, 5), (0, 10, 5), (3, 6, 4), (7, 3, 2)])
def test_to_hit_table_beta_15(offensive, defensive, need):
    """§C15 (beta switch ``to_hit_table = "beta"``): the same table without the 6+ row: ≤ −4 → 5+."""
    assert to_hit_need(offensive, defensive, "beta") == need


def test_to_hit_modifiers_keep_natural_1_and_6_5_1():
    """§C5.1: modifiers shift the need, but a natural 1 misses and a natural 6 hits."""
    assert to_hit_need(3, 3, modifier=1) == 3 and to_hit_need(6, 3, modifier=3) == 2
    assert to_hit_need(0, 10, modifier=-2) == 6


@pytest.mark.parametrize("difference,need", [(5, 2), (2, 2), (1, 3), (0, 4), (-1, 5), (-2, 6), (-6, 6)])
def test_to_wound_table_5_2(difference, need):
    """§C5.2: Str − Res ≥2 → 2+, 1 → 3+, 0 → 4+, −1 → 5+, ≤−2 → 6+."""
    assert to_wound_need(4 + difference, 4) == need


@pytest.mark.parametrize("left,p_save", [(0, F(0)), (1, F(1, 6)), (2, F(1, 3)), (3, F(1, 2)), (4, F(2, 3)),
                                         (5, F(5, 6)), (6, F(5, 6)), (-2, F(0))])
def test_armour_minus_ap_12_1(left, p_save):
    """§C5.3, §C12.1: Armour − AP → P(save): 0 → 0; 1 → 1/6; 2 → 1/3; 3 → 1/2; 4 → 2/3; 5 and 6 → 5/6."""
    armour = max(left, 0)
    ap = armour - left
    assert 1 - save_fails(armour_need(armour, ap)) == p_save


def test_one_attack_12_1():
    """§C12.1: Off 4 vs Def 3 (3+: 2/3), Str 3 vs Res 4 (5+: 1/3), Armour 2 − AP 1 (6+: fails 5/6) → 5/27;
    with an Aegis 5+ as well: 10/81."""
    m = combat_model(TEN_ATTACKS, TARGET_12_1)
    sword = m.combat.a.parts[0]
    assert attack_probability(m.combat, sword, m.combat.b, charging=False, first_round=False) == F(5, 27)
    aegis = combat_model(TEN_ATTACKS, dict(TARGET_12_1, aegis=5))
    assert attack_probability(aegis.combat, sword, aegis.combat.b, False, False) == F(10, 81)
    assert automatic_hit_probability(3, 1, m.combat.b) == F(1, 3) * F(5, 6)


def test_ten_attacks_12_2():
    """§C12.2: ten such attacks (ten knights in contact, step 3): unsaved wounds ~ Binomial(10, 5/27), mean
    50/27; P(0) = 22^10/27^10, P(1) = 60363460889600/205891132094649, P(10) = 5^10/27^10; the table's
    rounded values, P(0) ≈ 0.129 and P(≥3) ≈ 0.278 (§ summary 18)."""
    m = combat_model(TEN_ATTACKS, TARGET_12_1)
    dist = step_damage(m.combat, 0, 10, 3, 2, exact=True)
    assert dist == dict(enumerate(binomial(10, F(5, 27))))
    assert dist[0] == F(22 ** 10, 27 ** 10) == F(26559922791424, 205891132094649)
    assert dist[1] == F(60363460889600, 205891132094649)
    assert dist[10] == F(5 ** 10, 27 ** 10) == F(9765625, 205891132094649)
    assert sum(k * p for k, p in dist.items()) == F(50, 27)
    table = [0.12900, 0.29318, 0.29984, 0.18172, 0.07228, 0.01971, 0.00373]
    assert [round(float(dist[k]), 5) for k in range(7)] == table
    assert round(float(sum(dist[k] for k in range(7, 11))), 5) == 0.00053
    assert round(float(sum(dist[k] for k in range(3, 11))), 3) == 0.278


BREAK_TABLE = {  # §C12.3: P(break) = P(2D6 > Dis − margin), Dis 5..10 by margin 0..6
    5: ["13/18", "5/6", "11/12", "35/36", "1", "1", "1"],
    6: ["7/12", "13/18", "5/6", "11/12", "35/36", "1", "1"],
    7: ["5/12", "7/12", "13/18", "5/6", "11/12", "35/36", "1"],
    8: ["5/18", "5/12", "7/12", "13/18", "5/6", "11/12", "35/36"],
    9: ["1/6", "5/18", "5/12", "7/12", "13/18", "5/6", "11/12"],
    10: ["1/12", "1/6", "5/18", "5/12", "7/12", "13/18", "5/6"],
}


@pytest.mark.parametrize("discipline", sorted(BREAK_TABLE))
def test_break_test_table_12_3(discipline):
    """§C7.2, §C12.3: the Break Test table, from the loser's Discipline and the margin (no Steadfast: the
    loser has no more Full Ranks than the winner)."""
    loser = combat_model(dict(KNIGHTS, discipline=discipline), SPEARMEN).combat
    for margin, fraction in enumerate(BREAK_TABLE[discipline]):
        assert p_break(loser.a, 5, loser.b, 25, margin, loser) == F(fraction), margin


def test_break_test_commanders_and_steadfast_12_3():
    """§C7.3, §C7.5, §C12.3: Discipline 7 losing by 2: plain 13/18; Battle Standard re-roll (13/18)² = 169/324;
    the General's Discipline 9: 5/12; both (5/12)² = 25/144; Steadfast 5/12; losing by 6: 1, or 35/36 when
    a double 1 always passes (Q-C9 switch); Stubborn ignores the margin; Unbreakable never breaks."""
    def p(unit=None, support=None, combat=None, loser_models=5, winner_models=25):
        c = combat_model(dict(KNIGHTS, discipline=7, **(unit or {})), SPEARMEN, combat=combat,
                         charger_support=support).combat
        return lambda margin: p_break(c.a, loser_models, c.b, winner_models, margin, c)

    assert p()(2) == F(13, 18)
    assert p(support={"rally_around_the_flag": True})(2) == F(169, 324)
    assert p(support={"general_discipline": 9})(2) == F(5, 12)
    assert p(support={"general_discipline": 9, "rally_around_the_flag": True})(2) == F(25, 144)
    assert p(unit={"models": 25}, loser_models=25, winner_models=5)(2) == F(5, 12)      # Steadfast, 5 ranks to 1
    assert p()(6) == 1 and p(combat={"double_one_passes": True})(6) == F(35, 36)
    assert p(unit={"stubborn": True})(6) == F(5, 12)
    assert p(unit={"unbreakable": True})(6) == 0


def test_pursuit_table_12_4():
    """§C8.1, §C8.2, §C12.4: P(pursuit ≥ flee): 2D6 vs 2D6 721/1296 = (1 + Σp²)/2; Swiftstride pursuer 1877/2592;
    Swiftstride fleer 247/648; both 973/1728; Maximised 2D6 P(2..12) and mean 203/24."""
    assert p_caught(False, False) == F(721, 1296) == (1 + sum(p * p for p in two_dice().values())) / 2
    assert p_caught(False, True) == F(1877, 2592)
    assert p_caught(True, False) == F(247, 648)
    assert p_caught(True, True) == F(973, 1728)
    maximised = two_dice(True)
    assert [maximised[t] for t in range(2, 13)] == [F(1, 216), F(1, 72), F(7, 216), F(1, 18), F(19, 216), F(1, 8),
                                                     F(17, 108), F(1, 6), F(17, 108), F(1, 8), F(2, 27)]
    assert sum(t * p for t, p in maximised.items()) == F(203, 24)


def test_rally_12_5():
    """§C8.4, §C12.5, Q-C11: Rally Test of Dis 7: 7/12; with the Battle Standard re-roll 119/144; the General's
    Discipline 9: 5/6; Decimated (≤ 25 % of its HP) Dis 7 → ⌈7/2⌉ = 4: 1/6; switches: not halved 7/12, only a
    double 1 1/36."""
    def rally(hp_left=5, support=None, rule="halve"):
        c = combat_model(dict(KNIGHTS, discipline=7, models=20, width=5), SPEARMEN, charger_support=support,
                         combat={"decimated_rally": rule}).combat
        return p_rally(c.a, hp_left, c)

    assert rally(6) == F(7, 12)                      # 6 of 20 HP: not Decimated
    assert rally(6, {"rally_around_the_flag": True}) == F(119, 144)
    assert rally(6, {"general_discipline": 9}) == F(5, 6)
    assert rally(5) == F(1, 6)                       # 5 of 20 HP: Decimated
    assert rally(5, rule="none") == F(7, 12) and rally(5, rule="double_one_only") == F(1, 36)
    assert p_discipline_test(1) == 0 and p_discipline_test(1, double_one_passes=True) == F(1, 36)
