"""Saves (lane primitives, TP 1.8.3, 1.9.6, 2.1.6, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; spec §2, §10.2, §10.3):
an assault hit's save (armour or cover, Reinforced Armour re-roll on armour, invulnerable), the war-engine rules'
save of one hit or point (holofield, knight shield, lance, ignore cover, deflector, living metal) with shields
and fields first, an Automaton's save of a broken formation's hit, and a shooting hit's save (cover, crossfire).
"""
import numpy as np

from ..rng import _FOUR, _SIX
from .access import _at, _min, kernel_function
from .dice import _d6, _die
from .layout import (H_FF, H_IC, H_LANCE, H_SNIPER, H_SUPPORT, NO_ROLL, U_ARMOUR, U_AUTOMATON, U_COLS, U_COVER, U_HOLO,
                     U_HOLO_LOST, U_INV, U_INV_DEG, U_INV_ON, U_KNIGHT, U_RA, U_SAVE, W_DEGRADED, W_FIELD, W_SHADOW,
                     W_VOID)
from .turn_layout import HF_IC, HF_LANCE, HF_SNIPER, KIND_AP, KIND_AT, KIND_MW
from .units import _cell, _wat, _wput


@kernel_function
def _unsaved_lane(rs, l, cls, u, units):
    """(1 if one hit of class ``cls`` on unit ``u`` is not saved, dice rolled) in lane ``l`` (spec §2)."""
    sniper = cls >= 3
    kind = cls - 3 * sniper
    failed = True
    nd = 0
    if kind == 0:
        target = _at(units, u * U_COLS + U_SAVE) + sniper
        if target < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < target
        armour = _at(units, u * U_COLS + U_ARMOUR) + sniper  # the re-roll is on armour (TP-FAQ Reinforced Armour)
        if _at(units, u * U_COLS + U_RA) and failed and armour < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < armour
    elif kind == 1 and _at(units, u * U_COLS + U_RA):
        target = _at(units, u * U_COLS + U_ARMOUR) + sniper
        if target < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < target
    if _at(units, u * U_COLS + U_INV) and failed:
        nd += 1
        failed = _die(rs, l, _SIX, _FOUR) < 6
    return np.int64(failed), nd


@kernel_function
def _general_hits(rs, l, u, units, n):
    """(unsaved hits, dice) of ``n`` ordinary hits on unit ``u`` in lane ``l`` (Reinforced Armour or
    Invulnerable Save: a save may take more than one roll)."""
    un = 0
    nd = 0
    for _ in range(n):
        f, k = _unsaved_lane(rs, l, 0, u, units)
        un += f
        nd += k
    return un, nd


@kernel_function
def _we_saved_lane(rs, l, u, units, wst, kind, how, main, invulnerable):
    """:func:`_we_saved` with its integer arguments as int64 values: compiled once in plain Numba whatever constants
    its callers pass (wargame_odds.kernels.epic.damage._we_resolve_lane says why)."""
    return _we_saved(rs, np.int64(l), np.int64(u), units, wst, np.int64(kind), np.int64(how), main != 0,
                     invulnerable != 0)


@kernel_function
def _we_saved(rs, l, u, units, wst, kind, how, main, invulnerable):
    """(1 if one hit (or one titan-killer point) on unit ``u`` is saved, dice) in lane ``l`` (spec §10.3): the
    main save (armour or cover; a holofield's 3+ or a knight shield's unmodified 4+ instead; none with
    ``main`` false), the Reinforced Armour re-roll on armour (only against ordinary hits without lance), then
    the invulnerable-type save (6+; deflector 5+, living metal 4+) unless ``invulnerable`` is false.  ``how``: the
    hit's H_* flags (sniper, lance, ignore cover, supporting fire).  ``kind`` 3: no save at all."""
    if kind == 3:
        return 0, 0
    n_units = units.shape[0]
    worse = np.int64((how & H_SNIPER) != 0)
    armour = _min(_at(units, u * U_COLS + U_ARMOUR) + worse, NO_ROLL)
    ra = _at(units, u * U_COLS + U_RA) != 0
    degraded = _wat(wst, W_DEGRADED, u, l, n_units) != 0
    holo = _at(units, u * U_COLS + U_HOLO) != 0 and not (degraded and _at(units, u * U_COLS + U_HOLO_LOST))
    nd = 0
    failed = True
    if main:
        if holo:
            target = _min(3 + worse, NO_ROLL)
        elif _at(units, u * U_COLS + U_KNIGHT) and (how & H_SUPPORT) == 0:
            target = 4
        elif kind == 0:
            cover = NO_ROLL if how & H_IC else _min(_at(units, u * U_COLS + U_COVER) + worse, NO_ROLL)
            target = _min(armour, cover)
        elif kind == 1 and ra:
            target = armour
        else:
            target = NO_ROLL
        if target < NO_ROLL:
            nd += 1
            failed = _d6(rs, l) < target
        if failed and ra and kind == 0 and (how & H_LANCE) == 0 and armour < NO_ROLL:
            nd += 1
            failed = _d6(rs, l) < armour
    inv = _at(units, u * U_COLS + (U_INV_DEG if degraded else U_INV_ON)) if invulnerable else NO_ROLL
    if failed and inv < NO_ROLL:
        nd += 1
        failed = _d6(rs, l) < inv
    return np.int64(not failed), nd


@kernel_function
def _shields_lane(l, u, points, wst, n_units):
    """Void shields, then power fields, stop one of a hit's ``points`` each on unit ``u`` in lane ``l``; what is
    left is absorbed whole by a shadowfield (TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology;
    spec §10.2).  Returns the points left for the saves."""
    for row in (W_VOID, W_FIELD):
        s = _wat(wst, row, u, l, n_units)
        down = _min(s, points)
        _wput(wst, row, u, l, n_units, s - down)
        points -= down
    if points == 0:
        return 0
    s = _wat(wst, W_SHADOW, u, l, n_units)
    if s > 0:
        _wput(wst, W_SHADOW, u, l, n_units, s - 1)
        return 0
    return points


@kernel_function
def _we_hit_lane(rs, l, u, kind, how, damage, units, wst):
    """Shields and saves against one hit on living unit ``u`` in lane ``l`` (spec §10.2, §10.3, §10.5): ``kind``
    0 ordinary, 1 macro-weapon, 2 titan killer, 3 no save (a splash); ``how`` its H_* flags; ``damage`` its
    points (a titan-killer hit on a war engine: rolled at allocation, else 1).  A firefight hit first takes down
    void shields, then power fields, one per point, and what is left is absorbed whole by a shadowfield;
    close-combat hits go straight through.  Each point left is saved on its own, except that a holofield saves
    a hit of more than one point whole (and its points then take only the invulnerable save).  Returns (points
    that reach the hull, 1 if the hit got past the shields, dice rolled)."""
    n_units = units.shape[0]
    points = damage
    if how & H_FF:
        points = _shields_lane(l, u, points, wst, n_units)
        if points == 0:
            return 0, 0, 0
    nd = 0
    degraded = _wat(wst, W_DEGRADED, u, l, n_units) != 0
    holo = _at(units, u * U_COLS + U_HOLO) != 0 and not (degraded and _at(units, u * U_COLS + U_HOLO_LOST))
    whole = damage > 1 and holo
    if whole:
        saved, k = _we_saved_lane(rs, l, u, units, wst, kind, how, True, True)
        nd += k
        if saved:
            return 0, 1, nd
    unsaved = 0
    for _ in range(points):
        saved, k = _we_saved_lane(rs, l, u, units, wst, kind, how, not whole, True)
        nd += k
        unsaved += 1 - saved
    return unsaved, 1, nd


@kernel_function
def _automaton_saved(rs, l, u, units, wst):
    """(1 if unit ``u`` saves a broken formation's no-save hit in lane ``l``, dice): only an Automaton may, with
    its own save and no invulnerable save (TP-SR Automaton; the assault's §6.3 hits and a turn's shooting)."""
    if not _at(units, u * U_COLS + U_AUTOMATON):
        return 0, 0
    return _we_saved_lane(rs, l, u, units, wst, 0, 0, True, False)


@kernel_function
def _invulnerable(l, u, units, wst, n_units):
    """Unit ``u``'s invulnerable-type save in lane ``l`` (6+; deflector shield 5+, living metal 4+; NO_ROLL none):
    ``U_INV_ON``, or ``U_INV_DEG`` once a degrade critical has taken the deflector away."""
    if wst.size > 0 and _wat(wst, W_DEGRADED, u, l, n_units) != 0:
        return _cell(units, u, U_COLS, U_INV_DEG)
    return _cell(units, u, U_COLS, U_INV_ON)


@kernel_function
def _first_save(kind, flags, cover_save, crossfire, armour_save):
    """The armour save after Crossfire and Sniper (−1 each), and a hit's first save roll: for AP and AT hits the
    armour or an infantry cover save (``cover_save``, not against Ignore Cover), the better; none (NO_ROLL) for
    MW and TK hits (:func:`_saved`).  Returns (armour, first)."""
    worse = np.int64(crossfire) + np.int64((flags & HF_SNIPER) != 0)
    armour = min(armour_save + worse, NO_ROLL)
    first = NO_ROLL
    if kind == KIND_AP or kind == KIND_AT:
        first = armour
        if cover_save < NO_ROLL and (flags & HF_IC) == 0:
            first = min(armour, min(cover_save + worse, NO_ROLL))
    return armour, first


@kernel_function
def _saved(rs, l, kind, flags, cover_save, crossfire, armour_save, ra, inv):
    """One hit's saves (§3.8; TP 1.8.3, 1.9.6, 1.11, 2.1.6, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9) on a unit with
    the armour save ``armour_save``, Reinforced Armour ``ra`` and the invulnerable-type save ``inv``
    (:func:`_invulnerable`): armour or an infantry cover save, Reinforced Armour's re-roll on armour (not against
    Lance), Crossfire and Sniper −1 each; MW: Reinforced Armour only, no re-roll; TK: none; then the unmodified
    invulnerable-type save.  The unit's values come as scalars: the call is made for every hit.
    Returns (saved, dice rolled)."""
    armour, first = _first_save(kind, flags, cover_save, crossfire, armour_save)
    nd = 0
    if kind == KIND_AP or kind == KIND_AT:
        if first < NO_ROLL:
            nd += 1
            if _d6(rs, l) >= first:
                return True, nd
        if ra and (flags & HF_LANCE) == 0 and armour < NO_ROLL:
            nd += 1
            if _d6(rs, l) >= armour:
                return True, nd
    elif kind == KIND_MW and ra and armour < NO_ROLL:
        nd += 1
        if _d6(rs, l) >= armour:
            return True, nd
    if inv < NO_ROLL:
        nd += 1
        return _d6(rs, l) >= inv, nd
    return False, nd


@kernel_function
def _unsaved(l, u, units, kind, flags, cover_save, crossfire, wst, n_units):
    """P(one hit, or one point of a war engine's damage, is not saved): every roll :func:`_saved` would make
    fails (wargame_odds.analysis.epic.shooting.unsaved_chance); ``cover_save`` as :func:`_saved` gets it."""
    worse = np.int64(crossfire) + np.int64((flags & HF_SNIPER) != 0)
    armour = min(_cell(units, u, U_COLS, U_ARMOUR) + worse, NO_ROLL)
    ra = _cell(units, u, U_COLS, U_RA) != 0
    chance = 1.0
    if kind == KIND_AP or kind == KIND_AT:
        first = armour
        if cover_save < NO_ROLL and (flags & HF_IC) == 0:
            first = min(armour, min(cover_save + worse, NO_ROLL))
        if first < NO_ROLL:
            chance *= max(first - 1, 0) / 6
        if ra and (flags & HF_LANCE) == 0 and armour < NO_ROLL:
            chance *= max(armour - 1, 0) / 6
    elif kind == KIND_MW and ra and armour < NO_ROLL:
        chance *= max(armour - 1, 0) / 6
    inv = _invulnerable(l, u, units, wst, n_units)
    if inv < NO_ROLL:
        chance *= max(inv - 1, 0) / 6
    return chance
