"""Exact charge-roll values (docs/t9a.md §4–§5: §5.1 charge success, §5.2 failed move), as fractions."""
from fractions import Fraction as F

import icepool
import pytest

from wargame_odds.analysis.t9a import charge_table
from wargame_odds.analysis.t9a.charge.exact import failed_move_given_fail, outcomes, p_reach
from wargame_odds.analysis.t9a.charge.model import DICE, MILLI
from t9a_helpers import pool, prob

# docs/t9a.md §5.1: n -> (2D6, 3D6 keep best 2, 2D6 counted as at least 4)
TABLE_5_1 = {
    2: (F(1), F(1), F(1)),
    3: (F(35, 36), F(215, 216), F(1)),
    4: (F(11, 12), F(53, 54), F(1)),
    5: (F(5, 6), F(205, 216), F(5, 6)),
    6: (F(13, 18), F(193, 216), F(13, 18)),
    7: (F(7, 12), F(29, 36), F(7, 12)),
    8: (F(5, 12), F(49, 72), F(5, 12)),
    9: (F(5, 18), F(113, 216), F(5, 18)),
    10: (F(1, 6), F(77, 216), F(1, 6)),
    11: (F(1, 12), F(43, 216), F(1, 12)),
    12: (F(1, 36), F(2, 27), F(1, 36)),
}
VARIANTS = ("2d6", "swiftstride", "champion_floor")


@pytest.mark.parametrize("n", sorted(TABLE_5_1))
def test_success_table_5_1(n):
    """§5.1 / §3.2: P(charge roll >= n) for 2D6, Swiftstride and the champion floor, exact."""
    for variant, expected in zip(VARIANTS, TABLE_5_1[n]):
        assert p_reach(DICE[variant], n * MILLI) == expected, (variant, n)
        assert prob(pool(variant), lambda t: t >= n) == expected, ("icepool", variant, n)


def test_success_limits_5_1():
    """§5.1 / Q-B2: n <= 2 always succeeds, n >= 13 never does (2D6 and 3D6kb2)."""
    for variant in VARIANTS:
        assert p_reach(DICE[variant], -5 * MILLI) == 1
        assert p_reach(DICE[variant], 2 * MILLI) == 1
        assert p_reach(DICE[variant], 13 * MILLI) == 0
        assert p_reach(DICE[variant], 12 * MILLI + 1) == 0      # 12.001" is out of reach


def test_beta_cross_checks_5_1():
    """§3.2 / §5.1: beta D6 + 4 -> 100/83/67/50/33/17 %; 'maximised' (best of 2D6) + 4 ->
    100/97/89/75/56/31 % for needed 5..10 (whole percent, as the published tables print)."""
    plain = [round(float(p_reach(DICE["beta_d6_plus_4"], n * MILLI)) * 100) for n in range(5, 11)]
    best = [round(float(p_reach(DICE["beta_d6_plus_4_maximised"], n * MILLI)) * 100)
            for n in range(5, 11)]
    assert plain == [100, 83, 67, 50, 33, 17]
    assert best == [100, 97, 89, 75, 56, 31]
    assert prob(pool("beta_d6_plus_4"), lambda t: t >= 7) == F(2, 3)


# docs/t9a.md §5.2: (dice, n) -> (P(fail), P(h) for h = 1..6, E[move])
TABLE_5_2 = {
    ("2d6", 8): (F(7, 12), [F(1, 21), F(1, 7), F(5, 21), F(2, 7), F(4, 21), F(2, 21)], F(26, 7)),
    ("2d6", 10): (F(5, 6), [F(1, 30), F(1, 10), F(1, 6), F(7, 30), F(4, 15), F(1, 5)], F(21, 5)),
    ("swiftstride", 8): (F(23, 72), [F(1, 69), F(7, 69), F(19, 69), F(9, 23), F(4, 23), F(1, 23)],
                         F(86, 23)),
    ("swiftstride", 10): (F(139, 216), [F(1, 139), F(7, 139), F(19, 139), F(37, 139), F(48, 139),
                                        F(27, 139)], F(622, 139)),
}
# §5.2: E[failed move | fail] for n = 3..12, (2D6, 3D6kb2)
MEANS_5_2 = {3: (F(1), F(1)), 4: (F(5, 3), F(7, 4)), 5: (F(13, 6), F(24, 11)),
             6: (F(27, 10), F(63, 23)), 7: (F(16, 5), F(45, 14)), 8: (F(26, 7), F(86, 23)),
             9: (F(4), F(427, 103)), 10: (F(21, 5), F(622, 139)), 11: (F(13, 3), F(813, 173)),
             12: (F(31, 7), F(39, 8))}


@pytest.mark.parametrize("key", sorted(TABLE_5_2))
def test_failed_move_table_5_2(key):
    """§5.2 / §3.4.1 / Q-B4: failed move = highest die (of all three with Swiftstride)."""
    variant, n = key
    p_fail, dist, mean = TABLE_5_2[key]
    assert 1 - p_reach(DICE[variant], n * MILLI) == p_fail
    got = failed_move_given_fail(DICE[variant], n * MILLI)
    assert got == {h: q for h, q in zip(range(1, 7), dist) if q}
    assert sum(h * q for h, q in got.items()) == mean


@pytest.mark.parametrize("n", sorted(MEANS_5_2))
def test_failed_move_means_5_2(n):
    """§5.2: E[failed move | fail] for n = 3..12, 2D6 and 3D6 keep best 2, checked also with
    icepool (highest of all dice given the kept total < n)."""
    for variant, expected in zip(("2d6", "swiftstride"), MEANS_5_2[n]):
        got = failed_move_given_fail(DICE[variant], n * MILLI)
        assert sum(h * q for h, q in got.items()) == expected
        n_dice = DICE[variant].n
        pool_ = icepool.Pool([icepool.d6] * n_dice)
        joint = pool_.expand().map(lambda dice: (sum(sorted(dice)[-2:]), max(dice)))
        fail = {o: q for o, q in joint.items() if o[0] < n}
        total = sum(fail.values())
        assert F(sum(o[1] * q for o, q in fail.items()), total) == expected


def test_unconditional_highest_die_5_2():
    """§5.2: highest die of 2D6 is (2h - 1)/36."""
    marg = {}
    for (t, h), p in outcomes(DICE["2d6"]).items():
        marg[h] = marg.get(h, 0) + p
    assert marg == {h: F(2 * h - 1, 36) for h in range(1, 7)}


def test_beta_failed_move_is_fixed_3_8():
    """§3.8 beta: a failed charge moves a fixed 4"."""
    assert failed_move_given_fail(DICE["beta_d6_plus_4"], 8 * MILLI) == {4: F(1)}


def test_charge_table_is_exact_3_2():
    """§3.2 / Q-B2: charge_table gives exact P(success) (degenerate interval) by needed roll."""
    t = charge_table([9.0, 12.0, 14.5], [4, 8], ["2d6", "swiftstride"])
    assert len(t) == 12 and set(t.method) == {"exact"}
    row = t[(t.dice == "2d6") & (t.advance_rate == 4) & (t.distance == 12.0)].iloc[0]
    assert row.fraction == "5/12" and row.needed == 8.0
    assert row.ci95_lo == row.p_success == row.ci95_hi
    assert abs(row.mean_failed_move - 26 / 7) < 1e-12
    row = t[(t.dice == "swiftstride") & (t.advance_rate == 8) & (t.distance == 14.5)].iloc[0]
    assert F(row.fraction) == TABLE_5_1[7][1]          # needed 6.5 -> the dice must make 7
