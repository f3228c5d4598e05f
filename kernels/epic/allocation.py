"""Allocation (lane primitives, TP 1.9.6, 1.12.5, 2.1.14, 3.1.2, 3.2.1, 3.2.5; spec §2, §9.14): one round-robin
per hit kind over the enemy's living directly engaged units, with one count per unit shared by every hit of
the kind, a war engine taking a block of its starting DC per pass, a war engine's hits that reach only units in
base contact (or only the others) on the same counts; sniper hits to their target.  ``_allocation_lane`` for
scenarios without war-engine rules, ``_we_allocations_lane`` with them (each hit resolved in allocation order).
"""
import numpy as np

from ..jit import njit
from ..rng import _ONE, _THREE
from .access import _ZERO, _at, _lowest_bit, _min, _put
from .damage import _we_resolve_lane
from .dice import _d6, _die
from .layout import (BOOK_FIGHT, E_HIT, H_DISRUPT, H_FF, H_IC, H_LANCE, H_SNIPER, H_SUPPORT, LANES, M_COLS, M_TARGET,
                     N_CLASSES, REACH_ANY, REACH_CONTACT, REACH_NON_CONTACT, S_CLASS, S_COLS, S_DISRUPT, S_IC, S_LANCE,
                     S_REACH, S_SUPPORT, S_TK_N, S_TK_PLUS, S_TK_SIDES, U_BCT, U_COLS, U_DC, U_FORM, U_LOSS_BM, U_SNIPE,
                     U_WE, W_BLOCK)
from .saves import _unsaved_lane
from .units import _abit, _clear_unit, _starting_dc, _wat, _wput


@njit(cache=True)
def _round_robin_lane(l, side, n_any, n_contact, n_other, units, hp, tgt, tgb, taken):
    """The round-robin of one allocation on ``side`` in lane ``l``, decided before its saves: ``n_any`` hits any of
    its living directly engaged units may take, ``n_contact`` a war engine's hits that only those fighting in base
    contact may take, ``n_other`` those only the others may take.  Pass after pass, each unit in allocation order
    that may take a hit left takes 1, a war engine a block of its starting DC, from the hits only its kind of
    unit may take first: one count per unit for every hit of the kind (TP 1.9.6, 1.12.5, 3.1.2, 3.2.1; spec §2).
    ``taken[k - tgb[side]]``: the hits target ``k`` takes.  Hits no unit may take are lost."""
    k0 = _at(tgb, side)
    k1 = _at(tgb, side + 1)
    for k in range(k0, k1):
        _put(taken, k - k0, 0)
    left = n_any + n_contact + n_other
    while left > 0:
        took = 0
        for k in range(k0, k1):
            u = _at(tgt, k)
            if _at(hp, u * LANES + l) == 0:
                continue
            contact = _at(units, u * U_COLS + U_BCT)
            own = n_contact if contact else n_other
            t = _min(_at(units, u * U_COLS + U_DC), own + n_any)
            from_own = _min(t, own)
            n_contact -= from_own * contact
            n_other -= from_own * (1 - contact)
            n_any -= t - from_own
            _put(taken, k - k0, _at(taken, k - k0) + t)
            took += t
        if took == 0:
            break
        left -= took
    return


@njit(cache=True)
def _allocation_lane(rs, l, side, cls, n_any, n_contact, n_other, units, hp, alive, losses_bm, tgt, tgb, n_words,
                     taken):
    """One allocation of hits of class ``cls`` (no sniper) on ``side`` in lane ``l`` (_round_robin_lane), then their
    saves and damage unit by unit, casualties removed (TP 1.9.6, 1.12.5, 3.1.2; spec §2).  Returns (damage
    inflicted, dice rolled)."""
    inflicted = 0
    nd = 0
    _round_robin_lane(l, side, n_any, n_contact, n_other, units, hp, tgt, tgb, taken)
    k0 = _at(tgb, side)
    for k in range(k0, _at(tgb, side + 1)):
        n = _at(taken, k - k0)
        if n == 0:
            continue
        u = _at(tgt, k)
        hpu = _at(hp, u * LANES + l)
        unsaved = 0
        for _ in range(n):
            f, k2 = _unsaved_lane(rs, l, cls, u, units)
            unsaved += f
            nd += k2
        done = _min(unsaved, hpu)
        _put(hp, u * LANES + l, hpu - done)
        fl = _at(units, u * U_COLS + U_FORM) * LANES + l
        _put(losses_bm, fl, _at(losses_bm, fl) + done * _at(units, u * U_COLS + U_LOSS_BM))
        inflicted += done
        _clear_unit(alive, units, u, l, n_words, np.int64(done == hpu and done > 0))
    return inflicted, nd


@njit(cache=True)
def _snipe_lane(rs, l, side, hits, hs, units, alive, masks, base, n_words):
    """(target, unsaved hits, dice) of the sniper hits on ``side`` in lane ``l``."""
    snipe = -1
    first = -1
    for w in range(n_words):
        m = _abit(alive, side, w, l, n_words) & _at(masks, (2 * w + side) * M_COLS + M_TARGET)
        while m != _ZERO:
            u = _at(base, side) + 64 * w + _lowest_bit(m)
            m &= m - _ONE
            if first < 0:
                first = u
            if _at(units, u * U_COLS + U_SNIPE):
                snipe = u
                break
        if snipe >= 0:
            break
    if snipe < 0:
        snipe = first
    unsaved = 0
    nd = 0
    for cls in range(3, N_CLASSES):
        for _ in range(_at(hits, (hs * N_CLASSES + cls) * LANES + l)):
            f, k = _unsaved_lane(rs, l, cls, snipe, units)
            unsaved += f
            nd += k
    return snipe, unsaved, nd


@njit(cache=True)
def _we_reach(src, sff, k, l, kind, sniper_pass):
    """The reach of source row ``k``'s hits in lane ``l`` if they belong to the allocation of ``kind``, in its
    sniper or its round-robin part, else -1.  (A war engine's row has its reach only while it is in contact:
    bit 1 of ``sff``; sniper hits of any kind go with the ordinary hits.)"""
    cls = _at(src, k * S_COLS + S_CLASS)
    sniper = cls >= 3
    if sniper != sniper_pass or (kind != 0 if sniper else cls != kind):
        return -1
    return _at(src, k * S_COLS + S_REACH) if _at(sff, k * LANES + l) >> 1 else REACH_ANY


@njit(cache=True)
def _we_next_row(src, sff, shits, k, g1, l, kind, reach):
    """The first source row from ``k`` (before ``g1``, else ``g1``) with round-robin hits of (``kind``, ``reach``)
    in lane ``l``."""
    while k < g1 and (_at(shits, k * LANES + l) == 0 or _we_reach(src, sff, k, l, kind, False) != reach):
        k += 1
    return k


@njit(cache=True)
def _we_how(src, sff, k, l, sniper):
    """The flags (H_*) of a hit of source row ``k`` in lane ``l``."""
    return (H_SNIPER * np.int64(sniper) + H_LANCE * np.int64(_at(src, k * S_COLS + S_LANCE) != 0)
            + H_IC * np.int64(_at(src, k * S_COLS + S_IC) != 0)
            + H_SUPPORT * np.int64(_at(src, k * S_COLS + S_SUPPORT) != 0)
            + H_FF * (_at(sff, k * LANES + l) & 1)
            + H_DISRUPT * np.int64(_at(src, k * S_COLS + S_DISRUPT) != 0))


@njit(cache=True)
def _we_damage(rs, l, src, k, hk, u, units):
    """(damage, dice) of a hit of kind ``hk`` of source row ``k`` allocated to unit ``u``: a titan-killer hit on a
    war engine rolls its damage at once (TP 3.2.5), any other hit does 1."""
    if hk != 2 or not _at(units, u * U_COLS + U_WE):
        return 1, 0
    tk_n = _at(src, k * S_COLS + S_TK_N)
    damage = _at(src, k * S_COLS + S_TK_PLUS)
    for _ in range(tk_n):
        damage += _die(rs, l, _THREE, _ONE) if _at(src, k * S_COLS + S_TK_SIDES) == 3 else _d6(rs, l)
    return damage, tk_n


@njit(cache=True)
def _we_allocations_lane(rs, l, side, g0, g1, src, shits, sff, units, hp, alive, tgt, tgb, n_words, wst, n_units,
                         elig, ck, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk):
    """Every allocation of the hits of source rows ``g0``..``g1`` on ``side`` in lane ``l``, as the reference
    engine makes them (spec §2, §10.5): the sniper and ordinary hits, then the macro-weapon hits, then the
    titan-killer hits, each to the living directly engaged units as the allocation begins.  The sniper hits
    go to their target; the others round-robin from the nearest, pass after pass, each unit that may take a hit
    left taking a block of its starting DC (1 for a unit that is no war engine), a war engine's hits that reach
    only units in base contact, or only the others, first to the units they may reach, then the hits any unit
    may take, all on one count (TP 1.9.6, 1.12.5, 3.1.2, 3.2.1; a titan-killer hit counts as the points rolled
    for it, TP 3.2.5).  Each hit is resolved in allocation order (a hit on a unit already destroyed is wasted)
    with all that follows it (_we_resolve_lane); damage is booked as kills (times ``ck``) and losses.
    ``elig``: scratch.  Returns the dice rolled."""
    nd = 0
    for kind in range(3):
        n = 0
        for k in range(g0, g1):
            if _we_reach(src, sff, k, l, kind, False) >= 0 or _we_reach(src, sff, k, l, kind, True) >= 0:
                n += _at(shits, k * LANES + l)
        if n == 0:
            continue
        ne = 0
        sn_target = -1
        for i in range(_at(tgb, side), _at(tgb, side + 1)):
            u = _at(tgt, i)
            if _at(hp, u * LANES + l) > 0:
                _put(elig, ne, u)
                _wput(wst, W_BLOCK, u, l, n_units, _starting_dc(units, wst, u, l, n_units))
                ne += 1
                if sn_target < 0 and _at(units, u * U_COLS + U_SNIPE):
                    sn_target = u
        if ne == 0:
            continue  # the hits are lost
        if sn_target < 0:
            sn_target = _at(elig, 0)
        for k in range(g0, g1):  # the sniper hits (TP 2.1.14)
            if _we_reach(src, sff, k, l, kind, True) < 0:
                continue
            hk = _at(src, k * S_COLS + S_CLASS) - 3
            for _ in range(_at(shits, k * LANES + l)):
                damage, k2 = _we_damage(rs, l, src, k, hk, sn_target, units)
                nd += k2
                if _at(hp, sn_target * LANES + l) > 0:
                    nd += _we_resolve_lane(rs, l, E_HIT, sn_target, hk, _we_how(src, sff, k, l, True), damage,
                                           BOOK_FIGHT, ck, units, hp, wst, n_units, alive, n_words, splashes, splash,
                                           fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
        # the round-robin: one cursor (row, hits left in it) per reach
        k_any = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_ANY)
        k_con = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_CONTACT)
        k_oth = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_NON_CONTACT)
        n_any = _at(shits, k_any * LANES + l) if k_any < g1 else 0
        n_con = _at(shits, k_con * LANES + l) if k_con < g1 else 0
        n_oth = _at(shits, k_oth * LANES + l) if k_oth < g1 else 0
        took = True
        while took:
            took = False
            for e in range(ne):
                u = _at(elig, e)
                contact = _at(units, u * U_COLS + U_BCT) != 0
                used = 0
                while used < _wat(wst, W_BLOCK, u, l, n_units):
                    if contact and n_con > 0:
                        reach, k = REACH_CONTACT, k_con
                        n_con -= 1
                    elif not contact and n_oth > 0:
                        reach, k = REACH_NON_CONTACT, k_oth
                        n_oth -= 1
                    elif n_any > 0:
                        reach, k = REACH_ANY, k_any
                        n_any -= 1
                    else:
                        break
                    if reach == REACH_CONTACT and n_con == 0:
                        k_con = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_con = _at(shits, k_con * LANES + l) if k_con < g1 else 0
                    elif reach == REACH_NON_CONTACT and n_oth == 0:
                        k_oth = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_oth = _at(shits, k_oth * LANES + l) if k_oth < g1 else 0
                    elif reach == REACH_ANY and n_any == 0:
                        k_any = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_any = _at(shits, k_any * LANES + l) if k_any < g1 else 0
                    hk = _at(src, k * S_COLS + S_CLASS)
                    damage, k2 = _we_damage(rs, l, src, k, hk, u, units)
                    nd += k2
                    used += damage
                    took = True
                    if _at(hp, u * LANES + l) == 0:
                        continue  # already destroyed: the hit is wasted
                    nd += _we_resolve_lane(rs, l, E_HIT, u, hk, _we_how(src, sff, k, l, False), damage, BOOK_FIGHT,
                                           ck, units, hp, wst, n_units, alive, n_words, splashes, splash, fu, fb,
                                           n_forms, losses_bm, kills, bm, broken, stk)
    return nd
