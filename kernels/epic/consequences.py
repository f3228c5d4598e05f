"""The consequences of a decided assault (rule steps, spec §6; TP 1.12.8, 1.12.9, 1.13): the loser's extra hits
(no saves, front to back), its formations breaking and withdrawing (broken at the start: destroyed), its other
formations' BM and break test (broken: a hit), the winner's BMs and break test, the state after the assault.
"""
import numpy as np

from ..rng import _ONE
from .access import ANY, FALSE, INT0, TRUE, _at, _min, _put, kernel_function
from .breaks import _fails_break, _withdraw_lane, _withdrawal_can_cost
from .damage import _broken_hit_lane, _we_resolve_lane, damage_state
from .layout import (BOOK_LOSSES, CRIT_NONE, DEFENDER, ATTACKER, E_HULL, FR_ALIVE, FR_BM_A, FR_BROKEN0, FR_BROKEN_A,
                     FR_CAS_A, FR_DMG_A, FR_SH_A, F_ASSAULT, F_BROKEN0, F_N, F_OUTSIDE, F_SIDE, F_TSKNF,
                     LANES, LN_CONS, LN_ENDED, LN_LOSER, LN_MARGIN, LN_WINNER, LV_CNT, LV_DEAD, LV_EX,
                     LV_HIT, LV_OK, R_TURN, U_BIT, U_CRIT, U_DC, U_FEARLESS, U_WORD, WIN_ATT, WIN_DEF)
from .units import _less_lost_capacity, _rows_fcount, _starting_dc, _we_totals


@kernel_function
def _loser_of_lanes(tb, st):
    """§6: each lane whose trial ended with a winner by the roll or without one has consequences (LN_CONS), its loser
    (LN_LOSER) and the extra hits the loser takes (LV_EX: the margin, halved when every assault formation of the
    loser has They Shall Know No Fear; TP 1.12.8, TP-SR TSKNF)."""
    L = LANES
    per_lane = st.per_lane
    winner, margin, ended = per_lane[LN_WINNER], per_lane[LN_MARGIN], per_lane[LN_ENDED]
    loser, cons = per_lane[LN_LOSER], per_lane[LN_CONS]
    for l in range(L):
        wn = winner[l]
        c = ended[l] & np.int64((wn == WIN_ATT) | (wn == WIN_DEF))
        cons[l] = c
        los = DEFENDER if wn == WIN_ATT else ATTACKER
        loser[l] = los
        e = margin[l] if margin[l] > 0 else -margin[l]
        e = e // 2 if tb.all_tsknf[los] else e
        st.lv[LV_EX * L + l] = e * c


@kernel_function
def _extra_hits(tb, st):
    """§6 consequences of a decided assault: the loser (_loser_of_lanes), its extra hits (§6.1: no saves, front to
    back over the non-Fearless units of its assault formations): each unit takes, in each lane where its side lost,
    a block of up to its starting DC of the extra hits left; hits beyond its remaining DC are lost; with war-engine
    rules its damage rolls for criticals (spec §10.4).  Returns the dice rolled."""
    L = LANES
    lv = st.lv
    units = tb.units
    loser, cons = st.per_lane[LN_LOSER], st.per_lane[LN_CONS]
    dm = damage_state(tb, st)
    _loser_of_lanes(tb, st)
    nd = 0
    for side in range(2):
        if tb.xhb[side + 1] == tb.xhb[side]:
            continue
        for l in range(L):
            lv[LV_HIT * L + l] = cons[l] & np.int64(loser[l] == side)
        for k in range(tb.xhb[side], tb.xhb[side + 1]):
            u = tb.xh[k]
            arow = (side * tb.sets.n_words + units[u, U_WORD]) * L
            sh = np.uint64(units[u, U_BIT])
            if tb.we and units[u, U_CRIT] != CRIT_NONE:  # its damage rolls for criticals (spec §10.4)
                for l in range(L):
                    a = np.int64((st.alive[arow + l] >> sh) & _ONE) & lv[LV_HIT * L + l]
                    block = _min(_starting_dc(units, st.wst, u, l, units.shape[0]), lv[LV_EX * L + l]) * a
                    lv[LV_EX * L + l] -= block
                    if block > 0:
                        nd += _we_resolve_lane(dm, l, E_HULL, u, INT0, INT0, block, BOOK_LOSSES, INT0, tb.splashes)
                continue
            dc = units[u, U_DC]
            for l in range(L):  # a block of up to its starting DC; hits beyond its remaining DC are lost
                a = np.int64((_at(st.alive, arow + l) >> sh) & _ONE) & _at(lv, LV_HIT * L + l)
                hpu = _at(st.hp, u * L + l)
                block = _min(dc, _at(lv, LV_EX * L + l)) * a
                take = _min(hpu, block)
                _put(lv, LV_EX * L + l, _at(lv, LV_EX * L + l) - block)
                _put(st.hp, u * L + l, hpu - take)
                _put(lv, LV_DEAD * L + l, a & np.int64(hpu == take))
            for l in range(L):
                _put(st.alive, arow + l, _at(st.alive, arow + l) & ~(np.uint64(_at(lv, LV_DEAD * L + l)) << sh))
    return nd


@kernel_function
def _loser_assault_formations(tb, st):
    """§6.2 the loser's assault formations: one already broken when the assault began is destroyed (its Fearless
    units stay); the others break (BMs removed) and withdraw (trapped and speed-0 units, war-engine damage:
    _withdraw_lane).  Returns the dice rolled."""
    L = LANES
    lv = st.lv
    forms = tb.forms
    units = tb.units
    loser, cons = st.per_lane[LN_LOSER], st.per_lane[LN_CONS]
    broken0 = st.per_form[FR_BROKEN0]
    turn = tb.rules[R_TURN]
    dm = damage_state(tb, st)
    nd = 0
    for f in range(forms.shape[0]):
        if not forms[f, F_ASSAULT]:
            continue
        fs = forms[f, F_SIDE]
        for l in range(L):  # already broken when the assault began: destroyed (Fearless units stay)
            _put(lv, LV_HIT * L + l, _at(cons, l) & np.int64(_at(loser, l) == fs) & _at(broken0, f * L + l))
        if forms[f, F_BROKEN0] or turn:
            for kk in range(tb.fb[f], tb.fb[f + 1]):
                u = tb.fu[kk]
                if units[u, U_FEARLESS]:
                    continue
                hrow = u * L
                arow = (fs * tb.sets.n_words + units[u, U_WORD]) * L
                sh = np.uint64(units[u, U_BIT])
                for l in range(L):
                    kill = _at(lv, LV_HIT * L + l)
                    _put(st.hp, hrow + l, 0 if kill else _at(st.hp, hrow + l))
                    _put(st.alive, arow + l, _at(st.alive, arow + l) & ~(np.uint64(kill) << sh))
        if not forms[f, F_BROKEN0] or turn:  # breaks and withdraws
            for l in range(L):
                hit = _at(cons, l) & np.int64(_at(loser, l) == fs) & (1 - _at(broken0, f * L + l))
                _put(lv, LV_HIT * L + l, hit)
                _put(st.bm, f * L + l, 0 if hit else _at(st.bm, f * L + l))
                _put(st.broken, f * L + l, _at(st.broken, f * L + l) | hit)
            if _withdrawal_can_cost(tb.trapped, tb.forms, f, TRUE):
                for l in range(L):
                    if lv[LV_HIT * L + l]:
                        nd += _withdraw_lane(dm, tb.trapped, tb.forms, l, f, TRUE, BOOK_LOSSES, tb.splashes)
    return nd


@kernel_function
def _loser_other_formations(tb, st):
    """§6.3 the loser's formations outside the assault (supporting it or not): an unbroken one takes a BM and a
    break test (broken: it withdraws); a broken one takes a hit on a non-Fearless unit, no save (_broken_hit_lane;
    TP 1.13.4), unless it has They Shall Know No Fear.  Returns the dice rolled."""
    L = LANES
    lv = st.lv
    forms = tb.forms
    loser, cons = st.per_lane[LN_LOSER], st.per_lane[LN_CONS]
    dm = damage_state(tb, st)
    nd = 0
    for f in range(forms.shape[0]):
        if forms[f, F_ASSAULT] or forms[f, F_OUTSIDE]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, lv, LV_CNT * L, TRUE)
        _less_lost_capacity(tb.sets, st.hp, st.wst, fs, ANY, f, lv, LV_CNT * L)
        any_hit_broken = 0
        any_fail = 0
        for l in range(L):  # an unbroken one takes a BM and a break test; a broken one takes a hit (below)
            hit = _at(cons, l) & np.int64(_at(loser, l) == fs)
            brk = _at(st.broken, f * L + l)
            h_unbroken = hit & (1 - brk)
            nb = _at(st.bm, f * L + l) + h_unbroken
            cnt = _at(lv, LV_CNT * L + l)
            fails = h_unbroken & np.int64(_fails_break(nb, cnt, tsk != 0))
            _put(st.bm, f * L + l, 0 if fails else nb)
            _put(st.broken, f * L + l, brk | fails)
            _put(lv, LV_HIT * L + l, hit & brk)
            _put(lv, LV_OK * L + l, fails)
            any_hit_broken |= hit & brk
            any_fail |= fails
        if any_hit_broken and not tsk:
            for l in range(L):
                if lv[LV_HIT * L + l]:
                    for kk in range(tb.fb[f], tb.fb[f + 1]):
                        u = tb.fu[kk]
                        if st.hp[u * L + l] > 0 and not tb.units[u, U_FEARLESS]:
                            nd += _broken_hit_lane(dm, l, u, tb.splashes)
                            break
        if any_fail:
            for l in range(L):
                if lv[LV_OK * L + l]:
                    nd += _withdraw_lane(dm, tb.trapped, tb.forms, l, f, TRUE, BOOK_LOSSES, tb.splashes)
    return nd


@kernel_function
def _winner_break_tests(tb, st):
    """§6.4 the winner's assault formations not broken at the start take the BMs their losses gave them and a
    break test (TP 1.12.9)."""
    L = LANES
    lv = st.lv
    forms = tb.forms
    loser, cons = st.per_lane[LN_LOSER], st.per_lane[LN_CONS]
    broken0 = st.per_form[FR_BROKEN0]
    for f in range(forms.shape[0]):
        if not forms[f, F_ASSAULT] or forms[f, F_BROKEN0]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, lv, LV_CNT * L, TRUE)
        _less_lost_capacity(tb.sets, st.hp, st.wst, fs, ANY, f, lv, LV_CNT * L)
        for l in range(L):
            win = cons[l] & np.int64(loser[l] != fs) & (1 - broken0[f * L + l])
            nb = _at(st.bm, f * L + l) + _at(st.losses_bm, f * L + l) * win
            size = _at(lv, LV_CNT * L + l)
            fails = win & np.int64(_fails_break(nb, size, tsk != 0))
            st.bm[f * L + l] = 0 if fails else nb
            st.broken[f * L + l] |= fails


@kernel_function
def _after_assault(tb, st):
    """Each formation's state after the assault (living units, casualties, BMs and broken while it lives) and its
    war engines' damage and shields up (spec §10.9)."""
    L = LANES
    forms = tb.forms
    per_form = st.per_form
    bm_a, broken_a, fa, cas_a = per_form[FR_BM_A], per_form[FR_BROKEN_A], per_form[FR_ALIVE], per_form[FR_CAS_A]
    for f in range(forms.shape[0]):
        _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, fa, f * L, FALSE)
        n_f = forms[f, F_N]
        for l in range(L):  # destroyed / broken and alive / unbroken; a destroyed one holds no BMs
            al = np.int64(_at(fa, f * L + l) > 0)
            _put(bm_a, f * L + l, _at(st.bm, f * L + l) * al)
            _put(broken_a, f * L + l, _at(st.broken, f * L + l) & al)
            _put(cas_a, f * L + l, n_f - _at(fa, f * L + l))
    for f in range(forms.shape[0]):
        if tb.fweb[f + 1] > tb.fweb[f]:
            _we_totals(tb, st, f, per_form[FR_DMG_A], f * L, per_form[FR_SH_A], f * L)


@kernel_function
def _breaks_and_withdrawals(tb, st):
    """§6.2–§6.4: the loser's assault and other formations break, withdraw or take hits, the winner's take break
    tests; returns the dice rolled."""
    nd = _loser_assault_formations(tb, st)
    nd += _loser_other_formations(tb, st)
    _winner_break_tests(tb, st)
    return nd


@kernel_function
def _formation_consequences(tb, st):
    """§6.2–§6.4 (:func:`_breaks_and_withdrawals`), then each formation's state and its war engines' after the
    assault; returns the dice rolled.  (A turn fires its engage's withdrawal fire in between:
    wargame_odds.kernels.epic.turn.turn_consequences.)"""
    nd = _breaks_and_withdrawals(tb, st)
    _after_assault(tb, st)
    return nd
