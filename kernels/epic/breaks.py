"""Break test and withdrawal (lane primitives, TP 1.9.7, 1.12.8, 1.13.2–1.13.4, 3.2.4; spec §6.2): the break test
(``_fails_break``, which every step's test calls), what a withdrawal costs a formation (trapped units, speed-0
units, war-engine damage) and the turn's break.
"""
from .access import FALSE, INT0, INT1, TRUE, _at, _cell, _put, kernel_function
from .damage import _we_resolve_lane, damage_state
from .dice import _uniform
from .layout import (BOOK_LOSSES, E_HULL, F_COLS, F_SPEED0, F_TSKNF, F_WE_WD, LANES, OUT, U_COLS, U_ENG, U_FEARLESS,
                     U_SPEED0, U_WE)
from .units import _clear_unit, _size


@kernel_function
def _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
    """Can formation ``f``'s withdrawal cost it anything (:func:`_withdraw_lane`): trapped units, war-engine damage,
    or speed-0 units that die (``speed_zero_die``)?"""
    return _at(trapped, f) > 0.0 or _at(forms, f * F_COLS + F_WE_WD) > 0 or (
        speed_zero_die and _at(forms, f * F_COLS + F_SPEED0) != 0)


@kernel_function
def _withdraw_lane(dm, trapped, forms, l, f, speed_zero_die, mode, splashes):
    """Withdrawal of formation ``f`` in lane ``l`` (spec §6.2): its trapped units are lost (each with the
    formation's ``trapped`` chance), its speed-0 units die when ``speed_zero_die``, each non-Fearless war engine
    takes a point per enemy unit within 15 cm, no save (TP 3.2.4), which rolls for criticals, booked as ``mode``
    says (spec §10.4; ``dm``: wargame_odds.kernels.epic.damage.damage_state).  Returns the dice rolled for criticals and
    splashes."""
    units = dm.units
    p = _at(trapped, f)
    we_damage = _at(forms, f * F_COLS + F_WE_WD)
    nd = 0
    if _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
        for k in range(_at(dm.fb, f), _at(dm.fb, f + 1)):
            u = _at(dm.fu, k)
            if _at(dm.hp, u * LANES + l) == 0 or _at(units, u * U_COLS + U_FEARLESS):
                continue
            kill = False
            if speed_zero_die and _at(units, u * U_COLS + U_SPEED0) and _at(units, u * U_COLS + U_ENG) != OUT:
                kill = True
            elif _at(units, u * U_COLS + U_WE):  # 1 damage per enemy unit within 15 cm, no save (TP 3.2.4)
                nd += _we_resolve_lane(dm, l, E_HULL, u, INT0, INT0, we_damage, mode, INT0, splashes)
            elif p > 0.0:
                kill = _uniform(dm.rs, l) < p
            if kill:
                _put(dm.hp, u * LANES + l, 0)
                _clear_unit(dm.alive, units, u, l, dm.n_words, INT1)
    return nd


@kernel_function
def _fails_break(bm, size, tsknf):
    """The break test (TP 1.9.7, 1.12.8, 1.12.9, 1.13.2; TP-SR They Shall Know No Fear), written once: a formation
    of ``size`` (its living units, or its war engines' damage capacity) breaks with ``bm`` Blast markers ≥ its size,
    ≥ twice its size with They Shall Know No Fear (``tsknf``).  Every break test of the kernel calls it."""
    return bm >= (2 * size if tsknf else size)


@kernel_function
def _fails_at_size(forms, bm, f, l, size):
    """Formation ``f``'s break test (:func:`_fails_break`) in lane ``l`` at ``size``."""
    return _fails_break(_at(bm, f * LANES + l), size, _cell(forms, f, F_COLS, F_TSKNF) != 0)


@kernel_function
def _fails_break_test(hp, fu, fb, units, forms, bm, f, l):
    """:func:`_fails_at_size` at the formation's :func:`_size`."""
    return _fails_at_size(forms, bm, f, l, _size(hp, fu, fb, units, f, l))


@kernel_function
def _break(tb, st, l, f):
    """Broken: BMs removed, it withdraws (TP 1.9.7, 1.13.2, 1.13.3; :func:`_withdraw_lane`, no splash).  The
    losses its war engines' withdrawal damage books count for nothing in the turn, and the assault starts from
    none (wargame_odds.analysis.epic.turn.Turn.assault), so they are dropped.  Returns the dice rolled."""
    _put(st.broken, f * LANES + l, 1)
    _put(st.bm, f * LANES + l, 0)
    nd = 0
    # _withdraw_lane's own test, made before the call: most formations lose nothing in a withdrawal (the call is dear)
    if _withdrawal_can_cost(tb.trapped, tb.forms, f, TRUE):
        nd = _withdraw_lane(damage_state(tb, st), tb.trapped, tb.forms, l, f, TRUE, BOOK_LOSSES, FALSE)
    for g in range(tb.forms.shape[0]):
        _put(st.losses_bm, g * LANES + l, 0)
    return nd
