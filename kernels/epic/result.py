"""The result roll (rule step, spec §5; TP 1.12.7): each side's modifiers (kills, more units, no BMs, fewer BMs,
Inspiring), the highest of 2D6 (or the sum: switch), the margin, the winner, another round on a tie.
"""
import numpy as np

from ..jit import njit
from ..rng import _FOUR, _SIX
from .access import _at, _max, _put
from .dice import _roll
from .layout import (ATTACKER, DEFENDER, F_ASSAULT, F_SIDE, F_TSKNF, LANES, LV_BMA, LV_BMD, LV_CNT, LV_INSA, LV_INSD,
                     LV_NATT, LV_NDEF, LV_RAWA, LV_RAWD, M_ASSAULT, M_INSP, R_MAX_ROUNDS, R_SUM, WIN_ATT, WIN_DEF)
from .units import _less_lost_capacity, _rows_count, _rows_fcount


@njit(cache=True, _nrt=False)
def _result_roll(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, wst, hp, kills, lv, rules,
                 per_form, per_lane):
    """§5 the result roll of the lanes still fighting: margin, winner, whether the assault goes on; marks the lanes
    whose trial ended; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    max_rounds = rules[R_MAX_ROUNDS]
    nd = 0
    bm, broken = per_form[0], per_form[1]
    winner, margin, by_roll, rnd, live = per_lane[0], per_lane[1], per_lane[2], per_lane[3], per_lane[4]
    fight, fight0, ended, d, d2 = per_lane[5], per_lane[6], per_lane[7], per_lane[12], per_lane[13]
    d3, d4 = per_lane[14], per_lane[15]
    nd += _roll(rs, d, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d2, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d3, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d4, _SIX, _FOUR, fight, 0, 0)
    for r in (LV_BMA, LV_BMD, LV_RAWA, LV_RAWD):
        for l in range(L):
            lv[r * L + l] = 0
    for f in range(n_forms):  # BMs held (a broken formation: its units) and raw BMs, per side
        if not forms[f, F_ASSAULT]:
            continue
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, forms[f, F_SIDE], -1, f, lv, LV_CNT * L)
        tsk = forms[f, F_TSKNF]
        held_row = (LV_BMA if forms[f, F_SIDE] == ATTACKER else LV_BMD) * L
        raw_row = (LV_RAWA if forms[f, F_SIDE] == ATTACKER else LV_RAWD) * L
        for l in range(L):  # a formation with no living unit holds none (TP 1.12.10)
            brk = _at(broken, f * L + l)
            cnt = _at(lv, LV_CNT * L + l)
            bmf = _at(bm, f * L + l) * np.int64(cnt > 0)
            _put(lv, held_row + l, _at(lv, held_row + l) + (cnt if brk else (bmf >> tsk)))
            _put(lv, raw_row + l, _at(lv, raw_row + l) + (cnt if brk else bmf))
    _rows_count(alive, flat_masks, flat_fmasks, ATTACKER, M_ASSAULT, lv, LV_NATT * L, n_words, wes, web, units,
                True)
    _rows_count(alive, flat_masks, flat_fmasks, DEFENDER, M_ASSAULT, lv, LV_NDEF * L, n_words, wes, web, units,
                True)
    _less_lost_capacity(units, wst, n_units, hp, flat_masks, ATTACKER, M_ASSAULT, -1, lv, LV_NATT * L)
    _less_lost_capacity(units, wst, n_units, hp, flat_masks, DEFENDER, M_ASSAULT, -1, lv, LV_NDEF * L)
    _rows_count(alive, flat_masks, flat_fmasks, ATTACKER, M_INSP, lv, LV_INSA * L, n_words, wes, web, units, False)
    _rows_count(alive, flat_masks, flat_fmasks, DEFENDER, M_INSP, lv, LV_INSD * L, n_words, wes, web, units, False)
    use_sum = rules[R_SUM] != 0
    for l in range(L):
        n_att = _at(lv, LV_NATT * L + l)
        n_def = _at(lv, LV_NDEF * L + l)
        bm_att = _at(lv, LV_BMA * L + l)
        bm_def = _at(lv, LV_BMD * L + l)
        mod = _at(kills, l) - _at(kills, L + l) + _at(lv, LV_INSA * L + l) - _at(lv, LV_INSD * L + l)
        mod += np.int64(n_att > n_def) + np.int64(n_att > 2 * n_def) - np.int64(n_def > n_att) \
            - np.int64(n_def > 2 * n_att)
        mod += np.int64(_at(lv, LV_RAWA * L + l) == 0) - np.int64(_at(lv, LV_RAWD * L + l) == 0) \
            + np.int64(bm_def > bm_att) - np.int64(bm_att > bm_def)
        fl = _at(fight, l)
        a1 = _at(d, l)
        a2 = _at(d2, l)
        e1 = _at(d3, l)
        e2 = _at(d4, l)
        mg = (a1 + a2 - e1 - e2 if use_sum else _max(a1, a2) - _max(e1, e2)) + mod
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
