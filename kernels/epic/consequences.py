"""The consequences of a decided assault (rule steps, spec §6; TP 1.12.8, 1.12.9, 1.13): the loser's extra hits
(no saves, front to back), its formations breaking and withdrawing (broken at the start: destroyed), its other
formations' BM and break test (broken: a hit), the winner's BMs and break test, the state after the assault.
"""
import numpy as np

from ..jit import njit
from ..rng import _ONE
from .access import _at, _min, _put
from .breaks import _withdraw_lane
from .damage import _broken_hit_lane, _we_resolve_lane
from .end_phase import _we_totals
from .layout import (ATTACKER, BOOK_LOSSES, CRIT_NONE, DEFENDER, E_HULL, F_ASSAULT, F_BROKEN0, F_N, F_OUTSIDE, F_SIDE,
                     F_SPEED0, F_TSKNF, F_WE_WD, LANES, LV_CNT, LV_DEAD, LV_EX, LV_HIT, LV_OK, R_TURN, U_BIT, U_CRIT,
                     U_DC, U_FEARLESS, U_WORD, WIN_ATT, WIN_DEF)
from .units import _less_lost_capacity, _rows_fcount, _starting_dc


@njit(cache=True, _nrt=False)
def _extra_hits(rs, all_tsknf, xh, xhb, alive, n_words, units, forms, fu, fb, hp, wst, we, splashes, splash, kills,
                stk, lv, per_form, per_lane):
    """§6 consequences of a decided assault: the loser, its extra hits (§6.1: no saves, front to back); returns the
    dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nd = 0
    bm, broken, losses_bm = per_form[0], per_form[1], per_form[2]
    winner, margin, ended, loser, cons = per_lane[0], per_lane[1], per_lane[7], per_lane[24], per_lane[25]
    for l in range(L):
        wn = winner[l]
        c = ended[l] & np.int64((wn == WIN_ATT) | (wn == WIN_DEF))
        cons[l] = c
        los = DEFENDER if wn == WIN_ATT else ATTACKER
        loser[l] = los
        e = margin[l] if margin[l] > 0 else -margin[l]
        e = e // 2 if all_tsknf[los] else e
        lv[LV_EX * L + l] = e * c
    for side in range(2):  # §6.1 extra hits, no saves, front to back
        if xhb[side + 1] == xhb[side]:
            continue
        for l in range(L):
            lv[LV_HIT * L + l] = cons[l] & np.int64(loser[l] == side)
        for k in range(xhb[side], xhb[side + 1]):
            u = xh[k]
            arow = (side * n_words + units[u, U_WORD]) * L
            sh = np.uint64(units[u, U_BIT])
            hrow = u * L
            dc = units[u, U_DC]
            if we and units[u, U_CRIT] != CRIT_NONE:  # its damage rolls for criticals (spec §10.4)
                for l in range(L):
                    a = np.int64((alive[arow + l] >> sh) & _ONE) & lv[LV_HIT * L + l]
                    block = _min(_starting_dc(units, wst, u, l, n_units), lv[LV_EX * L + l]) * a
                    lv[LV_EX * L + l] -= block
                    if block > 0:
                        nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, block, BOOK_LOSSES, 0, units, hp, wst,
                                               n_units, alive, n_words, splashes, splash, fu, fb, n_forms,
                                               losses_bm, kills, bm, broken, stk)
                continue
            for l in range(L):  # a block of up to its starting DC; hits beyond its remaining DC are lost
                a = np.int64((_at(alive, arow + l) >> sh) & _ONE) & _at(lv, LV_HIT * L + l)
                hpu = _at(hp, hrow + l)
                block = _min(dc, _at(lv, LV_EX * L + l)) * a
                take = _min(hpu, block)
                _put(lv, LV_EX * L + l, _at(lv, LV_EX * L + l) - block)
                _put(hp, hrow + l, hpu - take)
                _put(lv, LV_DEAD * L + l, a & np.int64(hpu == take))
            for l in range(L):
                _put(alive, arow + l, _at(alive, arow + l) & ~(np.uint64(_at(lv, LV_DEAD * L + l)) << sh))
    return nd


@njit(cache=True, _nrt=False)
def _formation_consequences(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb, fwe, fweb, hp,
                            wst, we, trapped, splashes, splash, kills, stk, lv, rules, per_form, per_lane):
    """§6.2–§6.4: the loser's assault and other formations break, withdraw or take hits, the winner's take break
    tests; then each formation's state and its war engines' after the assault; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nd = 0
    bm, broken, losses_bm, bm_a, broken_a = per_form[0], per_form[1], per_form[2], per_form[5], per_form[6]
    fa, cas_a, dmg_a, sh_a, broken0 = per_form[7], per_form[8], per_form[9], per_form[10], per_form[11]
    loser, cons = per_lane[24], per_lane[25]
    for f in range(n_forms):  # §6.2 the loser's assault formations
        if not forms[f, F_ASSAULT]:
            continue
        fs = forms[f, F_SIDE]
        for l in range(L):  # already broken when the assault began: destroyed (Fearless units stay)
            _put(lv, LV_HIT * L + l, _at(cons, l) & np.int64(_at(loser, l) == fs) & _at(broken0, f * L + l))
        if forms[f, F_BROKEN0] or rules[R_TURN]:
            for kk in range(fb[f], fb[f + 1]):
                u = fu[kk]
                if units[u, U_FEARLESS]:
                    continue
                hrow = u * L
                arow = (fs * n_words + units[u, U_WORD]) * L
                sh = np.uint64(units[u, U_BIT])
                for l in range(L):
                    kill = _at(lv, LV_HIT * L + l)
                    _put(hp, hrow + l, 0 if kill else _at(hp, hrow + l))
                    _put(alive, arow + l, _at(alive, arow + l) & ~(np.uint64(kill) << sh))
        if not forms[f, F_BROKEN0] or rules[R_TURN]:  # breaks and withdraws
            for l in range(L):
                hit = _at(cons, l) & np.int64(_at(loser, l) == fs) & (1 - _at(broken0, f * L + l))
                _put(lv, LV_HIT * L + l, hit)
                _put(bm, f * L + l, 0 if hit else _at(bm, f * L + l))
                _put(broken, f * L + l, _at(broken, f * L + l) | hit)
            if trapped[f] > 0.0 or forms[f, F_SPEED0] or forms[f, F_WE_WD]:
                for l in range(L):
                    if lv[LV_HIT * L + l]:
                        nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, True, forms, alive, n_words,
                                             wst, n_units, BOOK_LOSSES, splashes, splash, n_forms, losses_bm,
                                             kills, bm, broken, stk)
    for f in range(n_forms):  # §6.3 the loser's other formations
        if forms[f, F_ASSAULT] or forms[f, F_OUTSIDE]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, fs, -1, f, lv, LV_CNT * L)
        any_hit_broken = 0
        any_fail = 0
        for l in range(L):  # an unbroken one takes a BM and a break test; a broken one takes a hit (below)
            hit = _at(cons, l) & np.int64(_at(loser, l) == fs)
            brk = _at(broken, f * L + l)
            h_unbroken = hit & (1 - brk)
            nb = _at(bm, f * L + l) + h_unbroken
            cnt = _at(lv, LV_CNT * L + l)
            fails = h_unbroken & np.int64(nb >= (2 * cnt if tsk else cnt))
            _put(bm, f * L + l, 0 if fails else nb)
            _put(broken, f * L + l, brk | fails)
            _put(lv, LV_HIT * L + l, hit & brk)
            _put(lv, LV_OK * L + l, fails)
            any_hit_broken |= hit & brk
            any_fail |= fails
        if any_hit_broken and not tsk:
            for l in range(L):
                if lv[LV_HIT * L + l]:
                    for kk in range(fb[f], fb[f + 1]):
                        u = fu[kk]
                        if hp[u * L + l] > 0 and not units[u, U_FEARLESS]:
                            nd += _broken_hit_lane(rs, l, u, units, hp, wst, n_units, alive, n_words, splashes,
                                                   splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
                            break
        if any_fail:
            for l in range(L):
                if lv[LV_OK * L + l]:
                    nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, True, forms, alive, n_words, wst,
                                         n_units, BOOK_LOSSES, splashes, splash, n_forms, losses_bm, kills, bm,
                                         broken, stk)
    for f in range(n_forms):  # §6.4 the winner's assault formations not broken at the start
        if not forms[f, F_ASSAULT] or forms[f, F_BROKEN0]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, fs, -1, f, lv, LV_CNT * L)
        for l in range(L):
            win = cons[l] & np.int64(loser[l] != fs) & (1 - broken0[f * L + l])
            nb = bm[f * L + l] + losses_bm[f * L + l] * win
            size = lv[LV_CNT * L + l]
            fails = win & np.int64(nb >= (2 * size if tsk else size))
            bm[f * L + l] = 0 if fails else nb
            broken[f * L + l] |= fails
    for f in range(n_forms):  # the state after the assault
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units, False)
        n_f = forms[f, F_N]
        for l in range(L):  # destroyed / broken and alive / unbroken; a destroyed one holds no BMs
            al = np.int64(_at(fa, f * L + l) > 0)
            _put(bm_a, f * L + l, _at(bm, f * L + l) * al)
            _put(broken_a, f * L + l, _at(broken, f * L + l) & al)
            _put(cas_a, f * L + l, n_f - _at(fa, f * L + l))
    for f in range(n_forms):  # its war engines after the assault (spec §10.9)
        if fweb[f + 1] > fweb[f]:
            _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, dmg_a, f * L, sh_a, f * L)
    return nd
