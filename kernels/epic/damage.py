"""War-engine damage (lane primitives, spec §10; the reference engine's analysis/epic/war_engines.py): a trial's
war-engine state, booking damage as kills, losses or end-phase BMs, and ``_we_resolve_lane``, which resolves a
hit, points on the hull or a critical's splash with everything that follows (criticals at once, further damage,
self hits, splashes, a lost character) on an explicit stack.
"""
import numpy as np

from ..rng import _ONE, _THREE, _U32
from .access import ANY, INT0, INT1, _ZERO, _at, _min, _popcount, _put, kernel_function
from .dice import _d6, _die
from .hits import H_DISRUPT, H_FF
from .layout import (BOOK_END_PHASE, BOOK_FIGHT, BOOK_LOSSES, BOOK_SHOT, CRIT_BREACH, CRIT_DEGRADE, CRIT_DESTROYED,
                     CRIT_EXTRA_DAMAGE, CRIT_FIRE, CRIT_LOSE_CHARACTER, CRIT_NONE, CRIT_SELF_HIT, E_HIT, E_HULL, FRAME,
                     LANES, T_FURTHER, T_HULL, T_LOSE, T_SELF, T_SPLASH, U_CHARS, U_CH_DC, U_CH_VS,
                     U_COLS, U_CRIT, U_CRIT_DMG, U_CRIT_THEN, U_DISRUPT_BM, U_FORM, U_FURTHER_ON, U_LOSS_BM, U_PF_D3,
                     U_PF_D6, U_PF_FIX, U_SELF_HITS, U_SELF_ON, U_SHADOW, U_SIDE, U_SPLASH_KIND, U_SPLASH_ON, U_VOID,
                     W_BREACH, W_CRIT, W_DEGRADED, W_DIED, W_FIELD, W_FIRE, W_LOST_CHARS, W_LOST_DC, W_LOST_VOID,
                     W_SHADOW, W_VOID, Damage)
from .saves import _automaton_saved, _we_hit_lane
from .units import _clear_unit, _wat, _wput


@kernel_function
def _stack_frames(dc0):
    """Frames of the _we_resolve_lane stack: 1 + 2 × the starting damage capacity of all units (``dc0``)."""
    total = 0
    for u in range(dc0.size):
        total += _at(dc0, u)
    return 1 + 2 * total


@kernel_function
def _we_start_lanes(rs, start, units, wst):
    """A trial's war-engine state in each lane that begins one (``start``): shields and shadowfields up, power-field
    dice rolled once (spec §10.8.5), no critical effect yet.  Unit by unit with the lanes inside, so that the state
    rows (contiguous by lane) are written as vectors; each lane rolls its units' dice in unit order.  Returns the
    dice rolled."""
    n_units = units.shape[0]
    nd = 0
    for u in range(n_units):
        fields0 = _at(units, u * U_COLS + U_PF_FIX)
        for row in (W_VOID, W_FIELD, W_SHADOW, W_CRIT, W_BREACH, W_FIRE, W_DEGRADED, W_DIED, W_LOST_DC, W_LOST_VOID,
                    W_LOST_CHARS):
            v = _at(units, u * U_COLS + U_VOID) if row == W_VOID else 0
            v = fields0 if row == W_FIELD else v
            v = _at(units, u * U_COLS + U_SHADOW) if row == W_SHADOW else v
            i0 = (row * n_units + u) * LANES
            for l in range(LANES):
                _put(wst, i0 + l, v if _at(start, l) else _at(wst, i0 + l))
        n_d3 = _at(units, u * U_COLS + U_PF_D3)
        n_d6 = _at(units, u * U_COLS + U_PF_D6)
        if n_d3 + n_d6 == 0:
            continue
        for l in range(LANES):
            if _at(start, l):
                fields = fields0
                for _ in range(n_d3):
                    fields += _die(rs, l, _THREE, _ONE)
                for _ in range(n_d6):
                    fields += _d6(rs, l)
                _wput(wst, W_FIELD, u, l, n_units, fields)
                nd += n_d3 + n_d6
    return nd


@kernel_function
def damage_state(tb, st):
    """The :class:`Damage` of a block's tables and lanes."""
    return Damage(tb.units, tb.fu, tb.fb, tb.splash, st.rs, st.hp, st.alive, st.wst, st.stk, st.losses_bm, st.kills,
                  st.bm, st.broken, tb.sets.n_words)


@kernel_function
def _book_lane(dm, u, l, points, markers, mode, ck):
    """Book ``points`` of damage done to unit ``u`` in lane ``l`` (``markers`` of them placing BMs if its
    formation wins, an Automaton's none): losses until the end phase, and in the fight kills for the other side
    (times ``ck``: 0 for supporting fire whose kills do not count; none for Automata); in the end phase, BMs on
    its unbroken formation (spec §6.4, §10.4, §10.6, §10.7; TP-SR Automaton, Automata); in a turn's shooting
    attack (BOOK_SHOT), every marker in ``losses_bm`` for wargame_odds.kernels.epic.shooting to place (docs/epic-turn.md
    §3.13)."""
    units = dm.units
    losses_bm = dm.losses_bm
    fl = _at(units, u * U_COLS + U_FORM) * LANES + l
    # a BM per point, Expendable or not (wargame_odds.analysis.epic.shooting.AttackState.book_damage)
    if mode == BOOK_SHOT:
        _put(losses_bm, fl, _at(losses_bm, fl) + markers)
    elif mode != BOOK_END_PHASE:
        _put(losses_bm, fl, _at(losses_bm, fl) + markers * _at(units, u * U_COLS + U_LOSS_BM))
    if mode == BOOK_FIGHT:
        kl = (1 - _at(units, u * U_COLS + U_SIDE)) * LANES + l
        _put(dm.kills, kl, _at(dm.kills, kl) + points * ck)
    elif mode == BOOK_END_PHASE and _at(dm.broken, fl) == 0:
        _put(dm.bm, fl, _at(dm.bm, fl) + points)


@kernel_function
def _push(stk, top, kind, u, a, b):
    """Push a frame (``kind``, unit ``u``, a, b, 0, 0) onto ``stk`` holding ``top`` frames; returns the new top."""
    i = 1 + top * FRAME
    _put(stk, i, kind)
    _put(stk, i + 1, u)
    _put(stk, i + 2, a)
    _put(stk, i + 3, b)
    _put(stk, i + 4, 0)
    _put(stk, i + 5, 0)
    return top + 1


@kernel_function
def _destroyed_lane(dm, u, l):
    """Unit ``u`` is destroyed in lane ``l``: no DC left, its alive bit cleared and, with war-engine rules, the
    next death number stamped on it (for the splash victims of a _we_resolve_lane run)."""
    _put(dm.hp, u * LANES + l, 0)
    _clear_unit(dm.alive, dm.units, u, l, dm.n_words, INT1)
    if dm.wst.size > 0:
        t = _at(dm.stk, 0) + 1
        _put(dm.stk, 0, t)
        _wput(dm.wst, W_DIED, u, l, dm.units.shape[0], t)


@kernel_function
def _hull_points(dm, u, l, points, markers, mode, ck):
    """``points`` straight to unit ``u``'s hull in lane ``l``, booked as ``mode`` says (``markers`` 1 if they place
    BMs), for a unit without a critical effect (nothing follows): points beyond its DC are lost."""
    left = _at(dm.hp, u * LANES + l)
    done = _min(points, left)
    if done > 0:
        _put(dm.hp, u * LANES + l, left - done)
        _book_lane(dm, u, l, done, done * markers, mode, ck)
        if done == left:
            _destroyed_lane(dm, u, l)


@kernel_function
def _lose_character_lane(dm, l, u, mode, ck):
    """A lose_character critical on war engine ``u`` in lane ``l`` that still has a character adding damage
    capacity (DATA land-train; spec §10.4): one of them, picked by a die with a face for each (in their order),
    is removed; the starting DC and void shields drop by the character's (the shields up at most to the new
    number) and so does the DC left, those points booked as damage (``mode``, placing BMs); at 0 it is
    destroyed.  Returns the dice rolled."""
    units = dm.units
    wst = dm.wst
    n_units = units.shape[0]
    lost = np.uint64(_wat(wst, W_LOST_CHARS, u, l, n_units))
    n = _at(units, u * U_COLS + U_CHARS)
    sides = np.uint64(n - _popcount(lost))
    pick = _die(dm.rs, l, sides, (_ONE << _U32) % sides) - 1
    c = 0
    for i in range(n):
        if (lost >> np.uint64(i)) & _ONE == _ZERO:
            if pick == 0:
                c = i
                break
            pick -= 1
    dc = _at(units, u * U_COLS + U_CH_DC + c)
    void_lost = _wat(wst, W_LOST_VOID, u, l, n_units) + _at(units, u * U_COLS + U_CH_VS + c)
    _wput(wst, W_LOST_CHARS, u, l, n_units, np.int64(lost | (_ONE << np.uint64(c))))
    _wput(wst, W_LOST_DC, u, l, n_units, _wat(wst, W_LOST_DC, u, l, n_units) + dc)
    _wput(wst, W_LOST_VOID, u, l, n_units, void_lost)
    _wput(wst, W_VOID, u, l, n_units, _min(_wat(wst, W_VOID, u, l, n_units),
                                           _at(units, u * U_COLS + U_VOID) - void_lost))
    _hull_points(dm, u, l, dc, INT1, mode, ck)
    return 1


@kernel_function
def _critical_lane(dm, u, l, top, mode, ck, splashes):
    """A critical hit's effect on unit ``u`` in lane ``l``, at once (TP 3.2.3, 3.2.4; spec §10.4): destroyed (the
    DC it had left counts as kills and losses, then its splash), more points (an extra_damage critical's own
    kind then its further D6), a self hit, a reactor breach or a fire (rolled in the end phase); the first
    degrade critical degrades it with its damage, the later ones take the ``then`` kind (1 point for
    extra_damage); a lose_character critical removes a random character that added damage capacity (T_LOSE,
    _lose_character_lane), or with none left destroys it.  What follows is pushed onto the stack (``top``
    frames); returns the new top."""
    units = dm.units
    wst = dm.wst
    stk = dm.stk
    n_units = units.shape[0]
    kind = _at(units, u * U_COLS + U_CRIT)
    more = _at(units, u * U_COLS + U_CRIT_DMG)
    own = True
    if kind == CRIT_DEGRADE:
        if _wat(wst, W_DEGRADED, u, l, n_units) == 0:
            _wput(wst, W_DEGRADED, u, l, n_units, INT1)
            return _push(stk, top, T_HULL, u, more, INT1)
        kind = _at(units, u * U_COLS + U_CRIT_THEN)
        more = 1
        own = False
    if kind == CRIT_LOSE_CHARACTER:  # a random character that added DC goes (T_LOSE); with none left, destroyed
        if _at(units, u * U_COLS + U_CHARS) > _popcount(np.uint64(_wat(wst, W_LOST_CHARS, u, l, n_units))):
            return _push(stk, top, T_LOSE, u, INT0, INT0)
        kind = CRIT_DESTROYED
    splashes_here = splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0
    if kind == CRIT_DESTROYED:
        _hull_points(dm, u, l, _at(dm.hp, u * LANES + l), INT1, mode, ck)
        if splashes_here:
            top = _push(stk, top, T_SPLASH, u, ANY, INT0)
    elif kind == CRIT_EXTRA_DAMAGE:
        if own and _at(units, u * U_COLS + U_FURTHER_ON) > 0:
            top = _push(stk, top, T_FURTHER, u, INT0, INT0)
        top = _push(stk, top, T_HULL, u, more, INT1)
    elif kind == CRIT_SELF_HIT:
        top = _push(stk, top, T_SELF, u, _at(units, u * U_COLS + U_SELF_HITS), INT0)
    elif kind == CRIT_BREACH:
        _wput(wst, W_BREACH, u, l, n_units, _wat(wst, W_BREACH, u, l, n_units) + 1)
    elif kind == CRIT_FIRE:
        _wput(wst, W_FIRE, u, l, n_units, _wat(wst, W_FIRE, u, l, n_units) + 1)
    return top


@kernel_function
def _further_frame(dm, l, i, top, splashes):
    """A T_FURTHER frame: after an extra_damage critical's points, if the unit still lives, its further D6: on
    U_FURTHER_ON or more a point (T_HULL), on a 1 its splash.  Returns (new top, dice rolled)."""
    u = np.int64(_at(dm.stk, i + 1))
    top -= 1
    if _at(dm.hp, u * LANES + l) == 0:
        return top, 0
    r = _d6(dm.rs, l)
    if r >= _at(dm.units, u * U_COLS + U_FURTHER_ON):
        top = _push(dm.stk, top, T_HULL, u, INT1, INT1)
    elif r == 1 and splashes and _at(dm.units, u * U_COLS + U_SPLASH_ON) > 0:
        top = _push(dm.stk, top, T_SPLASH, u, ANY, INT0)
    return top, 1


@kernel_function
def _self_frame(dm, l, i, top, splashes):
    """A T_SELF frame: each D6 on U_SELF_ON or more is a hit of the splash's kind on the unit itself; then its
    splash.  Returns (new top, dice rolled)."""
    stk = dm.stk
    units = dm.units
    u = np.int64(_at(stk, i + 1))
    n = _at(stk, i + 2)
    if n == 0:
        top -= 1
        if splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
            top = _push(stk, top, T_SPLASH, u, ANY, INT0)
        return top, 0
    _put(stk, i + 2, n - 1)
    nd = 1
    if _d6(dm.rs, l) >= _at(units, u * U_COLS + U_SELF_ON) and _at(dm.hp, u * LANES + l) > 0:
        unsaved, _, k = _we_hit_lane(dm.rs, l, u, _at(units, u * U_COLS + U_SPLASH_KIND), H_FF, INT1, units, dm.wst)
        nd += k
        if unsaved > 0:
            top = _push(stk, top, T_HULL, u, unsaved, INT1)
    return top, nd


@kernel_function
def _splash_frame(dm, l, i, top):
    """A T_SPLASH frame of unit ``u``'s critical: it hits the first ``splash[g, s]`` units of each formation g (s:
    the source's formation) living when it reaches g, the source excepted, each on a D6 of U_SPLASH_ON or more,
    with a firefight hit of U_SPLASH_KIND (spec §10.6).  Returns (new top, dice rolled)."""
    stk = dm.stk
    units = dm.units
    n_forms = (dm.fb.shape[0] - 1)
    fb = dm.fb
    u = np.int64(_at(stk, i + 1))
    g = _at(stk, i + 2)
    s_f = _at(units, u * U_COLS + U_FORM)
    if _at(stk, i + 4) == 0:  # the next formation within reach: its victims are the units living now
        g += 1
        while g < n_forms and _at(dm.splash, g * n_forms + s_f) == 0:
            g += 1
        if g == n_forms:
            return top - 1, 0
        _put(stk, i + 2, g)
        _put(stk, i + 3, _at(fb, g))
        _put(stk, i + 4, _at(dm.splash, g * n_forms + s_f))
        _put(stk, i + 5, _at(stk, 0))
        return top, 0
    then = _at(stk, i + 5)
    kk = _at(stk, i + 3)
    v = -1
    while kk < _at(fb, g + 1):
        w = _at(dm.fu, kk)
        kk += 1
        if w != u and (_at(dm.hp, w * LANES + l) > 0 or _wat(dm.wst, W_DIED, w, l, units.shape[0]) > then):
            v = w
            break
    if v < 0:
        _put(stk, i + 4, 0)
        return top, 0
    _put(stk, i + 3, kk)
    _put(stk, i + 4, _at(stk, i + 4) - 1)
    if _d6(dm.rs, l) < _at(units, u * U_COLS + U_SPLASH_ON) or _at(dm.hp, v * LANES + l) == 0:
        return top, 1  # missed, or destroyed since its formation's victims were chosen: the hit is wasted
    unsaved, _, k = _we_hit_lane(dm.rs, l, v, _at(units, u * U_COLS + U_SPLASH_KIND), H_FF, INT1, units, dm.wst)
    if unsaved > 0:
        top = _push(stk, top, T_HULL, v, unsaved, INT1)
    return top, 1 + k


@kernel_function
def _we_resolve_lane(dm, l, entry, u0, kind, how, points, mode, ck, splashes):
    """:func:`_resolve_lane` with its integer arguments as int64 values: plain Numba (``WARGAME_ODDS_PLAIN_NUMBA=1``)
    compiles a function once per set of argument types its call sites pass, a constant typed as its value, and the
    callers pass different constants (E_HIT, E_HULL, E_SPLASH; each booking mode); so this small function is compiled
    for each of them and the large one once.  (The extended mode compiles each function once anyway, kernels/jit.py.)"""
    return _resolve_lane(dm, np.int64(l), np.int64(entry), np.int64(u0), np.int64(kind), np.int64(how),
                         np.int64(points), np.int64(mode), np.int64(ck), splashes)


@kernel_function
def _resolve_lane(dm, l, entry, u0, kind, how, points, mode, ck, splashes):
    """Damage to unit ``u0`` in lane ``l`` and all that follows from it, in the reference engine's order (spec
    §10.2–§10.6): ``entry`` E_HIT a hit of ``kind`` with flags ``how`` and ``points`` damage (shields, a disrupt
    hit's BM, saves), E_HULL ``points`` straight to the hull (with H_DISRUPT in ``how``: points that place no BM,
    TP 2.2.2), E_SPLASH ``u0``'s critical splash.  Each point removes 1 DC (points beyond its DC are lost), is
    booked as ``mode`` says (_book_lane) and, for a unit with a critical effect, rolls a D6: on a 6 its effect
    applies at once (not in the end phase, whose criticals resolve in the next one), before the next point; a
    splash (of a destroyed war engine, of a further-damage roll of 1, after self hits: ``splashes``) hits units
    of the formations within its reach (_splash_frame); a war engine it destroys splashes at once too.  The
    nested steps run on the explicit stack ``dm.stk`` (layout: E_*, T_*).  Returns the dice rolled."""
    nd = 0
    top = INT0
    stk = dm.stk
    units = dm.units
    if entry == E_HIT:
        unsaved, past, nd = _we_hit_lane(dm.rs, l, u0, kind, how, points, units, dm.wst)
        disrupt = (how & H_DISRUPT) != 0
        if disrupt and past and mode == BOOK_FIGHT:  # a BM for the hit itself, none for its points (TP 2.2.2)
            fl = _at(units, u0 * U_COLS + U_FORM) * LANES + l
            _put(dm.losses_bm, fl, _at(dm.losses_bm, fl) + _at(units, u0 * U_COLS + U_DISRUPT_BM))
        if unsaved == 0:
            return nd
        top = _push(stk, top, T_HULL, u0, unsaved, np.int64(not disrupt))
    elif entry == E_HULL:
        marks = np.int64((how & H_DISRUPT) == 0)
        if _at(units, u0 * U_COLS + U_CRIT) == CRIT_NONE:  # nothing can follow: no frame
            _hull_points(dm, u0, l, points, marks, mode, ck)
            return 0
        top = _push(stk, top, T_HULL, u0, points, marks)
    else:
        top = _push(stk, top, T_SPLASH, u0, ANY, INT0)
    while top > 0:
        i = 1 + (top - 1) * FRAME
        t = _at(stk, i)
        if t == T_HULL:  # the most frequent frame, inline (_hull_frame: a call passes dm)
            u = np.int64(_at(stk, i + 1))
            left = _at(dm.hp, u * LANES + l)
            n = _at(stk, i + 2)
            if n == 0 or left == 0:
                top -= 1
                continue
            _put(stk, i + 2, n - 1)
            _put(dm.hp, u * LANES + l, left - 1)
            _book_lane(dm, u, l, INT1, _at(stk, i + 3), mode, ck)
            if left == 1:
                _destroyed_lane(dm, u, l)
            if _at(units, u * U_COLS + U_CRIT) == CRIT_NONE:
                continue
            nd += 1
            if _d6(dm.rs, l) < 6:
                continue
            _wput(dm.wst, W_CRIT, u, l, units.shape[0], INT1)
            if mode != BOOK_END_PHASE:
                top = _critical_lane(dm, u, l, top, mode, ck, splashes)
            continue
        if t == T_FURTHER:
            top, k = _further_frame(dm, l, i, top, splashes)
        elif t == T_SELF:
            top, k = _self_frame(dm, l, i, top, splashes)
        elif t == T_LOSE:
            top -= 1
            k = _lose_character_lane(dm, l, np.int64(_at(stk, i + 1)), mode, ck)
        else:
            top, k = _splash_frame(dm, l, i, top)
        nd += k
    return nd


@kernel_function
def _broken_hit_lane(dm, l, u, splashes):
    """The no-save hit a BM becomes on broken formation's unit ``u`` in lane ``l`` (TP 1.13.4; spec §6.3): an
    Automaton may save it with its own save, no invulnerable save (TP-SR Automaton); a war engine's point rolls
    for criticals (spec §10.4).  Returns the dice rolled."""
    saved, nd = _automaton_saved(dm.rs, l, u, dm.units, dm.wst)
    if saved:
        return nd
    return nd + _we_resolve_lane(dm, l, E_HULL, u, INT0, INT0, INT1, BOOK_LOSSES, INT0, splashes)
