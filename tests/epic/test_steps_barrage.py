"""Step tests of the barrage in ``kernels/epic/shooting.py``: an allocation step whose hits are all barrage hits on
units that are not war engines (``_barrage_step``) against the full allocation step (``_allocation_step``), and
which weapon lines the units that fire carry (``_line_kinds``: a barrage alone makes no direct-fire call), and the
break check after an attack (``shooting._fails_after_attack``, which counts the living units only while the BMs could
still break the formation) against the full break test.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``); exact (same hit points, BMs booked, kills,
generator states and dice, lane by lane) on crafted states.  The clause each test covers is in its name and
docstring.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.breaks import _fails_break_test
from wargame_odds.kernels.epic.layout import F_TSKNF, LANES, NO_ROLL
from wargame_odds.kernels.epic.shoot_allocation import (_allocation_step, _barrage_only_step, _barrage_step,
                                                        _step_has_hits)
from wargame_odds.kernels.epic.shoot_fire import _barrage, _exposed_units, _fire_team, _line_kinds
from wargame_odds.kernels.epic.shooting import _fails_after_attack
from wargame_odds.kernels.epic.turn import _attack, scratch_size, shot_scratch
from wargame_odds.kernels.epic.turn_layout import AP_AT_AUTO, DECLARE_AUTO, I_MAX_HITS, NONE
from wargame_odds.kernels.epic.units import _any_living, _clear_unit

from epic_step_state import L, _turn_outcome

#: A barrage line of each shooter (three of them: 6 BP, two templates, TP 1.9.8) and its variants.
BARRAGE = {"name": "launcher", "range": 45, "bp": 2}

VARIANTS = {"plain": {}, "dice barrage points": {"bp": "D3+1"}, "macro-weapon": {"macro_weapon": True},
            "disrupt": {"disrupt": True}, "ignore cover": {"ignore_cover": True}}

#: The target's units: infantry only, or infantry and armoured vehicles (AP and AT rolls of the table), or with a war
#: engine (whose hits the full allocation step resolves).
TARGETS = {"infantry": [("guardians", 12)], "infantry and armour": [("guardians", 6), ("tank", 4), ("guardians", 2)],
           "with a war engine": [("guardians", 4), ("engine", 1), ("guardians", 4)]}

UNITS = {"guardians": {"type": "INF", "armour": 5, "cc": 5, "ff": 5},
         "tank": {"type": "AV", "armour": 4, "cc": 6, "ff": 5},
         "engine": {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3}}


def _barrage_state(weapons: list[dict], target: list[tuple[str, int]]):
    """Three shooters with ``weapons`` at ``target``: the turn's tables and lanes."""
    from wargame_odds.analysis.epic.model import EpicScenario
    from wargame_odds.analysis.epic.turn_result import compile_turn

    units = dict(UNITS, gun={"type": "AV", "armour": 4, "cc": 6, "ff": 5, "weapons": weapons})
    scenario = EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1, "units": [{"unit": "gun", "count": 3}]},
                       {"name": "Target", "side": "defender", "initiative": 1,
                        "units": [{"unit": name, "count": n} for name, n in target]}],
        "turn": [{"formation": "Shooter", "action": "sustained_fire", "target": "Target"}]})
    arrays = KernelArrays.build_turn(compile_turn(scenario))
    tb, tt = arrays.tables(), arrays.turn
    return tb, tt, block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))


@njit(cache=True, _nrt=False)
def _kernel_barrage_steps(tb, st, tt, lean, res):
    """Crafted states (lane ``l``: the target in cover with a 4+ cover save when ``l % 3 == 0``, its first
    ``l % 11`` units destroyed, the shooters' BMs ``l % 4``), then in every lane the barrage of formation 0 at
    formation 1 (who fires, the exposed units, ``_barrage``: its hits listed) and its two allocation steps, each
    ``_barrage_step`` when ``lean``, else ``_allocation_step``.  Returns (every step held only barrage hits on units
    that are not war engines, dice rolled); the attack's hits, kills, BMs booked and first-kill flags in ``res``."""
    sc = shot_scratch(tb, tt, st.tscr)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    t0, t1 = tb.fb[1], tb.fb[2]
    only = True
    nd = 0
    for l in range(LANES):
        sc.lane_mod[l] = 1  # Sustained Fire: +1 to hit (TP 1.9.5)
        sc.lane_cover[l] = l % 3 == 0
        sc.lane_cs[l] = 4
        st.bm[l] = l % 4
        for k in range(t0, t0 + min(l % 11, t1 - t0)):
            st.hp[tb.fu[k] * LANES + l] = 0
            _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
        for i in range(8):
            sc.acc[i] = 0
        nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, 0, NONE, l)
        ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, 1, NONE, l)
        cover = sc.lane_cover[l]
        lane = (l, sc.lane_mod[l], cover, sc.lane_cs[l] if cover else NO_ROLL, ne, nf, mixed, has_we, settled)
        nh, _, k = _barrage(tb, st, tt, sc, shot, lane, 0)
        nd += k
        for phase in range(2):
            if _step_has_hits(sc.hkind, nh, phase):
                only &= _barrage_only_step(sc.hkind, sc.hunit, tt.tu, nh, phase)
                if lean:
                    nd += _barrage_step(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, sc.hkind,
                                        sc.hflag, sc.hunit, nh, phase, l, lane[3], shot.crossfire, sc.acc)
                else:
                    nd += _allocation_step(tb, st, tt, sc, shot, lane, nh, phase)
        res[l] = nh
        res[L + l] = sc.acc[1]
        res[2 * L + l] = sc.acc[3]
        res[3 * L + l] = sc.acc[4]
    return only, nd


def _steps_outcome(tb, tt, st, lean: bool, seed: int):
    (only, nd), out = _turn_outcome(_kernel_barrage_steps, tb, tt, st, lean, seed, 4)
    return only, nd, out


@pytest.mark.parametrize("target", ["infantry", "infantry and armour"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_barrage_hits_resolved_on_their_units_as_the_allocation_step_does_tp_1_9_8(variant, target):
    """TP 1.9.8 (one to-hit roll per unit under a template, on the table's AP or AT value; the hit lands on that
    unit), TP 1.9.6 / epic-shooting §3.7–§3.10 (each hit saved, with the cover save for infantry, in turn; a kill and
    its BMs booked), TP 2.2.6 / 2.1.6 (macro-weapon hits in the second step, disrupt hits' BMs): where every hit of a
    step is a barrage hit on a unit that is not a war engine, ``_barrage_step`` gives exactly the full allocation
    step's numbers, lane by lane and die by die (hit points, BMs, hits, kills, BMs booked, generator states, dice)
    on crafted states."""
    tb, tt, st = _barrage_state([dict(BARRAGE, **VARIANTS[variant])], TARGETS[target])
    for seed in range(3):
        only, nd, lean = _steps_outcome(tb, tt, st, True, seed)
        assert only
        _, nd_full, full = _steps_outcome(tb, tt, st, False, seed)
        assert nd == nd_full > 0
        for got, expected in zip(lean, full):
            np.testing.assert_array_equal(got, expected)
        assert lean[3][L:2 * L].sum() > 0  # some kills


def test_a_barrage_on_a_war_engine_takes_the_full_allocation_step_tp_3_2_1():
    """TP 3.2.1 (a war engine under a template: ⌈starting DC / 2⌉ attacks, its hits on its shields, saves and hull):
    a step holding a barrage hit on a war engine is not one for ``_barrage_step``."""
    tb, tt, st = _barrage_state([BARRAGE], TARGETS["with a war engine"])
    assert not _steps_outcome(tb, tt, st, False, 0)[0]


@njit(cache=True, _nrt=False)
def _kernel_line_kinds(tt, cand):
    return _line_kinds(tt.wb, tt.wpn, cand, cand.size)


@pytest.mark.parametrize("weapons, kinds", [
    ([BARRAGE], (False, True)),
    ([{"name": "autocannon", "range": 45, "ap": 5, "at": 6}], (True, False)),
    ([BARRAGE, {"name": "heavy bolter", "range": 30, "ap": 5}], (True, True))])
def test_line_kinds_of_the_units_that_fire_tp_1_9_1_1_9_8(weapons, kinds):
    """TP 1.9.1 / 1.9.8 (a formation's barrage weapons fire as one barrage, its other weapons shoot directly at the same
    target): ``_line_kinds`` says whether the units that fire carry a direct-fire line and a barrage line; a barrage
    alone makes no direct-fire call (it would roll no die)."""
    tb, tt, _ = _barrage_state(weapons, TARGETS["infantry"])
    assert _kernel_line_kinds(tt, np.ascontiguousarray(tb.fu[tb.fb[0]:tb.fb[1]], np.int64)) == kinds


@njit(cache=True, _nrt=False)
def _kernel_break_checks(hp, fu, fb, units, forms, bm, f, counted, full):
    """Formation ``f``'s break check after an attack in every lane: ``_fails_after_attack`` into ``counted``, the
    full test (a living unit, BMs against the whole size) into ``full``."""
    for l in range(LANES):
        counted[l] = _fails_after_attack(hp, fu, fb, units, forms, bm, f, l)
        full[l] = _any_living(hp, fu, fb, f, l) and _fails_break_test(hp, fu, fb, units, forms, bm, f, l)


@pytest.mark.parametrize("tsknf", [False, True])
def test_break_check_after_an_attack_counts_only_what_it_needs_tp_1_9_7(tsknf):
    """TP 1.9.7 (a formation breaks when its BMs reach its size, its living units, a war engine counting its
    damage capacity, TP 3.3.3), TP-SR They Shall Know No Fear (twice its size), epic-shooting §3.11 (only a formation
    with a living unit is tested): ``_fails_after_attack``, which stops counting once the BMs cannot break the
    formation, decides as the full test does, lane by lane, on crafted states (four Guardians, a war engine of DC 3,
    four Guardians; each unit alive at random, from 5 % to 95 % of them by round, 0 to 15 BMs)."""
    tb, _, st = _barrage_state([BARRAGE], TARGETS["with a war engine"])
    forms = tb.forms.copy()
    forms[1, F_TSKNF] = tsknf
    rng = np.random.default_rng(1)
    breaks = 0
    for i in range(20):
        hp = np.where(rng.random(st.hp.size) < 0.05 + 0.9 * i / 19, 1, 0).astype(st.hp.dtype)
        bm = rng.integers(0, 16, st.bm.size).astype(st.bm.dtype)
        counted = np.zeros(L, np.bool_)
        full = np.zeros(L, np.bool_)
        _kernel_break_checks(hp, tb.fu, tb.fb, tb.units, forms, bm, 1, counted, full)
        np.testing.assert_array_equal(counted, full)
        breaks += int(full.sum())
    assert 0 < breaks < 20 * L
