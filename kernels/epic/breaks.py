"""Break test and withdrawal (lane primitives, TP 1.9.7, 1.12.8, 1.13.2–1.13.4, 3.2.4; spec §6.2): what a
withdrawal costs a formation (trapped units, speed-0 units, war-engine damage) and the turn's break test.
"""
from ..jit import njit
from .access import _at, _put
from .damage import _we_resolve_lane
from .dice import _uniform
from .layout import (BOOK_LOSSES, E_HULL, F_COLS, F_SPEED0, F_TSKNF, F_WE_WD, LANES, OUT, U_COLS, U_ENG, U_FEARLESS,
                     U_SPEED0, U_WE)
from .units import _cell, _clear_unit, _size


@njit(cache=True)
def _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
    """Can formation ``f``'s withdrawal cost it anything (:func:`_withdraw_lane`): trapped units, war-engine damage,
    or speed-0 units that die (``speed_zero_die``)?"""
    return _at(trapped, f) > 0.0 or _at(forms, f * F_COLS + F_WE_WD) > 0 or (
        speed_zero_die and _at(forms, f * F_COLS + F_SPEED0) != 0)


@njit(cache=True)
def _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, speed_zero_die, forms, alive, n_words, wst, n_units, mode,
                   splashes, splash, n_forms, losses_bm, kills, bm, broken, stk):
    """Withdrawal of formation ``f`` in lane ``l`` (spec §6.2; a war engine's damage rolls for criticals,
    booked as ``mode`` says, spec §10.4).  Returns the dice rolled for criticals and splashes."""
    p = _at(trapped, f)
    we_damage = _at(forms, f * F_COLS + F_WE_WD)
    nd = 0
    if _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
        for k in range(_at(fb, f), _at(fb, f + 1)):
            u = _at(fu, k)
            if _at(hp, u * LANES + l) == 0 or _at(units, u * U_COLS + U_FEARLESS):
                continue
            kill = False
            if speed_zero_die and _at(units, u * U_COLS + U_SPEED0) and _at(units, u * U_COLS + U_ENG) != OUT:
                kill = True
            elif _at(units, u * U_COLS + U_WE):  # 1 damage per enemy unit within 15 cm, no save (TP 3.2.4)
                nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, we_damage, mode, 0, units, hp, wst, n_units, alive,
                                       n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
            elif p > 0.0:
                kill = _uniform(rs, l) < p
            if kill:
                _put(hp, u * LANES + l, 0)
                _clear_unit(alive, units, u, l, n_words, 1)
    return nd


@njit(cache=True, _nrt=False)
def _fails_at_size(forms, bm, f, l, size):
    """BMs ≥ ``size``, They Shall Know No Fear: ≥ 2 × size (TP 1.13.2; TP-SR TSKNF)."""
    per_unit = 2 if _cell(forms, f, F_COLS, F_TSKNF) else 1
    return _at(bm, f * LANES + l) >= per_unit * size


@njit(cache=True, _nrt=False)
def _fails_break_test(hp, fu, fb, units, forms, bm, f, l):
    """:func:`_fails_at_size` at the formation's :func:`_size`."""
    return _fails_at_size(forms, bm, f, l, _size(hp, fu, fb, units, f, l))


@njit(cache=True, _nrt=False)
def _break(rs, l, f, fu, fb, units, hp, trapped, forms, alive, n_words, wst, n_units, splash, n_forms, losses_bm,
           kills, bm, broken, stk):
    """Broken: BMs removed, it withdraws (TP 1.9.7, 1.13.2, 1.13.3): ``kernels.epic.breaks._withdraw_lane``.  The
    losses its war engines' withdrawal damage books count for nothing in the turn, and the assault starts from
    none (analysis.epic.turn.Turn.assault), so they are dropped.  Returns the dice rolled."""
    _put(broken, f * LANES + l, 1)
    _put(bm, f * LANES + l, 0)
    nd = 0
    # _withdraw_lane's own test, made before the call: most formations lose nothing in a withdrawal (the call is dear)
    if _withdrawal_can_cost(trapped, forms, f, True):
        nd = _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, True, forms, alive, n_words, wst, n_units,
                              BOOK_LOSSES, False, splash, n_forms, losses_bm, kills, bm, broken, stk)
    for g in range(n_forms):
        _put(losses_bm, g * LANES + l, 0)
    return nd
