"""The assault round's rule steps (spec §1–§4; TP 1.12.5, 1.12.6, 2.2.3, 2.2.4, 3.1.2): the to-hit rolls of a side's
units in a step (pooled and per source row), the allocation, saves and damage of the enemy's hits (the ordinary
hits round-robin over every lane at once), the early ends after the normal step and after supporting fire.
"""
import numpy as np

from ..jit import njit
from ..rng import _FOUR, _ONE, _SIX, _THREE
from .access import _at, _max, _min, _popcount, _put
from .allocation import _allocation_lane, _snipe_lane
from .dice import _roll
from .layout import (ATTACKER, CRIT_DEGRADE, LANES, LV_A, LV_ATT, LV_ATTT, LV_DEAD, LV_DFD, LV_HH, LV_KILLS, LV_NN,
                     LV_UN, M_BC, M_COLS, M_TARGET, NO_ROLL, N_CLASSES, P_CLASS, P_VC, P_VN, REACH_ANY, S_BC, S_CLASS,
                     S_COLS, S_D3, S_DVC, S_DVN, S_FF_VC, S_N, S_REACH, S_SPARE, S_SUPPORT, S_UNIT, S_VC, S_VN, U_BIT,
                     U_CHARS, U_COLS, U_CRIT, U_DC, U_FORM, U_LOSS_BM, U_SAVE, U_SIMPLE, U_WORD, WIN_ATT, WIN_DEF,
                     WIN_NONE, W_DEGRADED, W_LOST_DC)
from .saves import _general_hits
from .units import _assault_sides_living, _rows_any, _wat


@njit(cache=True)
def _end_lanes(l, end, wn, winner, fight, live):
    """Lane ``l``'s trial ends now (``end`` 0 / 1) with winner code ``wn``: no roll, no more rounds."""
    _put(winner, l, wn if end else _at(winner, l))
    _put(fight, l, _at(fight, l) & (1 - end))
    _put(live, l, _at(live, l) & (1 - end))


@njit(cache=True)
def _cut_row_dice(src, k, u, units, wst, n_units, broken0, turn, nn, h):
    """Source row ``k`` (of unit ``u``): its dice ``nn[l]`` and whether it rolls ``h[l]`` in each lane, less
    what it cannot roll there: a support formation that the turn broke gives no supporting fire (TP 1.12.6);
    a war engine rolls main dice for its starting DC now, the FF rest first going with its characters (S_SPARE;
    TP 3.1.2; spec §10.4 lose_character)."""
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
            _put(nn, l, _max(0, _at(nn, l) - _max(0, _wat(wst, W_LOST_DC, u, l, n_units) - spare)))


@njit(cache=True, _nrt=False)
def _early_ends(alive, flat_masks, flat_fmasks, n_words, wes, web, units, lv, per_lane):
    """§3 early ends: the lanes whose defenders' assault formations are gone or whose attackers have no unit left
    directly engaged end before the supporting fire."""
    L = LANES
    winner, live, fight = per_lane[0], per_lane[4], per_lane[5]
    _assault_sides_living(alive, flat_masks, flat_fmasks, lv, n_words, wes, web, units)
    _rows_any(alive, flat_masks, flat_fmasks, ATTACKER, M_TARGET, lv, LV_ATTT * L, n_words, wes, web, units)
    for l in range(L):
        fl = _at(fight, l)
        dfd = _at(lv, LV_DFD * L + l)
        att = _at(lv, LV_ATT * L + l)
        att_t = _at(lv, LV_ATTT * L + l)
        end1 = fl & (1 - dfd)  # the defenders' assault formations are gone
        end2 = fl & dfd & (1 - att_t)  # no attacker left directly engaged
        _end_lanes(l, end1 | end2, (WIN_ATT if att else WIN_NONE) if end1 else WIN_DEF, winner, fight,
                   live)


@njit(cache=True, _nrt=False)
def _roll_hits(side, step, rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, src, gb, pmask, pinfo, pb, hp,
               hits, reach_hits, wst, shits, sff, we, turn_on, per_form, per_lane):
    """§1 / §4: the to-hit rolls of ``side``'s units in step ``step`` (pooled rows, then source rows), into ``hits``
    by class (with war-engine rules: per source row, ``shits`` / ``sff``); returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    nd = 0
    broken0 = per_form[11]
    fight, contact, val, nn, h = per_lane[5], per_lane[8], per_lane[9], per_lane[10], per_lane[11]
    d = per_lane[12]
    for i in range(N_CLASSES * L):
        hits[side * N_CLASSES * L + i] = 0
    for i in range(6 * L):
        reach_hits[side * 6 * L + i] = 0
    g = side * 3 + step
    if gb[g + 1] == gb[g] and pb[g + 1] == pb[g]:
        return nd
    _rows_any(alive, flat_masks, flat_fmasks, 1 - side, M_BC, contact, 0, n_words, wes, web, units)
    for p in range(pb[g], pb[g + 1]):
        vc = pinfo[p, P_VC]
        vn = pinfo[p, P_VN]
        cls = pinfo[p, P_CLASS]
        maxn = 0
        for l in range(L):
            _put(nn, l, 0)
        for w in range(n_words):
            m = pmask[p, w]
            row = (side * n_words + w) * L
            for l in range(L):
                _put(nn, l, _at(nn, l) + _popcount(_at(alive, row + l) & m))
        for l in range(L):
            v = vc if _at(contact, l) else vn
            _put(val, l, v)
            n = _at(nn, l) * _at(fight, l) * np.int64(v < NO_ROLL)
            _put(nn, l, n)
            maxn = _max(maxn, n)
            _put(h, l, 0)
        for j in range(maxn):
            nd += _roll(rs, d, _SIX, _FOUR, nn, 0, j)
            for l in range(L):
                _put(h, l, _at(h, l) + ((j < _at(nn, l)) & (_at(d, l) >= _at(val, l))))
        hrow = (side * N_CLASSES + cls) * L
        for l in range(L):
            _put(hits, hrow + l, _at(hits, hrow + l) + _at(h, l))
    for k in range(gb[g], gb[g + 1]):
        u = src[k, S_UNIT]
        bcs = src[k, S_BC]
        degrades = we and units[u, U_CRIT] == CRIT_DEGRADE
        for l in range(L):
            ok = fight[l] & np.int64(hp[u * L + l] > 0)
            v = src[k, S_VC] if (contact[l] & bcs) else src[k, S_VN]
            ok &= np.int64(v < NO_ROLL)
            val[l] = v
            nn[l] = src[k, S_N] * ok
            h[l] = ok
        if degrades:  # a degraded unit's new values (spec §10.4)
            for l in range(L):
                if wst[(W_DEGRADED * n_units + u) * L + l]:
                    v = src[k, S_DVC] if (contact[l] & bcs) else src[k, S_DVN]
                    ok = fight[l] & np.int64(hp[u * L + l] > 0) & np.int64(v < NO_ROLL)
                    val[l] = v
                    nn[l] = src[k, S_N] * ok
                    h[l] = ok
        _cut_row_dice(src, k, u, units, wst, n_units, broken0, turn_on, nn, h)
        if src[k, S_D3]:
            nd += _roll(rs, d, _THREE, _ONE, h, 0, 0)
            for l in range(L):
                nn[l] = d[l] * h[l]
        maxn = 0
        for l in range(L):
            maxn = _max(maxn, nn[l])
            h[l] = 0
        for j in range(maxn):
            nd += _roll(rs, d, _SIX, _FOUR, nn, 0, j)
            for l in range(L):
                h[l] += (j < nn[l]) & (d[l] >= val[l])
        cls = src[k, S_CLASS]
        reach = src[k, S_REACH]
        if we:  # the row's hits; bit 0: firefight hits (spec §10.8.1), bit 1: a WE's, in contact
            ffv = src[k, S_FF_VC]
            for l in range(L):
                routed = contact[l] & bcs
                shits[k * L + l] = h[l]
                sff[k * L + l] = ((1 - routed) | ffv) + 2 * routed
            continue
        if reach == REACH_ANY:
            for l in range(L):
                hits[(side * N_CLASSES + cls) * L + l] += h[l]
        else:  # a war engine in contact: its CC / FF hits land only on some units (TP 3.1.2)
            rrow = ((side * 2 + reach - 1) * 3 + cls) * L
            for l in range(L):
                routed = contact[l] & bcs
                hits[(side * N_CLASSES + cls) * L + l] += h[l] * (1 - routed)
                reach_hits[rrow + l] += h[l] * routed
    return nd


@njit(cache=True, _nrt=False)
def _allocate_hits(side, step, ck, rs, alive, flat_masks, n_words, wes, web, tgt, tgb, units, src, gb, base, hp, hits,
                   reach_hits, kills, lv, per_form, per_lane, taken):
    """§2 allocation, saves and damage of the enemy's hits of step ``step`` on ``side``'s units (without war-engine
    rules); kills count for the result when ``ck``; returns the dice rolled.  The ordinary hits go round-robin
    over every lane at once, except in a lane where a war engine's ordinary hits reach only some units: there
    they share one round-robin with them lane by lane (_allocation_lane), as the macro-weapon and titan-killer
    hits do in every lane.  ``taken``: scratch of _allocation_lane."""
    L = LANES
    nd = 0
    losses_bm = per_form[2]
    d, nmw, ntk, cap, qq = per_lane[12], per_lane[16], per_lane[17], per_lane[18], per_lane[19]
    rr, prefix, snipe, snipe_un = per_lane[20], per_lane[21], per_lane[22], per_lane[23]
    hs = 1 - side
    anyhit = 0
    anysnipe = 0
    anymacro = 0
    g = hs * 3 + step
    reaching = False  # has the enemy a source whose hits reach only some units (a WE's)?
    for k in range(gb[g], gb[g + 1]):
        reaching |= src[k, S_REACH] != REACH_ANY
    for l in range(L):  # living directly engaged units (a WE counting its starting DC)
        c = 0
        for w in range(n_words):
            c += _popcount(_at(alive, (side * n_words + w) * L + l)
                           & _at(flat_masks, (2 * w + side) * M_COLS + M_TARGET))
        _put(cap, l, c)
    for kw in range(web[side], web[side + 1]):
        u = wes[kw]
        w = units[u, U_WORD]
        sh = np.uint64(units[u, U_BIT])
        if (flat_masks[(2 * w + side) * M_COLS + M_TARGET] >> sh) & _ONE:
            extra_dc = units[u, U_DC] - 1
            arow = (side * n_words + w) * L
            for l in range(L):
                _put(cap, l, _at(cap, l) + extra_dc * np.int64((_at(alive, arow + l) >> sh) & _ONE))
    hrow = hs * N_CLASSES * L
    crow = (hs * 6 + 0) * L  # a war engine's ordinary hits on units in contact; ``orow``: on the others
    orow = (hs * 6 + 3) * L
    for l in range(L):  # the ordinary hits go round-robin here; MW / TK hits after them (below)
        c = _at(cap, l)
        has = np.int64(c > 0)
        joint = np.int64(reaching) * np.int64(_at(reach_hits, crow + l) + _at(reach_hits, orow + l) > 0)
        t = _at(hits, hrow + l) * has * (1 - joint)  # a joint lane's are allocated lane by lane (below)
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
        _put(snipe, l, -2 if ns > 0 else -1)  # -2: resolved below
        _put(snipe_un, l, 0)
    if reaching:
        for l in range(L):
            for i in range(6):
                anyhit |= reach_hits[(hs * 6 + i) * L + l]
        anymacro |= anyhit
    if anyhit == 0:
        return nd
    if anysnipe:
        for l in range(L):
            if snipe[l] == -2:
                s_u, s_n, k = _snipe_lane(rs, l, side, hits, hs, units, alive, flat_masks, base,
                                          n_words)
                snipe[l] = s_u
                snipe_un[l] = s_n
                nd += k
    krow = (1 - side) * L
    for l in range(L):
        lv[LV_KILLS * L + l] = 0
    if reaching:  # the ordinary hits of a lane where a war engine's reach only some units: one round-robin
        for l in range(L):
            n_contact = reach_hits[crow + l]
            n_other = reach_hits[orow + l]
            if n_contact + n_other > 0:
                o_done, o_nd = _allocation_lane(rs, l, side, 0, hits[hrow + l], n_contact, n_other, units, hp,
                                                alive, losses_bm, tgt, tgb, n_words, taken)
                lv[LV_KILLS * L + l] += o_done
                nd += o_nd
    for k in range(tgb[side], tgb[side + 1]):
        u = tgt[k]
        dc = units[u, U_DC]
        sv = units[u, U_SAVE]
        simple = units[u, U_SIMPLE]
        frow = units[u, U_FORM] * L
        lossbm = units[u, U_LOSS_BM]
        arow = (side * n_words + units[u, U_WORD]) * L
        sh = np.uint64(units[u, U_BIT])
        hrow = u * L
        maxh = 0
        anygen = 0
        for l in range(L):  # its hits in each lane (vectorised: lane rows of ``lv``)
            a = np.int64((_at(alive, arow + l) >> sh) & _ONE)
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
                nd += _roll(rs, d, _SIX, _FOUR, lv, LV_HH * L, j)
                for l in range(L):
                    _put(lv, LV_UN * L + l, _at(lv, LV_UN * L + l)
                         + ((j < _at(lv, LV_HH * L + l)) & (_at(d, l) < sv)))
        else:
            for l in range(L):
                _put(lv, LV_UN * L + l, _at(lv, LV_HH * L + l))
        if anygen:
            for l in range(L):
                if lv[LV_NN * L + l] > 0:
                    g_un, g_nd = _general_hits(rs, l, u, units, lv[LV_NN * L + l])
                    lv[LV_UN * L + l] += g_un
                    nd += g_nd
        if anysnipe:
            for l in range(L):
                isn = np.int64(_at(snipe, l) == u)
                _put(lv, LV_UN * L + l, _at(lv, LV_UN * L + l) + isn * _at(snipe_un, l))
                _put(snipe, l, -1 if isn else _at(snipe, l))
        more = 0
        for l in range(L):  # damage, losses, kills; does any lane have hits left?
            a = _at(lv, LV_A * L + l)
            pf = _at(prefix, l) + dc * a
            _put(prefix, l, pf)
            more |= _at(qq, l) | np.int64(pf < _at(rr, l))
            hpu = _at(hp, hrow + l)
            done = _min(_at(lv, LV_UN * L + l), hpu)
            left = hpu - done
            _put(hp, hrow + l, left)
            _put(losses_bm, frow + l, _at(losses_bm, frow + l) + done * lossbm)
            _put(lv, LV_KILLS * L + l, _at(lv, LV_KILLS * L + l) + done)
            _put(lv, LV_DEAD * L + l, a & np.int64(left == 0))
        for l in range(L):
            _put(alive, arow + l, _at(alive, arow + l) & ~(np.uint64(_at(lv, LV_DEAD * L + l)) << sh))
        if more == 0 and not anysnipe:  # no lane has a hit left: the later units take none
            break
    if anymacro:  # the MW hits, then the TK hits, to the survivors, each one round-robin (TP 2.2.6, 2.2.9, 3.1.2)
        for cls in range(1, 3):
            for l in range(L):
                n_any = nmw[l] if cls == 1 else ntk[l]
                n_contact = reach_hits[crow + cls * L + l]
                n_other = reach_hits[orow + cls * L + l]
                if n_any + n_contact + n_other > 0:
                    m_done, m_nd = _allocation_lane(rs, l, side, cls, n_any, n_contact, n_other, units, hp, alive,
                                                    losses_bm, tgt, tgb, n_words, taken)
                    lv[LV_KILLS * L + l] += m_done
                    nd += m_nd
    for l in range(L):
        _put(kills, krow + l, _at(kills, krow + l) + _at(lv, LV_KILLS * L + l) * ck)
    return nd


@njit(cache=True, _nrt=False)
def _supporting_fire_ends(alive, flat_masks, flat_fmasks, n_words, wes, web, units, lv, per_lane):
    """§4: the lanes where a side was wiped out by supporting fire end."""
    L = LANES
    winner, live, fight = per_lane[0], per_lane[4], per_lane[5]
    _assault_sides_living(alive, flat_masks, flat_fmasks, lv, n_words, wes, web, units)
    for l in range(L):
        fl = _at(fight, l)
        att = _at(lv, LV_ATT * L + l)
        dfd = _at(lv, LV_DFD * L + l)
        _end_lanes(l, fl & (1 - (att & dfd)), WIN_ATT if att else (WIN_DEF if dfd else WIN_NONE), winner,
                   fight, live)
