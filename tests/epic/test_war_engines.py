"""War engines and weapon abilities (docs/epic-engine.md §10): each rule step of the reference engine,
run over every dice sequence it can consume (the ``exact`` fixture), against fractions computed here
independently, and the worked values of the rules' §12.8–12.9 where they apply to assaults."""
import json
from dataclasses import replace
from fractions import Fraction as F
from math import comb

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
import wargame_odds.kernels.epic.layout as K
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.compile import ATTACKER, DEFENDER
from wargame_odds.analysis.epic.dice import Dice, parse_dice
from wargame_odds.analysis.epic.compile import Abilities
from wargame_odds.analysis.epic.reference import (
    MACRO_WEAPON, ORDINARY, TITAN_KILLER, Hit, allocate, assault_dice, end_phase, extra_hits, new_trial, save_throw,
    take_hit, winner_blast_markers)
from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.analysis.epic.war_engines import apply_critical, end_phase_effects, titan_killer_damage

SHOOTER = {"type": "INF", "armour": 4, "cc": 4, "ff": 4}


def scenario(compile_epic, target: dict, *, count=1, engaged="ff", more_units=None, more_groups=(), d_fields=None):
    """Attacker A (one SHOOTER) against formation D of ``count`` ``target`` units (plus ``more_groups``)."""
    units = {"shooter": SHOOTER, "target": target, **(more_units or {})}
    groups = [{"unit": "target", "count": count, "engaged": engaged}] + [
        {"unit": u, "count": n, "engaged": e} for u, n, e in more_groups]
    return compile_epic(units, [
        {"name": "A", "side": "attacker", "initiative": 1, "units": [{"unit": "shooter", "count": 1, "engaged": "ff"}]},
        {"name": "D", "side": "defender", "initiative": 1, "units": groups, **(d_fields or {})}])


def hits_on_first_target(compiled, hits, result):
    """fn(rng) for ``exact``: a fresh trial, the hits resolved on the defender's first unit."""
    def run(rng):
        trial = new_trial(compiled, rng)
        unit = trial.formations[1].units[0]
        for hit, damage in hits:
            take_hit(trial, ATTACKER, hit, unit, damage)
        return result(trial, unit)
    return run


def binomial(n, p):
    return {k: comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


def capped(dist, cap):
    out = {}
    for k, p in dist.items():
        out[min(k, cap)] = out.get(min(k, cap), 0) + p
    return out


def marginal(dist, index):
    out = {}
    for key, p in dist.items():
        out[key[index]] = out.get(key[index], 0) + p
    return out


WARHOUND = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3, "void_shields": 2,
            "special": ["reinforced-armour"]}
FF_HIT, CC_HIT = Hit(ORDINARY, False), Hit(ORDINARY, False, close_combat=True)
FAIL_5_RA = F(4, 9)  # a 5+ save with a re-roll fails 4/9 (rules §12.2)


# -- void shields (TP-SR Imperial Void Shields; §10.2) -----------------------------------------------

@pytest.mark.parametrize("k", range(6))
def test_void_shields_stop_one_firefight_point_each_before_saves(compile_epic, exact, k):
    """TP-SR Imperial Void Shields: a 2-shield WE (DC 3, 5+ RA) taking k FF hits: the first 2 are stopped
    with no save, the others saved at 5+ with a re-roll; damage = Bin(k − 2, 4/9) capped at DC 3."""
    compiled = scenario(compile_epic, WARHOUND)
    dist = exact(hits_on_first_target(compiled, [(FF_HIT, 1)] * k,
                                      lambda t, u: (u.damage_taken, u.void_shields, t.kills[ATTACKER])))
    assert marginal(dist, 0) == capped(binomial(max(k - 2, 0), FAIL_5_RA), 3)
    assert marginal(dist, 1) == {max(2 - k, 0): 1}
    assert all(kills == damage for damage, _, kills in dist)  # stopped points are no kills


def test_close_combat_hits_go_straight_through_void_shields(compile_epic, exact):
    """TP-SR Imperial Void Shields (§10.2): CC hits ignore the shields, which stay up."""
    compiled = scenario(compile_epic, WARHOUND, engaged="bc")
    dist = exact(hits_on_first_target(compiled, [(CC_HIT, 1)] * 3, lambda t, u: (u.damage_taken, u.void_shields)))
    assert marginal(dist, 0) == binomial(3, FAIL_5_RA) and marginal(dist, 1) == {2: 1}


def hit_after_hit(exact, compiled, hit, hits):
    """The distribution of (shields, DC left, any critical) of the defender's first unit after ``hits``
    hits, one take_hit at a time from each state reached (a Markov chain over the step's exact
    distribution: the dice of one hit at a time, instead of every sequence of all of them)."""
    start = compiled.units[1]
    states = {(start.void_shields, start.damage_capacity, False): F(1)}
    for _ in range(hits):
        reached = {}
        for (shields, left, critical), p in states.items():
            def one_hit(rng, shields=shields, left=left, critical=critical):
                trial = new_trial(compiled, rng)
                unit = trial.formations[1].units[0]
                unit.void_shields, unit.damage_left, unit.alive, unit.criticals = shields, left, left > 0, critical
                take_hit(trial, ATTACKER, hit, unit)
                return unit.void_shields, unit.damage_left if unit.alive else 0, unit.criticals > 0
            for state, q in exact(one_hit).items():
                reached[state] = reached.get(state, 0) + p * q
        states = reached
    return states


def test_warhound_taking_five_hits_matches_the_worked_example(compile_epic, exact):
    """Rules §12.8 (TP 3.2.2, 3.2.3, TP-SR Imperial Void Shields): a Warhound (DC 3, 2 shields, 5+ RA,
    critical = +1 damage) takes 5 firefight hits: damage 125/729, 250/729, 625/2187, 437/2187;
    P(at least one critical) = 4058/19683."""
    compiled = scenario(compile_epic, {**WARHOUND, "critical": "extra_damage"})
    dist = hit_after_hit(exact, compiled, FF_HIT, 5)
    damage = {}
    for (_, left, _), p in dist.items():
        damage[3 - left] = damage.get(3 - left, 0) + p
    assert damage == {0: F(125, 729), 1: F(250, 729), 2: F(625, 2187), 3: F(437, 2187)}
    assert sum(p for (_, _, critical), p in dist.items() if critical) == F(4058, 19683)


def test_extra_hits_ignore_void_shields(compile_epic, exact):
    """TP 1.12.7, TP-SR Imperial Void Shields (§10.2): the extra hits of a lost assault go past the shields."""
    compiled = scenario(compile_epic, WARHOUND)

    def run(rng):
        trial = new_trial(compiled, rng)
        extra_hits(trial, DEFENDER, 2)
        unit = trial.formations[1].units[0]
        return unit.damage_taken, unit.void_shields
    assert exact(run) == {(2, 2): 1}


def test_void_shields_come_back_one_per_end_phase_before_the_rally(compile_epic, exact):
    """TP-SR Imperial Void Shields, rules §13 Q17 (§10.7): +1 shield per WE in the end phase, never
    above the start; power fields never come back."""
    compiled = scenario(compile_epic, {**WARHOUND, "power_fields": 2}, d_fields={"blast_markers": 0})

    def run(rng):
        trial = new_trial(compiled, rng)
        unit = trial.formations[1].units[0]
        unit.void_shields, unit.power_fields = 0, 0
        end_phase(trial)
        first = (unit.void_shields, unit.power_fields)
        unit.void_shields = 2
        trial.in_end_phase = False
        end_phase(trial)
        return first, unit.void_shields
    assert exact(run) == {((1, 0), 2): 1}


# -- power fields and shadowfields (TP-SR Power Fields, Dark Eldar Technology; §10.2) ---------------

def test_power_field_dice_are_rolled_once_per_trial(compile_epic, exact):
    """TP-SR Power Fields, rules §13 Q14: D3+3 fields, rolled at the start: 4, 5, 6 with 1/3 each."""
    compiled = scenario(compile_epic, {"type": "WE", "armour": 4, "damage_capacity": 8, "power_fields": "D3+3"})
    assert exact(lambda rng: new_trial(compiled, rng).units[1].power_fields) == {4: F(1, 3), 5: F(1, 3), 6: F(1, 3)}


def test_a_shadowfield_absorbs_a_whole_titan_killer_hit(compile_epic, exact):
    """TP-SR Dark Eldar Technology (§10.2): one shadowfield absorbs one hit, whatever its damage; then the
    next hit reaches the saves."""
    target = {"type": "WE", "armour": 5, "damage_capacity": 3, "shadowfields": 1}
    tk = Hit(TITAN_KILLER, False, abilities=Abilities(macro_weapon=True, titan_killer=True,
                                                      titan_killer_damage=parse_dice("D3")))
    compiled = scenario(compile_epic, target)
    dist = exact(hits_on_first_target(compiled, [(tk, 3), (FF_HIT, 1)], lambda t, u: (u.damage_taken, u.shadowfields)))
    assert dist == {(1, 0): F(2, 3), (0, 0): F(1, 3)}  # the 5+ save of the second hit


# -- titan killer (TP 2.2.9, 3.2.5; §10.5) ------------------------------------------------------------

TK_D3 = Abilities(macro_weapon=True, titan_killer=True, titan_killer_damage=parse_dice("D3"))


def titan_killer_on_first_target(compiled, close_combat=False):
    """fn(rng): one D3 titan-killer hit allocated (damage rolled) and resolved on the first target."""
    def run(rng):
        trial = new_trial(compiled, rng)
        unit = trial.formations[1].units[0]
        hit = Hit(TITAN_KILLER, False, close_combat=close_combat, abilities=TK_D3)
        (_, _, damage), = allocate([hit], [unit], lambda hit, unit: titan_killer_damage(trial, hit, unit))
        take_hit(trial, ATTACKER, hit, unit, damage)
        return unit.damage_taken, unit.criticals > 0
    return run


def test_titan_killer_d3_past_two_void_shields(compile_epic, exact):
    """Rules §12.9, TP 3.2.5, TP-SR Imperial Void Shields: a D3 hit on a 2-shield WE: 0 damage 2/3, 1 damage
    1/3; in close combat the shields do not count: 1, 2, 3 with 1/3 each."""
    compiled = scenario(compile_epic, WARHOUND, engaged="bc")
    assert marginal(exact(titan_killer_on_first_target(compiled)), 0) == {0: F(2, 3), 1: F(1, 3)}
    assert marginal(exact(titan_killer_on_first_target(compiled, close_combat=True)), 0) == \
        {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}


def test_titan_killer_d3_against_an_unshielded_we_with_and_without_criticals(compile_epic, exact):
    """Rules §12.9, TP 2.2.9, 3.2.3: a D3 hit on a DC 3 WE with RA (no save): destroyed 1/3; with +1-damage
    criticals 4/9."""
    plain = {"type": "WE", "armour": 4, "damage_capacity": 3, "special": ["reinforced-armour"]}
    assert marginal(exact(titan_killer_on_first_target(scenario(compile_epic, plain))), 0)[3] == F(1, 3)
    critical = scenario(compile_epic, {**plain, "critical": "extra_damage"})
    assert marginal(exact(titan_killer_on_first_target(critical)), 0)[3] == F(4, 9)


@pytest.mark.parametrize("points, p_critical", [(1, F(1, 6)), (2, F(11, 36)), (3, F(91, 216))])
def test_one_critical_roll_per_point_reaching_the_hull(compile_epic, exact, points, p_critical):
    """Rules §12.9, TP 3.2.3: P(at least one critical | d points) = 1/6, 11/36, 91/216 (a critical with
    no damage part, so the rolls are the d points only)."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 3, "critical": "random_move"}
    hit = Hit(TITAN_KILLER, False, abilities=Abilities(macro_weapon=True, titan_killer=True,
                                                       titan_killer_damage=Dice(0, 6, points)))
    dist = exact(hits_on_first_target(scenario(compile_epic, target), [(hit, points)],
                                      lambda t, u: (u.damage_taken, u.criticals > 0)))
    assert dist == {(points, True): p_critical, (points, False): 1 - p_critical}


def test_titan_killer_d3_against_a_6_plus_invulnerable_save_per_point(compile_epic, exact):
    """Rules §12.9, TP-FAQ Invulnerable Saves: one 6+ save per point: 43/648, 85/216, 25/72, 125/648."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 3, "special": ["invulnerable-save"]}
    assert marginal(exact(titan_killer_on_first_target(scenario(compile_epic, target))), 0) == \
        {0: F(43, 648), 1: F(85, 216), 2: F(25, 72), 3: F(125, 648)}


def test_holofield_saves_a_titan_killer_hit_once_knight_shield_per_point(compile_epic, exact):
    """TP-SR Eldar Technology / Knight Technology (§10.3): a holofield 3+ saves the whole D3 hit or none
    of it; a knight shield rolls an unmodified 4+ per point."""
    holo = {"type": "WE", "armour": 5, "damage_capacity": 3, "special": ["holofield"]}
    assert marginal(exact(titan_killer_on_first_target(scenario(compile_epic, holo))), 0) == \
        {0: F(2, 3), 1: F(1, 9), 2: F(1, 9), 3: F(1, 9)}
    knight = {"type": "WE", "armour": 5, "damage_capacity": 3, "special": ["knight-shield", "reinforced-armour"]}
    expected = {}
    for d in (1, 2, 3):
        for k, p in binomial(d, F(1, 2)).items():
            expected[k] = expected.get(k, 0) + p / 3
    assert marginal(exact(titan_killer_on_first_target(scenario(compile_epic, knight))), 0) == expected


def test_titan_killer_damage_counts_as_that_many_hits_for_allocation(compile_epic, scripted):
    """TP 3.2.5 (§10.5): a WE keeps taking titan-killer hits while the damage rolled on it is below its
    starting DC, then the next unit's turn comes; a unit that is not a WE takes 1 each."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 3}
    compiled = scenario(compile_epic, target, count=2, more_units={"boy": SHOOTER}, more_groups=[("boy", 1, "ff")])
    trial = new_trial(compiled, scripted([1, 2, 3]))  # D3 via randint(1, 3): 1, 2 on the first WE, 3 on the second
    first, second, boy = trial.formations[1].units
    hit = Hit(TITAN_KILLER, False, abilities=TK_D3)
    allocated = allocate([hit] * 4, [first, second, boy], lambda hit, unit: titan_killer_damage(trial, hit, unit))
    assert [(unit, damage) for _, unit, damage in allocated] == [(first, 1), (first, 2), (second, 3), (boy, 1)]


# -- saves and weapon abilities (TP 2.1.6, 2.1.11, 2.2.5; TP-SR; §10.3, §10.6) -------------------------

@pytest.mark.parametrize("profile, hit, p_save", [
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(ORDINARY, False), F(3, 4)),
    ({"armour": 4, "special": ["reinforced-armour"]}, Hit(ORDINARY, False, abilities=Abilities(lance=True)), F(1, 2)),
    ({"armour": 5, "special": ["living-metal"]}, Hit(MACRO_WEAPON, False), F(1, 2)),
    ({"armour": 5, "special": ["deflector-shield"]}, Hit(MACRO_WEAPON, False), F(1, 3)),
    ({"armour": 5, "special": ["knight-shield", "reinforced-armour"]}, Hit(MACRO_WEAPON, False), F(1, 2)),
    ({"armour": 5, "special": ["knight-shield", "reinforced-armour"]}, Hit(ORDINARY, False),
     F(1, 2) + F(1, 2) * F(1, 3)),
    ({"armour": 5, "special": ["knight-shield", "reinforced-armour"]}, Hit(ORDINARY, False, supporting=True),
     F(1, 3) + F(2, 3) * F(1, 3)),
    ({"armour": 5, "special": ["holofield"]}, Hit(ORDINARY, True), F(1, 2)),
], ids=["RA re-roll", "lance: no RA re-roll", "living metal 4+", "deflector shield 5+", "knight shield v MW",
        "knight shield + RA", "no knight shield v supporting fire", "holofield, sniper -1"])
def test_special_saves_and_lance(compile_epic, exact, profile, hit, p_save):
    """TP 2.1.11, TP-SR Eldar / Knight / Necron / Tau Technology (§10.3): P(save) of one hit."""
    compiled = scenario(compile_epic, {"type": "WE", "damage_capacity": 2, **profile})
    assert exact(lambda rng: save_throw(rng, compiled.units[1], hit))[True] == p_save


def test_ignore_cover_denies_the_cover_save(compile_epic, exact):
    """TP 2.2.5 (§10.6): a 6+ infantry unit in 4+ cover saves 1/2, against ignore cover 1/6."""
    compiled = scenario(compile_epic, {"type": "INF", "armour": 6, "cc": 5}, d_fields={"cover": 4})
    unit = compiled.units[1]
    assert exact(lambda rng: save_throw(rng, unit, Hit(ORDINARY, False)))[True] == F(1, 2)
    ic = Hit(ORDINARY, False, abilities=Abilities(ignore_cover=True))
    assert exact(lambda rng: save_throw(rng, unit, ic))[True] == F(1, 6)


def test_disrupt_places_a_marker_per_hit_not_per_kill(compile_epic, exact):
    """TP 2.2.2, TP-FAQ Disrupt (§10.6): on a winner, each disrupt hit adds 1 BM whether saved or not,
    its kill none; a hit stopped by a void shield adds none."""
    disrupt = Hit(ORDINARY, False, abilities=Abilities(disrupt=True))
    compiled = scenario(compile_epic, {"type": "INF", "armour": 4, "cc": 4}, count=8)  # never broken by 3 BMs

    def run(rng):
        trial = new_trial(compiled, rng)
        for unit in trial.formations[1].units[:2]:
            take_hit(trial, ATTACKER, disrupt, unit)
        take_hit(trial, ATTACKER, Hit(ORDINARY, False), trial.formations[1].units[2])
        winner_blast_markers(trial, trial.formations[1])
        return trial.formations[1].blast_markers
    assert exact(run) == {2: F(1, 2), 3: F(1, 2)}  # 2 for the disrupt hits + the ordinary kill (1/2)
    shielded = scenario(compile_epic, WARHOUND)
    dist = exact(hits_on_first_target(shielded, [(disrupt, 1)], lambda t, u: t.formations[1].loss_markers))
    assert dist == {0: 1}


def test_macro_weapon_on_a_units_own_close_combat_attack(compile_epic):
    """TP 2.2.6 (§10.6): ``cc_abilities`` makes the unit's main CC dice macro-weapon hits."""
    compiled = scenario(compile_epic, {"type": "WE", "armour": 4, "cc": 3, "ff": 4, "damage_capacity": 2,
                                       "cc_abilities": {"macro_weapon": True}, "ff_abilities": {"titan_killer": "D6"}})
    unit = compiled.units[1]
    assert [(d.weapon, d.kind, d.close_combat) for d in assault_dice(unit, False)] == [("FF", TITAN_KILLER, False)]
    unit = replace(compiled.units[1], cc_dice=2)
    assert [(d.weapon, d.kind, d.close_combat) for d in assault_dice(unit, True)] == [("CC", MACRO_WEAPON, True)]


# -- critical effects (TP 3.2.3, 3.2.4; §10.4) ------------------------------------------------------

def test_a_destroying_critical_counts_the_remaining_dc_as_kills_and_losses(compile_epic, exact):
    """TP 3.2.4, issue 14 §2 (§10.4): a DC 4 WE with critical = destroyed takes one no-save hit: 1 kill,
    or on a critical the 3 DC left as well: 4 kills and 4 losses."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 4, "critical": "destroyed"}
    dist = exact(hits_on_first_target(scenario(compile_epic, target), [(Hit(MACRO_WEAPON, False), 1)],
                                      lambda t, u: (t.kills[ATTACKER], t.formations[1].loss_markers, u.alive)))
    assert dist == {(1, 1, True): F(5, 6), (4, 4, False): F(1, 6)}


def test_splash_hits_the_units_within_reach(compile_epic, exact):
    """TP 3.2.3, rules §13 Q18 (§10.6): destroyed with a 4+ splash on the 2 units of D within reach (no
    armour): each dies with 1/2; the kills count for the attacker."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 1,
              "critical": {"kind": "destroyed_plus_effect", "splash_hit_on": 4}}
    compiled = scenario(compile_epic, target, more_units={"grot": {"type": "INF", "cc": 6}},
                        more_groups=[("grot", 3, "out")], d_fields={"within_splash_of": {"D": 2}})
    dist = exact(hits_on_first_target(compiled, [(Hit(MACRO_WEAPON, False), 1)],
                                      lambda t, u: (u.criticals, sum(not g.alive for g in t.formations[1].units[1:]))))
    assert dist == {(0, 0): F(5, 6), **{(1, k): F(1, 6) * p for k, p in binomial(2, F(1, 2)).items()}}


def test_end_phase_fire_damage_places_markers(compile_epic, exact):
    """DATA Gargant critical, rules §13 Q13 (§10.4, §10.7): one fire in the end phase: 1 damage (and a new
    fire) on 1, 1 damage on 2–4, put out on 5–6; each point is a BM on the formation before its rally."""
    gargant = {"type": "WE", "armour": 4, "damage_capacity": 8, "critical": "end_phase_fire"}
    compiled = scenario(compile_epic, gargant, d_fields={"blast_markers": 1})

    def run(rng):
        trial = new_trial(compiled, rng)
        unit = trial.formations[1].units[0]
        unit.fires = 1
        trial.in_end_phase = True
        end_phase_effects(trial)
        return unit.damage_taken, unit.fires, trial.formations[1].blast_markers
    dist = exact(run)
    assert marginal(dist, 0) == {1: F(2, 3), 0: F(1, 3)}
    assert marginal(dist, 1) == {2: F(1, 6), 1: F(1, 2), 0: F(1, 3)}
    assert all(markers == 1 + damage for damage, _, markers in dist)


def test_degrade_then_escalate(compile_epic, exact):
    """DATA Revenant critical (§10.4): the first critical takes the holofield away, later ones do +1 damage."""
    revenant = {"type": "WE", "armour": 5, "damage_capacity": 3, "special": ["holofield"],
                "critical": {"kind": "degrade_then_escalate", "loses": ["holofield"]}}
    compiled = scenario(compile_epic, revenant)

    def run(rng):
        trial = new_trial(compiled, rng)
        unit = trial.formations[1].units[0]
        apply_critical(trial, unit, ATTACKER, True)
        first = (unit.slot.holofield, unit.damage_taken)
        apply_critical(trial, unit, ATTACKER, True)
        return first, unit.damage_taken
    dist = exact(run)
    assert marginal(dist, 0) == {(False, 0): 1}
    # the +1 damage point rolls for a critical too, which adds 1 more, and so on
    assert marginal(dist, 1) == {1: F(5, 6), 2: F(5, 36), 3: F(1, 36)}


# -- a whole trial, the trace and the kernel guard --------------------------------------------------

WE_SCENARIO = """
system = "epic"
title = "Warhounds v a gargant"
[units.warhound]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
void_shields = 2
special = ["reinforced-armour", "walker"]
critical = "extra_damage"
extra_attacks = [{ count = 1, range = "15cm", macro_weapon = true },
                 { count = 1, range = "bc", titan_killer = "D3" }]
[units.gargant]
type = "WE"
armour = 4
cc = 3
ff = 5
damage_capacity = 8
power_fields = "D3+3"
critical = { kind = "end_phase_fire" }
[[formations]]
name = "Hounds"
side = "attacker"
initiative = 1
units = [{ unit = "warhound", count = 2, engaged = "ff" }]
[[formations]]
name = "Gargant"
side = "defender"
initiative = 3
units = [{ unit = "gargant", count = 1, engaged = "bc" }]
"""


def test_trace_shows_shields_damage_points_and_critical_rolls():
    """Issue 14 §5 (§10): --trace shows each shield, damage point and critical roll with its clause."""
    traces = "\n".join(epic.trace(epic.loads(WE_SCENARIO), seed=s) for s in range(6))
    for text in ("[TP-SR Power Fields]", "[TP-SR Imperial Void Shields]", "point of damage", "[TP 3.2.3] ",
                 "critical roll for"):
        assert text in traces


def test_the_kernel_runs_a_land_train_critical_and_leaves_it_to_the_reference_only_in_a_turn(tmp_path):
    """Issue 14 (§10.4, §10.9): a lose_character critical on a war engine with a battlecar runs on the kernel in an
    assault (tests/epic/test_kernel_land_train.py compares the engines); in a turn, whose shooting takes a war
    engine's starting DC as fixed, it runs on the reference engine with a note naming the key, and the CLI says so
    in one line on stderr before the run."""
    text = WE_SCENARIO.replace('critical = "extra_damage"', 'critical = "lose_character"', 1).replace(
        '[{ unit = "warhound", count = 2, engaged = "ff" }]',
        '[{ unit = "warhound", count = 2, engaged = "ff", characters = ["battlecar"] }]', 1) + """
[units.battlecar]
type = "CH"
damage_capacity = 1
void_shields = 1
"""
    assert epic.simulate(epic.loads(text, "we.toml"), trials=200, seed=1).meta["engine"] == "kernel"
    turn = text + """
[[turn]]
formation = "Hounds"
action = "engage"
target = "Gargant"
"""
    result = epic.simulate(epic.loads(turn, "turn.toml"), trials=10)
    assert result.meta["engine"] == "reference"
    assert any("units.warhound.critical" in note and "in a turn" in note for note in result.notes), result.notes
    path = tmp_path / "turn.toml"
    path.write_text(turn)
    result = CliRunner().invoke(main, ["epic", str(path), "--trials", "100"])
    message = result.stderr.strip()
    assert result.exit_code == 0 and "\n" not in message and "units.warhound.critical" in message, result.output


def test_war_engine_results_have_intervals():
    """Issue 14 §4 (§10.9): per war-engine formation, P(a critical), damage taken and shields left,
    each with its interval, in the JSON."""
    result = epic.simulate(epic.loads(WE_SCENARIO), trials=300, seed=2, engine="reference")
    hounds = json.loads(result.to_json())["formations"]["Hounds"]
    for key in ("critical", "damage_taken_assault", "damage_taken", "shields_after_assault", "shields_after_end_phase"):
        assert "ci95" in json.dumps(hounds[key]), key
    for key in ("damage_taken_assault_mean", "damage_taken_mean", "shields_after_assault_mean",
                "shields_after_end_phase_mean"):
        low, high = result["formations", "Hounds", key].ci95
        assert 0 <= low <= hounds[key] <= high <= 6, key


BAD_KEYS = {
    "power-field dice": ('power_fields = "D3+3"', 'power_fields = "D4"', "units.gargant.power_fields"),
    "critical kind": ('critical = "extra_damage"', 'critical = "explodes"', "units.warhound.critical.kind"),
    "splash without its roll": ('critical = { kind = "end_phase_fire" }',
                                'critical = { kind = "destroyed_plus_effect" }',
                                "units.gargant.critical.splash_hit_on"),
    "titan-killer dice": ('titan_killer = "D3"', 'titan_killer = "D7"', "units.warhound.extra_attacks[1].titan_killer"),
    "void shields on infantry": ('[units.gargant]', '[units.boy]\ntype = "INF"\nvoid_shields = 1\n[units.gargant]',
                                 "units.boy"),
    "splash source": ('initiative = 3', 'initiative = 3\nwithin_splash_of = { Nobody = 2 }',
                      "formations[1].within_splash_of"),
}


@pytest.mark.parametrize("case", sorted(BAD_KEYS))
def test_bad_war_engine_keys_give_one_clear_line_and_exit_2(tmp_path, case):
    """Common standards: a bad key gives one line naming the file and the field, exit 2 (§10.1)."""
    old, new, field = BAD_KEYS[case]
    path = tmp_path / "we.toml"
    assert old in WE_SCENARIO
    path.write_text(WE_SCENARIO.replace(old, new, 1))
    result = CliRunner().invoke(main, ["epic", str(path)])
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in result.output + result.stderr
    assert str(path) in message and f"field '{field}" in message


# -- rules the NetEA data needs beyond the shields (TP-SR Knight, Automaton, Automata, Necron; §10) ----

def test_engage_only_lines_attack_only_for_the_assaulting_formation(compile_epic):
    """TP-SR Knight Technology (§10.1): a knight lance (engage_only) attacks when its formation assaults."""
    knight = {"type": "WE", "armour": 4, "cc": 3, "ff": 4, "damage_capacity": 2,
              "extra_attacks": [{"count": 1, "range": "bc", "macro_weapon": True, "engage_only": True}]}
    compiled = compile_epic({"knight": knight}, [
        {"name": "A", "side": "attacker", "initiative": 1, "units": [{"unit": "knight", "count": 1, "engaged": "bc"}]},
        {"name": "D", "side": "defender", "initiative": 1, "units": [{"unit": "knight", "count": 1, "engaged": "bc"}]}])
    attacker, defender = compiled.units
    assert [d.kind for d in assault_dice(attacker, True)] == [ORDINARY, MACRO_WEAPON]
    assert [d.kind for d in assault_dice(defender, True)] == [ORDINARY]


def test_automaton_and_automata_deaths_place_no_markers_but_are_kills(compile_epic, exact):
    """TP-SR Automaton / Automata (§10.6): an Automaton's death and an Automata unit's death add no BM to the
    winner's formation, and each is a kill for the enemy's result like any other death (TP 1.12.9)."""
    robots = {"robot": {"type": "AV", "armour": 4, "cc": 4, "special": ["automaton"]},
              "platform": {"type": "LV", "armour": 4, "cc": 6, "special": ["automata"]}}
    compiled = scenario(compile_epic, robots["robot"], more_units=robots, more_groups=[("platform", 2, "ff")])

    def run(rng):
        trial = new_trial(compiled, rng)
        robot, platform, _ = trial.formations[1].units  # the third stays alive: size 1, so no break
        take_hit(trial, ATTACKER, Hit(MACRO_WEAPON, False), robot)
        take_hit(trial, ATTACKER, Hit(MACRO_WEAPON, False), platform)
        winner_blast_markers(trial, trial.formations[1])
        formation = trial.formations[1]
        return trial.kills[ATTACKER], formation.blast_markers, formation.broken, robot.alive, platform.alive
    assert exact(run) == {(2, 0, False, False, False): 1}


def test_an_all_automata_formation_places_no_markers_for_its_losses_or_disrupt_hits(compile_epic, exact):
    """TP-SR Automata (§10.6): unlike Expendable (TP 2.1.22), the rule has no whole-formation exception: a
    formation of Automata units only takes no BM for its deaths or for a disrupt hit on it, in the reference
    engine and in the kernel's tables, while the same formation of Expendable units takes one for each."""
    def run_for(special):
        platform = {"type": "LV", "armour": 4, "cc": 6, "special": [special]}
        compiled = scenario(compile_epic, platform, count=8)  # 5 left: 3 BMs do not break it

        def run(rng):
            trial = new_trial(compiled, rng)
            first, second, third = trial.formations[1].units[:3]
            take_hit(trial, ATTACKER, Hit(MACRO_WEAPON, False), first)
            take_hit(trial, ATTACKER, Hit(MACRO_WEAPON, False), second)
            take_hit(trial, ATTACKER, Hit(ORDINARY, False, abilities=Abilities(disrupt=True), no_save=True), third)
            winner_blast_markers(trial, trial.formations[1])
            return trial.kills[ATTACKER], trial.formations[1].blast_markers
        arrays = KernelArrays.build(compiled)
        defenders = [row for row in arrays.units if row[K.U_SIDE] == DEFENDER]
        tables = {(int(row[K.U_LOSS_BM]), int(row[K.U_DISRUPT_BM])) for row in defenders}
        return exact(run), tables
    assert run_for("automata") == ({(3, 0): 1}, {(0, 0)})
    assert run_for("expendable") == ({(3, 3): 1}, {(1, 1)})


def test_a_destroyed_necron_unit_returns_in_the_end_phase(compile_epic, exact):
    """TP-SR Necron Technology (§10.7): a formation with a living unit returns one destroyed Necron unit."""
    warriors = {"type": "INF", "armour": 4, "cc": 4, "ff": 4, "special": ["necron"]}
    compiled = scenario(compile_epic, warriors, count=3)

    def run(rng):
        trial = new_trial(compiled, rng)
        units = trial.formations[1].units
        units[0].alive = units[2].alive = False
        end_phase(trial)
        return tuple(u.alive for u in units)
    assert exact(run) == {(False, True, True): 1}


def test_further_damage_and_self_hit_criticals(compile_epic, scripted):
    """DATA Hierodule and Abattoir criticals (§10.4): +1 damage then one more on a further 6; a titan-killer
    (1) hit on itself on 4+, not destroyed by the critical itself."""
    hierodule = {"type": "WE", "armour": 4, "damage_capacity": 4,
                 "critical": {"kind": "extra_damage", "further_damage_on": 6, "splash_hit_on": 6}}
    compiled = scenario(compile_epic, hierodule, more_units={"grot": {"type": "INF", "cc": 6}},
                        more_groups=[("grot", 1, "ff")], d_fields={"within_splash_of": {"D": 1}})
    # critical roll of the point, further roll, then its point's critical roll or the grot's splash roll
    for dice, damage, grot_alive in (([3, 6, 2], 2, True), ([3, 5], 1, True), ([3, 1, 6], 1, False)):
        trial = new_trial(compiled, scripted(dice))
        unit, grot = trial.formations[1].units
        apply_critical(trial, unit, ATTACKER, True)
        assert (unit.damage_taken, grot.alive) == (damage, grot_alive) and trial.rng.exhausted
    abattoir = {"type": "WE", "armour": 4, "damage_capacity": 8,
                "critical": {"kind": "self_hit", "self_hit_on": 4, "splash_titan_killer": True}}
    for dice, damage in (([4, 1], 1), ([3], 0)):  # self-hit roll, the critical roll of its point
        trial = new_trial(scenario(compile_epic, abattoir), scripted(dice))
        unit = trial.formations[1].units[0]
        apply_critical(trial, unit, ATTACKER, True)
        assert (unit.damage_taken, unit.alive) == (damage, True) and trial.rng.exhausted


def test_lose_character_removes_a_battlecar_with_its_capacity_and_shields(compile_epic, scripted):
    """DATA Land Train critical (§10.4): a random battlecar is removed with its DC and void shields; with
    none left the war engine is destroyed."""
    units = {"shooter": SHOOTER,
             "train": {"type": "WE", "armour": 4, "damage_capacity": 4, "critical": "lose_character"},
             "battlecar": {"type": "CH", "damage_capacity": 1, "void_shields": 1},
             "flamecar": {"type": "CH", "damage_capacity": 2}}
    compiled = compile_epic(units, [
        {"name": "A", "side": "attacker", "initiative": 1, "units": [{"unit": "shooter", "count": 1, "engaged": "ff"}]},
        {"name": "D", "side": "defender", "initiative": 1,
         "units": [{"unit": "train", "count": 1, "engaged": "ff", "characters": ["battlecar", "flamecar"]}]}])
    assert (compiled.units[1].damage_capacity, compiled.units[1].void_shields) == (7, 1)
    trial = new_trial(compiled, scripted([1, 1]))  # the first character each time
    train = trial.formations[1].units[0]
    apply_critical(trial, train, ATTACKER, True)
    assert (train.slot.damage_capacity, train.slot.void_shields, train.void_shields, train.damage_left) == (6, 0, 0, 6)
    apply_critical(trial, train, ATTACKER, True)
    assert (train.slot.damage_capacity, train.damage_left, train.damage_taken, trial.kills[ATTACKER]) == (4, 4, 3, 3)
    apply_critical(trial, train, ATTACKER, True)
    assert not train.alive and train.damage_taken == 7 and trial.kills[ATTACKER] == 7 and trial.rng.exhausted


def test_a_splash_after_the_result_is_a_loss_of_the_winner_but_no_kill(compile_epic, scripted):
    """TP 3.2.3, 1.12.9 (§10.6): a losing WE destroyed by the extra hits explodes onto the winner's unit:
    a loss (a BM for the winner), no kill (the result is already worked out)."""
    target = {"type": "WE", "armour": 4, "damage_capacity": 1,
              "critical": {"kind": "destroyed_plus_effect", "splash_hit_on": 1}}
    compiled = compile_epic({"shooter": SHOOTER, "target": target}, [
        {"name": "A", "side": "attacker", "initiative": 1, "within_splash_of": {"D": 1},
         "units": [{"unit": "shooter", "count": 2, "engaged": "ff"}]},
        {"name": "D", "side": "defender", "initiative": 1, "units": [{"unit": "target", "count": 1, "engaged": "ff"}]}])
    trial = new_trial(compiled, scripted([6, 3, 1]))  # critical roll, splash roll, the shooter's 4+ save
    trial.fighting = False
    extra_hits(trial, DEFENDER, 1)
    shooter = trial.formations[0].units[0]
    assert not shooter.alive and trial.formations[0].loss_markers == 1 and trial.kills == [0, 0]
    assert trial.rng.exhausted


def test_a_war_engine_destroyed_by_a_splash_splashes_at_once(compile_epic, exact):
    """TP 3.2.3 (§10.4, §10.6): a critical's effect applies at once, so a war engine a splash destroys
    explodes before the first splash goes on: the second splash picks its victims among the units living
    then (inf 1 and 2, the first splash's inf 1 not yet rolled for), never inf 3.  Both WEs DC 1, splash on
    4+ with no save, 2 units within reach: first splash → WE 2 hit (1/2), its point a critical (1/6)."""
    bomb = {"type": "WE", "armour": 4, "damage_capacity": 1,
            "critical": {"kind": "destroyed_plus_effect", "splash_hit_on": 4, "splash_no_save": True}}
    compiled = scenario(compile_epic, bomb, count=2, more_units={"inf": {"type": "INF", "armour": 4, "cc": 4}},
                        more_groups=[("inf", 3, "ff")], d_fields={"within_splash_of": {"D": 2}})

    def run(rng):
        trial = new_trial(compiled, rng)
        first, _, *infantry = trial.formations[1].units
        apply_critical(trial, first, ATTACKER, True)
        return tuple(u.alive for u in infantry)
    chain = F(1, 2) * F(1, 6)
    # no chain: the first splash's roll on inf 1; a chain: the second splash on inf 1 and 2, then that roll
    assert exact(run) == {(True, True, True): (1 - chain) / 2 + chain * F(1, 4) / 2,
                          (False, True, True): (1 - chain) / 2 + chain * F(3, 4) / 2,
                          (True, False, True): chain * F(1, 4) / 2, (False, False, True): chain * F(3, 4) / 2}


def _uses_the_last_kernel_keys(profile) -> bool:
    """engage_only lines, Automaton, Automata, Necron, or a further-damage, self-hit, titan-killer-splash or
    lose_character critical: the keys the kernel took last (§10.9)."""
    crit = profile.critical
    return bool({"automaton", "automata", "necron"} & set(profile.special)
                or any(line.engage_only for line in profile.extra_attacks)
                or (crit is not None and (crit.kind in ("self_hit", "lose_character") or crit.further_damage_on
                                          or crit.splash_titan_killer)))


LIBRARY_DEFENDER = """
system = "epic"
[units.boy]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Boyz"
side = "attacker"
initiative = 2
units = [{ unit = "boy", count = 6, engaged = "bc" }, { unit = "boy", count = 4, engaged = "ff" }]
[[formations]]
name = "Defenders"
side = "defender"
initiative = 2
within_splash_of = { Defenders = 2, Boyz = 2 }
units = [{ unit = "netea:UNIT", count = 2, engaged = "bc" }]
"""


def test_library_units_with_the_last_kernel_keys_run_on_the_kernel():
    """Issue 14 §3 (§10.9): every NetEA unit (characters aside) whose profile uses a key the kernel took
    last (Knight lances, Legio Cybernetica, Necrons, Hierodule, Abattoir, Aeonic Orb, Land Train, …) runs on
    the kernel: two of it defending against Ork Boyz, every formation's results reported."""
    from wargame_odds.analysis.epic.library.netea import convert, units as library_units
    ids = sorted(uid for uid in library_units() if (conv := convert(uid)).ok and conv.profile is not None
                 and conv.profile.type != "CH" and _uses_the_last_kernel_keys(conv.profile))
    assert {"abattoir", "aeonic-orb", "land-train", "hierodule-bio-titan", "necron-warriors", "knight-lancer",
            "crusader-robot", "tarantula-platform"} <= set(ids), ids
    for uid in ids:
        result = epic.simulate(epic.loads(LIBRARY_DEFENDER.replace("UNIT", uid)), trials=2_000, seed=3)
        assert result["sides", "attacker_wins"].k + result["sides", "defender_wins"].k \
            + result["sides", "no_winner"].k + result["sides", "unresolved"].k == result.trials, uid
