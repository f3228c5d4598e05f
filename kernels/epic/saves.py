"""Saves (lane primitives, TP 1.8.3, 1.9.6, 2.1.6, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; spec §2, §10.2, §10.3):
an assault hit's save (armour or cover, Reinforced Armour re-roll on armour, invulnerable), the war-engine rules'
save of one hit or point (holofield, knight shield, lance, ignore cover, deflector, living metal) with shields
and fields first, an Automaton's save of a broken formation's hit, and a shooting hit's save (cover, crossfire).
"""
import numpy as np

from .access import FALSE, INT0, TRUE, _at, _cell, _min, kernel_function
from .dice import _d6
from .hits import ASSAULT_KINDS, H_FF, H_SNIPER, H_SUPPORT, KIND_NO_SAVE, _class_kind, _save_targets
from .layout import (NO_ROLL, U_ARMOUR, U_AUTOMATON, U_COLS, U_COVER, U_HOLO, U_HOLO_LOST, U_INV, U_INV_DEG, U_INV_ON,
                     U_KNIGHT, U_RA, U_SAVE, W_DEGRADED, W_FIELD, W_SHADOW, W_VOID)
from .units import _wat, _wput


@kernel_function
def _save(rs, l, first, reroll, invulnerable):
    """One hit's saves in lane ``l``, each rolled only while the hit is not saved: the ``first`` save and
    Reinforced Armour's ``reroll`` (wargame_odds.kernels.epic.hits._save_targets: the save rule), then the unmodified
    ``invulnerable``-type save (6+, deflector 5+, living metal 4+: TP 2.1.6; spec §10.3), each a D6 value or
    NO_ROLL.  Every save of the kernel is rolled here, or, where it is one roll at most, inline against a
    :func:`_save_targets` value (wargame_odds.kernels.epic.assault._ordinary_hits in lock-step lanes,
    wargame_odds.kernels.epic.shoot_plain._plain_lanes).  Returns (1 if saved, dice rolled)."""
    nd = 0
    if first < NO_ROLL:
        nd += 1
        if _d6(rs, l) >= first:
            return np.int64(1), nd
    if reroll < NO_ROLL:
        nd += 1
        if _d6(rs, l) >= reroll:
            return np.int64(1), nd
    if invulnerable < NO_ROLL:
        nd += 1
        return np.int64(_d6(rs, l) >= invulnerable), nd
    return np.int64(0), nd


@kernel_function
def _unsaved_lane(rs, l, cls, u, units):
    """(1 if one assault hit of class ``cls`` (wargame_odds.kernels.epic.hits.ASSAULT_KINDS) on unit ``u`` is not saved,
    dice rolled) in lane ``l`` (spec §2): the save rule with the unit's save (``U_SAVE``: armour or cover, the better),
    its armour for the re-roll, and an invulnerable save (6+)."""
    sniper = np.int64(cls >= ASSAULT_KINDS)
    first, reroll = _save_targets(_class_kind(cls), H_SNIPER * sniper, _at(units, u * U_COLS + U_ARMOUR),
                                  _at(units, u * U_COLS + U_SAVE), _at(units, u * U_COLS + U_RA) != 0, sniper)
    saved, nd = _save(rs, l, first, reroll, 6 if _at(units, u * U_COLS + U_INV) else NO_ROLL)
    return 1 - saved, nd


@kernel_function
def _general_hits(rs, l, u, units, n):
    """(unsaved hits, dice) of ``n`` ordinary hits on unit ``u`` in lane ``l`` (Reinforced Armour or
    Invulnerable Save: a save may take more than one roll)."""
    un = 0
    nd = 0
    for _ in range(n):
        f, k = _unsaved_lane(rs, l, INT0, u, units)
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
    save rule's saves (wargame_odds.kernels.epic.hits._save_targets: armour or cover, Reinforced Armour's re-roll) with
    a holofield's 3+ or a knight shield's unmodified 4+ (not against supporting fire) as the first save instead, for any
    kind; none with ``main`` false; then the invulnerable-type save (6+; deflector 5+, living metal 4+) unless
    ``invulnerable`` is false.  ``kind``: the hit's KIND_*; ``how``: its H_* flags."""
    if kind == KIND_NO_SAVE:
        return 0, 0
    n_units = units.shape[0]
    worse = np.int64((how & H_SNIPER) != 0)
    degraded = _wat(wst, W_DEGRADED, u, l, n_units) != 0
    first = NO_ROLL
    reroll = NO_ROLL
    if main:
        first, reroll = _save_targets(kind, how, _at(units, u * U_COLS + U_ARMOUR), _at(units, u * U_COLS + U_COVER),
                                      _at(units, u * U_COLS + U_RA) != 0, worse)
        if _at(units, u * U_COLS + U_HOLO) != 0 and not (degraded and _at(units, u * U_COLS + U_HOLO_LOST)):
            first = _min(3 + worse, NO_ROLL)
        elif _at(units, u * U_COLS + U_KNIGHT) and (how & H_SUPPORT) == 0:
            first = 4
    inv = _at(units, u * U_COLS + (U_INV_DEG if degraded else U_INV_ON)) if invulnerable else NO_ROLL
    return _save(rs, l, first, reroll, inv)


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
    its KIND_* (KIND_NO_SAVE: a splash's without a save); ``how`` its H_* flags; ``damage`` its
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
        saved, k = _we_saved_lane(rs, l, u, units, wst, kind, how, TRUE, TRUE)
        nd += k
        if saved:
            return 0, 1, nd
    unsaved = 0
    for _ in range(points):
        saved, k = _we_saved_lane(rs, l, u, units, wst, kind, how, not whole, TRUE)
        nd += k
        unsaved += 1 - saved
    return unsaved, 1, nd


@kernel_function
def _automaton_saved(rs, l, u, units, wst):
    """(1 if unit ``u`` saves a broken formation's no-save hit in lane ``l``, dice): only an Automaton may, with
    its own save and no invulnerable save (TP-SR Automaton; the assault's §6.3 hits and a turn's shooting)."""
    if not _at(units, u * U_COLS + U_AUTOMATON):
        return 0, 0
    return _we_saved_lane(rs, l, u, units, wst, INT0, INT0, TRUE, FALSE)


@kernel_function
def _invulnerable(l, u, units, wst, n_units):
    """Unit ``u``'s invulnerable-type save in lane ``l`` (6+; deflector shield 5+, living metal 4+; NO_ROLL none):
    ``U_INV_ON``, or ``U_INV_DEG`` once a degrade critical has taken the deflector away."""
    if wst.size > 0 and _wat(wst, W_DEGRADED, u, l, n_units) != 0:
        return _cell(units, u, U_COLS, U_INV_DEG)
    return _cell(units, u, U_COLS, U_INV_ON)


@kernel_function
def _saved(rs, l, kind, flags, cover_save, crossfire, armour_save, ra, inv):
    """One shooting hit's saves (turn §3.8; TP 1.8.3, 1.9.6, 1.11, 2.1.14): the save rule
    (wargame_odds.kernels.epic.hits._save_targets) with the infantry cover save ``cover_save``, Crossfire and Sniper −1
    each, on a unit with the armour save ``armour_save``, Reinforced Armour ``ra`` and the invulnerable-type save
    ``inv`` (:func:`_invulnerable`), rolled by :func:`_save`.  The unit's values come as scalars: the call is made for
    every hit.  Returns (1 if saved, dice rolled)."""
    worse = np.int64(crossfire) + np.int64((flags & H_SNIPER) != 0)
    first, reroll = _save_targets(kind, flags, armour_save, cover_save, ra, worse)
    return _save(rs, l, first, reroll, inv)


@kernel_function
def _unsaved(l, u, units, kind, flags, cover_save, crossfire, wst, n_units):
    """P(one hit, or one point of a war engine's damage, is not saved): every roll :func:`_saved` would make
    fails (wargame_odds.analysis.epic.shooting.unsaved_chance); ``cover_save`` as :func:`_saved` gets it."""
    worse = np.int64(crossfire) + np.int64((flags & H_SNIPER) != 0)
    first, reroll = _save_targets(kind, flags, _cell(units, u, U_COLS, U_ARMOUR), cover_save,
                                  _cell(units, u, U_COLS, U_RA) != 0, worse)
    chance = 1.0
    for target in (first, reroll, _invulnerable(l, u, units, wst, n_units)):
        if target < NO_ROLL:
            chance *= max(target - 1, 0) / 6
    return chance
