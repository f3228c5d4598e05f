"""War engines shot at in a turn (docs/epic-turn.md §3.13; epic-shooting §7, §12.8, §12.9), as fractions.

Every distribution comes from the engine's own shooting and war-engine steps run under every dice
sequence they can consume (``exact_distribution``): allocation in blocks of starting DC, shields and
fields first, saves, damage points with their BMs and critical rolls, titan-killer damage, barrages
under a template's centre, broken war-engine formations and the regroup split.
"""
from __future__ import annotations

from fractions import Fraction as F

from wargame_odds.analysis.epic.reference import new_trial
from wargame_odds.analysis.epic.shooting import (
    AT, MW, TK, AttackReport, AttackState, FireOrders, ShotHit, add_blast_markers, allocate_damage, break_check,
    resolve, shoot)
from wargame_odds.analysis.epic.dice import parse_dice
from wargame_odds.analysis.epic.turn import regroup
from wargame_odds.analysis.epic.war_engines import titan_killer_damage

from epic_helpers import ScriptedRandom, build, exact_by_faces, exact_distribution

SHOOTER = {"type": "INF", "armour": 4, "cc": 4, "ff": 4}


def warhound(**extra):
    """A Warhound as §12.8 has it: DC 3, 2 void shields, 5+ save with reinforced armour."""
    return {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3, "void_shields": 2,
            "special": ["reinforced-armour"], **extra}


def scenario(target_units: dict, target_groups: list[tuple[str, int]], shooter_weapons=(), target_broken=False,
             target_bm=0):
    units = {"s": dict(SHOOTER, weapons=list(shooter_weapons)), **target_units}
    return build(units, [
        {"name": "Shooters", "side": "attacker", "initiative": 1,
         "units": [{"unit": "s", "count": 1, "engaged": "bc"}]},
        {"name": "Target", "side": "defender", "initiative": 1, "broken": target_broken, "blast_markers": target_bm,
         "units": [{"unit": u, "count": n, "engaged": "bc"} for u, n in target_groups]}])


def hits_then_break(compiled, hits: list[ShotHit], crossfire=False):
    """The post-roll part of one attack (TP 1.9.4–1.9.7): the coming-under-fire BM, the hits allocated
    (blocks of DC) and resolved, the break check.  Returns (damage taken, BMs, broken, destroyed,
    criticals)."""
    def run(rng):
        trial = new_trial(compiled, rng)
        shooters, target = trial.formations
        state = AttackState(target, target.broken, crossfire, AttackReport(), by_side=shooters.side)
        trial.damage_sink = lambda unit, points, marker: state.book_damage(trial, unit, points, marker)
        add_blast_markers(trial, state, 1, "coming under fire")
        def damage_of(h, u):
            return titan_killer_damage(trial, h, u) if h.kind == TK else 1

        resolve(trial, state, allocate_damage(hits, target.living, damage_of), None, "hits")
        trial.damage_sink = None
        broke = break_check(trial, target, state.broken)
        we = target.units[0]
        return (we.damage_taken, target.blast_markers, broke, not we.alive, we.criticals)
    return run


def marginal(distribution, index):
    out = {}
    for key, p in distribution.items():
        out[key[index]] = out.get(key[index], 0) + p
    return out


# Saves on 5+ (re-roll on 5+) and critical rolls on 6: the classes {1-4}, {5}, {6} decide every die.
SAVE_5_CRIT_6 = {1: F(2, 3), 5: F(1, 6), 6: F(1, 6)}


def test_warhound_takes_five_at_hits_shields_first_epic_shooting_12_8():
    """§12.8 (TP 3.2.1, 3.2.2; TP-SR Imperial Void Shields): 5 AT hits on a Warhound with no critical
    effect: 2 stopped by the shields (no save, no BM), 3 saved at 5+ with a re-roll (fail 4/9):
    damage 125/729, 100/243, 80/243, 64/729; BMs = 1 + damage."""
    compiled = scenario({"w": warhound()}, [("w", 1)])
    dist = exact_by_faces(hits_then_break(compiled, [ShotHit(AT)] * 5), SAVE_5_CRIT_6)
    assert marginal(dist, 0) == {0: F(125, 729), 1: F(100, 243), 2: F(80, 243), 3: F(64, 729)}
    assert all(markers == (0 if broke else 1 + damage) for damage, markers, broke, dead, _ in dist)


def test_warhound_with_extra_damage_critical_epic_shooting_12_8():
    """§12.8 (TP 3.2.2–3.2.4): with the +1-damage critical (which rolls again): damage 0: 125/729,
    1: 250/729, 2: 625/2187, destroyed 437/2187; P(a critical) = 4058/19683; break point 3, so
    P(broken but alive) = 625/2187 and P(alive and unbroken) = 125/243."""
    compiled = scenario({"w": warhound(critical="extra_damage")}, [("w", 1)])
    dist = exact_by_faces(hits_then_break(compiled, [ShotHit(AT)] * 5), SAVE_5_CRIT_6)
    assert marginal(dist, 0) == {0: F(125, 729), 1: F(250, 729), 2: F(625, 2187), 3: F(437, 2187)}
    assert sum(p for key, p in dist.items() if key[4] > 0) == F(4058, 19683)
    assert sum(p for (_, _, broke, dead, _), p in dist.items() if broke and not dead) == F(625, 2187)
    assert sum(p for (_, _, broke, dead, _), p in dist.items() if not broke and not dead) == F(125, 243)


def test_macro_weapon_hit_on_an_unshielded_warhound_epic_shooting_12_8():
    """§12.8 last line (TP 2.2.6): a MW hit allows the reinforced-armour save without its re-roll, so
    an unshielded Warhound takes damage with 2/3."""
    compiled = scenario({"w": warhound(void_shields=0)}, [("w", 1)])
    assert marginal(exact_distribution(hits_then_break(compiled, [ShotHit(MW)])), 0) == {0: F(1, 3), 1: F(2, 3)}


def tk(dice):
    return ShotHit(TK, titan_killer_damage=parse_dice(dice))


def test_titan_killer_d3_past_two_void_shields_epic_shooting_12_9():
    """§12.9 (TP 3.2.5; TP-FAQ Imperial Void Shields): one TK (D3) hit takes a shield per point: past 2
    shields, 0 damage with 2/3, 1 with 1/3."""
    compiled = scenario({"w": warhound()}, [("w", 1)])
    assert marginal(exact_distribution(hits_then_break(compiled, [tk("D3")])), 0) == {0: F(2, 3), 1: F(1, 3)}


def test_titan_killer_d3_destroys_an_unshielded_dc3_engine_epic_shooting_12_9():
    """§12.9 (TP 2.2.9, 3.2.4, 3.2.5): no save, reinforced armour included: P(destroyed) = 1/3 without
    criticals, 4/9 with +1-damage criticals."""
    for critical, expected in ((None, F(1, 3)), ("extra_damage", F(4, 9))):
        extra = {"critical": critical} if critical else {}
        compiled = scenario({"w": warhound(void_shields=0, **extra)}, [("w", 1)])
        dist = exact_distribution(hits_then_break(compiled, [tk("D3")]))
        assert sum(p for key, p in dist.items() if key[3]) == expected


def test_titan_killer_invulnerable_save_per_point_epic_shooting_12_9():
    """§12.9 (TP-FAQ Invulnerable Saves): against a war engine with a 6+ invulnerable save, one save per
    point of a TK (D3) hit: damage 0: 43/648, 1: 85/216, 2: 25/72, 3: 125/648 (mean 5/3)."""
    compiled = scenario({"w": warhound(void_shields=0, special=["invulnerable-save"])}, [("w", 1)])
    dist = marginal(exact_distribution(hits_then_break(compiled, [tk("D3")])), 0)
    assert dist == {0: F(43, 648), 1: F(85, 216), 2: F(25, 72), 3: F(125, 648)}
    assert sum(k * p for k, p in dist.items()) == F(5, 3)


def test_titan_killer_counts_its_damage_as_hits_for_allocation_tp_3_2_5():
    """TP 3.2.5, epic-shooting §3.7: a TK hit on a war engine counts as the damage rolled; the engine
    keeps taking TK hits while that is below its starting DC, and the next unit gets hits only then
    (no spill-over).  Two D6 TK hits at two DC 3 engines: a first roll of 3+ sends the second hit on."""
    compiled = scenario({"w": warhound()}, [("w", 2)])

    def second_target(rng):
        trial = new_trial(compiled, rng)
        living = trial.formations[1].living
        triples = allocate_damage([tk("D6"), tk("D6")], living, lambda h, u: titan_killer_damage(trial, h, u))
        return living.index(triples[1][1])

    assert exact_distribution(second_target) == {0: F(1, 3), 1: F(2, 3)}


def test_allocation_in_blocks_of_starting_dc_tp_3_2_1():
    """TP 3.2.1, epic-shooting §10.4: when a war engine's turn comes it takes hits equal to its starting
    DC before the next unit gets any: 5 AT hits at [DC 3 engine, tank, tank] go 3, 1, 1."""
    compiled = scenario({"w": warhound(), "tank": {"type": "AV", "armour": 4, "cc": 6, "ff": 5}},
                        [("w", 1), ("tank", 2)])
    trial = new_trial(compiled, ScriptedRandom([]))
    living = trial.formations[1].living
    triples = allocate_damage([ShotHit(AT)] * 5, living, lambda h, u: 1)
    assert [living.index(u) for _, u, _ in triples] == [0, 0, 0, 1, 2]


def test_barrage_on_a_war_engine_under_the_centre_tp_3_2_1():
    """TP 3.2.1, TP-FAQ Allocating Hits To War Engines: a war engine under a template's centre takes
    ⌈DC/2⌉ attacks: a 3 BP barrage (AT5+) at one DC 3 engine, armour 5, no shields: 2 attacks, each
    damaging with 1/3 × 2/3, so damage ~ Bin(2, 2/9)."""
    compiled = scenario({"w": {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3}}, [("w", 1)],
                        shooter_weapons=[{"name": "gun", "range": 45, "bp": 3}])
    profiles = compiled.scenario.units

    def damage(rng):
        trial = new_trial(compiled, rng)
        shooters, target = trial.formations
        shoot(trial, shooters, target, lambda u: profiles[u.slot.name].weapons, FireOrders())
        return target.units[0].damage_taken

    assert exact_distribution(damage) == {0: F(49, 81), 1: F(28, 81), 2: F(4, 81)}


def test_shadowsword_at_a_warhound_epic_shooting_12_9():
    """§12.9 (TP 1.9.5, 2.2.9, 3.2.5): a library Shadowsword's Volcano Cannon (MW2+, TK D3) at a Warhound
    with both shields up: P(hit) = 5/6, P(at least 1 damage) = 5/18 (its heavy bolters' AP hits cannot
    be allocated to a war engine, TP 3.2)."""
    from wargame_odds.analysis.epic.library.resolve import library_profile

    units = {"sword": library_profile("netea:shadowsword", "test"), "w": warhound()}
    compiled = build(units, [
        {"name": "Shooters", "side": "attacker", "initiative": 1,
         "units": [{"unit": "sword", "count": 1, "engaged": "bc"}]},
        {"name": "Target", "side": "defender", "initiative": 1, "units": [{"unit": "w", "count": 1, "engaged": "bc"}]}])
    profiles = compiled.scenario.units

    def damaged(rng):
        trial = new_trial(compiled, rng)
        shooters, target = trial.formations
        shoot(trial, shooters, target, lambda u: profiles[u.slot.name].weapons, FireOrders())
        return target.units[0].damage_taken > 0

    assert exact_distribution(damaged)[True] == F(5, 18)


def test_broken_war_engine_takes_a_damage_point_per_marker_tp_3_2_4_1_13_4():
    """TP 1.13.4, 3.2.4, TP-FAQ Imperial Void Shields: a broken war-engine formation takes 1 damage
    (no save, shields ignored, a critical roll) for each BM it would receive; a +1-damage critical
    rolls again (TP 3.2.3): 1 damage with 5/6, 2 with 5/36, 3 (destroyed) with 1/36, shields untouched."""
    compiled = scenario({"w": warhound(critical="extra_damage")}, [("w", 1)], target_broken=True)

    def run(rng):
        trial = new_trial(compiled, rng)
        shooters, target = trial.formations
        state = AttackState(target, True, False, AttackReport(), by_side=shooters.side)
        trial.damage_sink = lambda unit, points, marker: state.book_damage(trial, unit, points, marker)
        add_blast_markers(trial, state, 1, "coming under fire")
        we = target.units[0]
        return we.damage_taken, we.void_shields, target.blast_markers

    assert exact_distribution(run) == {(1, 2, 0): F(5, 6), (2, 2, 0): F(5, 36), (3, 2, 0): F(1, 36)}


def test_regroup_repairs_void_shields_with_the_points_left_tp_sr_void_shields():
    """TP 1.13.1, TP-SR Imperial Void Shields (free split; reading: BMs first, epic-shooting §13 Q16): a
    Warhound holding 1 BM with both shields down regroups: the BM goes first, the points left (highest
    of 2D6, minus 1) repair shields: 0 with 1/36, 1 with 3/36, 2 with 32/36."""
    compiled = scenario({"w": warhound()}, [("w", 1)], target_bm=1)

    def run(rng):
        trial = new_trial(compiled, rng)
        target = trial.formations[1]
        target.units[0].void_shields = 0
        regroup(trial, target)
        return target.blast_markers, target.units[0].void_shields

    assert exact_distribution(run) == {(0, 0): F(1, 36), (0, 1): F(3, 36), (0, 2): F(32, 36)}


WAR_ENGINE_TURN = """\
system = "epic"
title = "Tanks and a titan-killer battery shoot a Warhound pack, which marshals"

[units.battery]
type = "AV"
armour = 4
cc = 6
ff = 5
weapons = [{ name = "quake cannon", range = 90, bp = 3, macro_weapon = true },
           { name = "volcano cannon", range = 90, mw = 2, titan_killer = "D3" },
           { name = "lascannon", count = 2, range = 45, at = 5 }]

[units.warhound]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
void_shields = 2
special = ["reinforced-armour"]
critical = "extra_damage"
weapons = [{ name = "vulcan mega-bolter", shots = 4, range = 45, ap = 3, at = 5 }]

[[formations]]
name = "Battery"
side = "attacker"
initiative = 1
units = [{ unit = "battery", count = 3 }]

[[formations]]
name = "Warhounds"
side = "defender"
initiative = 1
units = [{ unit = "warhound", count = 2 }]

[[turn]]
formation = "Battery"
action = "sustained_fire"
target = "Warhounds"

[[turn]]
formation = "Warhounds"
action = "marshal"
target = "Battery"
"""


def test_war_engine_turn_runs_traces_and_the_kernel_takes_it(tmp_path):
    """docs/epic-turn.md §3.13: a turn shooting at war engines runs on the reference engine (results
    within their count bounds), its trace shows each shield, damage point and critical roll with its
    clause, and the kernel refuses none of it (TP 3.2, TP-SR Imperial Void Shields;
    tests/epic/test_turn_kernel_war_engines.py compares the two engines)."""
    import wargame_odds.analysis.epic as epic
    from wargame_odds.analysis.epic.engine import turn_kernel_unsupported
    from wargame_odds.analysis.epic.turn_result import compile_turn

    path = tmp_path / "we_turn.toml"
    path.write_text(WAR_ENGINE_TURN)
    scenario = epic.load(str(path))
    assert turn_kernel_unsupported(compile_turn(scenario)) is None
    result = epic.simulate(scenario, trials=200, seed=3, engine="reference").to_dict()
    first = result["turn"]["1"]
    assert 0 < first["hits_mean"] and 0 <= first["target_broken"]["p"] <= 1
    traces = "\n".join(epic.trace(scenario, seed=s) for s in range(6))
    for needle in ("[TP-SR Imperial Void Shields]", "[TP 3.2.2]", "[TP 3.2.3]     critical roll", "[TP 3.2.1]"):
        assert needle in traces, needle


def test_titan_killer_damage_dice_and_critical_rolls_epic_shooting_12_9():
    """§12.9 (TP 3.2.3, 3.2.5): a TK (D3) hit on a war engine does 1, 2, 3 with 1/3 each; TK (D6) has
    mean 7/2, P(≥ 3) = 2/3, P(6) = 1/6; P(at least one critical | d points to the hull) = 1/6, 11/36,
    91/216 for d = 1, 2, 3 (a D6 per point, 6 is a critical)."""
    from wargame_odds.analysis.epic.war_engines import damage_hull

    compiled = scenario({"w": warhound(void_shields=0, critical="end_phase_fire")}, [("w", 1)])

    def damage(dice):
        def run(rng):
            trial = new_trial(compiled, rng)
            return titan_killer_damage(trial, tk(dice), trial.units[1])
        return run

    assert exact_distribution(damage("D3")) == {1: F(1, 3), 2: F(1, 3), 3: F(1, 3)}
    d6 = exact_distribution(damage("D6"))
    mean, at_least_3 = sum(k * p for k, p in d6.items()), sum(p for k, p in d6.items() if k >= 3)
    assert (mean, at_least_3, d6[6]) == (F(7, 2), F(2, 3), F(1, 6))

    def criticals(points):
        def run(rng):
            trial = new_trial(compiled, rng)
            trial.damage_sink = lambda unit, n, marker: None
            damage_hull(trial, trial.units[1], points, "TP 3.2.2", 0)
            return trial.units[1].criticals > 0
        return run

    assert [exact_distribution(criticals(d))[True] for d in (1, 2, 3)] == [F(1, 6), F(11, 36), F(91, 216)]
