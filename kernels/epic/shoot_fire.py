"""A shooting attack's to-hit rolls in one lane (rule step, docs/epic-turn.md §3.1–§3.6; TP 1.9.2, 1.9.5, 1.9.8,
3.2.1): who fires after suppression (:func:`_fire_team`), the target's exposed units (:func:`_exposed_units`),
direct fire (:func:`_direct_fire`, each weapon line's shots in :func:`_fire_line`) and the barrage
(:func:`_barrage`, its points in :func:`_barrage_points`); each hit is listed in the shooting's scratch.

The functions take the records as wargame_odds.kernels.epic.shooting says.
"""
from .access import INT0, _at, _cell, _put, kernel_function
from .dice import _amount, _d6, _to_hit
from .hits import H_DISRUPT, H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_TK
from .layout import F_COLS, F_TSKNF, LANES, U_COLS, U_DC
from .shoot_policy import _aim, _can_take, _fixed_type
from .turn_layout import (AIM_ALL, AV, BAR_AP, BAR_AT, BAR_EXTRA, BAR_MAX, BAR_MIN, BAR_TEMPLATES, INF, KIND_CHOOSE, LV,
                          NONE, TU_COLS, TU_FIRES, TU_TYPE, WE, WP_AP, WP_AT, WP_BARRAGE, WP_BP, WP_BP_N, WP_BP_SIDES,
                          WP_COLS, WP_COUNT, WP_DISRUPT, WP_IC, WP_LANCE, WP_MACRO, WP_MW, WP_SHOTS, WP_SHOTS_N,
                          WP_SHOTS_SIDES, WP_SNIPER, WP_TK, Aim)


@kernel_function
def _fire_team(fb, fu, hp, bm, tu, forms, units, cand, shooter, in_range, l):
    """§3.1 who can fire in lane ``l`` (living units among the first ``in_range``, with a ground weapon: ``cand``)
    and §3.2 suppression from the back, strict order (TSKNF units cost 2 BMs, a war engine its starting DC).
    Returns the units that fire (the first of ``cand``)."""
    L = LANES
    nc = 0
    seen = 0
    for k in range(_at(fb, shooter), _at(fb, shooter + 1)):  # branch-free but for the range
        if in_range != NONE and seen >= in_range:
            break  # the units after are dead or out of range
        u = _at(fu, k)
        living = _at(hp, u * L + l) > 0
        seen += living
        cand[nc] = u  # kept only if it fires (nc <= the units seen so far < n_units)
        nc += living & (_cell(tu, u, TU_COLS, TU_FIRES) != 0)
    budget = _at(bm, shooter * L + l)
    tsknf = _cell(forms, shooter, F_COLS, F_TSKNF) != 0
    suppressed = 0
    for i in range(nc - 1, -1, -1):
        cost = 2 if tsknf else _at(units, cand[i] * U_COLS + U_DC)
        if budget < cost:
            break
        budget -= cost
        suppressed += 1
    return nc - suppressed


@kernel_function
def _exposed_units(fb, fu, hp, tu, ex, target, n_exposed, l):
    """§3.4 the target's exposed units in lane ``l``: the first ``n_exposed`` living ones (``ex``).  Returns (how
    many, whether a living war engine and another living unit make the target mixed, whether it has a living war
    engine, the fire type the unit types settle when it is not mixed: AT at war engines only, AP where no exposed
    unit can take AT hits, else NONE: wargame_odds.analysis.epic.shooting.choose_fire_type)."""
    ne = 0
    has_we = False
    has_other = False
    at_able = False
    for k in range(_at(fb, target), _at(fb, target + 1)):  # branch-free: the units' states are random
        u = _at(fu, k)
        living = _at(hp, u * LANES + l) > 0
        t = _cell(tu, u, TU_COLS, TU_TYPE)
        has_we |= living & (t == WE)
        has_other |= living & (t != WE)
        exposed = living & ((n_exposed == NONE) | (ne < n_exposed))
        ex[ne] = u  # kept only if exposed (ne <= the units seen so far < n_units)
        ne += exposed
        at_able |= exposed & _can_take(t, KIND_AT)
    mixed = has_we and has_other
    settled = NONE
    if not mixed:
        if has_we:
            settled = KIND_AT
        elif not at_able:
            settled = KIND_AP
    return ne, mixed, has_we, settled


@kernel_function
def _fire_line(rs, wpn, hkind, hflag, hunit, hline, l, w, kind, flags, group, mod, nh):
    """Weapon line ``w``'s shots in lane ``l`` (§3.5; TP 1.9.5): each of its weapons' shots (dice shots rolled each
    time it fires), a to-hit roll each at modifier ``mod``; each hit is listed (``sc.hkind``, ``hflag``, ``hunit``:
    the group it was declared at, ``hline``) after the ``nh`` so far.  Returns (hits listed, dice rolled)."""
    ap = _cell(wpn, w, WP_COLS, WP_AP)
    at = _cell(wpn, w, WP_COLS, WP_AT)
    value = _cell(wpn, w, WP_COLS, WP_MW) if kind == KIND_MW or kind == KIND_TK else (ap if kind == KIND_AP else at)
    need = value - mod
    nd = 0
    for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):
        shots = _cell(wpn, w, WP_COLS, WP_SHOTS)
        if _cell(wpn, w, WP_COLS, WP_SHOTS_N):  # dice shots, rolled each time the weapon fires
            shots, k2 = _amount(rs, l, _cell(wpn, w, WP_COLS, WP_SHOTS_N), _cell(wpn, w, WP_COLS, WP_SHOTS_SIDES),
                                shots)
            nd += k2
        for _ in range(shots):
            if need <= 6:  # _to_hit's one roll, inline
                first = _d6(rs, l)
                nd += 1
                hit = (first != 1) & (first >= need)
            else:
                hit, k2 = _to_hit(rs, l, value, mod)
                nd += k2
            _put(hkind, nh, kind)  # kept only if it hit (branch-free; nh <= the shots so far < max hits)
            _put(hflag, nh, flags)
            _put(hunit, nh, group)
            _put(hline, nh, w)
            nh += hit
    return nh, nd


@kernel_function
def _direct_fire(tb, st, tt, sc, shot, lane):
    """§3.5 direct fire in one lane (``lane``: (l, modifier, cover, cover save, exposed units, units that fire,
    mixed, has a war engine, settled type)): per weapon line of the units that fire, before any dice, its type and
    the group it is declared at (:func:`_aim`), the policies only where they decide something, and once for a run
    of equal lines (the target does not change while the shots are rolled, and units of one profile carry equal
    lines); then its shots (:func:`_fire_line`).  Returns (hits listed, dice rolled)."""
    l, modifier, cover, cs, ne, nf, mixed, has_we, settled = lane
    wpn = tt.wpn
    nh = INT0
    nd = 0
    last = NONE
    last_kind = NONE
    last_group = AIM_ALL
    for i in range(nf):
        u = sc.cand[i]
        for w in range(_at(tt.wb, u), _at(tt.wb, u + 1)):
            if _cell(wpn, w, WP_COLS, WP_BARRAGE):
                continue  # fires in the barrage
            ic = _cell(wpn, w, WP_COLS, WP_IC)
            kind = _fixed_type(_cell(wpn, w, WP_COLS, WP_AP), _cell(wpn, w, WP_COLS, WP_AT),
                               _cell(wpn, w, WP_COLS, WP_MW), _cell(wpn, w, WP_COLS, WP_TK), shot.ap_at)
            if kind == NONE:
                continue
            flags = H_SNIPER * _cell(wpn, w, WP_COLS, WP_SNIPER) + H_IC * ic \
                + H_DISRUPT * _cell(wpn, w, WP_COLS, WP_DISRUPT) + H_LANCE * _cell(wpn, w, WP_COLS, WP_LANCE)
            mod = modifier - (1 if cover and not ic else 0)
            group = AIM_ALL
            if kind == KIND_CHOOSE and settled != NONE:
                kind = settled
            elif kind == KIND_CHOOSE or mixed:
                same = last != NONE
                c = 0
                while same and c < WP_COLS:
                    same = _cell(wpn, w, WP_COLS, c) == _cell(wpn, last, WP_COLS, c)
                    c += 1
                if not same:
                    last_kind, last_group = _aim(tb, st, tt, sc, Aim(l, mod, ne, cs, shot.crossfire), w, kind,
                                                 shot.declare_at, mixed, has_we)
                    last = w
                kind = last_kind
                group = last_group
            nh, k2 = _fire_line(st.rs, wpn, sc.hkind, sc.hflag, sc.hunit, sc.hline, l, w, kind, flags, group, mod, nh)
            nd += k2
    return nh, nd


@kernel_function
def _line_kinds(wb, wpn, cand, nf):
    """The weapon lines of the ``nf`` units that fire (``cand``): (a direct-fire line among them, a barrage line
    among them) (§3.5, §3.6)."""
    direct = False
    barrage = False
    for i in range(nf):
        u = cand[i]
        for w in range(_at(wb, u), _at(wb, u + 1)):
            is_barrage = _cell(wpn, w, WP_COLS, WP_BARRAGE) != 0
            barrage |= is_barrage
            direct |= not is_barrage
    return direct, barrage


@kernel_function
def _barrage_points(st, tt, sc, l, nf):
    """§3.6 the barrage's points in lane ``l``: every barrage line of the units that fire adds its BP, rolled per
    weapon and shot (TP 1.9.8); its hits have the flags all its lines share, are macro-weapon / titan-killer hits
    when all its lines are, and do its first line's titan-killer damage.  Returns (BP, flags, macro, titan, first
    line, dice rolled)."""
    wpn = tt.wpn
    bp = 0
    nd = 0
    every = H_SNIPER + H_DISRUPT + H_LANCE + H_IC
    macro = True
    titan = True
    first_line = NONE
    for i in range(nf):
        u = sc.cand[i]
        for w in range(tt.wb[u, 0], tt.wb[u + 1, 0]):
            if not _cell(wpn, w, WP_COLS, WP_BARRAGE):
                continue
            if first_line == NONE:
                first_line = w
            for _ in range(_cell(wpn, w, WP_COLS, WP_COUNT)):
                shots = wpn[w, WP_SHOTS]
                if wpn[w, WP_SHOTS_N]:  # dice shots (the call only where there are dice: it would roll none)
                    shots, k2 = _amount(st.rs, l, wpn[w, WP_SHOTS_N], wpn[w, WP_SHOTS_SIDES], shots)
                    nd += k2
                for _ in range(shots):
                    points = wpn[w, WP_BP]
                    if wpn[w, WP_BP_N]:  # dice barrage points
                        points, k2 = _amount(st.rs, l, wpn[w, WP_BP_N], wpn[w, WP_BP_SIDES], points)
                        nd += k2
                    bp += points
            every &= H_SNIPER * wpn[w, WP_SNIPER] + H_DISRUPT * wpn[w, WP_DISRUPT] + H_LANCE * wpn[w, WP_LANCE] \
                + H_IC * wpn[w, WP_IC]
            macro &= wpn[w, WP_MACRO] != 0
            titan &= wpn[w, WP_TK] != 0
    return bp, every, macro, titan, first_line, nd


@kernel_function
def _barrage(tb, st, tt, sc, shot, lane, nh):
    """§3.6 the barrage in one lane (``lane`` as :func:`_direct_fire`'s): its points (:func:`_barrage_points`) pick
    the barrage table's row (above the table: its last row, a reading); its templates cover the exposed units front
    to back (a template holds 3 infantry or light vehicles, 2 armoured vehicles, 1 war engine, or ``per_template``
    units), one to-hit roll per unit under a template, ⌈starting DC / 2⌉ for a war engine under its centre (TP
    3.2.1); each hit listed for its unit.  Returns (hits listed, the row's extra BMs, dice rolled)."""
    l, modifier, cover, _, ne, nf, _, _, _ = lane
    bar = tt.bar
    bp, every, macro, titan, first_line, nd = _barrage_points(st, tt, sc, l, nf)
    if bp == 0:
        return nh, 0, nd
    row = bar.shape[0] - 1
    for r in range(bar.shape[0]):
        if bar[r, BAR_MIN] <= bp <= bar[r, BAR_MAX]:
            row = r
            break
    mod = modifier - (1 if cover and (every & H_IC) == 0 else 0)
    i = 0
    for _ in range(bar[row, BAR_TEMPLATES]):
        room = 6  # halves: a template holds 3 infantry / light vehicles, 2 armoured vehicles, 1 war engine
        taken = 0
        while i < ne:
            u = sc.ex[i]
            t = _cell(tt.tu, u, TU_COLS, TU_TYPE)
            if shot.per_template != NONE:
                if taken >= shot.per_template:
                    break
            else:
                size = 6 if t == WE else (3 if t == AV else 2)
                if size > room:
                    break
                room -= size
            attacks = (tb.units[u, U_DC] + 1) // 2 if t == WE and taken == 0 else 1  # under the centre
            taken += 1
            i += 1
            infantry = t == INF or t == LV
            for _ in range(attacks):
                hit, k2 = _to_hit(st.rs, l, bar[row, BAR_AP] if infantry else bar[row, BAR_AT], mod)
                nd += k2
                if hit:
                    sc.hkind[nh] = KIND_TK if titan else (KIND_MW if macro else (KIND_AP if infantry else KIND_AT))
                    sc.hflag[nh] = every
                    sc.hunit[nh] = u
                    sc.hline[nh] = first_line
                    nh += 1
    return nh, bar[row, BAR_EXTRA], nd
