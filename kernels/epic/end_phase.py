"""The end phase (rule step, spec §7, §10.7; TP 1.14.1, 2.1.15, TP-SR): war engines' fires, reactor breaches,
regeneration and void shields, returning Necron units, then the rally with Supreme Commander re-rolls, the
withdrawal of a broken formation that fails it, shadowfields back.
"""
import numpy as np

from ..jit import njit
from ..rng import _FOUR, _ONE, _SIX
from .access import _at, _max, _min, _put
from .breaks import _withdraw_lane
from .damage import _book_lane, _destroyed_lane, _we_resolve_lane
from .dice import _d6, _die, _roll
from .layout import (BOOK_END_PHASE, E_HULL, E_SPLASH, F_ANY_LEADER, F_ANY_WE, F_COLS, F_ENEMY30, F_INIT, F_MOB, F_SIDE,
                     F_TSKNF, F_WE_WD, LANES, LV_LEAD, LV_MOD, LV_OK, LV_SCR0, LV_SIZE, LV_TEST, M_LEADER, M_SC,
                     R_LEADERS, R_NAT1, R_RALLY, R_SC_REROLL, U_BIT, U_COLS, U_DC, U_NECRON, U_REGEN, U_SHADOW, U_SIDE,
                     U_SPLASH_ON, U_VOID, U_WORD, W_BREACH, W_FIELD, W_FIRE, W_LOST_VOID, W_SHADOW, W_VOID)
from .units import _less_lost_capacity, _rows_count, _rows_fcount, _starting_dc, _wat, _wput


@njit(cache=True)
def _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, dmg, dmg_off, sh, sh_off):
    """``dmg[dmg_off + l]``: DC lost by formation ``f``'s war engines and shielded units in each lane (a
    destroyed one its starting DC); ``sh[sh_off + l]``: their void shields, power fields and shadowfields up
    (0 without war-engine rules ``we``) (spec §10.9)."""
    for l in range(LANES):
        _put(dmg, dmg_off + l, 0)
        _put(sh, sh_off + l, 0)
    for kk in range(_at(fweb, f), _at(fweb, f + 1)):
        u = _at(fwe, kk)
        dc = _at(units, u * U_COLS + U_DC)
        for l in range(LANES):
            _put(dmg, dmg_off + l, _at(dmg, dmg_off + l) + dc - _at(hp, u * LANES + l))
        if we:
            for l in range(LANES):
                up = (_wat(wst, W_VOID, u, l, n_units) + _wat(wst, W_FIELD, u, l, n_units)
                      + _wat(wst, W_SHADOW, u, l, n_units)) * np.int64(_at(hp, u * LANES + l) > 0)
                _put(sh, sh_off + l, _at(sh, sh_off + l) + up)


@njit(cache=True)
def _any_necron(units, fu, fb, f):
    """Has formation ``f`` a unit with TP-SR Necron Technology?"""
    for kk in range(_at(fb, f), _at(fb, f + 1)):
        if _at(units, _at(fu, kk) * U_COLS + U_NECRON):
            return True
    return False


@njit(cache=True)
def _end_phase_step2_lane(rs, l, f, fwe, fweb, fu, fb, units, hp, wst, n_units, alive, n_words, forms, bm, broken,
                          trapped, splashes, splash, n_forms, losses_bm, kills, stk):
    """End-phase step 2 for formation ``f`` in lane ``l``, before the rally (spec §10.7), unit by unit: each
    fire rolls a D6 (1: a point of damage and a new fire, which first rolls in the next end phase; 2–4: a
    point; 5–6: put out), then each reactor breach while it lives (1: destroyed, with its splash; 2–3: a
    point; 4–6: repaired); a war engine with regeneration regains 1 DC, a unit with void shields one
    shield; then, if it has a living unit, its last destroyed Necron unit returns with its full DC (TP-SR
    Necron Technology).  Damage done here adds BMs to its unbroken formation; if ``f``'s BMs grew, its break
    test follows (broken: BMs removed, it withdraws as after a failed rally).  Returns the dice rolled."""
    nd = 0
    i = f * LANES + l
    before = _at(bm, i)
    for kk in range(_at(fweb, f), _at(fweb, f + 1)):
        u = _at(fwe, kk)
        if _at(hp, u * LANES + l) == 0:
            continue
        fires = _wat(wst, W_FIRE, u, l, n_units)
        breaches = _wat(wst, W_BREACH, u, l, n_units)
        if fires + breaches > 0:
            new_fires = 0
            for _ in range(fires):
                r = _d6(rs, l)
                nd += 1
                if r >= 5:
                    fires -= 1
                    continue
                new_fires += np.int64(r == 1)
                nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, 1, BOOK_END_PHASE, 0, units, hp, wst, n_units, alive,
                                       n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
            _wput(wst, W_FIRE, u, l, n_units, fires + new_fires)
            for _ in range(breaches):
                left = _at(hp, u * LANES + l)
                if left == 0:
                    break
                r = _d6(rs, l)
                nd += 1
                if r >= 4:
                    breaches -= 1
                elif r >= 2:
                    nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, 1, BOOK_END_PHASE, 0, units, hp, wst, n_units,
                                           alive, n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm,
                                           broken, stk)
                else:  # the reactor explodes: destroyed, its DC left count as damage (spec §10.4), its splash
                    _book_lane(units, u, l, left, left, BOOK_END_PHASE, 0, losses_bm, kills, bm, broken)
                    _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk)
                    if splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
                        nd += _we_resolve_lane(rs, l, E_SPLASH, u, 0, 0, 0, BOOK_END_PHASE, 0, units, hp, wst,
                                               n_units, alive, n_words, splashes, splash, fu, fb, n_forms, losses_bm,
                                               kills, bm, broken, stk)
            _wput(wst, W_BREACH, u, l, n_units, breaches)
        left = _at(hp, u * LANES + l)
        if left > 0:
            if _at(units, u * U_COLS + U_REGEN):
                _put(hp, u * LANES + l, _min(left + 1, _starting_dc(units, wst, u, l, n_units)))
            _wput(wst, W_VOID, u, l, n_units, _min(_wat(wst, W_VOID, u, l, n_units) + 1,
                                                   _at(units, u * U_COLS + U_VOID)
                                                   - _wat(wst, W_LOST_VOID, u, l, n_units)))
    living = False
    back = -1
    for kk in range(_at(fb, f), _at(fb, f + 1)):
        u = _at(fu, kk)
        if _at(hp, u * LANES + l) > 0:
            living = True
        elif _at(units, u * U_COLS + U_NECRON):
            back = u  # the last in allocation order, the farthest from the enemy (spec §10.8.7)
    if living and back >= 0:
        _put(hp, back * LANES + l, _starting_dc(units, wst, back, l, n_units))
        a = (_at(units, back * U_COLS + U_SIDE) * n_words + _at(units, back * U_COLS + U_WORD)) * LANES + l
        _put(alive, a, _at(alive, a) | (_ONE << np.uint64(_at(units, back * U_COLS + U_BIT))))
    if _at(bm, i) > before:
        size = 0
        for kk in range(_at(fb, f), _at(fb, f + 1)):
            u = _at(fu, kk)
            size += _starting_dc(units, wst, u, l, n_units) * np.int64(_at(hp, u * LANES + l) > 0)
        if size > 0 and _at(bm, i) >= (2 * size if _at(forms, f * F_COLS + F_TSKNF) else size):
            _put(bm, i, 0)
            _put(broken, i, 1)
            nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, False, forms, alive, n_words, wst, n_units,
                                 BOOK_END_PHASE, splashes, splash, n_forms, losses_bm, kills, bm, broken, stk)
    return nd


@njit(cache=True, _nrt=False)
def _end_phase(rs, any_sc, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb, fwe, fweb, hp, wst,
               we, trapped, splashes, splash, kills, stk, lv, rules, per_form, per_lane):
    """The end phase of the lanes whose trial ended: war engines' step 2 (spec §10.7), the rally (§7, with Supreme
    Commander re-rolls), shadowfields back; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nat1 = rules[R_NAT1]
    sc_reroll = rules[R_SC_REROLL] != 0
    use_leaders = rules[R_LEADERS] != 0
    nd = 0
    bm, broken, losses_bm, tested, passed = per_form[0], per_form[1], per_form[2], per_form[3], per_form[4]
    fa = per_form[7]
    ended, d, withdrew = per_lane[7], per_lane[12], per_lane[26]
    any_withdrew = 0
    if rules[R_RALLY] and we:  # spec §10.7: end-phase step 2, before the rally
        for f in range(n_forms):
            if fweb[f + 1] == fweb[f] and not _any_necron(units, fu, fb, f):
                continue
            for l in range(L):
                if ended[l]:
                    nd += _end_phase_step2_lane(rs, l, f, fwe, fweb, fu, fb, units, hp, wst, n_units, alive,
                                                n_words, forms, bm, broken, trapped, splashes, splash, n_forms,
                                                losses_bm, kills, stk)
        for f in range(n_forms):
            _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units, False)
    if rules[R_RALLY]:  # §7
        nat1_ok = np.int64(nat1 == 0)
        for side in range(2):  # each side's Supreme Commander re-rolls this turn: one per living SC
            if sc_reroll and any_sc[side]:
                _rows_count(alive, flat_masks, flat_fmasks, side, M_SC, lv, (LV_SCR0 + side) * L, n_words, wes,
                            web, units, False)
            else:
                for l in range(L):
                    lv[(LV_SCR0 + side) * L + l] = 0
        for f in range(n_forms):
            init = forms[f, F_INIT]
            e30 = forms[f, F_ENEMY30]
            mob = forms[f, F_MOB]
            tsk = forms[f, F_TSKNF]
            if use_leaders and forms[f, F_ANY_LEADER]:
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, M_LEADER, lv, LV_LEAD * L, n_words, wes,
                             web, units, False)
            else:
                for l in range(L):
                    lv[LV_LEAD * L + l] = 0
            if forms[f, F_ANY_WE]:  # its size: a war engine counts its starting DC (TP 3.0)
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_SIZE * L, n_words, wes, web,
                             units, True)
                _less_lost_capacity(units, wst, n_units, hp, flat_masks, forms[f, F_SIDE], -1, f, lv, LV_SIZE * L)
            else:
                for l in range(L):
                    _put(lv, LV_SIZE * L + l, _at(fa, f * L + l))
            for l in range(L):  # who tests (a formation with a living unit and BMs or broken)
                living = _at(fa, f * L + l)
                brk = _at(broken, f * L + l)
                bmf = _at(bm, f * L + l)
                _put(lv, LV_TEST * L + l, _at(ended, l) & np.int64(living > 0) & (np.int64(bmf > 0) | brk))
                mob_mod = (2 if living > 10 else (1 if living > 5 else 0)) if mob else 0
                _put(lv, LV_MOD * L + l, -e30 - 2 * brk + mob_mod)
            nd += _roll(rs, d, _SIX, _FOUR, lv, LV_TEST * L, 0)
            for l in range(L):
                roll = _at(d, l)
                mod = _at(lv, LV_MOD * L + l)
                _put(lv, LV_OK * L + l, np.int64(roll + mod >= init) & (np.int64(roll != 1) | nat1_ok))
            fs = forms[f, F_SIDE]
            if sc_reroll and any_sc[fs]:  # a failed test spends one of the army's re-rolls, once (TP 2.1.15)
                pool = (LV_SCR0 + fs) * L
                for l in range(L):
                    if lv[LV_TEST * L + l] and not lv[LV_OK * L + l] and lv[pool + l] > 0:
                        lv[pool + l] -= 1
                        roll = _die(rs, l, _SIX, _FOUR)
                        nd += 1
                        lv[LV_OK * L + l] = np.int64(roll + lv[LV_MOD * L + l] >= init and (roll != 1 or nat1_ok))
            wd_any = 0
            trap = np.int64(trapped[f] > 0.0 or forms[f, F_WE_WD] > 0)
            for l in range(L):
                brk = _at(broken, f * L + l)
                bmf = _at(bm, f * L + l)
                test = _at(lv, LV_TEST * L + l)
                ok = _at(lv, LV_OK * L + l)
                cut = (1 + tsk) * _at(lv, LV_LEAD * L + l)
                size = _at(lv, LV_SIZE * L + l)
                pass_broken = _max((size if tsk else size >> 1) - cut, 0)
                pass_unbroken = _max((bmf >> 1) - cut, 0)
                passes = test & ok
                _put(tested, f * L + l, test)
                _put(passed, f * L + l, passes)
                _put(bm, f * L + l, (pass_broken if brk else pass_unbroken) if passes else bmf)
                _put(broken, f * L + l, brk & (1 - passes))
                wd = trap & test & brk & (1 - ok)
                _put(withdrew, l, wd)
                wd_any |= wd
            if wd_any:
                any_withdrew = 1
                for l in range(L):
                    if withdrew[l]:
                        nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, False, forms, alive, n_words,
                                             wst, n_units, BOOK_END_PHASE, splashes, splash, n_forms,
                                             losses_bm, kills, bm, broken, stk)
        if any_withdrew:
            for f in range(n_forms):
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units,
                             False)
        if we:  # shadowfields come back after the rally step (spec §10.2)
            for u in range(n_units):
                top = units[u, U_SHADOW]
                if top == 0:
                    continue
                for l in range(L):
                    i = (W_SHADOW * n_units + u) * L + l
                    up = wst[i]
                    wst[i] = up + np.int64(ended[l] and hp[u * L + l] > 0 and 0 < up < top)
    return nd
