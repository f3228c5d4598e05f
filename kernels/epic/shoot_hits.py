"""A shooting attack's hits resolved in one lane (rule step, docs/epic-turn.md §3.8–§3.13; TP 1.9.4, 1.9.6, 1.11,
1.13.4, 2.2.2, 3.2): a hit on a unit (:func:`_hit_unit`): the save, the kill and its BMs (:func:`_resolve_hit`), or a
war engine's shields, saves and damage (:func:`_hit_war_engine`, :func:`_hull`, :func:`_drain`); the BMs placed on the
target (:func:`_place`), or a broken target's no-save hits instead (:func:`_broken_hits`).  The attack's totals are
in ``ShotScratch.acc`` (its ACC_* slots).

The functions take the records as wargame_odds.kernels.epic.shooting says.
"""
import numpy as np

from .access import FALSE, INT0, INT1, TRUE, _at, _cell, kernel_function
from .damage import _we_resolve_lane, damage_state
from .dice import _amount
from .hits import H_DISRUPT, KIND_TK
from .layout import BOOK_SHOT, E_HULL, F_COLS, F_TSKNF, LANES, NO_ROLL, U_ARMOUR, U_COLS, U_FEARLESS, U_RA
from .saves import _automaton_saved, _invulnerable, _saved, _shields_lane
from .turn_layout import (ACC_CARRY, ACC_FIRST_BOOKED, ACC_KILLS, ACC_MARKERS, ACC_PLACED, INF, NONE, TU_COLS,
                          TU_KILL_BM, TU_NO_DISRUPT_BM, TU_TYPE, WE, WP_TK_N, WP_TK_PLUS, WP_TK_SIDES)
from .units import _any_living, _living, _wound


@kernel_function
def _shot_damage(rs, l, h, sc, wpn):
    """The damage of hit ``h`` allocated to a war engine: a titan-killer hit rolls its line's dice at once and
    counts as that many hits (TP 2.2.9, 3.2.5; wargame_odds.analysis.epic.war_engines.titan_killer_damage); any other,
    1. Returns (damage, dice rolled)."""
    if sc.hkind[h] != KIND_TK:
        return 1, 0
    w = sc.hline[h]
    return _amount(rs, l, wpn[w, WP_TK_N], wpn[w, WP_TK_SIDES], wpn[w, WP_TK_PLUS])


@kernel_function
def _drain(tb, st, sc, l, target, converting, crossfire):
    """Place the BMs war-engine damage booked (BOOK_SHOT, one per point; none for a broken target's
    no-save hits): the target's wait in ``sc.acc`` for the end of the save step, the first counting 2 in a
    crossfire; another formation's (a critical's splash) go on it at once if it is unbroken with a living unit,
    and it is marked in ``sc.spl`` for a break check after the attack (TP 1.9.4, 1.11, 3.2.2, 3.2.3;
    wargame_odds.analysis.epic.shooting.AttackState.book_damage)."""
    L = LANES
    acc = sc.acc
    for g in range(tb.forms.shape[0]):
        i = g * L + l
        n = st.losses_bm[i]
        if n == 0:
            continue
        st.losses_bm[i] = 0
        if converting:
            continue
        if g == target:
            acc[ACC_MARKERS] += n + (1 if crossfire and acc[ACC_FIRST_BOOKED] == 0 else 0)
            acc[ACC_FIRST_BOOKED] = 1
        elif not _at(st.broken, i) and _any_living(st.hp, tb.fu, tb.fb, g, l):
            st.bm[i] += n
            sc.spl[g] = 1


@kernel_function
def _hull(tb, st, sc, l, u, points, how, target, converting, crossfire, splashes):
    """``points`` of damage on war engine ``u``'s hull with all that follows (a BM and a critical roll per point,
    criticals at once, splashes: wargame_odds.kernels.epic.damage._we_resolve_lane, TP 3.2.2–3.2.4), booked for the
    attack on ``target``: its units destroyed count as its kills, the BMs go through :func:`_drain`.  Returns dice."""
    before = _living(st.hp, tb.fu, tb.fb, target, l)
    nd = _we_resolve_lane(damage_state(tb, st), l, E_HULL, u, INT0, how, points, BOOK_SHOT, INT0, splashes)
    sc.acc[ACC_KILLS] += before - _living(st.hp, tb.fu, tb.fb, target, l)
    _drain(tb, st, sc, l, target, converting, crossfire)
    return nd


@kernel_function
def _hit_war_engine(tb, st, sc, l, h, u, damage, target, crossfire, splashes):
    """Hit ``h`` (``damage`` points for a titan killer) on living war engine ``u`` (§3.13; TP 2.2.2, 3.2.2–3.2.5;
    TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology; epic-shooting §13 Q11): void shields and
    power fields stop a point each, a shadowfield the hit, with no save and no BM
    (wargame_odds.kernels.epic.saves._shields_lane); a disrupt hit that gets through places 1 BM and its points none;
    each point left is saved on its own (:func:`_saved`, no cover); the unsaved ones go to the hull (:func:`_hull`); a
    hit on a war engine already destroyed is lost.  Returns dice."""
    units = tb.units
    wst = st.wst
    if _at(st.hp, u * LANES + l) == 0:
        return 0
    points = damage
    if wst.size > 0:
        points = _shields_lane(l, u, points, wst, units.shape[0])
    if points == 0:
        return 0
    flags = sc.hflag[h]
    disrupt = (flags & H_DISRUPT) != 0
    if disrupt:
        sc.acc[ACC_MARKERS] += 1
    nd = 0
    unsaved = INT0
    for _ in range(points):
        saved, k = _saved(st.rs, l, sc.hkind[h], flags, NO_ROLL, crossfire, _cell(units, u, U_COLS, U_ARMOUR),
                          _cell(units, u, U_COLS, U_RA) != 0, _invulnerable(l, u, units, wst, units.shape[0]))
        nd += k
        unsaved += 1 - np.int64(saved)
    if unsaved > 0:
        nd += _hull(tb, st, sc, l, u, unsaved, flags & H_DISRUPT, target, FALSE, crossfire, splashes)
    return nd


@kernel_function
def _place(l, target, n, acc, bm):
    """Place ``n`` BMs on a target that was not broken when the attack began (TP 1.9.4); ``acc[ACC_PLACED]``
    counts them.  Returns 0 (no dice: :func:`_markers`' other branch)."""
    bm[target * LANES + l] += n
    acc[ACC_PLACED] += n
    return 0


@kernel_function
def _broken_hits(tb, st, tt, sc, l, target, n, splashes):
    """The ``n`` BMs a target broken when the attack began would receive, as no-save hits (TSKNF: one per 2,
    the odd one carried in ``acc``), front to back, Fearless units immune, an Automaton saving with its own save
    (no invulnerable: TP-SR Automaton); those deaths place nothing; on a war engine such a hit is 1 damage that
    shields do not stop, with its critical roll (TP 1.13.4, 2.1.3, 3.2.4; TP-FAQ Blast Markers and Broken
    Formations, Imperial Void Shields).  ``sc.acc`` (ACC_KILLS, ACC_CARRY) is updated.  Returns the dice
    rolled."""
    if n <= 0:
        return 0
    acc = sc.acc
    units = tb.units
    if _cell(tb.forms, target, F_COLS, F_TSKNF):
        carry = acc[ACC_CARRY] + n
        n = carry // 2
        acc[ACC_CARRY] = carry - 2 * n
    nd = 0
    for _ in range(n):
        victim = NONE
        for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
            u = _at(tb.fu, k)
            if _at(st.hp, u * LANES + l) > 0 and not _cell(units, u, U_COLS, U_FEARLESS):
                victim = u
                break
        if victim == NONE:
            break
        saved, d = _automaton_saved(st.rs, l, victim, units, st.wst)
        nd += d
        if saved:
            continue
        if _cell(tt.tu, victim, TU_COLS, TU_TYPE) == WE:
            nd += _hull(tb, st, sc, l, victim, INT1, INT0, target, TRUE, INT0, splashes)
        elif _wound(st.hp, st.alive, units, victim, l, tb.sets.n_words):
            acc[ACC_KILLS] += 1
    return nd


@kernel_function
def _resolve(tb, st, tt, sc, l, h, u, cs, crossfire):
    """Hit ``h`` of the attack's list allocated to unit ``u`` (not a war engine): :func:`_resolve_hit`."""
    return _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, _at(sc.hkind, h),
                        _at(sc.hflag, h), cs, crossfire, sc.acc)


@kernel_function
def _resolve_hit(rs, hp, alive, wst, units, tu, n_words, l, u, kind, flags, cs, crossfire, acc):
    """One hit of fire type ``kind`` and hit flags ``flags`` allocated to a unit that is not a war engine (§3.7,
    §3.8, §3.10; war engines: :func:`_hit_war_engine`): a disrupt hit's BM (none on an Expendable or Automata
    unit), the save (the infantry cover save ``cs``), the kill and its BMs (1; 0 for an Expendable unit unless its
    whole formation is, for an Automaton or Automata unit, or after a disrupt hit's; the attack's first kill that
    places BMs counts 2 in a crossfire).  ``acc`` (ACC_MARKERS, ACC_FIRST_BOOKED, ACC_KILLS) is updated.  It is called
    for every hit: it takes the few arrays it reads (a record is passed field by field).  Returns dice."""
    disrupt = (flags & H_DISRUPT) != 0
    if disrupt and not _cell(tu, u, TU_COLS, TU_NO_DISRUPT_BM):
        acc[ACC_MARKERS] += 1
    if _at(hp, u * LANES + l) == 0:
        return 0  # already destroyed: the hit is lost
    saved, nd = _saved(rs, l, kind, flags, cs if _cell(tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL, crossfire,
                       _cell(units, u, U_COLS, U_ARMOUR), _cell(units, u, U_COLS, U_RA) != 0,
                       _invulnerable(l, u, units, wst, units.shape[0]))
    if not saved:
        _unsaved_hit(hp, alive, units, tu, n_words, l, u, disrupt, crossfire, acc)
    return nd


@kernel_function
def _unsaved_hit(hp, alive, units, tu, n_words, l, u, disrupt, crossfire, acc):
    """An unsaved hit on unit ``u`` (not a war engine): its point of damage, and if that kills it, the kill and its BMs
    (:func:`_resolve_hit`).  ``acc`` is updated."""
    if not _wound(hp, alive, units, u, l, n_words):
        return
    acc[ACC_KILLS] += 1
    if disrupt or not _cell(tu, u, TU_COLS, TU_KILL_BM):
        return
    acc[ACC_MARKERS] += 2 if crossfire and acc[ACC_FIRST_BOOKED] == 0 else 1
    acc[ACC_FIRST_BOOKED] = 1


@kernel_function
def _hit_unit(tb, st, tt, sc, shot, l, h, u, cs):
    """Hit ``h`` on unit ``u`` in lane ``l``: a war engine's damage rolled now (TP 3.2.5) and :func:`_hit_war_engine`,
    any other :func:`_resolve`.  Returns (the hit's damage for a war engine's block, dice rolled)."""
    if _cell(tt.tu, u, TU_COLS, TU_TYPE) == WE:
        damage, k2 = _shot_damage(st.rs, l, h, sc, tt.wpn)
        return damage, k2 + _hit_war_engine(tb, st, sc, l, h, u, damage, shot.target, shot.crossfire, shot.splashes)
    return 1, _resolve(tb, st, tt, sc, l, h, u, cs, shot.crossfire)
