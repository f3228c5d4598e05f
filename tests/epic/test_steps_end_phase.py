"""Step tests of ``kernels/epic/end_phase.py`` (the rally) against the exact rally of the reference.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations


import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.exact_steps import d6_test, markers_after_pass, rally_modifier
from wargame_odds.kernels.epic.end_phase import _rally
from wargame_odds.kernels.epic.layout import (
    FR_ALIVE, LANES, LN_ENDED, LV_OK, LV_SCR0)
from test_reference import formation

from epic_step_state import L, TROOPER, _close, _start, _state


@njit(cache=True)
def _kernel_rally(tb, st, f, bm, broken, key1, reps):
    passes = 0
    for rep in range(reps):
        _start(tb, st, key1 + np.uint64(rep))
        for l in range(LANES):
            st.per_lane[LN_ENDED, l] = 1
            st.bm[f * LANES + l] = bm
            st.broken[f * LANES + l] = broken
            st.per_form[FR_ALIVE, f * LANES + l] = (tb.fb[f + 1] - tb.fb[f])
            st.lv[LV_SCR0 * LANES + l] = 0
            st.lv[(LV_SCR0 + 1) * LANES + l] = 0
        _rally(tb, st, f)
        for l in range(LANES):
            passes += st.lv[LV_OK * LANES + l]
    return passes, st.bm[f * LANES:(f + 1) * LANES].copy(), st.lv[LV_OK * LANES:(LV_OK + 1) * LANES].copy()


RALLY_CASES = {  # case: (initiative, BMs, broken, units, army rules, leaders)
    "unbroken with BMs, initiative 2": (2, 3, False, 4, [], 0),
    "broken, -2": (2, 0, True, 4, [], 0),
    "broken TSKNF keeps its units as BMs": (1, 0, True, 4, ["they-shall-know-no-fear"], 0),
    "Mob Rule +1 with 6 units": (3, 2, False, 6, ["mob-rule"], 0),
    "a Leader removes one more BM": (2, 4, False, 3, [], 1),
}


@pytest.mark.parametrize("case", sorted(RALLY_CASES))
def test_rally_matches_the_exact_rally_tp_1_14_1_2_1_8(compile_epic, case):
    """TP 1.14.1, 2.1.8, 2.1.10, TP-SR TSKNF and Mob Rule (spec §7): the kernel's rally (_rally) passes as often as
    the exact rally (wargame_odds.analysis.epic.exact_steps, as ``epic.rally``), at 5σ over 128 × 300 tests, seed
    fixed; a lane that passed holds exactly the BMs the rules leave (``markers_after_pass``), one that failed its
    BMs (a broken formation stays broken)."""
    initiative, bm, broken, n_units, rules, leaders = RALLY_CASES[case]
    groups = [("trooper", n_units - leaders, "bc")] + ([("leader", leaders, "bc")] if leaders else [])
    units = {"a": TROOPER, "trooper": TROOPER, "leader": {**TROOPER, "special": ["leader"]}}
    compiled = compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                    formation("D", "defender", groups, initiative=initiative, army_rules=rules)])
    tb, st = _state(compiled)
    reps = 300
    passes, bm_after, ok = _kernel_rally(tb, st, 1, bm, int(broken), np.uint64(21), reps)
    enemy_near = compiled.formations[1].enemy_within_30cm
    p_pass = d6_test(initiative, rally_modifier(broken, enemy_near, "mob-rule" in rules, n_units))
    assert _close(int(passes), reps * L, p_pass), (case, passes / (reps * L), float(p_pass))
    tsknf = "they-shall-know-no-fear" in rules
    after_pass = markers_after_pass(bm, broken, n_units, leaders, tsknf)
    for l in range(L):
        assert bm_after[l] == (after_pass if ok[l] else bm), (l, ok[l], bm_after[l])


# -- the result roll (5 sigma against the exact margins) -------------------------------------------------------
