"""Kernel and reference engine against exact values, and against each other (5 sigma)."""
import math
from fractions import Fraction as F

import pytest

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.output.estimates import Probability
from wargame_odds.analysis.t9a.charge.exact import failed_move_given_fail, p_reach
from wargame_odds.analysis.t9a.charge.model import DICE, MILLI
from t9a_helpers import (SCENARIOS, assert_p_near, assert_results_agree, pool, prob)

KERNEL_TRIALS = 200_000
REFERENCE_TRIALS = 30_000


def one_charger(dice="2d6", advance=4, distance=12.0, extra="", rules="", target_extra=""):
    return t9a.loads(f"""
system = "t9a"
title = "one charger"
[rules]
dice = "{dice}"
{rules}
[target]
name = "Target"
{target_extra}
[[chargers]]
name = "C"
advance_rate = {advance}
distance = {distance}
{extra}
""")


@pytest.mark.parametrize("engine,trials", [("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)])
@pytest.mark.parametrize("dice,n", [("2d6", 8), ("2d6", 10), ("swiftstride", 8),
                                    ("swiftstride", 10), ("champion_floor", 6),
                                    ("beta_d6_plus_4", 7)])
def test_single_charge_matches_exact(engine, trials, dice, n):
    """§3.2 / §5.1 P(success) and §3.4.1 / §5.2 failed move (highest die, exact mean and
    distribution given failure) for each dice variant, both engines."""
    model = one_charger(dice, advance=4, distance=4 + n)
    r = t9a.simulate(model, trials=trials, seed=11, engine=engine)
    rule = DICE[dice]
    assert_p_near(r["chargers", "C", "arrives"], p_reach(rule, n * MILLI), "arrives")
    assert_p_near(r["chargers", "C", "fails"], 1 - p_reach(rule, n * MILLI), "fails")
    fails = r["chargers", "C", "fails"].k
    dist = failed_move_given_fail(rule, n * MILLI)
    hist = r["chargers", "C", "failed_move"]
    for h, q in dist.items():            # an unobstructed move of h" lands in bin 2h (0.5" bins)
        k = int(hist.counts[2 * h]) if 2 * h < len(hist.counts) else 0
        assert_p_near(Probability(k, fails), q, f"move {h}")
    assert hist.total == fails
    mean = sum(h * q for h, q in dist.items())
    var = sum(h * h * q for h, q in dist.items()) - mean ** 2
    m = r["chargers", "C", "failed_move_mean"]
    assert abs(m.value - float(mean)) <= 5 * math.sqrt(float(var) / fails) + 1e-12
    g = r["chargers", "C", "gap_after_fail_mean"]
    assert abs(g.value + m.value - (4 + n)) < 1e-9      # gap = distance - move, exactly


def test_champion_floor_3_2():
    """§3.2 'Ordering the Charge': the roll counts as at least 4, so needed 4 always succeeds,
    but a failure at needed 5 still moves the real highest die (1..4 from a total of 2..4)."""
    r = t9a.simulate(one_charger("champion_floor", advance=4, distance=8.0), trials=20_000, seed=6)
    assert r["chargers", "C", "arrives"].k == 20_000
    r = t9a.simulate(one_charger("champion_floor", advance=4, distance=9.0), trials=50_000, seed=6)
    assert_p_near(r["chargers", "C", "fails"], F(1, 6), "fails")
    assert r["chargers", "C", "failed_move"].values[-1] == 3.0     # real dice: at most 3 + 1


def test_die_roll_distribution_3_2():
    """§3.2: the recorded charge roll (kept total) follows 3D6 keep best 2 (icepool)."""
    r = t9a.simulate(one_charger("swiftstride"), trials=KERNEL_TRIALS, seed=5)
    roll = r["chargers", "C", "charge_roll"]
    die = pool("swiftstride")
    for t in range(2, 13):
        assert_p_near(Probability(int(roll.counts[t]), roll.n),
                      prob(die, lambda x: x == t), f"roll {t}")


def test_unit_spacing_stops_failed_move_3_4():
    """§3.4.3 / §3.5: with free distance 3.5" the failed move is min(highest die, 3.5");
    exact mean given failure from the §5.2 distribution."""
    model = one_charger("2d6", advance=4, distance=14.0, extra="free_distance = 3.5")
    dist = failed_move_given_fail(DICE["2d6"], 10 * MILLI)
    exact = sum(min(F(h), F(7, 2)) * q for h, q in dist.items())
    for engine, trials in (("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)):
        r = t9a.simulate(model, trials=trials, seed=3, engine=engine)
        hist = r["chargers", "C", "failed_move"]
        assert len(hist.counts) == 8 and hist.counts[7] > 0          # nothing at or above 4"
        assert_p_near(Probability(int(hist.counts[7]), hist.total),
                      sum(q for h, q in dist.items() if h >= 4), "stopped at 3.5")
        m = r["chargers", "C", "failed_move_mean"]
        assert abs(m.value - float(exact)) <= 5 * m.sd / math.sqrt(m.n)


def test_no_room_fails_and_keeps_spacing_3_2_3_5():
    """§3.2 room flag: a charger that rolls enough but has no room fails; its failed move stops
    1" short of the target (§3.4.3, §3.5: spacing applies, it is not a charge move)."""
    model = one_charger("2d6", advance=4, distance=3.0, extra="room = false")
    r = t9a.simulate(model, trials=50_000, seed=2)
    c = r["chargers", "C"]
    assert c["arrives"].k == 0 and c["fails_for_room"].k == c["fails"].k == 50_000
    assert c["failed_move"].values[-1] == 2.0                     # never beyond 3" - 1"
    exact = sum(min(h, 2) * q for h, q in
                {h: F(2 * h - 1, 36) for h in range(1, 7)}.items())   # §5.2 unconditional
    assert abs(c["failed_move_mean"].value - float(exact)) <= 5 * c["failed_move_mean"].sd / math.sqrt(50_000)
    assert min(c["gap_after_fail"].values[c["gap_after_fail"].counts > 0]) >= 1.0


def test_2022_spacing_switch_3_5():
    """§3.5 / §3.8 2022: failed charges may come closer than 1" (failed_move_spacing 0)."""
    model = one_charger("2d6", advance=4, distance=3.0, extra="room = false",
                        rules='version = "2022"')
    r = t9a.simulate(model, trials=20_000, seed=2)
    c = r["chargers", "C"]
    assert c["failed_move"].values[-1] == 3.0
    assert "shaken_until_end_of_turn" in c and "no_move_next_movement" not in c
    assert r.meta["rules"]["placement_order"] == "2022"


def test_after_fail_flags_3_4_4():
    """§3.4.4: source-text failed charge bans the next Movement and Shooting Phase (flags)."""
    r = t9a.simulate(one_charger("2d6", distance=12.0), trials=20_000, seed=1)
    c = r["chargers", "C"]
    assert c["no_move_next_movement"].k == c["no_shoot_next_shooting"].k == c["fails"].k > 0


def test_stand_and_shoot_exact_q_b7():
    """§3.3 / Q-B7: stand and shoot with -1 and long-range -1; unsaved wounds are
    Binomial(shots, P(hit) P(wound) P(unsaved)); shot-down chargers do not arrive."""
    model = one_charger("2d6", advance=8, distance=16.0,
                        extra="models = 2\narmour_save = 5",
                        target_extra='reaction = "stand_and_shoot"\n[target.shooting]\nshots = 6\n'
                                     'to_hit = 3\nto_wound = 3\nweapon_range = 24')
    p_hit = F(2, 6)                        # 3+ -1 stand and shoot -1 long range (16 > 12) = 5+
    p = p_hit * F(4, 6) * F(4, 6)          # wounds on 3+, save 5+ fails on 1-4
    for engine, trials in (("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)):
        r = t9a.simulate(model, trials=trials, seed=8, engine=engine)
        c = r["chargers", "C"]
        u = c["unsaved_wounds"]
        for k in range(7):
            exact = math.comb(6, k) * p ** k * (1 - p) ** (6 - k)
            got = int(u.counts[k]) if k < len(u.counts) else 0
            assert_p_near(Probability(got, trials), exact, f"unsaved {k}")
        down = sum(math.comb(6, k) * p ** k * (1 - p) ** (6 - k) for k in range(2, 7))
        assert_p_near(c["shot_down"], down, "shot down")
        assert_p_near(c["arrives"], (1 - down) * p_reach(DICE["2d6"], 8 * MILLI), "arrives")


def test_to_hit_above_six_q_b7():
    """Q-B7: a need of 7+ hits on a 6 then 4+ (switch: impossible)."""
    text = dict(extra="models = 1", target_extra='reaction = "stand_and_shoot"\n[target.shooting]\n'
                'shots = 30\nto_hit = 5\nto_wound = 2\nweapon_range = 24')
    r = t9a.simulate(one_charger(advance=8, distance=16.0, **text), trials=50_000, seed=4)
    assert_p_near(r["chargers", "C", "shot_down"], 1 - (1 - F(1, 12) * F(5, 6)) ** 30, "7+")
    r = t9a.simulate(one_charger(advance=8, distance=16.0, rules='to_hit_above_6 = "impossible"',
                                 **text), trials=20_000, seed=4)
    assert r["chargers", "C", "shot_down"].k == 0


def test_flee_exact_q_b8():
    """§3.3 / Q-B8: the target flees 2D6; the charger still rolls and destroys it if its range
    reaches the new position, otherwise fails and moves towards it (exact via icepool)."""
    model = t9a.load(SCENARIOS / "flee_reaction.toml")
    flee = pool("2d6")
    charge = pool("swiftstride")
    exact = sum(F(qf, 36) * prob(charge, lambda t, f=f: t + 9 >= 7 + f) for f, qf in flee.items())
    for engine, trials in (("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)):
        r = t9a.simulate(model, trials=trials, seed=9, engine=engine)
        assert_p_near(r["chargers", "Wolves", "catches"], exact, "catches")
        assert r["chargers", "Wolves", "arrives"].k == 0
        assert r["target", "destroyed"].k == r["chargers", "Wolves", "catches"].k
        assert_p_near(r["chargers", "Wolves", "fails"], 1 - exact, "fails")


def test_three_chargers_placements_exact_3_7():
    """§3.7 / Q-B6 with the issue's scenario: each placement's probability from the exact
    independent charge probabilities, both engines."""
    model = t9a.load(SCENARIOS / "three_chargers.toml")
    pk = prob(pool("2d6"), lambda t: t + 8 >= 14.5)
    pw = prob(pool("2d6"), lambda t: t + 4 >= 9)
    pf = prob(pool("swiftstride"), lambda t: t + 9 >= 13)
    expect = {"all three on the front": pk * pw * pf,
              "knights and warriors": pk * pw * (1 - pf),
              "knights and wolves, target turned": F(0),        # 'knights alone' never rotates
              "knights alone": pk * (1 - pw),        # with or without the wolves (no rotation)
              "(none)": 1 - pk}
    assert sum(expect.values()) == 1
    for engine, trials in (("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)):
        r = t9a.simulate(model, trials=trials, seed=21, engine=engine)
        for name, q in expect.items():
            assert_p_near(r["placements", name], q, name)
        assert_p_near(r["chargers", "Warriors", "arrives"], pk * pw, "warriors arrive")
        assert_p_near(r["chargers", "Wolves", "fails_for_room"], pf * (1 - pk * pw), "wolves room")
        assert r["target", "rotated"].k == 0
        m = r["models_in_contact_mean"]
        exact_models = 12 * expect["all three on the front"] + 10 * expect["knights and warriors"] \
            + 5 * expect["knights alone"]
        assert abs(m.value - float(exact_models)) <= 5 * m.sd / math.sqrt(m.n)


@pytest.mark.parametrize("name", ["three_chargers", "flee_reaction", "stand_and_shoot",
                                  "flee_redirect_2022", "swiftstride_cavalry"])
def test_kernel_matches_reference(name):
    """Kernel vs reference: every probability, mean and distribution bin within 5 sigma."""
    model = t9a.load(SCENARIOS / f"{name}.toml")
    k = t9a.simulate(model, trials=KERNEL_TRIALS, seed=31)
    r = t9a.simulate(model, trials=REFERENCE_TRIALS, seed=32, engine="reference")
    assert assert_results_agree(k, r) > 10


def test_target_destroyed_first_marked_centre_3_4():
    """§3.4.2 / Q-B8: two charges on a fleeing unit (it flees twice, §3.3); the first charger
    that reaches destroys it, the second then fails and moves towards the marked centre (no
    spacing from a removed unit).  Exact probabilities via icepool, both engines."""
    model = t9a.loads("""
system = "t9a"
[target]
name = "T"
reaction = "flee"
[[chargers]]
name = "A"
advance_rate = 8
distance = 2.0
[[chargers]]
name = "B"
advance_rate = 8
distance = 1.0
flee_factor = 0.0
""")
    flee = pool("2d6") + pool("2d6")                     # one 2D6 flee per declared charge
    p_a = sum(F(q, flee.denominator()) * prob(pool("2d6"), lambda t, f=f: t + 8 >= 2 + f)
              for f, q in flee.items())
    for engine, trials in (("kernel", KERNEL_TRIALS), ("reference", REFERENCE_TRIALS)):
        r = t9a.simulate(model, trials=trials, seed=13, engine=engine)
        assert_p_near(r["chargers", "A", "catches"], p_a, "A catches")
        assert_p_near(r["chargers", "B", "target_gone"], p_a, "B finds it gone")
        assert r["target", "destroyed"].k == trials            # B (at 1", A8) always reaches
        b = r["chargers", "B"]
        assert b["fails"].k == b["target_gone"].k
        assert b["failed_move_mean"].value == 1.0 and b["gap_after_fail_mean"].value == 0.0
