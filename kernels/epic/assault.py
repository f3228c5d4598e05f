"""The assault round's rule steps (spec §1–§4; TP 1.12.5, 1.12.6, 2.2.3, 2.2.4, 3.1.2): the to-hit rolls of a side's
units in a step (pooled and per source row), the allocation, saves and damage of the enemy's hits (the ordinary
hits round-robin over every lane at once), the early ends after the normal step and after supporting fire.
"""
import numpy as np

from ..rng import _FOUR, _ONE, _SIX, _THREE
from .access import INT0, INT1, _at, _cell, _max, _min, _popcount, _put, kernel_function
from .allocation import _allocation_lane, _snipe_lane
from .dice import _roll
from .hits import KIND_AP, NO_FLAGS, _save_targets
from .layout import (ATTACKER, CRIT_DEGRADE, FR_BROKEN0, LANES, LN_CAP, LN_CONTACT, LN_D, LN_FIGHT, LN_H, LN_LIVE,
                     LN_NMW, LN_NN, LN_NTK, LN_PREFIX, LN_QQ, LN_RR, LN_SNIPE, LN_SNIPE_UN, LN_VAL, LN_WINNER, LV_A,
                     LV_ATT, LV_ATTT, LV_DEAD, LV_DFD, LV_HH, LV_KILLS, LV_NN, LV_UN, M_BC, M_COLS, M_TARGET, NO_ROLL,
                     N_CLASSES, P_CLASS, P_VC, P_VN, REACH_ANY, R_TURN, S_BC, S_CLASS, S_COLS, S_D3, S_DVC, S_DVN,
                     S_FF_VC, S_N, S_REACH, S_SPARE, S_SUPPORT, S_UNIT, S_VC, S_VN, U_ARMOUR, U_BIT, U_CHARS, U_COLS,
                     U_CRIT, U_DC, U_FORM, U_LOSS_BM, U_RA, U_SAVE, U_SIMPLE, U_WORD, WIN_ATT, WIN_DEF, WIN_NONE,
                     W_DEGRADED, W_LOST_DC, Fight)
from .saves import _general_hits
from .units import _assault_sides_living, _rows_any, _wat


@kernel_function
def fight(tb, st):
    """The :class:`Fight` of a block's tables and lanes."""
    return Fight(tb.units, tb.src, tb.gb, tb.pmask, tb.pinfo, tb.pb, tb.tgt, tb.tgb, tb.base, tb.sets,
                 tb.rules[R_TURN] != 0, tb.we, st.rs, st.alive, st.hp, st.hits, st.reach_hits, st.lv, st.per_lane,
                 st.per_form[FR_BROKEN0], st.kills, st.losses_bm, st.elig, st.wst, st.shits, st.sff)


@kernel_function
def _end_lanes(l, end, wn, winner, fight, live):
    """Lane ``l``'s trial ends now (``end`` 0 / 1) with winner code ``wn``: no roll, no more rounds."""
    _put(winner, l, wn if end else _at(winner, l))
    _put(fight, l, _at(fight, l) & (1 - end))
    _put(live, l, _at(live, l) & (1 - end))


@kernel_function
def _cut_row_dice(src, units, wst, broken0, turn, k, u, nn, h):
    """Source row ``k`` (of unit ``u``): its dice ``nn[l]`` and whether it rolls ``h[l]`` in each lane, less
    what it cannot roll there: a support formation that the turn (``turn``) broke gives no supporting fire (its
    formation's ``broken0``; TP 1.12.6); a war engine rolls main dice for its starting DC now, the FF rest first
    going with its characters (S_SPARE; TP 3.1.2; spec §10.4 lose_character)."""
    spare = _at(src, k * S_COLS + S_SPARE)
    silenced = turn and _at(src, k * S_COLS + S_SUPPORT) != 0
    fewer = spare >= 0 and wst.size > 0 and _at(units, u * U_COLS + U_CHARS) > 0
    if not (silenced or fewer):
        return
    fl = _at(units, u * U_COLS + U_FORM) * LANES
    for l in range(LANES):
        if silenced and _at(broken0, fl + l):
            _put(nn, l, 0)
            _put(h, l, 0)
        elif fewer:
            _put(nn, l, _max(0, _at(nn, l) - _max(0, _wat(wst, W_LOST_DC, u, l, units.shape[0]) - spare)))


@kernel_function
def _early_ends(sets, alive, lv, per_lane):
    """§3 early ends: the lanes whose defenders' assault formations are gone or whose attackers have no unit left
    directly engaged end before the supporting fire.  (The arrays it reads, not a record: called once a round.)"""
    L = LANES
    winner, live, fight = per_lane[LN_WINNER], per_lane[LN_LIVE], per_lane[LN_FIGHT]
    _assault_sides_living(sets, alive, lv)
    _rows_any(sets, alive, ATTACKER, M_TARGET, lv, LV_ATTT * L)
    for l in range(L):
        fl = _at(fight, l)
        dfd = _at(lv, LV_DFD * L + l)
        att = _at(lv, LV_ATT * L + l)
        att_t = _at(lv, LV_ATTT * L + l)
        end1 = fl & (1 - dfd)  # the defenders' assault formations are gone
        end2 = fl & dfd & (1 - att_t)  # no attacker left directly engaged
        _end_lanes(l, end1 | end2, (WIN_ATT if att else WIN_NONE) if end1 else WIN_DEF, winner, fight, live)


@kernel_function
def _roll_pools(fv, side, g):
    """§1: the dice pools of source group ``g`` (one D6 per living unit of a pool's mask, TP 1.12.5), their hits
    into ``fv.hits`` by class; returns the dice rolled."""
    L = LANES
    n_words = fv.sets.n_words
    per_lane = fv.per_lane
    fight, contact, val, nn, h = per_lane[LN_FIGHT], per_lane[LN_CONTACT], per_lane[LN_VAL], per_lane[LN_NN], \
        per_lane[LN_H]
    d = per_lane[LN_D]
    nd = 0
    for p in range(fv.pb[g], fv.pb[g + 1]):
        vc = fv.pinfo[p, P_VC]
        vn = fv.pinfo[p, P_VN]
        cls = fv.pinfo[p, P_CLASS]
        maxn = 0
        for l in range(L):
            _put(nn, l, 0)
        for w in range(n_words):
            m = fv.pmask[p, w]
            row = (side * n_words + w) * L
            for l in range(L):
                _put(nn, l, _at(nn, l) + _popcount(_at(fv.alive, row + l) & m))
        for l in range(L):
            v = vc if _at(contact, l) else vn
            _put(val, l, v)
            n = _at(nn, l) * _at(fight, l) * np.int64(v < NO_ROLL)
            _put(nn, l, n)
            maxn = _max(maxn, n)
            _put(h, l, 0)
        for j in range(maxn):
            nd += _roll(fv.rs, d, _SIX, _FOUR, nn, INT0, j)
            for l in range(L):
                _put(h, l, _at(h, l) + ((j < _at(nn, l)) & (_at(d, l) >= _at(val, l))))
        hrow = (side * N_CLASSES + cls) * L
        for l in range(L):
            _put(fv.hits, hrow + l, _at(fv.hits, hrow + l) + _at(h, l))
    return nd


@kernel_function
def _roll_row(fv, side, k):
    """§1: source row ``k``'s dice (its to-hit value CC in contact, else FF, a degraded unit's new values, spec §10.4;
    less what _cut_row_dice takes; D3 dice first rolled for their number), its hits into ``fv.hits`` by class, a
    war engine's in contact into ``fv.reach_hits`` (TP 3.1.2), or with war-engine rules per row into
    ``fv.shits`` / ``fv.sff`` (bit 0: firefight hits, spec §10.8.1; bit 1: a WE's, in contact); returns the dice
    rolled."""
    L = LANES
    src = fv.src
    hp = fv.hp
    per_lane = fv.per_lane
    fight, contact, val, nn, h, d = per_lane[LN_FIGHT], per_lane[LN_CONTACT], per_lane[LN_VAL], per_lane[LN_NN], \
        per_lane[LN_H], per_lane[LN_D]
    nd = 0
    u = src[k, S_UNIT]
    bcs = src[k, S_BC]
    for l in range(L):  # its to-hit value (CC in contact, else FF), dice and whether it rolls in each lane
        ok = fight[l] & np.int64(hp[u * L + l] > 0)
        v = src[k, S_VC] if (contact[l] & bcs) else src[k, S_VN]
        ok &= np.int64(v < NO_ROLL)
        val[l] = v
        nn[l] = src[k, S_N] * ok
        h[l] = ok
    if fv.we and fv.units[u, U_CRIT] == CRIT_DEGRADE:  # a degraded unit's new values (spec §10.4)
        n_units = fv.units.shape[0]
        for l in range(L):
            if fv.wst[(W_DEGRADED * n_units + u) * L + l]:
                v = src[k, S_DVC] if (contact[l] & bcs) else src[k, S_DVN]
                ok = fight[l] & np.int64(hp[u * L + l] > 0) & np.int64(v < NO_ROLL)
                val[l] = v
                nn[l] = src[k, S_N] * ok
                h[l] = ok
    if (src[k, S_SPARE] >= 0 and fv.wst.size > 0) or (fv.turn and src[k, S_SUPPORT] != 0):
        _cut_row_dice(src, fv.units, fv.wst, fv.broken0, fv.turn, k, u, nn, h)
    if src[k, S_D3]:
        nd += _roll(fv.rs, d, _THREE, _ONE, h, INT0, INT0)
        for l in range(L):
            nn[l] = d[l] * h[l]
    maxn = 0
    for l in range(L):
        maxn = _max(maxn, nn[l])
        h[l] = 0
    for j in range(maxn):
        nd += _roll(fv.rs, d, _SIX, _FOUR, nn, INT0, j)
        for l in range(L):
            h[l] += (j < nn[l]) & (d[l] >= val[l])
    cls = src[k, S_CLASS]
    reach = src[k, S_REACH]
    if fv.we:
        ffv = src[k, S_FF_VC]
        for l in range(L):
            routed = contact[l] & bcs
            fv.shits[k * L + l] = h[l]
            fv.sff[k * L + l] = ((1 - routed) | ffv) + 2 * routed
    elif reach == REACH_ANY:
        for l in range(L):
            fv.hits[(side * N_CLASSES + cls) * L + l] += h[l]
    else:  # a war engine in contact: its CC / FF hits land only on some units (TP 3.1.2)
        rrow = ((side * 2 + reach - 1) * 3 + cls) * L
        for l in range(L):
            routed = contact[l] & bcs
            fv.hits[(side * N_CLASSES + cls) * L + l] += h[l] * (1 - routed)
            fv.reach_hits[rrow + l] += h[l] * routed
    return nd


@kernel_function
def _roll_hits(fv, side, step):
    """§1 / §4: the to-hit rolls of ``side``'s units in step ``step`` (pooled rows, then source rows), into
    ``fv.hits`` by class (with war-engine rules: per source row, ``fv.shits`` / ``fv.sff``); returns the dice
    rolled."""
    L = LANES
    for i in range(N_CLASSES * L):
        fv.hits[side * N_CLASSES * L + i] = 0
    for i in range(6 * L):
        fv.reach_hits[side * 6 * L + i] = 0
    g = side * 3 + step
    if fv.gb[g + 1] == fv.gb[g] and fv.pb[g + 1] == fv.pb[g]:
        return 0
    _rows_any(fv.sets, fv.alive, 1 - side, M_BC, fv.per_lane[LN_CONTACT], INT0)
    nd = _roll_pools(fv, side, g)
    for k in range(fv.gb[g], fv.gb[g + 1]):
        nd += _roll_row(fv, side, k)
    return nd


@kernel_function
def _plan_hits(fv, side, reaching):
    """Each lane's share of the enemy's hits on ``side`` for §2: its ordinary hits' full passes ``qq`` and the rest
    ``rr`` of the round-robin over the capacity ``cap`` (its living directly engaged units, a WE counting its
    starting DC; none in a lane where a war engine's ordinary hits reach
    only some units: those go lane by lane), its MW and TK hits, whether a sniper's hits wait (-2).  Returns (any
    hit, any sniper hit, any MW, TK or restricted hit) over the lanes."""
    L = LANES
    per_lane = fv.per_lane
    hits = fv.hits
    reach_hits = fv.reach_hits
    nmw, ntk, cap, qq = per_lane[LN_NMW], per_lane[LN_NTK], per_lane[LN_CAP], per_lane[LN_QQ]
    rr, prefix, snipe, snipe_un = per_lane[LN_RR], per_lane[LN_PREFIX], per_lane[LN_SNIPE], per_lane[LN_SNIPE_UN]
    hs = 1 - side
    anyhit = 0
    anysnipe = 0
    anymacro = 0
    n_words = fv.sets.n_words
    units = fv.units
    for l in range(L):  # living directly engaged units (a WE counting its starting DC)
        c = 0
        for w in range(n_words):
            c += _popcount(_at(fv.alive, (side * n_words + w) * L + l)
                           & _at(fv.sets.masks, (2 * w + side) * M_COLS + M_TARGET))
        _put(cap, l, c)
    for kw in range(fv.sets.web[side], fv.sets.web[side + 1]):
        u = fv.sets.wes[kw]
        w = units[u, U_WORD]
        sh = np.uint64(units[u, U_BIT])
        if (fv.sets.masks[(2 * w + side) * M_COLS + M_TARGET] >> sh) & _ONE:
            extra_dc = units[u, U_DC] - 1
            arow = (side * n_words + w) * L
            for l in range(L):
                _put(cap, l, _at(cap, l) + extra_dc * np.int64((_at(fv.alive, arow + l) >> sh) & _ONE))
    hrow = hs * N_CLASSES * L
    crow = (hs * 6 + 0) * L  # a war engine's ordinary hits on units in contact; ``orow``: on the others
    orow = (hs * 6 + 3) * L
    for l in range(L):  # the ordinary hits go round-robin here; MW / TK hits after them (_later_hits)
        c = _at(cap, l)
        has = np.int64(c > 0)
        joint = np.int64(reaching) * np.int64(_at(reach_hits, crow + l) + _at(reach_hits, orow + l) > 0)
        t = _at(hits, hrow + l) * has * (1 - joint)  # a joint lane's are allocated lane by lane (_joint_hits)
        mw = _at(hits, hrow + L + l) * has
        tk = _at(hits, hrow + 2 * L + l) * has
        ns = (_at(hits, hrow + 3 * L + l) + _at(hits, hrow + 4 * L + l) + _at(hits, hrow + 5 * L + l)) * has
        c1 = _max(c, 1)
        q = np.int64(np.float64(t) / np.float64(c1))  # exact: small non-negative integers
        _put(nmw, l, mw)
        _put(ntk, l, tk)
        _put(cap, l, c1)
        anyhit |= t + ns + mw + tk
        anysnipe |= ns
        anymacro |= mw + tk
        _put(qq, l, q)
        _put(rr, l, t - q * c1)
        _put(prefix, l, 0)
        _put(snipe, l, -2 if ns > 0 else -1)  # -2: resolved by _snipe_lane
        _put(snipe_un, l, 0)
    if reaching:
        for l in range(L):
            for i in range(6):
                anyhit |= reach_hits[(hs * 6 + i) * L + l]
        anymacro |= anyhit
    return anyhit, anysnipe, anymacro


@kernel_function
def _ordinary_hits(fv, side, anysnipe):
    """§2 the ordinary (and sniper) hits on ``side`` in every lane at once, unit by unit in allocation order (lane
    rows of ``lv``, vectorised): a unit's hits in each lane from the round-robin (``qq`` full passes and its part of
    the rest ``rr`` after the ``prefix`` before it); their saves (one roll each for a unit without Reinforced Armour
    or Invulnerable Save, lane by lane otherwise: _general_hits); its sniper hits' unsaved ones (_snipe_lane);
    damage (at most its DC left), losses (its formation's BMs if it wins), kills (LV_KILLS), casualties removed.
    Stops at the first unit past which no lane has a hit left.  Returns the dice rolled."""
    L = LANES
    lv = fv.lv
    per_lane = fv.per_lane
    d, qq, rr, prefix = per_lane[LN_D], per_lane[LN_QQ], per_lane[LN_RR], per_lane[LN_PREFIX]
    snipe, snipe_un = per_lane[LN_SNIPE], per_lane[LN_SNIPE_UN]
    units = fv.units
    nd = 0
    for k in range(fv.tgb[side], fv.tgb[side + 1]):
        u = fv.tgt[k]
        dc = units[u, U_DC]
        sv = _save_targets(KIND_AP, NO_FLAGS, units[u, U_ARMOUR], units[u, U_SAVE], units[u, U_RA] != 0,
                           np.int64(0))[0]  # a U_SIMPLE unit's one roll (the others': _general_hits)
        simple = units[u, U_SIMPLE]
        arow = (side * fv.sets.n_words + units[u, U_WORD]) * L
        sh = np.uint64(units[u, U_BIT])
        maxh = 0
        anygen = 0
        for l in range(L):  # its hits in each lane
            a = np.int64((_at(fv.alive, arow + l) >> sh) & _ONE)
            pt = _min(dc, _max(0, _at(rr, l) - _at(prefix, l)))
            hv = (_at(qq, l) * dc + pt) * a
            _put(lv, LV_A * L + l, a)
            _put(lv, LV_HH * L + l, hv * simple)
            _put(lv, LV_NN * L + l, hv * (1 - simple))
            _put(lv, LV_UN * L + l, 0)
            anygen |= hv * (1 - simple)
            maxh = _max(maxh, hv * simple)
        if sv < NO_ROLL:
            for j in range(maxh):
                nd += _roll(fv.rs, d, _SIX, _FOUR, lv, LV_HH * L, j)
                for l in range(L):
                    _put(lv, LV_UN * L + l, _at(lv, LV_UN * L + l) + ((j < _at(lv, LV_HH * L + l)) & (_at(d, l) < sv)))
        else:
            for l in range(L):
                _put(lv, LV_UN * L + l, _at(lv, LV_HH * L + l))
        if anygen:
            for l in range(L):
                if lv[LV_NN * L + l] > 0:
                    g_un, g_nd = _general_hits(fv.rs, l, u, units, _at(lv, LV_NN * L + l))
                    lv[LV_UN * L + l] += g_un
                    nd += g_nd
        if anysnipe:
            for l in range(L):
                isn = np.int64(_at(snipe, l) == u)
                _put(lv, LV_UN * L + l, _at(lv, LV_UN * L + l) + isn * _at(snipe_un, l))
                _put(snipe, l, -1 if isn else _at(snipe, l))
        more = 0
        frow = units[u, U_FORM] * L
        lossbm = units[u, U_LOSS_BM]
        for l in range(L):  # damage, losses, kills; does any lane have hits left?
            a = _at(lv, LV_A * L + l)
            pf = _at(prefix, l) + dc * a
            _put(prefix, l, pf)
            more |= _at(qq, l) | np.int64(pf < _at(rr, l))
            hpu = _at(fv.hp, u * L + l)
            done = _min(_at(lv, LV_UN * L + l), hpu)
            left = hpu - done
            _put(fv.hp, u * L + l, left)
            _put(fv.losses_bm, frow + l, _at(fv.losses_bm, frow + l) + done * lossbm)
            _put(lv, LV_KILLS * L + l, _at(lv, LV_KILLS * L + l) + done)
            _put(lv, LV_DEAD * L + l, a & np.int64(left == 0))
        for l in range(L):
            _put(fv.alive, arow + l, _at(fv.alive, arow + l) & ~(np.uint64(_at(lv, LV_DEAD * L + l)) << sh))
        if more == 0 and not anysnipe:  # no lane has a hit left: the later units take none
            break
    return nd


@kernel_function
def _later_hits(fv, side, first_cls):
    """The allocations lane by lane (_allocation_lane) of the enemy's hits on ``side`` from class ``first_cls``
    (0: the ordinary hits of a lane where a war engine's reach only some units; 1: the MW hits, then the TK hits,
    to the survivors: TP 2.2.6, 2.2.9), each one round-robin with the war engine's restricted hits of its kind
    (TP 3.1.2).  Returns the dice rolled."""
    L = LANES
    hs = 1 - side
    per_lane = fv.per_lane
    hrow = hs * N_CLASSES * L
    crow = (hs * 6 + 0) * L
    orow = (hs * 6 + 3) * L
    nd = 0
    for cls in range(first_cls, 3 if first_cls > 0 else 1):
        for l in range(L):
            if cls == 0:
                n_any = _at(fv.hits, hrow + l)
            else:
                n_any = _cell(per_lane, LN_NMW if cls == 1 else LN_NTK, L, l)
            n_contact = _at(fv.reach_hits, crow + cls * L + l)
            n_other = _at(fv.reach_hits, orow + cls * L + l)
            if (n_contact + n_other > 0) if cls == 0 else (n_any + n_contact + n_other > 0):
                done, k = _allocation_lane(fv, l, side, cls, n_any, n_contact, n_other)
                fv.lv[LV_KILLS * L + l] += done
                nd += k
    return nd


@kernel_function
def _allocate_hits(fv, side, step, ck):
    """§2 allocation, saves and damage of the enemy's hits of step ``step`` on ``side``'s units (without war-engine
    rules); kills count for the result when ``ck``; returns the dice rolled.  The ordinary hits go round-robin
    over every lane at once (_ordinary_hits), except in a lane where a war engine's ordinary hits reach only some
    units: there they share one round-robin with them lane by lane (_later_hits), as the macro-weapon and
    titan-killer hits do in every lane."""
    L = LANES
    hs = 1 - side
    g = hs * 3 + step
    # Has the enemy a source whose hits reach only some units (a WE's)?  (np.bool_: typed bool from the start, not
    # the literal False, so that plain Numba compiles _plan_hits once.)
    reaching = np.bool_(False)
    for k in range(fv.gb[g], fv.gb[g + 1]):
        reaching |= fv.src[k, S_REACH] != REACH_ANY
    anyhit, anysnipe, anymacro = _plan_hits(fv, side, reaching)
    if anyhit == 0:
        return 0
    nd = 0
    snipe, snipe_un = fv.per_lane[LN_SNIPE], fv.per_lane[LN_SNIPE_UN]
    if anysnipe:
        for l in range(L):
            if snipe[l] == -2:
                s_u, s_n, k = _snipe_lane(fv, l, side)
                snipe[l] = s_u
                snipe_un[l] = s_n
                nd += k
    for l in range(L):
        fv.lv[LV_KILLS * L + l] = 0
    if reaching:  # the ordinary hits of a lane where a war engine's reach only some units: one round-robin
        nd += _later_hits(fv, side, INT0)
    nd += _ordinary_hits(fv, side, anysnipe)
    if anymacro:  # the MW hits, then the TK hits, to the survivors, each one round-robin (TP 2.2.6, 2.2.9, 3.1.2)
        nd += _later_hits(fv, side, INT1)
    krow = hs * L
    for l in range(L):
        _put(fv.kills, krow + l, _at(fv.kills, krow + l) + _at(fv.lv, LV_KILLS * L + l) * ck)
    return nd


@kernel_function
def _supporting_fire_ends(sets, alive, lv, per_lane):
    """§4: the lanes where a side was wiped out by supporting fire end."""
    L = LANES
    winner, live, fight = per_lane[LN_WINNER], per_lane[LN_LIVE], per_lane[LN_FIGHT]
    _assault_sides_living(sets, alive, lv)
    for l in range(L):
        fl = _at(fight, l)
        att = _at(lv, LV_ATT * L + l)
        dfd = _at(lv, LV_DFD * L + l)
        _end_lanes(l, fl & (1 - (att & dfd)), WIN_ATT if att else (WIN_DEF if dfd else WIN_NONE), winner, fight, live)
