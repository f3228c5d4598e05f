"""Step tests of ``kernels/epic/breaks.py`` against ``analysis/epic/reference/breaks.py``.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations

import random
from fractions import Fraction as F

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.reference.block import new_trial
from wargame_odds.analysis.epic.reference.breaks import fails_break_test, withdraw
from wargame_odds.kernels.epic.access import kernel_function
from wargame_odds.kernels.epic.breaks import _fails_break_test, _withdraw_lane
from wargame_odds.kernels.epic.damage import damage_state
from wargame_odds.kernels.epic.layout import (
    BOOK_LOSSES, LANES)
from test_reference import formation

from epic_step_state import ENGINE, L, TROOPER, _close, _start, _state


@njit(cache=True)
def _kernel_fails(tb, st, f):
    return _fails_break_test(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, f, 0)


@pytest.mark.parametrize("tsknf", [False, True])
def test_break_test_counts_starting_dc_and_tsknf_tp_1_13_2_3_0(compile_epic, tsknf):
    """TP 1.13.2, 3.0, TP-SR TSKNF: a formation breaks when its BMs reach its size, a war engine counting its starting
    DC (here 2 troopers and a DC-3 engine: 5), twice that with They Shall Know No Fear; as the reference's break test
    (wargame_odds.analysis.epic.reference.breaks.fails_break_test)."""
    rules = ["they-shall-know-no-fear"] if tsknf else []
    compiled = compile_epic({"a": TROOPER, "titan": ENGINE, "trooper": TROOPER},
                            [formation("A", "attacker", [("a", 1, "bc")]),
                             formation("D", "defender", [("titan", 1, "bc"), ("trooper", 2, "bc")],
                                       army_rules=rules)])
    tb, st = _state(compiled)
    defender = new_trial(compiled, None).formations[1]
    limit = defender.size * (2 if tsknf else 1)
    for bm in range(limit + 2):
        st.bm[L:2 * L] = defender.blast_markers = bm
        assert _kernel_fails(tb, st, 1) == fails_break_test(defender) == (bm >= limit), bm


# -- withdrawal (exact for war engines, 5 sigma for trapped units) ---------------------------------------------

@kernel_function
def _withdraw_lanes(tb, st, f):
    """Formation ``f`` withdraws in every lane (without reference counting, as the kernel calls
    _withdraw_lane: ``damage_state`` returns views of ``tb`` and ``st``)."""
    dm = damage_state(tb, st)
    for l in range(LANES):
        _withdraw_lane(dm, tb.trapped, tb.forms, l, f, True, BOOK_LOSSES, False)


@njit(cache=True)
def _kernel_withdraw(tb, st, f, key1):
    lost = np.zeros(tb.units.shape[0], np.int64)
    for rep in range(200):
        _start(tb, st, key1 + np.uint64(rep))
        _withdraw_lanes(tb, st, f)
        for u in range(tb.units.shape[0]):
            for l in range(LANES):
                lost[u] += tb.dc0[u] - st.hp[u * LANES + l]
    return lost


def test_withdrawal_tp_1_13_3_3_2_4(compile_epic):
    """TP 1.13.3, 2.1.3, 3.2.4 (spec §6.2, §9.5): a withdrawal loses each non-Fearless trapped unit with the
    formation's ``trapped`` chance (5σ over 25,600 withdrawals, seed fixed), kills its speed-0 units outright, and
    gives each non-Fearless war engine a point of damage per enemy unit within 15 cm, no save (exact); the
    reference's ``withdraw`` on the same formation agrees on the war engine's damage, the speed-0 loss and the
    Fearless unit kept."""
    units = {"a": TROOPER, "titan": ENGINE, "trooper": TROOPER,
             "gun": {**TROOPER, "speed": 0}, "ogryn": {**TROOPER, "special": ["fearless"]}}
    compiled = compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                    formation("D", "defender", [("titan", 1, "bc"), ("trooper", 2, "bc"),
                                                                ("gun", 1, "bc"), ("ogryn", 1, "bc")],
                                              trapped=0.25, withdrawal_enemies_within_15cm=2)])
    tb, st = _state(compiled)
    lost = _kernel_withdraw(tb, st, 1, np.uint64(9))
    n = 200 * L
    titan, trooper1, trooper2, gun, ogryn = (u.index for u in compiled.units[1:])
    trial = new_trial(compiled, random.Random(0))
    withdraw(trial, trial.formations[1], True)
    titan_ref, *_, gun_ref, ogryn_ref = trial.formations[1].units
    assert lost[titan] == n * (ENGINE["damage_capacity"] - titan_ref.damage_left) == 2 * n
    assert lost[gun] == n * (not gun_ref.alive) == n and lost[ogryn] == 0 == (not ogryn_ref.alive)
    for u in (trooper1, trooper2):
        assert _close(int(lost[u]), n, F(1, 4)), lost[u] / n


# -- rally (5 sigma against the exact rally, exact BMs after a pass) -------------------------------------------
