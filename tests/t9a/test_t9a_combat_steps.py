"""Each rule step of the close-combat kernel (kernels/t9a_combat.py) against the same step of the reference
engine (analysis/t9a/combat/reference.py) on crafted states: exact where the states or dice can be enumerated,
else 5 sigma against the exact distribution (docs/t9a.md, "Close combat")."""
import math
from dataclasses import replace
from fractions import Fraction as F
from itertools import product

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.t9a.combat import reference as ref
from wargame_odds.analysis.t9a.combat.exact import (
    _round, _unsaved as exact_unsaved, binomial, expr_distribution, two_dice)
from wargame_odds.analysis.t9a.combat.layout import alias_tables, binomial_rows, combat_arrays
from wargame_odds.analysis.t9a.combat.model import DiceExpr, parse_dice
from wargame_odds.analysis.t9a.charge.layout import build_layout
from combat_cases import BEASTS, CASES, HALBERDS, KNIGHTS, SPEARMEN, combat_model
from wargame_odds.kernels import t9a_combat as K
from wargame_odds.kernels.rng import seed_stream
from t9a_helpers import SIGMA


class Scripted:
    """A stand-in for random.Random whose dice are given in advance."""

    def __init__(self, dice):
        self.dice = list(dice)

    def randint(self, a, b):
        return self.dice.pop(0)


def state(seed=1):
    s = np.zeros(4, np.uint64)
    seed_stream(s, np.uint64(seed), np.uint64(99), np.uint64(0))
    return s


def unit(**changes):
    return replace(combat_model().combat.a, **changes)


def test_full_ranks_and_rank_bonus_3_2_on_every_small_unit():
    """§C3.2, §C6.1: Full Ranks (⌊models/width⌋ plus a rear rank with enough models; none when narrower than a
    Full Rank or Light Troops) and Rank Bonus (max +3 or the beta +4), for every unit up to 60 models."""
    for width, full_rank, light, models in product(range(1, 13), (1, 3, 5), (False, True), range(0, 61)):
        u = unit(width=width, full_rank=full_rank, light_troops=light)
        ranked = int(not light and width >= full_rank)
        assert K._full_ranks(models, width, full_rank, ranked) == ref.full_ranks(u, models)
        for cap in (3, 4):
            assert K._rank_bonus(K._full_ranks(models, width, full_rank, ranked), cap) == ref.rank_bonus(u, models, cap)


def test_rank_table_matches_models_and_ranks():
    """§C9: the kernel's per-HP table of (models, Full Ranks) is ⌈HP / HP per model⌉ and §C3.2's ranks."""
    m = combat_model(dict(BEASTS, models=5, width=2, full_rank=1), SPEARMEN)
    arrays = combat_arrays(m.combat, build_layout(m))
    table = np.zeros((2, 26, 2), np.int64)
    K._fill_rank_table(arrays.cu, table)
    for side, u in enumerate(m.combat.units()):
        for hp in range(u.start_hp + 1):
            assert list(table[side, hp]) == [u.models_left(hp), ref.full_ranks(u, u.models_left(hp))]


def test_attackers_4_1_4_2_on_a_grid():
    """§C4.1–§C4.2, Q-C2, Q-C4: front-rank attacks plus supporting attacks (capped by Height or Extra Support,
    one more rank per Fight in Extra Rank, none for Harnessed parts) after casualties from the rear."""
    base = combat_model().combat.a
    for width, contact, attacks, cap, extra, supports, models in product(
            (1, 3, 5, 8), (1, 3, 5, 8), (0, 1, 3), (1, 3), (0, 1, 2), (True, False), range(0, 33)):
        if contact > width:
            continue
        u = replace(base, width=width, in_contact=contact)
        part = replace(base.parts[0], attacks=attacks, support_cap=cap, extra_ranks=extra, supports=supports)
        front, supporting = ref.attacks_made(u, part, models)
        kernel = K._attacks(models, width, contact, attacks, min(attacks, cap), 1 + extra if supports else 0)
        assert kernel == front + supporting


def test_break_discipline_7_on_a_grid():
    """§C7.2–§C7.5, Q-C10: the Break Test's Discipline (the General's if better; margin ignored when Stubborn or
    Steadfast; never below 0)."""
    m = combat_model(SPEARMEN, SPEARMEN)
    cu = combat_arrays(m.combat, build_layout(m)).cu
    for dis, general, stubborn, mine, theirs, margin in product((0, 4, 7, 10), (0, 8), (False, True), (0, 1, 3),
                                                                 (0, 2), range(0, 13)):
        loser = replace(m.combat.a, discipline=dis, general_discipline=general, stubborn=stubborn)
        cu[0, K.U_DISCIPLINE], cu[0, K.U_STUBBORN] = max(dis, general), int(stubborn)
        expected, _ = ref.break_discipline(loser, 5 * mine, m.combat.b, 5 * theirs, margin)
        assert K._break_discipline(cu, 0, mine, theirs, margin) == expected


def test_rally_discipline_8_4_on_a_grid():
    """§C8.4, Q-C11, Q-C16: the Rally Test's Discipline (Commanding Presence applies; Decimated at ≤ 25 % of
    the starting HP: halved rounding up, unchanged, or only a double 1, by switch)."""
    for rule, code in (("halve", K.RALLY_HALVE), ("none", K.RALLY_NONE), ("double_one_only", K.RALLY_DOUBLE_ONE)):
        m = combat_model(dict(KNIGHTS, models=20, width=5), SPEARMEN, combat={"decimated_rally": rule},
                         charger_support={"general_discipline": 9})
        arrays = combat_arrays(m.combat, build_layout(m))
        assert arrays.cr[K.R_DECIMATED_RALLY] == code
        for dis, hp in product(range(0, 11), range(0, 21)):
            u = replace(m.combat.a, discipline=dis)
            arrays.cu[0, K.U_DISCIPLINE] = max(dis, 9)
            need, only_double_one, _ = ref.rally_discipline(u, hp, m.combat)
            assert K._rally_discipline(arrays.cu, arrays.cr, 0, hp) == (need, only_double_one)


@pytest.mark.parametrize("double_one_passes", [False, True])
def test_discipline_test_7_1_every_roll(double_one_passes):
    """§C7.1, §C7.5, Q-C9: for every 2D6 roll and its re-roll, the kernel's pass rule agrees with the reference
    test fed the same dice (a re-roll only after a failed first roll)."""
    combat = combat_model(combat={"double_one_passes": double_one_passes}).combat
    for dis, only_double_one, a, b, c, d in product(range(0, 13), (False, True), *[range(1, 7)] * 4):
        first = K._passes(a + b, dis, double_one_passes, only_double_one)
        once = ref.discipline_test(Scripted([a, b]), dis, combat, False, lambda line: None, only_double_one)
        assert first == once
        again = first or K._passes(c + d, dis, double_one_passes, only_double_one)
        assert again == ref.discipline_test(Scripted([a, b, c, d]), dis, combat, True, lambda line: None,
                                            only_double_one)


def test_maximised_roll_8_2_every_roll():
    """§C8.2: the two highest of three dice, for all 216 rolls, as the reference's Maximised 2D6; with the
    exact distribution of §C12.4."""
    counts = {}
    for dice in product(range(1, 7), repeat=3):
        total = K._best_two(*dice)
        assert total == ref.roll_total(Scripted(dice), True)[1]
        counts[total] = counts.get(total, 0) + 1
    assert {t: F(k, 216) for t, k in counts.items()} == two_dice(True)


def test_score_6_1():
    """§C6.1: HP caused + Charging + Rank Bonus + Standard + Battle Standard."""
    for lost, charging, bonus, standard, bsb in product(range(0, 8), (0, 1), range(0, 4), (0, 1), (0, 1)):
        u = unit(standard=bool(standard), battle_standard=bool(bsb))
        assert K._score(lost, charging, bonus, standard + bsb) == sum(ref.combat_score(u, lost, bool(charging),
                                                                                        bonus).values())


def test_alias_tables_are_the_binomial_9():
    """§C9: the kernel's alias rows give Binomial(n, p) for every n up to the table's size: the probability
    each row assigns to k (its own share plus the aliased ones) is the exact binomial to 1e-12."""
    for p in (0.0, F(1, 12), F(5, 27), F(1, 2), F(35, 36), 1.0):
        rows = 40
        pmf = binomial_rows(float(p), rows)
        prob, alias = alias_tables(pmf)
        for n in range(rows + 1):
            base = n * (n + 1) // 2
            implied = np.zeros(n + 1)
            for j in range(n + 1):
                implied[j] += prob[base + j] / (n + 1)
                implied[alias[base + j]] += (1 - prob[base + j]) / (n + 1)
            exact = [float(x) for x in binomial(n, F(p))]
            assert np.abs(implied - exact).max() < 1e-12, (p, n)


def test_alias_draw_is_its_column_or_alias():
    """§C9: one draw is column ⌊u (n+1)⌋ when the rest of u (n+1) is below its share, else its alias; the
    last column never overflows."""
    prob, alias = alias_tables(binomial_rows(0.3, 6))
    base, n = 21, 6
    for u in np.linspace(0, 1 - 2 ** -53, 2001):
        x = u * (n + 1)
        j = min(int(x), n)
        assert K._alias_draw(u, base, n, prob, alias) == (j if x - j < prob[base + j] else alias[base + j])


def _near(counts, exact: dict, label):
    n = sum(counts.values())
    for k in set(counts) | set(exact):
        p = float(exact.get(k, 0))
        got = counts.get(k, 0)
        if p in (0.0, 1.0):
            assert got == p * n, (label, k)
            continue
        assert abs(got / n - p) <= SIGMA * math.sqrt(p * (1 - p) / n), (label, k, got / n, p)


def test_unsaved_draws_are_binomial_beyond_the_table_9():
    """§C9: 600 attacks (more than a table row: several rows drawn) give Binomial(600, p); 7 attacks one row."""
    m = combat_model()
    arrays = combat_arrays(m.combat, build_layout(m))
    s = state()
    group = 2                                           # the spearmen's attacks: p = 1/2 · 1/2 · 1/3
    p = F(1, 12)
    for n in (7, 600):
        draws = [K._unsaved(s, group, n, arrays.g_off, arrays.g_nmax, arrays.prob, arrays.alias) for _ in range(20000)]
        if n == 7:
            values, counts = np.unique(draws, return_counts=True)
            _near(dict(zip(values.tolist(), counts.tolist())), exact_unsaved(n, p), "7 attacks")
        else:
            mean, sd = float(n * p), math.sqrt(float(n * p * (1 - p)))
            assert abs(np.mean(draws) - mean) <= SIGMA * sd / math.sqrt(len(draws))
            assert abs(np.std(draws) - sd) <= 0.05 * sd


@pytest.mark.parametrize("text,add,dice,sides", [("D3", 0, 1, 3), ("2D6+1", 1, 2, 6), ("4", 4, 0, 0)])
def test_profile_dice_5_5(text, add, dice, sides):
    """§C5.5–§C5.6: numbers of the profile (D3 = a D6 halved, rounding up): the kernel's rolls against the exact
    distribution; Multiple Wounds capped at the target's HP."""
    expr = parse_dice(text, "<test>", "x", 1)
    assert expr == DiceExpr(dice, sides, add)
    s = state(2)
    rolls = [K._roll_expr(s, dice, sides, add) for _ in range(20000)]
    values, counts = np.unique(rolls, return_counts=True)
    _near(dict(zip(values.tolist(), counts.tolist())), expr_distribution(expr), text)
    lost = [K._health_points(s, 3, dice, sides, add, 2) for _ in range(20000)]
    capped = {}
    for v, p in expr_distribution(expr).items():
        capped[min(v, 2)] = capped.get(min(v, 2), 0) + p
    per_three = {0: F(1)}
    for _ in range(3):
        sums = {}
        for x, p in per_three.items():
            for y, q in capped.items():
                sums[x + y] = sums.get(x + y, 0) + p * q
        per_three = sums
    values, counts = np.unique(lost, return_counts=True)
    _near(dict(zip(values.tolist(), counts.tolist())), per_three, f"{text} x3 capped")


@pytest.mark.parametrize("case", ["knights_vs_spears", "beasts_vs_halberds"])
def test_round_steps_4_4_from_crafted_states(case):
    """§C4.4, §C5, §C6.4: one round's Initiative Steps from crafted HP states (round 1 and a later round), the
    kernel's joint (HP left, HP left) against the exact distribution of the same step function of the exact
    calculator, 5 sigma per cell."""
    m = combat_model(**CASES[case])
    arrays = combat_arrays(m.combat, build_layout(m))
    table = np.zeros((2, max(u.start_hp for u in m.combat.units()) + 1, 2), np.int64)
    K._fill_rank_table(arrays.cu, table)
    s = state(3)
    a, b = m.combat.a.start_hp, m.combat.b.start_hp
    for kind, start in ((0, (a, b)), (1, (max(1, a - 2), max(1, b // 2)))):
        out = np.zeros((20000, 2), np.int64)
        _many_rounds(s, kind, start[0], start[1], arrays.cu, table, arrays.ev, arrays.n_ev, arrays.g_off, arrays.g_nmax,
                     arrays.prob, arrays.alias, out)
        keys, counts = np.unique(out, axis=0, return_counts=True)
        _near({tuple(k): c for k, c in zip(keys.tolist(), counts.tolist())},
              _round(m.combat, start, 1 if kind == 0 else 2, exact=False), (case, kind))


@njit(cache=True)
def _many_rounds(s, kind, hp_a, hp_b, cu, table, ev, n_ev, g_off, g_nmax, prob, alias, out):
    """``len(out)`` rounds of the kernel's ``_round_steps`` from one state (a jitted loop: calling it from
    Python each time would cost more than the round)."""
    for i in range(out.shape[0]):
        out[i, 0], out[i, 1] = K._round_steps(s, kind, hp_a, hp_b, cu, table, ev, n_ev, g_off, g_nmax, prob, alias)


def test_reference_attack_rolls_follow_5_1_to_5_4():
    """§C5.1–§C5.4: the reference's dice for one part (to hit with Hatred's re-roll, to wound, armour, Aegis)
    on scripted dice."""
    m = combat_model(dict(KNIGHTS, attacks=[dict(KNIGHTS["attacks"][0], hatred=True)]), dict(HALBERDS, aegis=5))
    c = m.combat
    knight, target = c.a.parts[0], c.b
    # 5 attacks, to hit 3+: [1, 2, 3, 6, 2] → 2 hits; Hatred re-rolls 3 misses [3, 1, 2] → 3 hits;
    # Charging Str 6 vs Res 3 → 2+: [1, 2, 6] → 2 wounds; Armour 1 − AP 3: no save; Aegis 5+ [5, 4] → 1 unsaved
    dice = [1, 2, 3, 6, 2, 3, 1, 2, 1, 2, 6, 5, 4]
    assert ref.strike(Scripted(dice), c, c.a, knight, target, 5, 1, True, lambda line: None) == 1
    # round 2: no Hatred, not Charging: Str 4 vs Res 3 → 3+, Armour 1 − AP 1 → none; [3, 3, 1, 1, 1] → 2 hits,
    # [3, 2] → 1 wound, Aegis [6] saved
    assert ref.strike(Scripted([3, 3, 1, 1, 1, 3, 2, 6]), c, c.a, knight, target, 5, 2, False, lambda line: None) == 0
