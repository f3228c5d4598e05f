"""A shooting attack's allocation in one lane (rule step, docs/epic-turn.md §3.7; TP 1.9.6, 2.1.14, 2.2.6, 3.2.1;
TP-FAQ Allocate Hits & Make Saving Throws, Sniper): the normal hits, then the macro-weapon hits
(:func:`_allocation_step`), barrage hits on the unit rolled for, the pooled hits of each declared group round-robin
over its living exposed units front to back (:func:`_group_round_robin`: :func:`_next_taker`, a light vehicle's kind
by :func:`_pooled_kind`, a war engine a block of its starting DC), a sniper's hits to its pick (:func:`_sniper_pick`);
each hit resolved as it is allocated (wargame_odds.kernels.epic.shoot_hits).  A step of barrage hits alone on units
that are not war engines (:func:`_barrage_only_step`) is :func:`_barrage_step`, without the records.

The functions take the records as wargame_odds.kernels.epic.shooting says.
"""
from .access import INT0, _at, _cell, kernel_function
from .hits import H_SNIPER, KIND_TK, _step_kinds
from .layout import LANES, U_COLS, U_DC, U_SNIPE
from .shoot_hits import _hit_unit, _resolve, _resolve_hit
from .shoot_policy import _can_take
from .turn_layout import AIM_ALL, AIM_WE, NONE, TU_COLS, TU_TYPE, WE


@kernel_function
def _sniper_pick(tu, units, gl, nl, kind):
    """The unit a sniper's hit of ``kind`` goes to (TP 2.1.14; TP-FAQ Sniper): the first Inspiring, Leader or Supreme
    Commander unit of ``gl[:nl]`` that can take it, else the first that can; NONE if none can."""
    pick = NONE
    for i in range(nl):
        u = gl[i]
        if _can_take(_cell(tu, u, TU_COLS, TU_TYPE), kind):
            if pick == NONE:
                pick = u
            if _cell(units, u, U_COLS, U_SNIPE):
                pick = u
                break
    return pick


@kernel_function
def _pooled_kind(tu, cnt, gl, nl, pick, least, pools, phase):
    """The kind unit ``gl[pick]`` takes when it can take both of a step's kinds (TP-FAQ Allocate Hits & Make Saving
    Throws; reading, docs/epic-turn.md §3.7): the one with the larger surplus over the units at the same count
    that can take only it, then the one fewer units can take, then AT in the normal step, then the kind of the
    first pooled hit.  ``pools``: (k0, k1, hits left of each, the first pooled hit's kind)."""
    k0, k1, rem0, rem1, first = pools
    s0 = rem0
    s1 = rem1
    a0 = 0
    a1 = 0
    for i in range(nl):
        ti = _cell(tu, gl[i], TU_COLS, TU_TYPE)
        c0 = _can_take(ti, k0)
        c1 = _can_take(ti, k1)
        a0 += c0
        a1 += c1
        if i != pick and cnt[i] == least:
            s0 -= c0 and not (rem1 > 0 and c1)
            s1 -= c1 and not (rem0 > 0 and c0)
    key0 = s0 * 4096 - a0 * 2  # (surplus, −able, kind is AT) compared in that order
    key1 = s1 * 4096 - a1 * 2
    if phase == 0:
        key1 += 1
    return k1 if key1 > key0 or (key1 == key0 and first == k1) else k0


@kernel_function
def _next_taker(tu, cnt, gl, nl, pools, nxt, one_kind):
    """The next unit of ``gl[:nl]`` in the round-robin that can take a hit left (TP 1.9.6; TP-FAQ Allocate Hits): the
    one with the fewest hits nearest the front; when the step's pooled hits were of ``one_kind`` (the units able to
    take them are the same throughout) that is the next able one after the last pick (``nxt``), wrapping round.
    Returns (its index or NONE, its count)."""
    k0, k1, rem0, rem1, _ = pools
    least = -1
    pick = NONE
    if one_kind:
        for step in range(nl):
            i = nxt + step - (nl if nxt + step >= nl else 0)
            t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
            if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
                return i, least
        return pick, least
    for i in range(nl):
        t = _cell(tu, gl[i], TU_COLS, TU_TYPE)
        if (rem0 > 0 and _can_take(t, k0)) or (rem1 > 0 and _can_take(t, k1)):
            if least < 0 or cnt[i] < least:
                least = cnt[i]
                pick = i
    return pick, least


@kernel_function
def _group_round_robin(tb, st, tt, sc, shot, lane, gl, nl, group, nh, phase):
    """The pooled hits of one step (``phase`` 0: AP and AT, 1: MW and TK) declared at ``group`` in one lane, over its
    living exposed units ``gl[:nl]`` front to back (TP 1.9.6; TP-FAQ Allocate Hits): sniper hits to their pick
    first as they come; then pass after pass the next taker (:func:`_next_taker`) takes one hit, a war engine a
    block of its starting DC (a titan-killer hit counting its damage, rolled when allocated: TP 3.2.1, 3.2.5), of
    the kind it takes (:func:`_pooled_kind` when it can take both); hits no unit can take are lost.  Returns the
    dice rolled."""
    l, cs = lane[0], lane[3]
    k0, k1 = _step_kinds(phase)
    nd = 0
    rem0 = INT0
    rem1 = INT0
    first = NONE  # the kind of the first pooled hit: its pool comes first on a full tie
    for h in range(nh):
        if sc.hunit[h] != group or (sc.hkind[h] != k0 and sc.hkind[h] != k1):
            continue
        if sc.hflag[h] & H_SNIPER:
            pick = _sniper_pick(tt.tu, tb.units, gl, nl, sc.hkind[h])
            if pick != NONE:
                nd += _hit_unit(tb, st, tt, sc, shot, l, h, pick, cs)[1] if tt.tu[pick, TU_TYPE] == WE else \
                    _resolve(tb, st, tt, sc, l, h, pick, cs, shot.crossfire)
            continue
        if first == NONE:
            first = sc.hkind[h]
        rem0 += sc.hkind[h] == k0
        rem1 += sc.hkind[h] == k1
    p0 = 0  # next pooled hit of each kind
    p1 = 0
    nxt = INT0
    one_kind = rem0 == 0 or rem1 == 0
    while rem0 + rem1 > 0:
        pools = (k0, k1, rem0, rem1, first)
        pick, least = _next_taker(tt.tu, sc.cnt, gl, nl, pools, nxt, one_kind)
        if pick == NONE:
            break  # no unit can take what is left: lost
        nxt = pick + 1 if pick + 1 < nl else 0
        t = _cell(tt.tu, gl[pick], TU_COLS, TU_TYPE)
        take0 = rem0 > 0 and _can_take(t, k0)
        take1 = rem1 > 0 and _can_take(t, k1)
        kind = k0 if take0 else k1
        if take0 and take1:
            kind = _pooled_kind(tt.tu, sc.cnt, gl, nl, pick, least, pools, phase)
        u = gl[pick]
        block = tb.units[u, U_DC] if t == WE else 1  # a war engine: a block of its starting DC (TP 3.2.1)
        taken = 0
        while taken < block and (rem0 if kind == k0 else rem1) > 0:
            if kind == k0:
                while sc.hunit[p0] != group or sc.hkind[p0] != k0 or (sc.hflag[p0] & H_SNIPER):
                    p0 += 1
                h = p0
                p0 += 1
                rem0 -= 1
            else:
                while sc.hunit[p1] != group or sc.hkind[p1] != k1 or (sc.hflag[p1] & H_SNIPER):
                    p1 += 1
                h = p1
                p1 += 1
                rem1 -= 1
            if t == WE:
                damage, k2 = _hit_unit(tb, st, tt, sc, shot, l, h, u, cs)
                taken += damage if sc.hkind[h] == KIND_TK else 1
            else:  # _hit_unit's other path, its arrays passed one by one (a call per hit)
                k2 = _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, sc.hkind[h],
                                  sc.hflag[h], cs, shot.crossfire, sc.acc)
                taken += 1
            nd += k2
        sc.cnt[pick] += 1
    return nd


@kernel_function
def _step_has_hits(hkind, nh, phase):
    """Has allocation step ``phase`` (0: AP and AT, 1: MW and TK) a hit among the ``nh`` listed?"""
    k0, k1 = _step_kinds(phase)
    any_hit = False
    for h in range(nh):
        any_hit |= hkind[h] == k0 or hkind[h] == k1
    return any_hit


@kernel_function
def _allocation_step(tb, st, tt, sc, shot, lane, nh, phase):
    """One allocation step with hits (:func:`_step_has_hits`) in one lane (§3.7–§3.10: ``phase`` 0 the normal hits,
    1 the macro-weapon hits on the survivors): barrage hits on the unit rolled for, then the pooled hits of each
    group (at a mixed target every direct hit is declared, at another none: TP 3.2.1) round-robin over its living
    exposed units (:func:`_group_round_robin`).  Returns the dice rolled."""
    l, cs, ne, mixed = lane[0], lane[3], lane[4], lane[6]
    L = LANES
    k0, k1 = _step_kinds(phase)
    nd = 0
    nl = 0
    for i in range(ne):  # branch-free, as the exposed units
        sc.live[nl] = sc.ex[i]
        sc.cnt[nl] = 0
        nl += _at(st.hp, sc.ex[i] * L + l) > 0
    for h in range(nh):  # barrage hits land on the unit rolled for
        u = sc.hunit[h]
        if u >= 0 and (sc.hkind[h] == k0 or sc.hkind[h] == k1):
            if _cell(tt.tu, u, TU_COLS, TU_TYPE) == WE:
                nd += _hit_unit(tb, st, tt, sc, shot, l, h, u, cs)[1]
            else:  # _hit_unit's other path, its arrays passed one by one (a call per hit)
                nd += _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u,
                                   sc.hkind[h], sc.hflag[h], cs, shot.crossfire, sc.acc)
    n_live = nl
    for g in range(3):  # AIM_ALL, AIM_WE, AIM_OTHERS: a declared weapon's hits go only to its group (TP 3.2.1)
        group = AIM_ALL - g
        if (group != AIM_ALL) != mixed:
            continue
        gl = sc.live
        if group != AIM_ALL:
            gl = sc.cand  # the group's living exposed units (who fires is no longer needed)
            nl = INT0
            for i in range(n_live):
                if (_cell(tt.tu, sc.live[i], TU_COLS, TU_TYPE) == WE) == (group == AIM_WE):
                    gl[nl] = sc.live[i]
                    sc.cnt[nl] = 0
                    nl += 1
        nd += _group_round_robin(tb, st, tt, sc, shot, lane, gl, nl, group, nh, phase)
    return nd


@kernel_function
def _barrage_only_step(hkind, hunit, tu, nh, phase):
    """Are the hits of allocation step ``phase`` (0: AP and AT, 1: MW and TK) among the ``nh`` listed all barrage hits
    on units that are not war engines?  Then :func:`_barrage_step` resolves them."""
    k0, k1 = _step_kinds(phase)
    only = True
    for h in range(nh):
        u = hunit[h]
        in_step = hkind[h] == k0 or hkind[h] == k1
        only &= not in_step or (u >= 0 and _cell(tu, u, TU_COLS, TU_TYPE) != WE)
    return only


@kernel_function
def _barrage_step(rs, hp, alive, wst, units, tu, n_words, hkind, hflag, hunit, nh, phase, l, cs, crossfire, acc):
    """An allocation step whose hits are all barrage hits on units that are not war engines
    (:func:`_barrage_only_step`) in lane ``l``: each on the unit rolled for, resolved in turn (:func:`_resolve_hit`),
    as :func:`_allocation_step` does it, without its records (a call passes every array of them: this one is made in
    every lane of a barrage; ``acc`` is ShotScratch.acc).  Returns the dice rolled."""
    k0, k1 = _step_kinds(phase)
    nd = 0
    for h in range(nh):
        if hkind[h] == k0 or hkind[h] == k1:
            nd += _resolve_hit(rs, hp, alive, wst, units, tu, n_words, l, hunit[h], hkind[h], hflag[h], cs, crossfire,
                               acc)
    return nd
