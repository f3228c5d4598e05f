"""Step tests of ``kernels/epic/shooting.py`` (an attack's lock-step path against its lane-by-lane path).

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations


import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.layout import (
    LANES)
from wargame_odds.kernels.epic.shoot_plain import _plain_attack
from wargame_odds.kernels.epic.shooting import _lane_by_lane, shoot_lanes
from wargame_odds.kernels.epic.turn import _attack, scratch_size, shot_scratch
from wargame_odds.kernels.epic.turn_layout import (AP_AT_AUTO, DECLARE_AUTO, I_MAX_HITS, NO_ATTACK, NONE)
from wargame_odds.kernels.epic.units import _clear_unit

from epic_step_state import L, _turn_outcome


#: Predator Destructors (an AP5+/AT6+ autocannon, two AP5+ heavy bolters) and the lines of a plain attack they are
#: not: a line whose to-hit value, fire type or hit flags differ (TP 1.9.5) makes the attack lane by lane.
ALIKE_SHOOTER = [{"name": "autocannon", "range": 45, "ap": 5, "at": 6},
                 {"name": "heavy bolter", "range": 30, "ap": 5, "count": 2}]

NOT_ALIKE = {"another to-hit value": {"ap": 4}, "another fire type": {"ap": None, "mw": 5},
             "another hit flag": {"ignore_cover": True}}



def _alike_state(weapons: list[dict]):
    """Three shooters with ``weapons`` at twelve Guardians (5+ save, infantry): the turn's tables and lanes."""
    from wargame_odds.analysis.epic.model import EpicScenario
    from wargame_odds.analysis.epic.turn_result import compile_turn

    units = {"gun": {"type": "AV", "armour": 4, "cc": 6, "ff": 5, "weapons": weapons},
             "guardians": {"type": "INF", "armour": 5, "cc": 5, "ff": 5}}
    scenario = EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1, "units": [{"unit": "gun", "count": 3}]},
                       {"name": "Target", "side": "defender", "initiative": 1,
                        "units": [{"unit": "guardians", "count": 12}]}],
        "turn": [{"formation": "Shooter", "action": "double", "target": "Target"}]})
    arrays = KernelArrays.build_turn(compile_turn(scenario))
    tb, tt = arrays.tables(), arrays.turn
    return tb, tt, block.lanes(tb, scratch_size(tb.units.shape[0], tb.forms.shape[0], tt.info[0, I_MAX_HITS]))


@njit(cache=True, _nrt=False)
def _kernel_attack(tb, st, tt, lane_by_lane, res):
    """Crafted states (lane ``l``: no attack when ``l % 9 == 8``; the target in cover with a 4+ cover save when
    ``l % 3 == 0``, broken when ``l % 7 == 0``; its first ``l % 13`` units destroyed; the shooters' BMs ``l % 4``),
    then one attack of formation 0 at formation 1 in every lane: ``shoot_lanes`` (the lock-step path where the attack
    is plain), or ``lane_by_lane`` the lane-by-lane path for every lane.  Returns (plain, dice rolled); the lanes'
    counted results (hits, kills, BMs placed) in ``res``."""
    sc = shot_scratch(tb, tt, st.tscr)
    t0, t1 = tb.fb[1], tb.fb[2]
    for l in range(LANES):
        sc.lane_mod[l] = NO_ATTACK if l % 9 == 8 else -1  # a Double: -1 to hit (TP 1.9.5)
        sc.lane_cover[l] = l % 3 == 0
        sc.lane_cs[l] = 4
        st.bm[l] = l % 4
        st.broken[LANES + l] = l % 7 == 0
        for k in range(t0, t0 + min(l % 13, t1 - t0)):
            st.hp[tb.fu[k] * LANES + l] = 0
            _clear_unit(st.alive, tb.units, tb.fu[k], l, tb.sets.n_words, 1)
    shot = _attack(0, LANES, 0, 1, NONE, NONE, 0, AP_AT_AUTO, DECLARE_AUTO, NONE, False)
    plain = _plain_attack(tb, tt, 0, 1, AP_AT_AUTO, sc.ushots)[0]
    nd = 0
    nd = _lane_by_lane(tb, st, tt, sc, shot) if lane_by_lane else shoot_lanes(tb, st, tt, sc, shot)
    for i in range(3 * LANES):
        res[i] = sc.res[i]
    return plain, nd


def _attack_outcome(tb, tt, st, lane_by_lane: bool, seed: int):
    (plain, nd), out = _turn_outcome(_kernel_attack, tb, tt, st, lane_by_lane, seed, 3)
    return plain, nd, out


@pytest.mark.parametrize("other", [None, *sorted(NOT_ALIKE)])
def test_weapon_lines_shooting_alike_are_one_plain_attack_tp_1_9_5_1_9_6(other):
    """TP 1.9.5 (a to-hit roll per shot, its need the line's value for the fire type less the modifiers), TP 1.9.6
    (hits allocated round-robin from the front), TP 1.9.4 (BMs), TP 1.13.4 (a broken target's BMs as no-save hits);
    epic-shooting §3.5–§3.11: Predator Destructors' autocannon (AP5+/AT6+, AP at infantry without a policy) and heavy
    bolters (AP5+) shoot alike at Guardians, so their attack is plain
    (wargame_odds.kernels.epic.shoot_plain._plain_attack) and its lock-step path gives exactly the lane-by-lane
    path's numbers, lane by lane and die by die (hit points, BMs, broken flags, hits / kills / BMs placed, generator
    states, dice rolled) on crafted states; a line that shoots otherwise (another to-hit value, fire type or hit flag)
    makes the attack lane by lane."""
    weapons = [dict(line) for line in ALIKE_SHOOTER]
    if other is not None:
        weapons[1].update(NOT_ALIKE[other])
        weapons[1] = {key: value for key, value in weapons[1].items() if value is not None}
    tb, tt, st = _alike_state(weapons)
    for seed in range(3):
        plain, nd, lock_step = _attack_outcome(tb, tt, st, False, seed)
        assert plain == (other is None)
        _, nd_lanes, lanes = _attack_outcome(tb, tt, st, True, seed)
        assert nd == nd_lanes > 0
        for got, expected in zip(lock_step, lanes):
            np.testing.assert_array_equal(got, expected)
        assert lock_step[3][L:2 * L].sum() > 0  # some kills


# -- overwatch fire at a charger: one shoot_lanes call per formation for all the lanes, same dice (exact) --------

