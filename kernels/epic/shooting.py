"""A turn's shooting attack (rule step, docs/epic-turn.md §3; TP 1.9, 2.2, 3.2), in the TP 1.9.3 order: one
:func:`shoot_lanes` call makes an attack in every lane, lane by lane (:func:`_lane_by_lane`); a plain attack (alike
lines at a target that needs no choice) takes the lock-step path (wargame_odds.kernels.epic.shoot_plain).  Its
steps live in modules of their own, bottom first:

- ``shoot_policy``: which hits a unit can take, the fire type and the declaration before any dice (§3.5);
- ``shoot_fire``: who fires, the exposed units, direct fire and the barrage's to-hit rolls (§3.1–§3.6);
- ``shoot_hits``: a hit resolved (saves, kills, BMs, war engines' damage, a broken target's hits; §3.8–§3.13);
- ``shoot_allocation``: the hits allocated round-robin, each resolved as it is given (§3.7);
- ``shoot_plain``: the plain attack in lock-step;

and here the BMs of each step and the break checks once the attack is over (§3.11).

Each function takes the scenario's tables ``tb`` and the block's lanes ``st`` (wargame_odds.kernels.epic.layout), the
turn's tables ``tt``, the shooting's scratch ``sc`` and the attack ``shot`` (wargame_odds.kernels.epic.turn_layout) as
it needs them.
"""
from .access import INT1, _at, _cell, inlined_function, kernel_function
from .breaks import _break, _fails_break
from .layout import F_COLS, F_TSKNF, LANES, NO_ROLL, U_COLS, U_DC
from .shoot_allocation import _allocation_step, _barrage_only_step, _barrage_step, _step_has_hits
from .shoot_fire import _barrage, _direct_fire, _exposed_units, _fire_team, _line_kinds
from .shoot_hits import _broken_hits, _place
from .shoot_plain import _plain_attack, _plain_lanes
from .turn_layout import ACC_KILLS, ACC_MARKERS, ACC_PLACED, NO_ATTACK
from .units import _any_living


@kernel_function
def _markers(tb, st, tt, sc, shot, l, n):
    """A step's ``n`` BMs on a target broken when the attack began, as no-save hits (TP 1.9.4; :func:`_broken_hits`);
    on another target they are placed (:func:`_place`, called directly: this call passes the records).  Returns
    the dice rolled."""
    return _broken_hits(tb, st, tt, sc, l, shot.target, n, shot.splashes) if n > 0 else 0


@kernel_function
def _fails_after_attack(hp, fu, fb, units, forms, bm, f, l):
    """Has formation ``f`` a living unit in lane ``l``, and does it fail its break test (:func:`_fails_break`: its BMs
    against its size, the living units' damage capacity, TP 1.9.7)?  The living units are counted front to back only
    while the BMs could still break it (the size only grows: at a few BMs the first units settle it)."""
    markers = _at(bm, f * LANES + l)
    tsknf = _cell(forms, f, F_COLS, F_TSKNF) != 0
    size = 0
    for k in range(_at(fb, f), _at(fb, f + 1)):
        u = _at(fu, k)
        if _at(hp, u * LANES + l) > 0:
            size += _cell(units, u, U_COLS, U_DC)
            if not _fails_break(markers, size, tsknf):
                return False
    return size > 0


@kernel_function
def _break_checks(tb, st, sc, shot, l, was_broken):
    """§3.11 the break check (:func:`_fails_after_attack`) of a target that was not broken, once the whole attack is
    over; then of the formations a splash put BMs on (TP 1.9.7, 1.13.2).  Returns the dice rolled."""
    L = LANES
    target = shot.target
    nd = 0
    if not was_broken and _fails_after_attack(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, target, l):
        nd += _break(tb, st, l, target)
    for g in range(tb.forms.shape[0]):
        if sc.spl[g] and not _at(st.broken, g * L + l) \
                and _fails_after_attack(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, g, l):
            nd += _break(tb, st, l, g)
    return nd


@inlined_function
def _lane_by_lane(tb, st, tt, sc, shot):
    """The attack in each lane ``l`` of ``shot.l0..l1`` that attacks, lane by lane, in the TP 1.9.3 order
    (wargame_odds.analysis.epic.shooting.shoot): who fires (:func:`_fire_team`), the BM for coming under fire
    (§3.3), the exposed units, direct fire and the barrage, the normal then the macro-weapon hits with each step's
    BMs, the barrage's extra BMs last (reading), the break checks.  The lane loop is here, so that the records are
    passed once an attack rather than once a lane (a call passes every array of them).  Returns the dice rolled."""
    L = LANES
    acc = sc.acc
    target = shot.target
    nd = 0
    for l in range(shot.l0, shot.l1):
        if _at(sc.lane_mod, l) == NO_ATTACK:
            continue
        sc.res[l] = 0
        sc.res[L + l] = 0
        sc.res[2 * L + l] = 0
        for i in range(8):
            acc[i] = 0
        for g in range(tb.forms.shape[0]):
            sc.spl[g] = 0
        if _at(st.broken, shot.shooter * L + l) or not _any_living(st.hp, tb.fu, tb.fb, shot.shooter, l):
            continue
        nf = _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, shot.shooter, shot.in_range,
                        l)
        if nf == 0 or not _any_living(st.hp, tb.fu, tb.fb, target, l):
            continue  # no attack, no BM (TP-FAQ Place Blast Marker)
        was_broken = _at(st.broken, target * L + l) != 0
        nd += _markers(tb, st, tt, sc, shot, l, INT1) if was_broken else _place(l, target, INT1, acc, st.bm)  # §3.3
        ne, mixed, has_we, settled = _exposed_units(tb.fb, tb.fu, st.hp, tt.tu, sc.ex, target, shot.n_exposed, l)
        cover = _at(sc.lane_cover, l)
        lane = (l, _at(sc.lane_mod, l), cover, _at(sc.lane_cs, l) if cover else NO_ROLL, ne, nf, mixed, has_we,
                settled)
        any_direct, any_barrage = _line_kinds(tt.wb, tt.wpn, sc.cand, nf)
        nh = 0
        if any_direct:  # (a call passes every array of the records: none for a barrage alone)
            nh, k = _direct_fire(tb, st, tt, sc, shot, lane)
            nd += k
        extra = 0
        if any_barrage:
            nh, extra, k = _barrage(tb, st, tt, sc, shot, lane, nh)
            nd += k
        for phase in range(2):
            acc[ACC_MARKERS] = 0
            if _step_has_hits(sc.hkind, nh, phase):  # a step without hits places nothing
                if _barrage_only_step(sc.hkind, sc.hunit, tt.tu, nh, phase):
                    nd += _barrage_step(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, sc.hkind,
                                        sc.hflag, sc.hunit, nh, phase, l, lane[3], shot.crossfire, acc)
                else:
                    nd += _allocation_step(tb, st, tt, sc, shot, lane, nh, phase)
                nd += _markers(tb, st, tt, sc, shot, l, acc[ACC_MARKERS]) if was_broken else \
                    _place(l, target, acc[ACC_MARKERS], acc, st.bm)
        nd += _markers(tb, st, tt, sc, shot, l, extra) if was_broken else _place(l, target, extra, acc, st.bm)
        nd += _break_checks(tb, st, sc, shot, l, was_broken)
        sc.res[l] = nh
        sc.res[L + l] = acc[ACC_KILLS]
        sc.res[2 * L + l] = acc[ACC_PLACED]
    return nd


@kernel_function
def shoot_lanes(tb, st, tt, sc, shot):
    """One shooting attack of formation ``shot.shooter`` at ``shot.target`` in each lane ``l`` of ``shot.l0..l1``
    whose ``sc.lane_mod[l]`` (its to-hit modifier) is not NO_ATTACK, with its cover ``sc.lane_cover[l]`` and cover
    save ``sc.lane_cs[l]`` (§3; wargame_odds.analysis.epic.shooting.shoot): a plain attack (:func:`_plain_attack`) in
    lock-step (:func:`_plain_lanes`), any other lane by lane (:func:`_lane_by_lane`), each lane from its own stream.
    The lane's hits, kills and BMs placed go to ``sc.res[l]``, ``res[L + l]``, ``res[2L + l]``.  Returns the dice
    rolled."""
    plain = _plain_attack(tb, tt, shot.shooter, shot.target, shot.ap_at, sc.ushots)
    if plain[0]:
        return _plain_lanes(tb, st, tt, sc, shot, plain)
    return _lane_by_lane(tb, st, tt, sc, shot)
