"""The reference engine: small full scenarios against an independent exact calculation, and one
deterministic test per clause of docs/epic-engine.md (scripted dice)."""
import math
import random
from fractions import Fraction as F
from itertools import product

import pytest

from wargame_odds.analysis.epic import regroup, simulate
from wargame_odds.analysis.epic.compile import ATTACKER, DEFENDER, NO_ROLL
from wargame_odds.analysis.epic.reference import (
    MACRO_WEAPON, ORDINARY, TITAN_KILLER, Decision, Hit, allocate, assault_dice, attack_step, blast_marker_counts,
    consequences, extra_hits, loser_breaks, nearby_loser, new_trial, rally, regroup_roll, result_modifiers,
    roll_assault_attacks, run_trial, save_throw, supporting_dice, supporting_fire, winner_blast_markers)

BASIC = {"type": "INF", "armour": 4, "cc": 4, "ff": 4}


def formation(name, side, groups, **fields):
    """A formation dict; ``groups`` = [(unit, count, engaged)]."""
    return {"name": name, "side": side, "initiative": fields.pop("initiative", 2),
            "units": [{"unit": u, "count": n, "engaged": e} for u, n, e in groups], **fields}


def duel(compile_epic, attacker=BASIC, defender=BASIC, a_groups=(("a", 1, "bc"),), d_groups=(("d", 1, "bc"),),
         a_fields=None, d_fields=None, extra_units=None, extra_formations=(), **top):
    units = {"a": attacker, "d": defender, **(extra_units or {})}
    return compile_epic(units, [formation("A", "attacker", list(a_groups), **(a_fields or {})),
                                formation("D", "defender", list(d_groups), **(d_fields or {})),
                                *extra_formations], **top)


# -- full scenarios against an exact calculation ----------------------------------------------------

def _highest_2d6():
    return {k: F(2 * k - 1, 36) for k in range(1, 7)}


def _kills(hits, targets, fail_save):
    """Distribution of units killed when ``hits`` go round-robin over ``targets`` one-wound units."""
    dist = {0: F(1)}
    for i in range(targets):
        taken = hits // targets + (i < hits % targets)
        dies = 1 - (1 - fail_save) ** taken
        new = {}
        for k, p in dist.items():
            new[k + 1] = new.get(k + 1, 0) + p * dies
            new[k] = new.get(k, 0) + p * (1 - dies)
        dist = new
    return dist


def _binomial(n, p):
    return {k: math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


def exact_all_contact_assault(a, d, hit_a, hit_d, fail_a, fail_d, bm_a, bm_d, max_rounds):
    """P(outcome) for a attackers v d defenders, all in base contact, one-wound units without special
    rules, written independently of the engine from TP 1.12.5–1.12.8 (spec §1–§6).

    Returns {"attacker", "defender", "none", "unresolved", "defender destroyed", "attacker destroyed"}.
    ``hit_*`` = P(a die hits), ``fail_*`` = P(that side's save fails), ``bm_*`` = constant BMs.
    """
    out = dict.fromkeys(["attacker", "defender", "none", "unresolved", "defender destroyed",
                         "attacker destroyed"], F(0))
    states = {(a, d, 0, 0): F(1)}  # (attackers alive, defenders alive, kills by A, kills by D)
    highest = _highest_2d6()
    for rnd in range(1, max_rounds + 1):
        following = {}
        for (na, nd, ka, kd), p_state in states.items():
            for ha, pha in _binomial(na, hit_a).items():
                for hd, phd in _binomial(nd, hit_d).items():
                    for killed_d, pkd in _kills(ha, nd, fail_d).items():
                        for killed_a, pka in _kills(hd, na, fail_a).items():
                            p = p_state * pha * phd * pkd * pka
                            a2, d2, ka2, kd2 = na - killed_a, nd - killed_d, ka + killed_d, kd + killed_a
                            if d2 == 0:
                                winner = "attacker" if a2 else "none"
                                out[winner] += p
                                out["defender destroyed"] += p
                                out["attacker destroyed"] += p * (a2 == 0)
                                continue
                            if a2 == 0:
                                out["defender"] += p
                                out["attacker destroyed"] += p
                                continue
                            mod_a = ka2 + (a2 > d2) + (a2 > 2 * d2) + (bm_a == 0) + (bm_d > bm_a)
                            mod_d = kd2 + (d2 > a2) + (d2 > 2 * a2) + (bm_d == 0) + (bm_a > bm_d)
                            for (x, px), (y, py) in product(highest.items(), highest.items()):
                                margin = (x + mod_a) - (y + mod_d)
                                q = p * px * py
                                if margin > 0:
                                    out["attacker"] += q
                                    out["defender destroyed"] += q * (margin >= d2)
                                elif margin < 0:
                                    out["defender"] += q
                                    out["attacker destroyed"] += q * (-margin >= a2)
                                elif rnd == max_rounds:
                                    out["unresolved"] += q
                                else:
                                    key = (a2, d2, ka2, kd2)
                                    following[key] = following.get(key, 0) + q
        states = following
    assert sum(out[k] for k in ("attacker", "defender", "none", "unresolved")) == 1
    return out


EXACT_CASES = {
    "1 v 1, attacker with a BM, 3 rounds": dict(a=1, d=1, a_unit={"type": "INF", "armour": 4, "cc": 4},
                                                d_unit={"type": "INF", "armour": 5, "cc": 5},
                                                bm_a=1, bm_d=0, max_rounds=3),
    "3 v 2, defender with 2 BMs": dict(a=3, d=2, a_unit={"type": "INF", "armour": 5, "cc": 3},
                                       d_unit={"type": "INF", "armour": 4, "cc": 4},
                                       bm_a=0, bm_d=2, max_rounds=10),
    "3 v 1, more than twice the units": dict(a=3, d=1, a_unit={"type": "INF", "armour": 6, "cc": 6},
                                             d_unit={"type": "INF", "armour": 3, "cc": 3},
                                             bm_a=0, bm_d=0, max_rounds=10),
    "2 v 2, 2 rounds": dict(a=2, d=2, a_unit={"type": "INF", "armour": 6, "cc": 5},
                            d_unit={"type": "INF", "armour": 3, "cc": 4}, bm_a=1, bm_d=1, max_rounds=2),
}


@pytest.mark.parametrize("case", EXACT_CASES)
def test_full_assault_against_exact_calculation(compile_epic, case):
    """TP 1.12.5–1.12.8 end to end: reference estimates within 5σ (binomial SE) of the exact values."""
    c = EXACT_CASES[case]
    compiled = duel(compile_epic, c["a_unit"], c["d_unit"], [("a", c["a"], "bc")], [("d", c["d"], "bc")],
                    {"blast_markers": c["bm_a"]}, {"blast_markers": c["bm_d"]},
                    rules={"max_rounds": c["max_rounds"]})
    hit = lambda unit: F(7 - unit["cc"], 6)  # noqa: E731
    fail = lambda unit: F(unit["armour"] - 1, 6)  # noqa: E731
    expected = exact_all_contact_assault(c["a"], c["d"], hit(c["a_unit"]), hit(c["d_unit"]), fail(c["a_unit"]),
                                         fail(c["d_unit"]), c["bm_a"], c["bm_d"], c["max_rounds"])
    n = 30_000
    result = simulate(compiled, trials=n, seed=11, engine="reference")
    estimates = {
        "attacker": result["sides", "attacker_wins"], "defender": result["sides", "defender_wins"],
        "none": result["sides", "no_winner"], "unresolved": result["sides", "unresolved"],
        "defender destroyed": result["formations", "D", "destroyed"],
        "attacker destroyed": result["formations", "A", "destroyed"],
    }
    for name, p in expected.items():
        estimate = estimates[name]
        assert estimate.n == n
        sigma = math.sqrt(float(p * (1 - p)) / n)
        assert abs(estimate.p - float(p)) <= 5 * sigma, (name, estimate.p, float(p), sigma)


# -- attacks (spec §1) ---------------------------------------------------------------------------------

def test_assault_dice_main_and_lines(compile_epic):
    """TP 1.12.5, 2.2.3, 3.1.2 (spec §1): a WE rolls its starting DC at CC in contact and its 15cm
    line too; an INF uses a bc line only in contact and a 15cm line only out of contact; D3 lines."""
    compiled = duel(compile_epic, extra_units={
        "titan": {"type": "WE", "armour": 4, "cc": 2, "ff": 3, "damage_capacity": 3,
                  "extra_attacks": [{"count": 2, "range": "15cm", "macro_weapon": True}]},
        "nob": {"type": "INF", "armour": 4, "cc": 3, "ff": 5,
                "extra_attacks": [{"count": "D3", "range": "bc", "first_strike": True},
                                  {"count": 1, "range": "15cm", "titan_killer": True}]},
        "skimmer": {"type": "AV", "armour": 4, "cc": 6, "ff": 3, "special": ["skimmer"]}},
        a_groups=[("titan", 1, "bc"), ("nob", 1, "bc"), ("skimmer", 1, "bc")])
    titan, nob, skimmer = (u.slot for u in new_trial(compiled, None).units[:3])
    contact = [(d.count, d.target, d.kind) for d in assault_dice(titan, in_contact=True)]
    assert contact == [(3, 2, ORDINARY), (2, 3, MACRO_WEAPON)]
    assert [(d.count, d.d3, d.target, d.first_strike) for d in assault_dice(nob, True)] == \
        [(1, False, 3, False), (1, True, 3, True)]
    assert [(d.target, d.kind) for d in assault_dice(nob, False)] == [(5, ORDINARY), (5, TITAN_KILLER)]
    assert skimmer.firefights and [d.target for d in assault_dice(skimmer, False)] == [3]
    assert [(d.target, d.first_strike) for d in supporting_dice(nob)] == [(5, False), (5, False)]


def test_first_strike_casualties_do_not_attack(compile_epic, scripted):
    """TP 2.2.4 (spec §1): first-strike casualties are removed before the normal attacks."""
    compiled = duel(compile_epic, attacker={"type": "INF", "armour": 4, "cc": 4, "special": ["first-strike"]},
                    defender={"type": "INF", "armour": 6, "cc": 2})
    rng = scripted([4, 1])  # first strike hits, the save fails; the defender never rolls
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.decided_without_roll, outcome.margin) == ("attacker", True, None)


def test_first_strike_kill_of_the_only_contact_turns_normal_attack_to_ff(compile_epic, scripted):
    """TP-FAQ First Strike (spec §1): with no enemy bc unit left, a bc unit attacks at FF."""
    compiled = duel(compile_epic, extra_units={
        "striker": {"type": "INF", "armour": 4, "cc": 4, "special": ["first-strike"]},
        "grunt": {"type": "INF", "armour": 4, "cc": 2, "ff": 5}},
        a_groups=[("striker", 1, "bc"), ("grunt", 1, "bc")], d_groups=[("d", 1, "bc"), ("d", 1, "ff")])
    rng = scripted([4, 1, 4])
    trial = new_trial(compiled, rng)
    attack_step(trial, first_strike=True)
    assert not trial.units[2].alive  # the defender's bc unit
    assert roll_assault_attacks(trial, ATTACKER, first_strike=False) == []  # 4 misses FF 5+ (CC 2+ would hit)
    assert rng.exhausted


# -- allocation and saves (spec §2) -----------------------------------------------------------------

def test_allocation_round_robin_war_engine_takes_dc_per_pass(compile_epic):
    """TP 1.9.6, 1.12.5, 3.3 (spec §2): snipers first, then the ordinary hits round-robin from the
    nearest unit; a WE takes its starting DC per pass; out units are not eligible."""
    compiled = duel(compile_epic, extra_units={"we": {"type": "WE", "armour": 4, "cc": 4, "damage_capacity": 3}},
                    d_groups=[("d", 1, "bc"), ("we", 1, "bc"), ("d", 1, "ff"), ("d", 1, "out")])
    trial = new_trial(compiled, None)
    eligible = trial.directly_engaged(DEFENDER)
    hits = [Hit(ORDINARY, False)] * 7 + [Hit(ORDINARY, True)]
    targets = [(hit.kind, hit.sniper, unit.label) for hit, unit, _ in allocate(hits, eligible)]
    d1, we, d2 = "D: d 1", "D: we 1", "D: d 2"
    assert targets == [(ORDINARY, True, d1)] + [(ORDINARY, False, u) for u in (d1, we, we, we, d2, d1, we)]


def test_sniper_hits_go_to_the_leader(compile_epic):
    """TP 2.1.14 (spec §2): a sniper hit goes to the first Inspiring/Leader unit, outside the round-robin."""
    compiled = duel(compile_epic, extra_units={"boss": {"type": "INF", "armour": 4, "cc": 4, "special": ["leader"]}},
                    d_groups=[("d", 2, "bc"), ("boss", 1, "ff")])
    eligible = new_trial(compiled, None).directly_engaged(DEFENDER)
    pairs = allocate([Hit(ORDINARY, True), Hit(ORDINARY, False)], eligible)
    assert [unit.label for _, unit, _ in pairs] == ["D: boss 1", "D: d 1"]


SAVES = [  # (unit, hit, dice, saved): every die listed must be used, and no more
    ({"armour": 4}, Hit(ORDINARY, False), [4], True),
    ({"armour": 4}, Hit(ORDINARY, False), [3], False),
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(ORDINARY, False), [3, 4], True),
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(ORDINARY, False), [3, 3], False),
    ({"armour": 2}, Hit(MACRO_WEAPON, False), [], False),
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(MACRO_WEAPON, False), [4], True),
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(MACRO_WEAPON, False), [3], False),
    ({"armour": 2, "special": ["reinforced-armour"]}, Hit(TITAN_KILLER, False), [], False),
    ({"armour": 4, "special": ["invulnerable-save"]}, Hit(ORDINARY, False), [3, 6], True),
    ({"armour": 4, "special": ["invulnerable-save"]}, Hit(ORDINARY, False), [3, 5], False),
    ({"armour": 2, "special": ["invulnerable-save"]}, Hit(MACRO_WEAPON, False), [6], True),
    ({"armour": 2, "special": ["invulnerable-save", "reinforced-armour"]}, Hit(TITAN_KILLER, False), [6], True),
    ({"armour": 4}, Hit(ORDINARY, True), [4], False),
    ({"armour": 4}, Hit(ORDINARY, True), [5], True),
    ({"armour": 6}, Hit(ORDINARY, True), [], False),
    ({}, Hit(ORDINARY, False), [], False),
]


@pytest.mark.parametrize("unit, hit, dice, saved", SAVES)
def test_save_rules(compile_epic, scripted, unit, hit, dice, saved):
    """TP 1.9.6, 2.1.6, 2.1.11, 2.1.14, 2.2.6, 2.2.9 (spec §2): armour, reinforced-armour re-roll,
    macro-weapon and titan-killer limits, invulnerable 6+, sniper −1."""
    compiled = duel(compile_epic, defender={"type": "AV", "cc": 4, **unit})
    rng = scripted(dice)
    assert save_throw(rng, compiled.units[1], hit) is saved
    assert rng.exhausted


def test_cover_only_for_defending_infantry(compile_epic, scripted):
    """TP 1.12.5, 2.1.10 (spec §2): defending INF saves on the better of armour and cover; attackers
    and Mounted infantry get no cover."""
    compiled = duel(compile_epic, attacker={"type": "INF", "armour": 6, "cc": 4},
                    defender={"type": "INF", "armour": 6, "cc": 4},
                    extra_units={"bikes": {"type": "INF", "armour": 6, "cc": 4, "special": ["mounted"]}},
                    d_groups=[("d", 1, "bc"), ("bikes", 1, "bc")],
                    a_fields={"cover": 4}, d_fields={"cover": 4})
    attacker, defender, bikes = compiled.units
    assert save_throw(scripted([4]), defender, Hit(ORDINARY, False)) is True
    assert (attacker.cover, bikes.cover) == (NO_ROLL, NO_ROLL)
    assert save_throw(scripted([4]), attacker, Hit(ORDINARY, False)) is False


# -- early ends and the result (spec §3, §5) -----------------------------------------------------------

def test_stall_when_no_directly_engaged_attacker_is_left(compile_epic, scripted):
    """TP 1.12.5 (spec §3.2): the engaged attacker dies (an out unit survives): stall, the defender wins
    without a roll and inflicts no extra hits; the attacker breaks."""
    compiled = duel(compile_epic, a_groups=[("a", 1, "bc"), ("a", 1, "out")])
    rng = scripted([1, 6, 1, 6])  # attacker misses, defender hits, the save fails; the broken attacker rallies
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.decided_without_roll, outcome.margin, outcome.rounds) == ("defender", True, None, 1)
    assert outcome.formations[0].casualties == 1 and outcome.formations[0].broken_after_assault


def test_wipe_out_wins_without_a_roll(compile_epic, scripted):
    """TP 1.12.5 (spec §3.1): the defender has no living unit: the attacker wins, no roll, no extra hits."""
    compiled = duel(compile_epic)
    rng = scripted([6, 1, 1])  # attacker hits, defender misses, the defender's save fails
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.decided_without_roll, outcome.margin) == ("attacker", True, None)
    defender = outcome.formations[1]  # issue 11 §2: destroyed, so not "broken", holding no BMs
    assert (defender.destroyed, defender.broken_after_assault, defender.blast_markers_after_assault) == (True, False, 0)


def test_both_wiped_out_no_winner_no_consequences(compile_epic, scripted):
    """§9.7 (spec §3.1): both sides die in the same step: no winner (not counted as decided without a
    roll: no side won), no BMs; both destroyed, holding no BMs (issue 11 §2)."""
    compiled = duel(compile_epic, a_fields={"blast_markers": 1})
    rng = scripted([6, 6, 1, 1])
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.decided_without_roll) == ("none", False)
    assert [(f.destroyed, f.broken_after_assault, f.blast_markers_after_assault) for f in outcome.formations] == \
        [(True, False, 0), (True, False, 0)]


def test_tie_until_max_rounds_is_unresolved(compile_epic, scripted):
    """TP 1.12.7, §9.4 (spec §5): ties fight again; after max_rounds the trial is unresolved, no consequences."""
    compiled = duel(compile_epic, rules={"max_rounds": 2})
    rng = scripted([1, 1, 3, 3, 2, 3] * 2)  # both miss; 3 + 1 no BMs on each side, twice
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.rounds, outcome.margin) == ("unresolved", 2, None)
    assert not any(f.broken_after_assault for f in outcome.formations)


def test_result_modifiers(compile_epic):
    """TP 1.12.7, 2.1.5, TP-SR TSKNF (spec §5): kills, more / more than twice the units (WE = DC),
    no BMs (raw, before TSKNF halving), enemy has more BMs (TSKNF halved), Inspiring."""
    compiled = duel(compile_epic, extra_units={
        "we": {"type": "WE", "armour": 4, "cc": 4, "damage_capacity": 3},
        "hero": {"type": "INF", "armour": 4, "cc": 4, "special": ["inspiring"]}},
        a_groups=[("we", 1, "bc"), ("hero", 1, "out")], d_groups=[("d", 1, "bc")],
        a_fields={"blast_markers": 1, "army_rules": ["they-shall-know-no-fear"]}, d_fields={"blast_markers": 1})
    trial = new_trial(compiled, None)
    trial.kills[ATTACKER] = 2
    assert blast_marker_counts(trial, ATTACKER) == (1, 0)
    assert [v for v, _ in result_modifiers(trial, ATTACKER)] == [2, 1, 1, 1, 1]  # kills, >, >2×, enemy BMs, Inspiring
    assert result_modifiers(trial, DEFENDER) == []
    trial.rules = trial.rules.model_copy(update={"inspiring": "engaged_only"})
    assert [v for v, _ in result_modifiers(trial, ATTACKER)] == [2, 1, 1, 1]


def test_broken_formation_counts_its_size_as_markers(compile_epic):
    """TP 1.12.7 **, 1.13.4 (spec §5): a broken formation counts BMs = its size, so never "no BMs"."""
    compiled = duel(compile_epic, d_groups=[("d", 3, "bc")], d_fields={"broken": True, "blast_markers": 2})
    trial = new_trial(compiled, None)
    assert trial.formations[1].blast_markers == 0
    assert blast_marker_counts(trial, DEFENDER) == (3, 3)
    assert (1, "no BMs") not in result_modifiers(trial, DEFENDER)


# -- supporting fire (spec §4) ------------------------------------------------------------------------

@pytest.mark.parametrize("kills_count", [True, False])
def test_supporting_fire_hits_only_engaged_units(compile_epic, scripted, kills_count):
    """TP 1.12.6, §9.2 (spec §4): support units fire at FF at directly engaged units only; their
    kills count for the result unless the switch says otherwise; the loss always counts."""
    compiled = duel(compile_epic, d_groups=[("d", 1, "out"), ("d", 1, "ff")],
                    extra_formations=[formation("S", "attacker", [("a", 1, "ff"), ("a", 1, "out")], role="support")],
                    rules={"supporting_fire_kills_count": kills_count})
    rng = scripted([5, 1])  # one support die (the out unit does not fire), the save fails
    trial = new_trial(compiled, rng)
    supporting_fire(trial)
    assert rng.exhausted
    assert [u.alive for u in trial.formations[1].units] == [False, True]  # the ff unit (allocation order)
    assert trial.kills[ATTACKER] == int(kills_count) and trial.formations[1].losses == 1


def test_broken_support_formation_does_not_fire(compile_epic, scripted):
    """TP 1.12.6 (spec §4): broken formations give no supporting fire."""
    compiled = duel(compile_epic, extra_formations=[formation("S", "attacker", [("a", 2, "ff")], role="support",
                                                              broken=True)])
    trial = new_trial(compiled, scripted([]))
    supporting_fire(trial)
    assert trial.kills == [0, 0]


# -- consequences (spec §6) ---------------------------------------------------------------------------

def test_extra_hits_skip_fearless_and_a_war_engine_absorbs_its_damage(compile_epic):
    """TP 1.12.7, 2.1.3, 3.3.3, rules reference §2.10 (spec §6.1): no saves, front to back over all
    units (any state), Fearless immune; a damaged WE takes a block of its starting DC in hits and
    those beyond its remaining DC are lost, so the unit behind it survives."""
    compiled = duel(compile_epic, extra_units={
        "we": {"type": "WE", "armour": 4, "cc": 4, "damage_capacity": 3},
        "brave": {"type": "INF", "armour": 4, "cc": 4, "special": ["fearless"]}},
        d_groups=[("brave", 1, "bc"), ("we", 1, "bc"), ("d", 1, "out")])
    trial = new_trial(compiled, None)
    brave, we, d = trial.formations[1].units
    we.damage_left = 2
    extra_hits(trial, DEFENDER, 3)
    assert (brave.alive, we.alive, d.alive) == (True, False, True)
    trial = new_trial(compiled, None)
    extra_hits(trial, DEFENDER, 2)
    assert [u.damage_left for u in trial.formations[1].units] == [1, 1, 1]


@pytest.mark.parametrize("mixed, survivors", [(False, 3), (True, 0)])
def test_tsknf_halves_extra_hits_only_when_every_loser_is_tsknf(compile_epic, mixed, survivors):
    """TP-SR TSKNF (spec §6.1): 5 extra hits → 2 when every losing assault formation is TSKNF."""
    tsknf = {"army_rules": ["they-shall-know-no-fear"]}
    extra = [formation("D2", "defender", [("d", 1, "bc")], **({} if mixed else tsknf))]
    compiled = duel(compile_epic, d_groups=[("d", 4, "bc")], d_fields=tsknf, extra_formations=extra)
    trial = new_trial(compiled, None)
    extra_hits(trial, DEFENDER, 5)
    assert sum(u.alive for u in trial.assault_units(DEFENDER)) == survivors


def test_loser_broken_at_start_is_destroyed_except_fearless(compile_epic, scripted):
    """TP 1.12.8, 2.1.3 (spec §6.2): a loser already broken is destroyed, Fearless units excepted."""
    compiled = duel(compile_epic, extra_units={"brave": {"type": "INF", "armour": 4, "cc": 4, "special": ["fearless"]}},
                    d_groups=[("d", 2, "bc"), ("brave", 1, "out")], d_fields={"broken": True, "trapped": 1.0})
    trial = new_trial(compiled, scripted([]))
    consequences(trial, Decision("attacker", 1, 1, False))
    assert [u.alive for u in trial.formations[1].units] == [False, False, True]
    assert trial.formations[1].broken


def test_loser_breaks_speed_zero_die_and_trapped_draws(compile_epic, scripted):
    """TP 1.13.2, 1.13.3, 2.1.3, §9.5 (spec §6.2): BMs removed, broken; speed-0 bc/ff units die; one
    uniform draw per other non-Fearless unit (dies when < trapped); Fearless units survive."""
    compiled = duel(compile_epic, extra_units={
        "gun": {"type": "INF", "armour": 6, "cc": 6, "speed": 0},
        "brave": {"type": "INF", "armour": 4, "cc": 4, "special": ["fearless"]}},
        d_groups=[("gun", 1, "bc"), ("d", 2, "bc"), ("brave", 1, "ff"), ("gun", 1, "out")],
        d_fields={"blast_markers": 2, "trapped": 0.25})
    rng = scripted([0.2, 0.3, 0.1])
    trial = new_trial(compiled, rng)
    loser_breaks(trial, trial.formations[1])
    assert rng.exhausted
    f = trial.formations[1]
    assert (f.broken, f.blast_markers) == (True, 0)
    assert [u.alive for u in f.units] == [False, False, True, True, False]


def test_nearby_losers_gain_a_marker_and_break(compile_epic, scripted):
    """TP 1.12.8, §3 Break (spec §6.3): +1 BM to a losing support/nearby formation, then its break
    test; it withdraws like a loser."""
    compiled = duel(compile_epic, extra_formations=[
        formation("N", "defender", [("d", 2, "out")], role="nearby", blast_markers=1, trapped=0.5)])
    rng = scripted([0.4, 0.6])
    trial = new_trial(compiled, rng)
    nearby_loser(trial, trial.formations[2])
    assert rng.exhausted
    assert (trial.formations[2].broken, [u.alive for u in trial.formations[2].units]) == (True, [False, True])


@pytest.mark.parametrize("tsknf, alive", [(False, [True, False, True]), (True, [True, True, True])])
def test_broken_nearby_loser_takes_a_no_save_hit(compile_epic, tsknf, alive):
    """TP 1.13.4, 2.1.3, TP-SR TSKNF (spec §6.3): a broken one takes a no-save hit front to back,
    Fearless immune; TSKNF ignores a single one."""
    compiled = duel(compile_epic, extra_units={"brave": {"type": "INF", "armour": 4, "cc": 4, "special": ["fearless"]}},
                    extra_formations=[formation("N", "defender", [("brave", 1, "ff"), ("d", 2, "out")], role="support",
                                                broken=True, army_rules=["they-shall-know-no-fear"] if tsknf else [])])
    trial = new_trial(compiled, None)
    nearby_loser(trial, trial.formations[2])
    assert [u.alive for u in trial.formations[2].units] == alive


@pytest.mark.parametrize("all_expendable, markers, broken", [(False, 3, False), (True, 0, True)])
def test_winner_takes_its_losses_as_markers(compile_epic, all_expendable, markers, broken):
    """TP 1.12.9, 1.13.4, 2.1.22 (spec §6.4): BMs += losses (Expendable losses excluded unless all
    are Expendable), then the break test; broken winners do not withdraw."""
    exp = {"type": "INF", "armour": 4, "cc": 4, "special": ["expendable"]}
    compiled = duel(compile_epic, extra_units={"grot": exp},
                    a_groups=[("grot" if all_expendable else "a", 3, "bc"), ("grot", 1, "bc")],
                    a_fields={"blast_markers": 1, "trapped": 1.0})
    trial = new_trial(compiled, None)
    f = trial.formations[0]
    f.loss_markers, f.expendable_loss_markers = 2, 1  # 3 losses, 1 of them Expendable
    winner_blast_markers(trial, f)
    assert (f.blast_markers, f.broken, len(f.living)) == (markers, broken, 4)


def test_winner_broken_at_start_takes_no_markers(compile_epic):
    """TP 1.12.9 (spec §6.4): a winner broken at the start gets no BMs."""
    compiled = duel(compile_epic, a_groups=[("a", 2, "bc")], a_fields={"broken": True})
    trial = new_trial(compiled, None)
    trial.formations[0].loss_markers = 1
    winner_blast_markers(trial, trial.formations[0])
    assert (trial.formations[0].blast_markers, trial.formations[0].broken) == (0, True)


# -- end phase (spec §7) ------------------------------------------------------------------------------

def rally_case(compile_epic, groups, **fields):
    units = {"sc": {"type": "INF", "armour": 4, "cc": 4, "special": ["supreme-commander"]},
             "boss": {"type": "INF", "armour": 4, "cc": 4, "special": ["leader"]},
             "gun": {"type": "INF", "armour": 4, "cc": 4, "speed": 0}}
    return duel(compile_epic, extra_units=units, d_groups=groups, d_fields={"initiative": 3, **fields})


@pytest.mark.parametrize("die, passed, markers", [(4, True, 1), (3, False, 5)])
def test_rally_unbroken(compile_epic, scripted, die, passed, markers):
    """TP 1.14.1, 2.1.8 (spec §7): D6 − 1 (enemy within 30 cm) ≥ 3: remove ⌈5/2⌉ and 1 per Leader;
    a failure keeps every BM."""
    compiled = rally_case(compile_epic, [("d", 2, "bc"), ("boss", 1, "bc")], blast_markers=5)
    trial = new_trial(compiled, scripted([die]))
    assert rally(trial, trial.formations[1]) is passed
    assert trial.formations[1].blast_markers == markers and trial.formations[1].rally_tested


def test_rally_supreme_commander_reroll_and_tsknf_leaders(compile_epic, scripted):
    """TP 2.1.15, TP-SR TSKNF (spec §7): a failed test is re-rolled per SC; a broken TSKNF formation
    rallies to n BMs minus 2 per Leader (the SC is one)."""
    compiled = rally_case(compile_epic, [("sc", 1, "bc"), ("d", 4, "bc")], broken=True,
                          army_rules=["they-shall-know-no-fear"])
    rng = scripted([1, 6])  # 1 − 3 fails, the re-roll 6 − 3 = 3 passes 3+
    trial = new_trial(compiled, rng)
    assert rally(trial, trial.formations[1]) is True and rng.exhausted
    assert (trial.formations[1].broken, trial.formations[1].blast_markers) == (False, 5 - 2)


def test_failed_broken_rally_withdraws_again_without_speed_zero_deaths(compile_epic, scripted):
    """TP 1.14.1, TP-FAQ Rallying (spec §7): a broken formation that fails withdraws again: trapped
    draws for every living non-Fearless unit, speed-0 units do not die again."""
    compiled = rally_case(compile_epic, [("gun", 1, "bc"), ("d", 1, "bc")], broken=True, trapped=0.5)
    rng = scripted([2, 0.7, 0.1])
    trial = new_trial(compiled, rng)
    assert rally(trial, trial.formations[1]) is False and rng.exhausted
    assert [u.alive for u in trial.formations[1].units] == [True, False]


def test_end_phase_rallies_only_formations_with_markers_or_broken(compile_epic, scripted):
    """TP 1.12.5, 1.12.7, 1.14.1 (spec §3, §6, §7): an out unit keeps the defender alive, so the result
    is rolled; the extra hits find only a Fearless unit; in the end phase the broken defender rallies
    and the attacker, who won without loss (no BMs), does not test."""
    compiled = duel(compile_epic, extra_units={"brave": {"type": "INF", "armour": 4, "cc": 4, "special": ["fearless"]}},
                    d_groups=[("d", 1, "bc"), ("brave", 1, "out")])
    # attacker hits, defender misses, the save fails; attacker (6, 1) + 1 kill + 1 no BMs = 8;
    # defender (3, 2) + 1 no BMs = 4; rally 6 − 2 (broken) − 1 (enemy within 30 cm) ≥ 2+
    rng = scripted([6, 1, 1, 6, 1, 3, 2, 6])
    outcome = run_trial(compiled, rng)
    assert rng.exhausted
    assert (outcome.winner, outcome.margin, outcome.decided_without_roll) == ("attacker", 4, False)
    attacker, defender = outcome.formations
    assert (attacker.rally_tested, defender.rally_tested, defender.rally_passed) == (False, True, True)
    assert (defender.casualties, defender.broken_after_assault, defender.broken_after_end_phase) == (1, True, False)
    assert defender.blast_markers_after_end_phase == 0


def test_trace_names_every_step(compile_epic):
    """The trace (run_trial with log=) reports rolls, allocation, saves, modifiers and decisions with clauses."""
    compiled = duel(compile_epic, d_groups=[("d", 3, "bc")], d_fields={"blast_markers": 1})
    lines = []
    run_trial(compiled, random.Random(5), log=lines.append)
    text = "\n".join(lines)
    for needle in ("[TP 1.12.5]", "rolls 1 die at CC 4+", "allocated", "[TP 1.12.7] attacker result: highest of"):
        assert needle in text


@pytest.mark.parametrize("blast_markers, leaders", [(4, 1), (7, 0), (0, 2)])
def test_regroup_entry_point_is_exact(exact, blast_markers, leaders):
    """TP 1.13.1, 2.1.8 (§8.1): wargame_odds.analysis.epic.regroup's distributions of BMs removed and left, their
    means, "at least N" values and P(all removed) equal the exact values of the reference engine's
    regroup roll (enumerated dice), each with the value itself as its interval."""
    result = regroup(blast_markers, leaders=leaders)
    assert result.system == "epic-regroup" and result.meta["method"] == "exact"
    removed = exact(lambda rng: regroup_roll(rng, blast_markers, leaders))
    all_removed = result["regroup", "all_removed"]
    assert F(all_removed.k, all_removed.n) == removed.get(blast_markers, 0)
    assert all_removed.ci95 == (all_removed.p, all_removed.p)
    for name, expected in (("removed", removed), ("left", {blast_markers - k: p for k, p in removed.items()})):
        got = result["regroup", name]
        assert {int(v): F(int(c), got.n) for v, c in zip(got.values, got.counts) if c} == expected
        assert result["regroup", f"{name}_mean"].value == pytest.approx(float(sum(k * p for k, p in expected.items())),
                                                                      rel=1e-15)
        values, at_least, lo, hi = got.at_least()
        for v, p in zip(values, at_least):
            assert p == pytest.approx(float(sum(q for k, q in expected.items() if k >= v)), rel=1e-15)
        assert (lo == at_least).all() and (hi == at_least).all()
    table = result.table()
    assert (table.ci95_lo == table.estimate).all() and (table.ci95_hi == table.estimate).all()
