"""Issue 12 §1: the Epic steps with a handful of outcomes are computed exactly (wargame_odds.analysis.epic.rally,
action_test, assault_result; analysis/epic/exact_steps.py).

Three kinds of check: worked values of the rules as fractions; equality with the reference engine's own
step functions run under every dice sequence (the ``exact`` fixture); and the engines' simulated
frequencies (kernel and reference, whole assaults or turns) against the exact values within 5σ.
"""
from fractions import Fraction as F
from itertools import product

import numpy as np
import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.exact_steps import d6_test, result_margins
from wargame_odds.analysis.epic.reference import new_trial, rally, rally_test, result_score
from wargame_odds.analysis.epic.turn import Turn
from wargame_odds.analysis.epic.turn import action_test as engine_action_test
from wargame_odds.analysis.epic.turn_model import Activation
from wargame_odds.analysis.epic.turn_result import compile_turn
from wargame_odds.analysis.intake.errors import ArgumentError

from epic_helpers import ScriptedRandom


def fraction(probability) -> F:
    """An exact probability of a result as the fraction it holds (k / n)."""
    return F(int(probability.k), int(probability.n))


def exact_distribution_of(result, *path) -> dict:
    got = result[path]
    return {int(v): F(int(c), int(got.n)) for v, c in zip(got.values, got.counts) if c}


def within_5_sigma(count: int, n: int, p: F) -> bool:
    """|count/n − p| ≤ 5 binomial standard errors (p exact)."""
    p = float(p)
    return abs(count / n - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12


# -- worked values (fractions) ---------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, passes", [
    ({"initiative": 3}, F(2, 3)),
    ({"initiative": 3, "blast_markers": 2}, F(1, 2)),                       # −1 with any BM
    ({"initiative": 3, "blast_markers": 1, "retain": True}, F(1, 3)),       # −1 retaining the initiative
    ({"initiative": 1, "blast_markers": 1, "retain": True}, F(2, 3)),       # a 1 never passes by itself
    ({"initiative": 1}, F(1)),                                              # 1+: a 1 does not fail
    ({"initiative": 2, "modifier": 1, "blast_markers": 1}, F(5, 6)),       # an army-list modifier
    ({"initiative": 3, "blast_markers": 1, "supreme_commander_reroll": True}, F(3, 4)),  # 1 − (1/2)²
])
def test_action_test_worked_values_tp_1_6_2_1_6_3_2_1_15(kwargs, passes):
    """TP 1.6.2, 1.6.3, 2.1.15, TP-FAQ The Action Test: D6 ≥ initiative, −1 with any BM, −1 when
    retaining; a 1 is no automatic failure; a Supreme Commander re-rolls a failed test once."""
    result = epic.action_test(**kwargs)
    assert fraction(result["action_test", "passes"]) == passes
    assert result.system == "epic-action-test" and result.meta["method"] == "exact"


def test_rally_worked_values_tp_1_14_1():
    """TP 1.14.1 (docs: "7 units → 3"), 2.1.8, TP-SR TSKNF and Mob Rule, TP-FAQ Rallying."""
    broken_seven = epic.rally(2, broken=True, units=7)  # 2+ −2: D6 ≥ 4
    assert fraction(broken_seven["rally", "passes"]) == F(1, 2)
    assert fraction(broken_seven["rally", "broken_after"]) == F(1, 2)
    assert exact_distribution_of(broken_seven, "rally", "blast_markers_after") == {0: F(1, 2), 3: F(1, 2)}
    marines = epic.rally(1, broken=True, units=5, leaders=1, army_rules=["they-shall-know-no-fear"])
    assert exact_distribution_of(marines, "rally", "blast_markers_after") == {0: F(1, 3), 3: F(2, 3)}  # 5 − 2
    unbroken = epic.rally(3, blast_markers=5, leaders=1, enemy_within_30cm=True)  # D6 ≥ 4; 5 − 3 − 1
    assert exact_distribution_of(unbroken, "rally", "blast_markers_after") == {1: F(1, 2), 5: F(1, 2)}
    assert fraction(unbroken["rally", "broken_after"]) == 0
    orks = epic.rally(3, broken=True, units=11, army_rules=["mob-rule"])  # −2 broken, +2 Mob Rule (> 10)
    assert fraction(orks["rally", "passes"]) == F(2, 3)
    assert fraction(epic.rally(4, broken=True, enemy_within_30cm=True)["rally", "passes"]) == 0  # D6 − 3 ≥ 4: never
    assert fraction(epic.rally(2, blast_markers=1, supreme_commander_reroll=True)["rally", "passes"]) == F(35, 36)
    assert fraction(epic.rally(1, blast_markers=1, natural_one_fails=True)["rally", "passes"]) == F(5, 6)  # §9.9


def test_assault_result_worked_values_tp_1_12_7():
    """TP 1.12.7 (docs/epic-engine.md §8.3): highest of 2D6 + modifiers each; d = 0 gives
    505/1296 each and a tie 143/648; d = +2 gives 503/648, 37/324, 71/648; margins add to the
    modifier difference on average; the "sum" variant (§9.1) at d = 0 gives 575/1296."""
    even = epic.assault_result(1, 1)
    assert [fraction(even["result", k]) for k in ("attacker_wins", "tie", "defender_wins")] == \
        [F(505, 1296), F(143, 648), F(505, 1296)]
    assert fraction(even["result", "attacker_wins_if_decided"]) == F(1, 2)
    plus_two = epic.assault_result(3, 1)
    assert [fraction(plus_two["result", k]) for k in ("attacker_wins", "tie", "defender_wins")] == \
        [F(503, 648), F(37, 324), F(71, 648)]
    assert plus_two["result", "margin_mean"].value == pytest.approx(2.0, abs=1e-12)
    assert fraction(epic.assault_result(0, 0, result_dice="sum")["result", "attacker_wins"]) == F(575, 1296)
    table = plus_two.table()
    assert (table.ci95_lo == table.estimate).all() and (table.ci95_hi == table.estimate).all()


@pytest.mark.parametrize("call, argument", [
    (lambda: epic.rally(0), "initiative"), (lambda: epic.rally(3, units=0), "units"),
    (lambda: epic.rally(3, broken="yes"), "broken"), (lambda: epic.rally(3, army_rules=["fearless"]), "army_rules"),
    (lambda: epic.action_test(7), "initiative"), (lambda: epic.action_test(3, modifier=1.5), "modifier"),
    (lambda: epic.assault_result(0, 0, result_dice="lowest"), "result_dice"),
])
def test_bad_arguments_name_the_argument(call, argument):
    """Bad input: an ArgumentError naming the argument and what is allowed."""
    with pytest.raises(ArgumentError, match=argument):
        call()


# -- the same as the reference engine's own step functions -------------------------------------------

@pytest.mark.parametrize("initiative, modifier", list(product(range(1, 7), range(-3, 3))))
@pytest.mark.parametrize("reroll, natural_one_fails", [(False, False), (True, False), (False, True)])
def test_d6_test_equals_the_engine_rally_test(exact, initiative, modifier, reroll, natural_one_fails):
    """TP 1.14.1, 2.1.15, §9.9: the exact D6 test equals the engine's rally_test under every die."""
    engine = exact(lambda rng: rally_test(rng, initiative, modifier, reroll, natural_one_fails))
    assert engine.get(True, 0) == d6_test(initiative, modifier, reroll, natural_one_fails)


RALLY_CASES = [  # initiative, broken, blast markers, units, leaders, army rules, enemy within 30 cm
    (3, False, 5, 4, 1, [], True), (2, True, 0, 7, 0, [], False), (1, True, 0, 5, 1, ["they-shall-know-no-fear"], True),
    (3, True, 0, 11, 0, ["mob-rule"], True), (3, False, 3, 6, 0, ["mob-rule"], False),
    (1, False, 4, 4, 1, ["they-shall-know-no-fear"], True), (4, False, 1, 2, 0, [], True),
]


@pytest.mark.parametrize("initiative, broken, markers, units, leaders, army_rules, near", RALLY_CASES)
def test_rally_equals_the_engine_rally(exact, compile_epic, initiative, broken, markers, units, leaders, army_rules,
                                       near):
    """TP 1.14.1, 2.1.8, TP-SR TSKNF / Mob Rule: P(pass), P(still broken) and the BMs held after the
    engine's rally() under every die equal wargame_odds.analysis.epic.rally (a formation still broken holds none)."""
    groups = [{"unit": "boy", "count": units - leaders, "engaged": "bc"}] if units > leaders else []
    groups += [{"unit": "nob", "count": leaders, "engaged": "bc"}] if leaders else []
    compiled = compile_epic(
        units={"boy": {"type": "INF", "cc": 5}, "nob": {"type": "INF", "cc": 4, "special": ["leader"]}},
        formations=[{"name": "Foe", "side": "attacker", "initiative": 1,
                     "units": [{"unit": "boy", "count": 1, "engaged": "bc"}]},
                    {"name": "Tested", "side": "defender", "initiative": initiative, "broken": broken,
                     "blast_markers": markers, "army_rules": army_rules, "enemy_within_30cm": near,
                     "units": groups}])

    def rally_once(rng):
        trial = new_trial(compiled, rng)
        tested = trial.formations[1]
        passed = rally(trial, tested)
        return passed, tested.broken, 0 if tested.broken else tested.blast_markers

    engine = exact(rally_once)
    result = epic.rally(initiative, blast_markers=markers, broken=broken, units=units, leaders=leaders,
                        enemy_within_30cm=near, army_rules=army_rules)
    assert sum(p for (passed, _, _), p in engine.items() if passed) == fraction(result["rally", "passes"])
    assert sum(p for (_, still, _), p in engine.items() if still) == fraction(result["rally", "broken_after"])
    held: dict = {}
    for (_, _, bms), p in engine.items():
        held[bms] = held.get(bms, 0) + p
    assert held == exact_distribution_of(result, "rally", "blast_markers_after")


@pytest.mark.parametrize("attacker_modifier, defender_modifier", [(0, 0), (3, 1), (0, 4), (7, 0)])
@pytest.mark.parametrize("result_dice", ["highest", "sum"])
def test_result_margins_equal_the_engine_result_roll(exact, attacker_modifier, defender_modifier, result_dice):
    """TP 1.12.7, §9.1: the margin distribution equals the engine's two result_score rolls under every die."""
    engine = exact(lambda rng: result_score(rng, attacker_modifier, result_dice)[1]
                   - result_score(rng, defender_modifier, result_dice)[1])
    assert engine == result_margins(attacker_modifier, defender_modifier, result_dice)


TURN = """
system = "epic"
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.guard]
type = "INF"
cc = 6
ff = 5
[[formations]]
name = "Marines"
side = "attacker"
initiative = 2
blast_markers = 1
units = [{ unit = "marine", count = 4 }]
[[formations]]
name = "Scouts"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 2 }]
[[formations]]
name = "Guard"
side = "defender"
initiative = 2
units = [{ unit = "guard", count = 4 }]
[[turn]]
formation = "Scouts"
action = "march"
[[turn]]
formation = "Marines"
action = "march"
retain = true
[end_phase]
rally = false
"""


def test_action_test_equals_the_engine_action_test(exact):
    """TP 1.6.2, 1.6.3: the turn engine's action test under every die equals wargame_odds.analysis.epic.action_test
    (initiative 2, a BM, retaining the initiative after the Scouts' march: D6 ≥ 4)."""
    c = compile_turn(epic.loads(TURN))
    act = Activation(formation="Marines", action="march", retain=True)

    def test(rng):
        state = Turn(c.compiled, c.weapons, ScriptedRandom([]))
        state.trial.rng = rng
        return engine_action_test(state.trial, state.by_name["Marines"], act)

    expected = epic.action_test(2, blast_markers=1, retain=True)
    assert exact(test).get(True, 0) == fraction(expected["action_test", "passes"]) == F(1, 2)


# -- the engines' simulated frequencies against the exact values (5σ) -----------------------------

def test_turn_engine_action_test_frequency_within_5_sigma():
    """TP 1.6.2, 1.6.3: over 10,000 simulated turns the reference engine's action-test pass rate is
    within 5σ of wargame_odds.analysis.epic.action_test (1/2)."""
    result = epic.simulate(epic.loads(TURN), trials=10_000, seed=11, engine="reference", progress=False)
    passed = result["turn", "2", "action_test_passed"]
    assert within_5_sigma(passed.k, passed.n, fraction(epic.action_test(2, blast_markers=1, retain=True)
                                                       ["action_test", "passes"]))


RALLY_SCENARIO = """
system = "epic"
[units.marine]
type = "INF"
armour = 4
cc = 2
[units.grot]
type = "INF"
[units.boy]
type = "INF"
[units.nob]
type = "INF"
special = ["leader"]
[[formations]]
name = "Hammer"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 10, engaged = "bc" }]
[[formations]]
name = "Reserve"
side = "attacker"
role = "support"
initiative = 3
blast_markers = 5
army_rules = ["mob-rule"]
units = [{ unit = "boy", count = 6, engaged = "out" }, { unit = "nob", count = 1, engaged = "out" }]
[[formations]]
name = "Grot"
side = "defender"
initiative = 1
units = [{ unit = "grot", count = 1, engaged = "bc" }]
[end_phase]
enemy_within_30cm = true
"""


@pytest.mark.parametrize("engine, trials", [("kernel", 200_000), ("reference", 4_000)])
def test_engines_rally_frequency_within_5_sigma(engine, trials):
    """TP 1.14.1, 2.1.8, TP-SR Mob Rule: a weaponless support formation on the side that always wins
    (10 CC 2+ attacks on one unsaved Grot: it survives with (1/6)^10) keeps its 5 BMs into the end phase
    and rallies on 3+ −1 (enemy within 30 cm) +1 (Mob Rule, 7 units); a pass leaves 5 − 3 − 1 (Leader).
    The engine's P(rally passed) and BMs after the end phase are within 5σ of wargame_odds.analysis.epic.rally."""
    result = epic.simulate(epic.loads(RALLY_SCENARIO), trials=trials, seed=5, engine=engine, progress=False)
    exact = epic.rally(3, blast_markers=5, units=7, leaders=1, enemy_within_30cm=True, army_rules=["mob-rule"])
    reserve = result["formations", "Reserve"]
    assert reserve["rally_tested"].k == trials
    assert within_5_sigma(reserve["rally_passed"].k, trials, fraction(exact["rally", "passes"]))
    markers = reserve["blast_markers_after_end_phase"]
    expected = exact_distribution_of(exact, "rally", "blast_markers_after")
    assert set(int(v) for v, c in zip(markers.values, markers.counts) if c) <= set(expected)
    for value, p in expected.items():
        assert within_5_sigma(int(markers.counts[value - markers.offset]), trials, p)


RESULT_SCENARIO = """
system = "epic"
[rules]
max_rounds = 1
[units.unarmed]
type = "INF"
armour = 4
[[formations]]
name = "Three"
side = "attacker"
initiative = 1
units = [{ unit = "unarmed", count = 3, engaged = "bc" }]
[[formations]]
name = "One"
side = "defender"
initiative = 1
units = [{ unit = "unarmed", count = 1, engaged = "bc" }]
"""


@pytest.mark.parametrize("engine, trials", [("kernel", 200_000), ("reference", 4_000)])
def test_engines_result_roll_frequency_within_5_sigma(engine, trials):
    """TP 1.12.7, §9.4: with no weapons there are no kills, so one result roll decides: attacker +1 more
    units, +1 more than twice, +1 no BMs; defender +1 no BMs (d = +2). With max_rounds = 1 a tie is
    unresolved. P(attacker wins), P(defender wins), P(unresolved) are within 5σ of
    wargame_odds.analysis.epic.assault_result(3, 1)."""
    result = epic.simulate(epic.loads(RESULT_SCENARIO), trials=trials, seed=7, engine=engine, progress=False)
    exact = epic.assault_result(3, 1)
    for simulated, key in (("attacker_wins", "attacker_wins"), ("defender_wins", "defender_wins"),
                           ("unresolved", "tie")):
        assert within_5_sigma(result["sides", simulated].k, trials, fraction(exact["result", key])), simulated
