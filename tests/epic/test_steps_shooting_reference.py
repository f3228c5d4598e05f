"""Step tests of the Epic kernel's shooting attack (``kernels/epic/shooting.py``) against the reference engine's
steps of the same rules (``analysis/epic/shooting.py``): the fire type and declaration, direct fire, to-hit 7+,
barrage points and the barrage, allocation, the sniper's pick, the save roll, the break check after the attack.

Each kernel step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only)
on the lanes of a block that begins a turn (``epic_step_state._start``) of a two-formation scenario built from
plain dicts; the reference runs on a fresh trial of the same compiled scenario.  Exact where the step is
deterministic (decisions, allocation, the break check), else every value's count at 5 binomial standard errors of
the reference's exact probability (enumerated over its dice), seeds fixed.  Each test names the rules clause it
covers (TP = NetEA Tournament Pack; epic-turn = docs/epic-turn.md).
"""
from __future__ import annotations

import re
from fractions import Fraction as F

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.analysis.epic.model import EpicScenario
from wargame_odds.analysis.epic.reference import new_trial
from wargame_odds.analysis.epic.shooting import (
    AP, AT, MW, OTHERS, TK, WAR_ENGINES, FireOrders, ShotHit, TargetGroups, allocate_damage, barrage, break_check,
    choose_fire_type, choose_group, direct_fire, roll_to_hit, save_roll, unsaved_chance)
from wargame_odds.analysis.epic.turn_result import compile_turn
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.hits import H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_TK
from wargame_odds.kernels.epic.layout import LANES, NO_ROLL, U_ARMOUR, U_RA
from wargame_odds.kernels.epic.saves import _invulnerable
from wargame_odds.kernels.epic.shoot_allocation import _allocation_step, _sniper_pick
from wargame_odds.kernels.epic.shoot_fire import (_barrage, _barrage_points, _direct_fire, _exposed_units, _fire_line,
                                                  _fire_team)
from wargame_odds.kernels.epic.shoot_plain import _plain_attack, _plain_to_hit, _plain_who_fires
from wargame_odds.kernels.epic.shooting import _break_checks
from wargame_odds.kernels.epic.saves import _saved, _unsaved
from wargame_odds.kernels.epic.turn import _attack, scratch_size, shot_scratch
from wargame_odds.kernels.epic.turn_layout import (
    AIM_ALL, AIM_OTHERS, AIM_WE, AP_AT_AP, AP_AT_AT, AP_AT_AUTO, DECLARE_AUTO, DECLARE_OTHERS, DECLARE_WE, I_MAX_HITS,
    INF, NONE, PL_HITS, TU_TYPE)
from wargame_odds.kernels.epic.units import _clear_unit

from epic_helpers import exact_distribution
from epic_step_state import L, _close, _start

KIND_NAMES = {KIND_AP: AP, KIND_AT: AT, KIND_MW: MW, KIND_TK: TK}
GROUP_NAMES = {AIM_ALL: None, AIM_WE: WAR_ENGINES, AIM_OTHERS: OTHERS}
AP_AT_CODES = {"auto": AP_AT_AUTO, "ap": AP_AT_AP, "at": AP_AT_AT}
DECLARE_CODES = {"auto": DECLARE_AUTO, WAR_ENGINES: DECLARE_WE, OTHERS: DECLARE_OTHERS}

GUARDIAN = {"type": "INF", "armour": 5, "cc": 5, "ff": 5}
PREDATOR = {"type": "AV", "armour": 4, "cc": 6, "ff": 5}
JETBIKE = {"type": "LV", "armour": 4, "cc": 5, "ff": 4}
WARHOUND = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3, "void_shields": 1,
            "special": ["reinforced-armour"]}


def _turn_state(units: dict, shooters: list[tuple[str, int]], targets: list[tuple[str, int]], **target_fields):
    """A compiled turn (formation 0 "Shooter" advancing to fire at formation 1 "Target") and its kernel tables and
    lanes, every lane at the start of a trial: (compiled turn, tables, turn tables, lanes)."""
    scenario = EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1,
                        "units": [{"unit": u, "count": n} for u, n in shooters]},
                       {"name": "Target", "side": "defender", "initiative": 1, **target_fields,
                        "units": [{"unit": u, "count": n} for u, n in targets]}],
        "turn": [{"formation": "Shooter", "action": "advance", "target": "Target"}]})
    ct = compile_turn(scenario)
    arrays = KernelArrays.build_turn(ct)
    tb, tt = arrays.tables(), arrays.turn
    st = block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))
    _start(tb, st, np.uint64(7))
    st.tscr[:] = 0
    return ct, tb, tt, st


def _reference(ct, rng, log=None):
    """A fresh reference trial of the compiled turn: (trial, shooter, target, the units' weapon lines)."""
    trial = new_trial(ct.compiled, rng, log)
    shooter, target = trial.formations
    return trial, shooter, target, (lambda unit: ct.weapons[unit.slot.index])


# -- fire type and declaration (TP 1.9.5, 3.2.1; epic-turn §3.5): exact ----------------------------------------

@njit(cache=True, _nrt=False)
def _kernel_aims(tb, st, tt, modifier, ap_at, declare_at, kinds, groups):
    """Direct fire (_direct_fire) of formation 0 at formation 1 in every lane; each weapon line's fire type and
    group as its listed hits have them (``kinds[w]``, ``groups[w]``; -9 where two hits of a line disagree, NONE where
    the line scored none)."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, ap_at, declare_at, NONE, False)
    for l in range(LANES):
        nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, 0, NONE, l)
        ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, 1, NONE, l)
        lane = (l, modifier, False, NO_ROLL, ne, nf, mixed, has_we, settled)
        nh, _ = _direct_fire(tb, st, tt, sc, shot, lane)
        for h in range(nh):
            w = sc.hline[h]
            if kinds[w] == NONE:
                kinds[w] = sc.hkind[h]
                groups[w] = sc.hunit[h]
            elif kinds[w] != sc.hkind[h] or groups[w] != sc.hunit[h]:
                kinds[w] = -9


AIM_LINES = [{"name": "autocannon", "range": 45, "ap": 5, "at": 6, "shots": 4},
             {"name": "lascannon", "range": 45, "at": 5, "shots": 4},
             {"name": "heavy bolter", "range": 30, "ap": 5, "shots": 4},
             {"name": "multi-melta", "range": 15, "ap": 5, "at": 5, "shots": 4},
             {"name": "battle cannon", "range": 75, "mw": 4, "shots": 4},
             {"name": "volcano cannon", "range": 90, "mw": 3, "titan_killer": "D3", "shots": 4},
             {"name": "krak missiles", "range": 45, "ap": 6, "at": 3, "shots": 4, "lance": True}]

AIM_CASES = {  # case: (target units, ap_at, declare_at)
    "infantry: AP settled": ([("guardian", 6)], "auto", "auto"),
    "armour: AT, AP cannot hurt it": ([("predator", 4)], "auto", "auto"),
    "light vehicles and infantry: the policy": ([("jetbike", 3), ("guardian", 3)], "auto", "auto"),
    "light vehicles, AP forced": ([("jetbike", 3), ("predator", 1)], "ap", "auto"),
    "mixed: the policy's groups": ([("warhound", 1), ("guardian", 4)], "auto", "auto"),
    "mixed: declared at the war engines": ([("warhound", 1), ("guardian", 4)], "auto", WAR_ENGINES),
    "mixed: declared at the others, AT forced": ([("warhound", 1), ("predator", 2), ("guardian", 2)], "at", OTHERS),
}


@pytest.mark.parametrize("case", sorted(AIM_CASES))
def test_fire_type_and_declaration_match_the_reference_tp_1_9_5_3_2_1(case):
    """TP 1.9.5 (AP or AT for all of a weapon's shots; MW, TK for an ``mw`` line), TP 3.2.1 (at a mixed target each
    weapon is declared at the war engines or the others), epic-turn §3.5 (the default policies: expected kills and
    damage): the type and group of every weapon line's hits in the kernel's direct fire (_fixed_type, _aim, _harm)
    are the reference's choose_fire_type and choose_group, exactly, line by line."""
    targets, ap_at, declare_at = AIM_CASES[case]
    units = {"gun": dict(PREDATOR, weapons=AIM_LINES), "guardian": GUARDIAN, "predator": PREDATOR,
             "jetbike": JETBIKE, "warhound": WARHOUND}
    ct, tb, tt, st = _turn_state(units, [("gun", 1)], targets)
    n_lines = tt.wpn.shape[0]
    kinds, groups = np.full(n_lines, NONE, np.int64), np.full(n_lines, -99, np.int64)
    _kernel_aims(tb, st, tt, 0, AP_AT_CODES[ap_at], DECLARE_CODES[declare_at], kinds, groups)
    trial, shooter, target, weapons_of = _reference(ct, None)
    orders = FireOrders(ap_at=ap_at, declare_at=declare_at)
    aims = TargetGroups.of(target, target.living)
    expected, got = [], []
    for w, weapon in enumerate(weapons_of(shooter.living[0])):
        if weapon.mw is not None:
            kind, value = (TK if weapon.titan_killer else MW), weapon.mw
        else:
            kind = choose_fire_type(weapon, aims, 0, orders)[0]
            value = weapon.ap if kind == AP else weapon.at
        expected.append((weapon.name, kind, choose_group(weapon, kind, value, aims, 0, orders)[0]))
        assert kinds[w] != -9, (case, weapon.name, "hits of one line with two types or groups")
        got.append((weapon.name, KIND_NAMES.get(int(kinds[w])), GROUP_NAMES.get(int(groups[w]), "no hit")))
    assert got == expected, case


# -- direct fire and to-hit 7+ (TP 1.9.5 and its box "Needing 7+ to Hit"): 5 sigma of exact values -------------

@njit(cache=True, _nrt=False)
def _lane(tb, st, tt, sc, l, modifier, cover, cover_save):
    """Lane ``l``'s attack by formation 0 at formation 1: who fires, the exposed units, to-hit modifier, cover."""
    nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, 0, NONE, l)
    ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, 1, NONE, l)
    return (l, modifier, cover, cover_save, ne, nf, mixed, has_we, settled)


@njit(cache=True, _nrt=False)
def _kernel_direct_hits(tb, st, tt, modifier, cover, cs, reps, counts):
    """``reps`` direct-fire attacks in every lane: ``counts[n]`` the lanes that listed ``n`` hits."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    for _ in range(reps):
        for l in range(LANES):
            lane = _lane(tb, st, tt, sc, l, modifier, cover, cs if cover else NO_ROLL)
            counts[_direct_fire(tb, st, tt, sc, shot, lane)[0]] += 1


def _check_distribution(counts, n, exact):
    for value in range(len(counts)):
        p = exact.get(value, F(0))
        assert _close(int(counts[value]), n, p), (value, counts[value] / n, float(p))


@pytest.mark.parametrize("modifier, cover", [(0, False), (-1, True)])
def test_direct_fire_hits_match_the_reference_tp_1_9_5(modifier, cover):
    """TP 1.9.5 (one to-hit roll per shot at the line's value less the modifiers, a natural 1 missing; dice shots
    rolled each time the weapon fires), TP 1.8.3 / 2.2.5 (cover: -1 to hit unless Ignore Cover): the number of hits
    the kernel's direct fire lists (_direct_fire, _fire_line) has the distribution of the reference's direct_fire
    (exact over its dice), each value at 5 sigma, 128 lanes x 400 attacks."""
    lines = [{"name": "shuriken", "range": 30, "ap": 4, "shots": "D3"},
             {"name": "bright lance", "range": 30, "ap": 5, "at": 5, "ignore_cover": True}]
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=lines), "guardian": GUARDIAN},
                                 [("gun", 1)], [("guardian", 4)])
    reps = 400
    counts = np.zeros(tt.info[0, I_MAX_HITS] + 1, np.int64)
    _kernel_direct_hits(tb, st, tt, modifier, cover, 4, reps, counts)
    orders = FireOrders(modifier=modifier, cover=cover, cover_save=4)

    def hits(rng):
        trial, shooter, target, weapons_of = _reference(ct, rng)
        return len(direct_fire(trial, shooter.living, weapons_of, TargetGroups.of(target, target.living), orders))

    _check_distribution(counts, reps * L, exact_distribution(hits))


@njit(cache=True, _nrt=False)
def _kernel_line_hits(rs, wpn, modifier, reps, hkind, hflag, hunit, hline):
    """Hits of ``reps`` x LANES firings of weapon line 0 (one shot) as AP at ``modifier`` (_fire_line)."""
    hits = 0
    for _ in range(reps):
        for l in range(LANES):
            hits += _fire_line(rs, wpn, hkind, hflag, hunit, hline, l, 0, KIND_AP, 0, AIM_ALL, modifier, 0)[0]
    return hits


@njit(cache=True, _nrt=False)
def _kernel_plain_hits(tb, st, tt, modifier, reps):
    """Hits of ``reps`` plain attacks' to-hit rolls in every lane (_plain_who_fires, _plain_to_hit) at ``modifier``;
    every lane attacks."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    plain = _plain_attack(tb, tt, 0, 1, AP_AT_AUTO, sc.ushots)
    hits = 0
    for _ in range(reps):
        for l in range(LANES):
            sc.lane_mod[l] = modifier
            sc.lane_cover[l] = 0
        _plain_who_fires(tb, st, tt, sc, shot)
        _plain_to_hit(tb, st, tt, sc, shot, plain[3], plain[2])
        for l in range(LANES):
            hits += sc.rows[PL_HITS * LANES + l]
    return plain[0], hits


@pytest.mark.parametrize("need", [6, 7, 8, 9, 10])
def test_to_hit_above_6_matches_the_reference_tp_1_9_5(need):
    """TP 1.9.5's box "Needing 7+ to Hit": a 7, 8 or 9 needs a 6 and then 4+, 5+ or 6, a 10 cannot hit.  The
    kernel's to-hit roll of direct fire (_fire_line) and of the plain attack's lock-step path (_plain_to_hit: such a
    need rolled lane by lane) hit as often as the reference's roll_to_hit (exact), at 5 sigma."""
    value, modifier = 6, 6 - need
    p = exact_distribution(lambda rng: roll_to_hit(rng, value, modifier)[0]).get(True, F(0))
    lines = [{"name": "lasgun", "range": 30, "ap": value}]
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=lines), "guardian": GUARDIAN},
                                 [("gun", 3)], [("guardian", 4)])
    reps = 600
    scratch = [np.zeros(4, np.int64) for _ in range(4)]
    hits = _kernel_line_hits(st.rs, tt.wpn, modifier, reps, *scratch)
    assert _close(hits, reps * L, p), (need, hits / (reps * L), float(p))
    plain, hits = _kernel_plain_hits(tb, st, tt, modifier, reps // 3)
    assert plain
    assert _close(hits, reps * L, p), (need, hits / (reps * L), float(p))


# -- barrages (TP 1.9.8): barrage points, then the templates' to-hit rolls ------------------------------------

BARRAGE_LINES = [{"name": "mortar", "range": 60, "bp": 1, "count": 2, "ignore_cover": True, "disrupt": True},
                 {"name": "basilisk", "range": 120, "bp": "D3", "ignore_cover": True, "indirect": True}]
#: The same, the basilisk without Ignore Cover: cover is -1 to hit for the whole barrage.
COVERED_BARRAGE = [BARRAGE_LINES[0], dict(BARRAGE_LINES[1], ignore_cover=False)]


@njit(cache=True, _nrt=False)
def _kernel_barrage_points(tb, st, tt, reps, counts, flags):
    """``reps`` barrages' points in every lane (_barrage_points): ``counts[bp]``; ``flags[0]`` the hit flags, ``[1]``
    macro, ``[2]`` titan killer of the last."""
    sc = shot_scratch(tb, tt, st.tscr)
    for _ in range(reps):
        for l in range(LANES):
            nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, 0, NONE, l)
            bp, every, macro, titan, _, _ = _barrage_points(st, tt, sc, l, nf)
            counts[bp] += 1
            flags[0] = every
            flags[1] = macro
            flags[2] = titan


def _reference_points(ct):
    """The reference barrage's points (its trace's "barrage of N BP") and its hits' abilities."""
    def points(rng):
        said = []
        trial, shooter, target, weapons_of = _reference(ct, rng, said.append)
        barrage(trial, shooter.living, weapons_of, [], FireOrders())
        return int(re.search(r"barrage of (\d+) BP", "\n".join(said)).group(1))
    return points


def test_barrage_points_match_the_reference_tp_1_9_8():
    """TP 1.9.8 (every barrage weapon adds its BP, dice rolled per weapon; an ability counts only when every weapon
    has it), TP 2.2.6: the kernel's barrage points (_barrage_points) have the distribution of the reference
    barrage's (exact over its dice), each value at 5 sigma; its hits' flags are the abilities all its lines share
    (Ignore Cover, not Disrupt), not macro-weapon."""
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=BARRAGE_LINES), "guardian": GUARDIAN},
                                 [("gun", 1)], [("guardian", 4)])
    reps = 300
    counts, flags = np.zeros(8, np.int64), np.zeros(3, np.int64)
    _kernel_barrage_points(tb, st, tt, reps, counts, flags)
    _check_distribution(counts, reps * L, exact_distribution(_reference_points(ct)))
    assert (flags[0], flags[1], flags[2]) == (H_IC, 0, 0)


@njit(cache=True, _nrt=False)
def _kernel_barrage(tb, st, tt, modifier, cover, reps, counts):
    """``reps`` barrages in every lane (_barrage): ``counts[hits, extra BMs]``."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    for _ in range(reps):
        for l in range(LANES):
            lane = _lane(tb, st, tt, sc, l, modifier, cover, NO_ROLL)
            nh, extra, _ = _barrage(tb, st, tt, sc, shot, lane, 0)
            counts[nh, extra] += 1


@pytest.mark.parametrize("modifier, cover", [(0, False), (1, True)])
def test_barrage_hits_and_extra_markers_match_the_reference_tp_1_9_8(modifier, cover):
    """TP 1.9.8 (the table's row for the points: templates, extra BMs, AP / AT to-hit values; one roll per unit
    under a template, a template holding 3 infantry or 2 armoured vehicles: epic-turn §3.6): the kernel's barrage
    (_barrage) gives (hits, extra BMs) with the joint distribution of the reference's barrage (exact), each pair at
    5 sigma, 128 lanes x 300 barrages."""
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=COVERED_BARRAGE), "guardian": GUARDIAN,
                                  "predator": PREDATOR}, [("gun", 1)], [("guardian", 2), ("predator", 2)])
    reps = 300
    counts = np.zeros((8, 4), np.int64)
    _kernel_barrage(tb, st, tt, modifier, cover, reps, counts)
    orders = FireOrders(modifier=modifier, cover=cover)

    def outcome(rng):
        trial, shooter, target, weapons_of = _reference(ct, rng)
        hits, extra = barrage(trial, shooter.living, weapons_of, target.living, orders)
        return len(hits), extra

    exact = exact_distribution(outcome)
    for (n, extra), count in np.ndenumerate(counts):
        p = exact.get((n, extra), F(0))
        assert _close(int(count), reps * L, p), ((n, extra), count / (reps * L), float(p))


# -- allocation (TP 1.9.6, 2.1.14; TP-FAQ Allocate Hits & Make Saving Throws; epic-turn §3.7): exact -------------

@njit(cache=True, _nrt=False)
def _kernel_allocation(tb, st, tt, kinds, phase, taken):
    """The hits ``kinds`` (declared at no group) allocated in lane 0 by one allocation step (_allocation_step):
    ``taken[u]`` the hits unit ``u`` took (the round-robin's count of each living exposed unit)."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, 1, NONE, 0)
    for h in range(kinds.size):
        sc.hkind[h] = kinds[h]
        sc.hflag[h] = 0
        sc.hunit[h] = AIM_ALL
        sc.hline[h] = 0
    _allocation_step(tb, st, tt, sc, shot, (0, 0, False, NO_ROLL, ne, 1, mixed, has_we, settled), kinds.size, phase)
    for i in range(ne):
        taken[sc.live[i]] = sc.cnt[i]


ALLOCATION_CASES = {  # case: (target units front to back, hits)
    "round-robin from the front": ([("guardian", 4)], [AP] * 6),
    "AP hits no armoured vehicle can take are lost": ([("predator", 2), ("guardian", 1)], [AP] * 4 + [AT]),
    "light vehicles take the kind with the larger surplus": ([("guardian", 1), ("jetbike", 2), ("predator", 1)],
                                                             [AP] * 3 + [AT] * 3),
    "a light vehicle leaves the AP hit to the infantry behind it": ([("jetbike", 1), ("guardian", 1)], [AP, AT]),
    "macro-weapon and titan-killer hits": ([("guardian", 2), ("predator", 1)], [MW] * 2 + [TK] * 2),
}


@pytest.mark.parametrize("case", sorted(ALLOCATION_CASES))
def test_allocation_matches_the_reference_tp_1_9_6(case):
    """TP 1.9.6 (hits front to back, no unit a second before every eligible unit has one; AP hits on infantry and
    light vehicles, AT on vehicles), TP-FAQ Allocate Hits & Make Saving Throws (a light vehicle takes the kind with
    the larger surplus; epic-turn §3.7), TP 2.2.6 (MW and TK hits in their own step): the hits each unit takes in the
    kernel's allocation step (_allocation_step, _group_round_robin, _next_taker, _pooled_kind) are the reference's
    allocate_damage, exactly."""
    targets, hits = ALLOCATION_CASES[case]
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=AIM_LINES[:1]), "guardian": GUARDIAN,
                                  "predator": PREDATOR, "jetbike": JETBIKE}, [("gun", 1)], targets)
    codes = {name: code for code, name in KIND_NAMES.items()}
    taken = np.zeros(tb.units.shape[0], np.int64)
    _kernel_allocation(tb, st, tt, np.array([codes[k] for k in hits], np.int64), int(hits[0] in (MW, TK)), taken)
    trial, shooter, target, _ = _reference(ct, None)
    expected = np.zeros_like(taken)
    for _, unit, _ in allocate_damage([ShotHit(k) for k in hits], target.living, lambda hit, unit: 1):
        expected[unit.slot.index] += 1
    np.testing.assert_array_equal(taken, expected, err_msg=case)


@njit(cache=True, _nrt=False)
def _kernel_sniper_pick(tt, units, gl, kind):
    return _sniper_pick(tt.tu, units, gl, gl.size, kind)


@pytest.mark.parametrize("kind", [AP, AT])
def test_sniper_pick_matches_the_reference_tp_2_1_14(kind):
    """TP 2.1.14 and TP-FAQ Sniper: a sniper's hit goes to the first Leader (or Inspiring) unit that can take it,
    else the first unit that can (_sniper_pick), as the reference's allocate_damage gives it."""
    leader = dict(GUARDIAN, special=["leader"])
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=AIM_LINES[:1]), "guardian": GUARDIAN,
                                  "predator": PREDATOR, "leader": leader},
                                 [("gun", 1)], [("predator", 1), ("guardian", 1), ("leader", 1), ("predator", 1)])
    trial, shooter, target, _ = _reference(ct, None)
    (_, expected, _), = allocate_damage([ShotHit(kind, sniper=True)], target.living, lambda hit, unit: 1)
    gl = np.array([u.slot.index for u in target.living], np.int64)
    assert _kernel_sniper_pick(tt, tb.units, gl, {AP: KIND_AP, AT: KIND_AT}[kind]) == expected.slot.index
    assert expected.slot.leader == (kind == AP)


# -- the save roll (TP 1.9.6, 1.11, 2.1.6, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9): 5 sigma of exact values ---------

@njit(cache=True, _nrt=False)
def _kernel_saved(tb, st, tt, u, kind, flags, cs, crossfire, reps):
    """Saves of ``reps`` x LANES hits of ``kind`` and ``flags`` on unit ``u`` (_saved, the infantry cover save ``cs``
    as _resolve_hit passes it), and the kernel's P(unsaved) of one (_unsaved, the policies' measure)."""
    units = tb.units
    cover = cs if tt.tu[u, TU_TYPE] == INF else NO_ROLL
    saved = 0
    for _ in range(reps):
        for l in range(LANES):
            saved += _saved(st.rs, l, kind, flags, cover, crossfire, units[u, U_ARMOUR], units[u, U_RA] != 0,
                            _invulnerable(l, u, units, st.wst, units.shape[0]))[0]
    return saved, _unsaved(0, u, units, kind, flags, cover, crossfire, st.wst, units.shape[0])


SAVE_CASES = {  # case: (target profile, hit kind, flags: sniper, lance, ignore cover; crossfire; cover save)
    "armour 5+ in cover 4+": (GUARDIAN, AP, (False, False, False), False, 4),
    "ignore cover": (GUARDIAN, AP, (False, False, True), False, 4),
    "crossfire and sniper": (GUARDIAN, AP, (True, False, False), True, 4),
    "reinforced armour re-rolls": (dict(PREDATOR, special=["reinforced-armour"]), AT, (False, False, False), False,
                                   None),
    "lance: no re-roll": (dict(PREDATOR, special=["reinforced-armour"]), AT, (False, True, False), False, None),
    "macro-weapon: reinforced armour only": (dict(PREDATOR, special=["reinforced-armour"]), MW,
                                             (False, False, False), True, None),
    "macro-weapon: no save in cover": (GUARDIAN, MW, (False, False, False), False, 4),
    "titan killer: the invulnerable save only": (dict(PREDATOR, special=["invulnerable-save"]), TK,
                                                 (False, False, False), False, None),
}


@pytest.mark.parametrize("case", sorted(SAVE_CASES))
def test_save_roll_matches_the_reference_tp_1_9_6(case):
    """TP 1.9.6 (armour, or an infantry unit's cover save in cover, the better; TP 1.8.3, 2.2.5 Ignore Cover),
    TP 1.11 and 2.1.14 (Crossfire and Sniper: -1 each), TP 2.1.11 and 2.2.5 (Reinforced Armour's re-roll, none
    against Lance), TP 2.2.6 and 2.2.9 (macro-weapon: Reinforced Armour only; titan killer: none), TP 2.1.6
    (invulnerable 6+ after): the kernel's save of a shooting hit (_saved: hits._save_targets rolled by saves._save)
    saves as often as the reference's save_roll (exact), at 5 sigma; the policies' P(unsaved) (_unsaved) is the
    reference's unsaved_chance."""
    profile, kind, (sniper, lance, ignore_cover), crossfire, cover_save = SAVE_CASES[case]
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=AIM_LINES[:1]), "target": profile},
                                 [("gun", 1)], [("target", 1)])
    trial, shooter, target, _ = _reference(ct, None)
    unit = target.living[0]
    hit = ShotHit(kind, sniper=sniper, lance=lance, ignore_cover=ignore_cover)
    cover = cover_save if profile["type"] == "INF" else None

    def saved(rng):
        trial, _, target, _ = _reference(ct, rng)
        return save_roll(trial, target.living[0], hit, cover, crossfire)

    p_saved = exact_distribution(saved).get(True, F(0))
    flags = H_SNIPER * sniper + H_LANCE * lance + H_IC * ignore_cover
    code = {AP: KIND_AP, AT: KIND_AT, MW: KIND_MW, TK: KIND_TK}[kind]
    reps = 400
    n_saved, p_unsaved = _kernel_saved(tb, st, tt, unit.slot.index, code, flags,
                                       NO_ROLL if cover_save is None else cover_save, crossfire, reps)
    assert _close(n_saved, reps * L, p_saved), (case, n_saved / (reps * L), float(p_saved))
    assert p_unsaved == pytest.approx(unsaved_chance(unit, hit, cover_save, crossfire), abs=1e-12)


# -- the break check after the attack (TP 1.9.7, 1.13.2; TP-SR They Shall Know No Fear): exact -----------------

@njit(cache=True, _nrt=False)
def _kernel_break_checks(tb, st, tt, was_broken, bm, dead, broken, left):
    """Lane ``l``: the target holds ``bm[l]`` BMs and its first ``dead[l]`` units are destroyed; the break checks
    after an attack on it (_break_checks) in every lane; ``broken[l]`` and ``left[l]`` (its BMs) after."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    t0 = tb.fb[1]
    for g in range(tb.forms.shape[0]):
        sc.spl[g] = 0
    for l in range(LANES):
        st.bm[LANES + l] = bm[l]
        for k in range(t0, t0 + dead[l]):
            st.hp[tb.fu[k] * LANES + l] = 0
            _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
        _break_checks(tb, st, sc, shot, l, was_broken)
        broken[l] = st.broken[LANES + l]
        left[l] = st.bm[LANES + l]


BREAK_CASES = {  # case: (target units, army rules)
    "infantry": ([("guardian", 4)], []),
    "They Shall Know No Fear: twice the units": ([("guardian", 4)], ["they-shall-know-no-fear"]),
    "a war engine counts its starting DC": ([("warhound", 1), ("guardian", 2)], []),
}


@pytest.mark.parametrize("was_broken", [False, True])
@pytest.mark.parametrize("case", sorted(BREAK_CASES))
def test_break_check_after_the_attack_matches_the_reference_tp_1_9_7(case, was_broken):
    """TP 1.9.7 (the break check once the whole attack is over, not for a target broken when it began), TP 1.13.2
    (broken when its BMs reach its units, a war engine counting its starting DC; BMs removed), TP-SR They Shall
    Know No Fear (twice): the kernel's break checks (_break_checks) break the target in exactly the lanes the
    reference's break_check does, over every BM count and number of losses, and leave the same BMs."""
    targets, rules = BREAK_CASES[case]
    ct, tb, tt, st = _turn_state({"gun": dict(GUARDIAN, weapons=AIM_LINES[:1]), "guardian": GUARDIAN,
                                  "warhound": WARHOUND}, [("gun", 1)], targets,
                                 army_rules=rules)
    n_units = sum(n for _, n in targets)
    bm = np.array([l % 10 for l in range(L)], np.int64)
    dead = np.array([(l // 10) % (n_units + 1) for l in range(L)], np.int64)
    st.broken[L:2 * L] = was_broken
    broken, left = np.zeros(L, np.int64), np.zeros(L, np.int64)
    _kernel_break_checks(tb, st, tt, was_broken, bm, dead, broken, left)
    for l in range(L):
        trial, shooter, target, _ = _reference(ct, None)
        target.blast_markers, target.broken = int(bm[l]), was_broken
        for unit in target.units[:dead[l]]:
            unit.alive, unit.damage_left = False, 0
        break_check(trial, target, was_broken)
        assert (broken[l], left[l]) == (target.broken, target.blast_markers), (case, l, bm[l], dead[l])
