"""Allocation (lane primitives, TP 1.9.6, 1.12.5, 2.1.14, 3.1.2, 3.2.1, 3.2.5; spec §2, §9.14): one round-robin
per hit kind over the enemy's living directly engaged units, with one count per unit shared by every hit of
the kind, a war engine taking a block of its starting DC per pass, a war engine's hits that reach only units in
base contact (or only the others) on the same counts; sniper hits to their target.  ``_allocation_lane`` for
scenarios without war-engine rules, ``_we_allocations`` with them (each hit resolved in allocation order).
"""
import numpy as np

from ..rng import _ONE, _THREE
from .access import FALSE, TRUE, _ZERO, _at, _lowest_bit, _min, _put, kernel_function
from .damage import _we_resolve_lane
from .dice import _d6, _die
from .hits import ASSAULT_KINDS, H_DISRUPT, H_FF, H_IC, H_LANCE, H_SNIPER, H_SUPPORT, KIND_TK, _class_kind
from .layout import (ATTACKER, BOOK_FIGHT, DEFENDER, E_HIT, LANES, M_COLS, M_TARGET, N_CLASSES, REACH_ANY,
                     REACH_CONTACT, REACH_NON_CONTACT, S_CLASS, S_COLS, S_DISRUPT, S_IC, S_LANCE, S_REACH, S_SUPPORT,
                     S_TK_N, S_TK_PLUS, S_TK_SIDES, U_BCT, U_COLS, U_DC, U_FORM, U_LOSS_BM, U_SNIPE, U_WE, W_BLOCK)
from .saves import _unsaved_lane
from .units import _abit, _clear_unit, _starting_dc, _wat, _wput


@kernel_function
def _round_robin_lane(fv, l, side, n_any, n_contact, n_other):
    """The round-robin of one allocation on ``side`` in lane ``l``, decided before its saves: ``n_any`` hits any of
    its living directly engaged units may take, ``n_contact`` a war engine's hits that only those fighting in base
    contact may take, ``n_other`` those only the others may take.  Pass after pass, each unit in allocation order
    that may take a hit left takes 1, a war engine a block of its starting DC, from the hits only its kind of
    unit may take first: one count per unit for every hit of the kind (TP 1.9.6, 1.12.5, 3.1.2, 3.2.1; spec §2).
    ``fv.elig[k - tgb[side]]``: the hits target ``k`` takes.  Hits no unit may take are lost."""
    units = fv.units
    taken = fv.elig
    k0 = _at(fv.tgb, side)
    k1 = _at(fv.tgb, side + 1)
    for k in range(k0, k1):
        _put(taken, k - k0, 0)
    left = n_any + n_contact + n_other
    while left > 0:
        took = 0
        for k in range(k0, k1):
            u = _at(fv.tgt, k)
            if _at(fv.hp, u * LANES + l) == 0:
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


@kernel_function
def _allocation_lane(fv, l, side, cls, n_any, n_contact, n_other):
    """One allocation of hits of class ``cls`` (no sniper) on ``side`` in lane ``l`` (_round_robin_lane), then their
    saves and damage unit by unit, casualties removed (TP 1.9.6, 1.12.5, 3.1.2; spec §2).  Returns (damage
    inflicted, dice rolled)."""
    units = fv.units
    hp = fv.hp
    inflicted = 0
    nd = 0
    _round_robin_lane(fv, l, side, n_any, n_contact, n_other)
    k0 = _at(fv.tgb, side)
    for k in range(k0, _at(fv.tgb, side + 1)):
        n = _at(fv.elig, k - k0)
        if n == 0:
            continue
        u = _at(fv.tgt, k)
        hpu = _at(hp, u * LANES + l)
        unsaved = 0
        for _ in range(n):
            f, k2 = _unsaved_lane(fv.rs, l, cls, u, units)
            unsaved += f
            nd += k2
        done = _min(unsaved, hpu)
        _put(hp, u * LANES + l, hpu - done)
        fl = _at(units, u * U_COLS + U_FORM) * LANES + l
        _put(fv.losses_bm, fl, _at(fv.losses_bm, fl) + done * _at(units, u * U_COLS + U_LOSS_BM))
        inflicted += done
        _clear_unit(fv.alive, units, u, l, fv.sets.n_words, np.int64(done == hpu and done > 0))
    return inflicted, nd


@kernel_function
def _snipe_lane(fv, l, side):
    """(target, unsaved hits, dice) of the enemy's sniper hits on ``side`` in lane ``l`` (TP 2.1.14): the first
    living directly engaged Inspiring, Leader or Supreme Commander unit, else the first one."""
    units = fv.units
    n_words = fv.sets.n_words
    snipe = -1
    first = -1
    for w in range(n_words):
        m = _abit(fv.alive, side, w, l, n_words) & _at(fv.sets.masks, (2 * w + side) * M_COLS + M_TARGET)
        while m != _ZERO:
            u = _at(fv.base, side) + 64 * w + _lowest_bit(m)
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
    hs = 1 - side
    for cls in range(ASSAULT_KINDS, N_CLASSES):
        for _ in range(_at(fv.hits, (hs * N_CLASSES + cls) * LANES + l)):
            f, k = _unsaved_lane(fv.rs, l, cls, snipe, units)
            unsaved += f
            nd += k
    return snipe, unsaved, nd


@kernel_function
def _we_reach(src, sff, k, l, slot, sniper_pass):
    """The reach of source row ``k``'s hits in lane ``l`` if they belong to the allocation of the kind in ``slot``
    (a hit class's slot, wargame_odds.kernels.epic.hits), in its sniper or its round-robin part, else -1.  (A war
    engine's row has its reach only while it is in contact: bit 1 of ``sff``; sniper hits of any kind go with the
    ordinary hits.)"""
    cls = _at(src, k * S_COLS + S_CLASS)
    sniper = cls >= ASSAULT_KINDS
    if sniper != sniper_pass or (slot != 0 if sniper else cls != slot):
        return -1
    return _at(src, k * S_COLS + S_REACH) if _at(sff, k * LANES + l) >> 1 else REACH_ANY


@kernel_function
def _we_next_row(wh, k, g1, l, slot, reach):
    """The first source row from ``k`` (before ``g1``, else ``g1``) with round-robin hits of (``slot``, ``reach``)
    in lane ``l``, and its hits."""
    while k < g1 and (_at(wh.shits, k * LANES + l) == 0 or _we_reach(wh.src, wh.sff, k, l, slot, FALSE) != reach):
        k += 1
    return k, (_at(wh.shits, k * LANES + l) if k < g1 else 0)


@kernel_function
def _we_how(src, sff, k, l, sniper):
    """The flags (H_*) of a hit of source row ``k`` in lane ``l``."""
    return (H_SNIPER * np.int64(sniper) + H_LANCE * np.int64(_at(src, k * S_COLS + S_LANCE) != 0)
            + H_IC * np.int64(_at(src, k * S_COLS + S_IC) != 0)
            + H_SUPPORT * np.int64(_at(src, k * S_COLS + S_SUPPORT) != 0)
            + H_FF * (_at(sff, k * LANES + l) & 1)
            + H_DISRUPT * np.int64(_at(src, k * S_COLS + S_DISRUPT) != 0))


@kernel_function
def _we_damage(rs, l, src, k, hk, u, units):
    """(damage, dice) of a hit of kind ``hk`` of source row ``k`` allocated to unit ``u``: a titan-killer hit on a
    war engine rolls its damage at once (TP 3.2.5), any other hit does 1."""
    if hk != KIND_TK or not _at(units, u * U_COLS + U_WE):
        return 1, 0
    tk_n = _at(src, k * S_COLS + S_TK_N)
    damage = _at(src, k * S_COLS + S_TK_PLUS)
    for _ in range(tk_n):
        damage += _die(rs, l, _THREE, _ONE) if _at(src, k * S_COLS + S_TK_SIDES) == 3 else _d6(rs, l)
    return damage, tk_n


@kernel_function
def _we_take_hit(dm, wh, l, k, u, sniper, ck):
    """A hit of source row ``k`` allocated to unit ``u`` in lane ``l`` (its damage rolled now), then resolved
    unless ``u`` is already destroyed (the hit is wasted).  Returns (its damage, dice rolled)."""
    hk = _class_kind(_at(wh.src, k * S_COLS + S_CLASS))
    damage, nd = _we_damage(dm.rs, l, wh.src, k, hk, u, dm.units)
    if _at(dm.hp, u * LANES + l) > 0:
        nd += _we_resolve_lane(dm, l, E_HIT, u, hk, _we_how(wh.src, wh.sff, k, l, sniper), damage, BOOK_FIGHT, ck,
                               wh.splashes)
    return damage, nd


@kernel_function
def _we_eligible(units, hp, wst, tgt, tgb, elig, l, side):
    """The living directly engaged units of ``side`` (``tgt``, bounds ``tgb``) in lane ``l`` into ``elig``, each
    with its block (its starting DC as the allocation begins, W_BLOCK).  Returns (how many, the sniper target: the
    first Inspiring, Leader or Supreme Commander unit, else the first)."""
    ne = 0
    sn_target = -1
    for i in range(_at(tgb, side), _at(tgb, side + 1)):
        u = _at(tgt, i)
        if _at(hp, u * LANES + l) > 0:
            _put(elig, ne, u)
            _wput(wst, W_BLOCK, u, l, units.shape[0], _starting_dc(units, wst, u, l, units.shape[0]))
            ne += 1
            if sn_target < 0 and _at(units, u * U_COLS + U_SNIPE):
                sn_target = u
    if ne > 0 and sn_target < 0:
        sn_target = _at(elig, 0)
    return ne, sn_target


@kernel_function
def _we_round_robin_lane(dm, wh, l, ne, g0, g1, slot, ck, pools):
    """The round-robin part of one allocation of the kind in ``slot`` in lane ``l`` over the ``ne`` units of
    ``wh.elig``: pass after pass, each unit that may take a hit left takes a block of its starting DC, from the
    hits only its kind of unit (in base contact or not) may take first, then the hits any unit may take; one cursor
    (row, hits left in it) per reach over the source rows ``g0``..``g1`` (``pools``: the hits of each reach, a cursor
    only for those with hits).  Each hit is resolved as it is allocated (as _we_take_hit).  Returns the dice rolled."""
    nd = 0
    # (unpacked, not indexed by the np.int64 REACH_* codes: Numba's typing would record ``pools[np.int64(0)]``, which
    # it cannot type statically, as a failure for the key of ``pools[0]``, and fail every later unpacking of a tuple of
    # this type in the same compile)
    any_hits, contact_hits, other_hits = pools
    k_any, n_any = _we_next_row(wh, g0, g1, l, slot, REACH_ANY) if any_hits else (g1, 0)
    k_con, n_con = _we_next_row(wh, g0, g1, l, slot, REACH_CONTACT) if contact_hits else (g1, 0)
    k_oth, n_oth = _we_next_row(wh, g0, g1, l, slot, REACH_NON_CONTACT) if other_hits else (g1, 0)
    took = True
    while took and n_any + n_con + n_oth > 0:  # pass after pass, until the hits are gone or nobody takes one
        took = False
        for e in range(ne):
            if n_any + n_con + n_oth == 0:
                break
            u = _at(wh.elig, e)
            contact = _at(dm.units, u * U_COLS + U_BCT) != 0
            used = 0
            while used < _wat(dm.wst, W_BLOCK, u, l, dm.units.shape[0]):
                if contact and n_con > 0:
                    k = k_con
                    n_con -= 1
                    if n_con == 0:
                        k_con, n_con = _we_next_row(wh, k + 1, g1, l, slot, REACH_CONTACT)
                elif not contact and n_oth > 0:
                    k = k_oth
                    n_oth -= 1
                    if n_oth == 0:
                        k_oth, n_oth = _we_next_row(wh, k + 1, g1, l, slot, REACH_NON_CONTACT)
                elif n_any > 0:
                    k = k_any
                    n_any -= 1
                    if n_any == 0:
                        k_any, n_any = _we_next_row(wh, k + 1, g1, l, slot, REACH_ANY)
                else:
                    break
                hk = _class_kind(_at(wh.src, k * S_COLS + S_CLASS))  # _we_take_hit inline (a call passes dm, wh)
                damage, k2 = _we_damage(dm.rs, l, wh.src, k, hk, u, dm.units)
                if _at(dm.hp, u * LANES + l) > 0:
                    k2 += _we_resolve_lane(dm, l, E_HIT, u, hk, _we_how(wh.src, wh.sff, k, l, FALSE), damage,
                                           BOOK_FIGHT, ck, wh.splashes)
                nd += k2
                used += damage
                took = True
    return nd


@kernel_function
def _we_allocations(dm, wh, fight, gb, step, ck):
    """Every allocation of the hits of step ``step`` in each lane still fighting (``fight``), on the defender first
    (the attacker's hits), then on the attacker, as the reference engine makes them (spec §2, §10.5): the sniper
    and ordinary hits, then the macro-weapon hits, then the titan-killer hits of the enemy's source rows (group
    bounds ``gb``), each to the living directly engaged units as the allocation begins (_we_eligible).  The
    sniper hits go to their target (TP 2.1.14); the others round-robin (_we_round_robin_lane: TP 1.9.6, 1.12.5,
    3.1.2, 3.2.1; a titan-killer hit counts as the points rolled for it, TP 3.2.5).  Each hit is resolved in
    allocation order with all that follows it (_we_resolve_lane); damage is booked as kills (times ``ck``) and
    losses.  ``dm``: wargame_odds.kernels.epic.damage.damage_state; ``wh``: the step's WeHits.  The lanes are looped
    here, not by the caller: a call per lane and side passed ``dm`` and ``wh``.  Returns the dice rolled."""
    nd = 0
    for l in range(LANES):
        if _at(fight, l) == 0:
            continue
        for side in (DEFENDER, ATTACKER):
            g0 = _at(gb, (1 - side) * 3 + step)
            g1 = _at(gb, (1 - side) * 3 + step + 1)
            for slot in range(ASSAULT_KINDS):  # AP, MW, TK
                # its hits by reach, and its snipers' (int64 from the start: plain Numba compiles the round-robin once)
                n_any, n_con, n_oth, n_sniper = np.int64(0), np.int64(0), np.int64(0), np.int64(0)
                for k in range(g0, g1):
                    hits = _at(wh.shits, k * LANES + l)
                    if hits == 0:
                        continue
                    reach = _we_reach(wh.src, wh.sff, k, l, slot, FALSE)
                    n_any += hits * (reach == REACH_ANY)
                    n_con += hits * (reach == REACH_CONTACT)
                    n_oth += hits * (reach == REACH_NON_CONTACT)
                    n_sniper += hits * (_we_reach(wh.src, wh.sff, k, l, slot, TRUE) >= 0)
                if n_any + n_con + n_oth + n_sniper == 0:
                    continue
                ne, sn_target = _we_eligible(dm.units, dm.hp, dm.wst, wh.tgt, wh.tgb, wh.elig, l, side)
                if ne == 0:
                    continue  # the hits are lost
                for k in range(g0 if n_sniper else g1, g1):  # the sniper hits (TP 2.1.14)
                    if _we_reach(wh.src, wh.sff, k, l, slot, TRUE) >= 0:
                        for _ in range(_at(wh.shits, k * LANES + l)):
                            nd += _we_take_hit(dm, wh, l, k, sn_target, TRUE, ck)[1]
                if n_any + n_con + n_oth > 0:
                    nd += _we_round_robin_lane(dm, wh, l, ne, g0, g1, slot, ck, (n_any, n_con, n_oth))
    return nd
