"""The result roll (rule step, spec §5; TP 1.12.7): each side's modifiers (kills, more units, no BMs, fewer BMs,
Inspiring), the highest of 2D6 (or the sum: switch), the margin, the winner, another round on a tie.
"""
import numpy as np

from ..rng import _FOUR, _SIX
from .access import ANY, FALSE, INT0, TRUE, _at, _max, _put, kernel_function
from .dice import _roll
from .layout import (ATTACKER, DEFENDER, F_ASSAULT, F_SIDE, F_TSKNF, LANES, LN_BY_ROLL, LN_D, LN_D2, LN_D3, LN_D4,
                     LN_ENDED, LN_FIGHT, LN_FIGHT0, LN_LIVE, LN_MARGIN, LN_ROUND, LN_WINNER, LV_BMA, LV_BMD, LV_CNT,
                     LV_INSA, LV_INSD, LV_MOD, LV_NATT, LV_NDEF, LV_RAWA, LV_RAWD, M_ASSAULT, M_INSP, R_MAX_ROUNDS,
                     R_SUM, WIN_ATT, WIN_DEF)
from .units import _less_lost_capacity, _rows_count, _rows_fcount


@kernel_function
def _held_markers(tb, st):
    """Each side's BMs for the result in every lane (TP 1.12.7, 1.12.10; spec §5): LV_BMA / LV_BMD the BMs its
    assault formations hold (a broken one: its units; TSKNF: half, rounded down; a formation with no living
    unit: none), LV_RAWA / LV_RAWD the same before TSKNF halves them (for "no BMs")."""
    L = LANES
    lv = st.lv
    forms = tb.forms
    for r in (LV_BMA, LV_BMD, LV_RAWA, LV_RAWD):
        for l in range(L):
            lv[r * L + l] = 0
    for f in range(forms.shape[0]):
        if not forms[f, F_ASSAULT]:
            continue
        _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, lv, LV_CNT * L, TRUE)
        _less_lost_capacity(tb.sets, st.hp, st.wst, forms[f, F_SIDE], ANY, f, lv, LV_CNT * L)
        tsk = forms[f, F_TSKNF]
        held_row = (LV_BMA if forms[f, F_SIDE] == ATTACKER else LV_BMD) * L
        raw_row = (LV_RAWA if forms[f, F_SIDE] == ATTACKER else LV_RAWD) * L
        for l in range(L):  # a formation with no living unit holds none (TP 1.12.10)
            brk = _at(st.broken, f * L + l)
            cnt = _at(lv, LV_CNT * L + l)
            bmf = _at(st.bm, f * L + l) * np.int64(cnt > 0)
            _put(lv, held_row + l, _at(lv, held_row + l) + (cnt if brk else (bmf >> tsk)))
            _put(lv, raw_row + l, _at(lv, raw_row + l) + (cnt if brk else bmf))


@kernel_function
def _result_modifiers(tb, st):
    """LV_MOD: the attacker's result modifier less the defender's in every lane (TP 1.12.7; spec §5): kills, +1
    for more units and +1 more for twice as many (a WE counting its starting DC), +1 for no BMs, +1 for fewer BMs,
    +1 per Inspiring unit that counts."""
    L = LANES
    lv = st.lv
    alive = st.alive
    _held_markers(tb, st)
    _rows_count(tb.sets, alive, ATTACKER, M_ASSAULT, lv, LV_NATT * L, TRUE)
    _rows_count(tb.sets, alive, DEFENDER, M_ASSAULT, lv, LV_NDEF * L, TRUE)
    _less_lost_capacity(tb.sets, st.hp, st.wst, ATTACKER, M_ASSAULT, ANY, lv, LV_NATT * L)
    _less_lost_capacity(tb.sets, st.hp, st.wst, DEFENDER, M_ASSAULT, ANY, lv, LV_NDEF * L)
    _rows_count(tb.sets, alive, ATTACKER, M_INSP, lv, LV_INSA * L, FALSE)
    _rows_count(tb.sets, alive, DEFENDER, M_INSP, lv, LV_INSD * L, FALSE)
    for l in range(L):
        n_att = _at(lv, LV_NATT * L + l)
        n_def = _at(lv, LV_NDEF * L + l)
        bm_att = _at(lv, LV_BMA * L + l)
        bm_def = _at(lv, LV_BMD * L + l)
        mod = _at(st.kills, l) - _at(st.kills, L + l) + _at(lv, LV_INSA * L + l) - _at(lv, LV_INSD * L + l)
        mod += np.int64(n_att > n_def) + np.int64(n_att > 2 * n_def) - np.int64(n_def > n_att) \
            - np.int64(n_def > 2 * n_att)
        mod += np.int64(_at(lv, LV_RAWA * L + l) == 0) - np.int64(_at(lv, LV_RAWD * L + l) == 0) \
            + np.int64(bm_def > bm_att) - np.int64(bm_att > bm_def)
        _put(lv, LV_MOD * L + l, mod)


@kernel_function
def _result_roll(tb, st):
    """§5 the result roll of the lanes still fighting: each side's highest of 2D6 (the sum with the switch) plus its
    modifiers (_result_modifiers); the margin, the winner, or on a tie another round unless it was the last;
    marks the lanes whose trial ended; returns the dice rolled."""
    L = LANES
    per_lane = st.per_lane
    max_rounds = tb.rules[R_MAX_ROUNDS]
    winner, margin, by_roll, rnd, live = per_lane[LN_WINNER], per_lane[LN_MARGIN], per_lane[LN_BY_ROLL], \
        per_lane[LN_ROUND], per_lane[LN_LIVE]
    fight, fight0, ended = per_lane[LN_FIGHT], per_lane[LN_FIGHT0], per_lane[LN_ENDED]
    d, d2, d3, d4 = per_lane[LN_D], per_lane[LN_D2], per_lane[LN_D3], per_lane[LN_D4]
    nd = _roll(st.rs, d, _SIX, _FOUR, fight, INT0, INT0)
    nd += _roll(st.rs, d2, _SIX, _FOUR, fight, INT0, INT0)
    nd += _roll(st.rs, d3, _SIX, _FOUR, fight, INT0, INT0)
    nd += _roll(st.rs, d4, _SIX, _FOUR, fight, INT0, INT0)
    _result_modifiers(tb, st)
    use_sum = tb.rules[R_SUM] != 0
    for l in range(L):
        fl = _at(fight, l)
        a1 = _at(d, l)
        a2 = _at(d2, l)
        e1 = _at(d3, l)
        e2 = _at(d4, l)
        mg = (a1 + a2 - e1 - e2 if use_sum else _max(a1, a2) - _max(e1, e2)) + _at(st.lv, LV_MOD * L + l)
        decided = fl & np.int64(mg != 0)
        _put(margin, l, mg if fl else _at(margin, l))
        _put(by_roll, l, _at(by_roll, l) | decided)
        _put(winner, l, (WIN_ATT if mg > 0 else WIN_DEF) if decided else _at(winner, l))
        last = fl & np.int64(_at(rnd, l) == max_rounds)
        go_on = fl & (1 - decided) & (1 - last)
        _put(live, l, _at(live, l) & (1 - decided) & (1 - last))
        _put(rnd, l, _at(rnd, l) + go_on)
    for l in range(L):  # the lanes whose trial ended in this round
        ended[l] = fight0[l] & (1 - live[l])
    return nd
