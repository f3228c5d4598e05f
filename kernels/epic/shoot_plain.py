"""A plain shooting attack in lock-step (docs/epic-turn.md §3; TP 1.9): alike weapon lines at a target that needs no
choice (:func:`_plain_attack` says when), whose steps up to the to-hit rolls run across the lanes without branches
(:func:`_plain_who_fires`, :func:`_plain_to_hit`), then lane by lane the hits round-robin, their saves, the kills'
BMs and the break test (:func:`_plain_lanes`).  A lane's dice are those the lane-by-lane path would roll, in the
same order (tests/epic/test_steps_shooting.py).

The functions take the records as wargame_odds.kernels.epic.shooting says.
"""
import numpy as np

from .access import FALSE, INT1, _at, _cell, _max, _min, _put, inlined_function, kernel_function
from .breaks import _break, _fails_at_size
from .dice import _d6, _lane_die, _to_hit
from .hits import H_DISRUPT, H_IC, H_LANCE, H_SNIPER, KIND_AP, KIND_AT, KIND_MW, KIND_TK, _save_targets
from .layout import F_COLS, F_TSKNF, LANES, NO_ROLL, U_ARMOUR, U_COLS, U_DC, U_INV_DEG, U_INV_ON, U_RA
from .shoot_hits import _broken_hits, _place, _resolve_hit, _unsaved_hit
from .shoot_policy import _can_take, _fixed_type
from .turn_layout import (ACC_CARRY, ACC_KILLS, ACC_MARKERS, ACC_PLACED, INF, KIND_CHOOSE, NONE, NO_ATTACK, PL_AFTER,
                          PL_BROKEN, PL_BUDGET, PL_CARRY, PL_FACE, PL_HITS, PL_KILLS, PL_LIVING, PL_NEED, PL_NF, PL_ON,
                          PL_SEEN, PL_SHOTS, PL_STOP, TU_COLS, TU_FIRES, TU_TYPE, WE, WP_AP, WP_AT, WP_BARRAGE,
                          WP_COUNT, WP_DISRUPT, WP_IC, WP_LANCE, WP_MW, WP_SHOTS, WP_SHOTS_N, WP_SNIPER, WP_TK)


@kernel_function
def _plain_attack(tb, tt, shooter, target, ap_at, ushots):
    """Is every attack of ``shooter`` at ``target`` plain, so that :func:`shoot_lanes` can count its hits instead
    of listing them?  Plain: the target has no war engine and every unit of it has a damage capacity of 1; the
    shooter's weapon lines that can fire at ground units (no barrage line, no dice shots, no sniper) all shoot
    alike at it: the same fire type, settled before any dice without a policy (§3.5: a line with AP and AT is AP
    when no unit of the target can take AT hits), which every unit of the target can take, the same to-hit value
    and the same hit flags (they may differ in their other columns: a Predator's AP5+/AT6+ autocannon and AP5+
    heavy bolters at infantry are both AP5+ shots).  Then the to-hit rolls are the same for every shot (one die
    each, in any order), and the hits go round-robin to the exposed units front to back, the j-th to the j-th unit
    modulo their number, each resolved in turn (§3.7; TP 1.9.6), exactly as the full allocation does it.
    Returns (plain, fire type, hit flags, to-hit value, simple): ``simple`` the hits are not disrupt hits and no unit
    of the target has Reinforced Armour or an invulnerable-type save (a hit's saves are then its first save roll
    at most); ``ushots[u]``: each shooter unit's shots."""
    wpn, wb, tu, units = tt.wpn, tt.wb, tt.tu, tb.units
    at_able = False
    simple = True
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        u = _at(tb.fu, k)
        t = tu[u, TU_TYPE]
        if t == WE or units[u, U_DC] != 1:
            return False, NONE, 0, NONE, False
        at_able |= _can_take(t, KIND_AT)
        simple &= units[u, U_RA] == 0 and units[u, U_INV_ON] == NO_ROLL and units[u, U_INV_DEG] == NO_ROLL
    kind = NONE
    flags = 0
    value = NONE
    for k in range(_at(tb.fb, shooter), _at(tb.fb, shooter + 1)):
        u = _at(tb.fu, k)
        ushots[u] = 0
        for w in range(wb[u, 0], wb[u + 1, 0]):
            if wpn[w, WP_BARRAGE] or wpn[w, WP_SHOTS_N] or wpn[w, WP_SNIPER]:
                return False, NONE, 0, NONE, False
            ap, at, mw = wpn[w, WP_AP], wpn[w, WP_AT], wpn[w, WP_MW]
            line_kind = _fixed_type(ap, at, mw, wpn[w, WP_TK], ap_at)
            if line_kind == NONE:
                continue  # cannot fire at ground units: no dice
            if line_kind == KIND_CHOOSE:
                if at_able:
                    return False, NONE, 0, NONE, False  # the policy weighs AP and AT
                line_kind = KIND_AP
            line_flags = H_IC * wpn[w, WP_IC] + H_DISRUPT * wpn[w, WP_DISRUPT] + H_LANCE * wpn[w, WP_LANCE]
            line_value = mw if line_kind == KIND_MW or line_kind == KIND_TK else \
                (ap if line_kind == KIND_AP else at)
            if kind == NONE:
                kind, flags, value = line_kind, line_flags, line_value
            elif line_kind != kind or line_flags != flags or line_value != value:
                return False, NONE, 0, NONE, False
            ushots[u] += wpn[w, WP_COUNT] * wpn[w, WP_SHOTS]
    if kind == NONE:
        return False, NONE, 0, NONE, False
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        if not _can_take(tu[_at(tb.fu, k), TU_TYPE], kind):
            return False, NONE, 0, NONE, False
    return True, kind, flags, value, simple and (flags & H_DISRUPT) == 0


@kernel_function
def _plain_who_fires(tb, st, tt, sc, shot):
    """A plain attack's lanes of ``shot.l0..l1`` (PL_* rows of ``sc.rows``, lock-step, branch-free): which attack
    (not broken), the target broken at the start, who can fire (§3.1: living units among the first ``in_range``,
    with a ground weapon) and suppression (§3.2: from the back in strict order while the BMs last, TSKNF units
    costing 2 BMs, a war engine its starting DC; the first one they cannot pay for and every one in front of it
    fire), their shots, the target's living units."""
    L = LANES
    rows = sc.rows
    on, seen, after, budget, stop = (rows[PL_ON * L:], rows[PL_SEEN * L:], rows[PL_AFTER * L:],
                                     rows[PL_BUDGET * L:], rows[PL_STOP * L:])
    nf, shots, living, hits = rows[PL_NF * L:], rows[PL_SHOTS * L:], rows[PL_LIVING * L:], rows[PL_HITS * L:]
    was_broken, killed, carry = rows[PL_BROKEN * L:], rows[PL_KILLS * L:], rows[PL_CARRY * L:]
    l0, l1, shooter, target = shot.l0, shot.l1, shot.shooter, shot.target
    for l in range(l0, l1):
        attacks = _at(sc.lane_mod, l) != NO_ATTACK
        for r in range(3):  # a lane that attacks starts from no hits, kills, BMs placed
            _put(sc.res, r * L + l, 0 if attacks else _at(sc.res, r * L + l))
        _put(on, l, np.int64(attacks) & np.int64(_at(st.broken, shooter * L + l) == 0))
        _put(was_broken, l, np.int64(_at(st.broken, target * L + l) != 0))
        _put(seen, l, 0)
        _put(after, l, 0)
        _put(budget, l, _at(st.bm, shooter * L + l))
        for row in (stop, nf, shots, living, hits, killed, carry):
            _put(row, l, 0)
    s0, s1 = _at(tb.fb, shooter), _at(tb.fb, shooter + 1)
    for k in range(s0, s1):
        row = _at(tb.fu, k) * L
        for l in range(l0, l1):
            _put(seen, l, _at(seen, l) + np.int64(_at(st.hp, row + l) > 0))
    tsknf = _cell(tb.forms, shooter, F_COLS, F_TSKNF) != 0
    for k in range(s1 - 1, s0 - 1, -1):
        u = _at(tb.fu, k)
        row = u * L
        cost = 2 if tsknf else _cell(tb.units, u, U_COLS, U_DC)
        fires = np.int64(_cell(tt.tu, u, TU_COLS, TU_FIRES) != 0)
        per_unit = _at(sc.ushots, u)
        for l in range(l0, l1):
            alive_here = np.int64(_at(st.hp, row + l) > 0)
            behind = _at(after, l) + alive_here
            _put(after, l, behind)
            able = alive_here & fires & np.int64((shot.in_range == NONE) | (_at(seen, l) - behind < shot.in_range))
            held = _at(budget, l)
            suppressed = able & np.int64(_at(stop, l) == 0) & np.int64(held >= cost)
            _put(budget, l, held - cost * suppressed)
            firing = able - suppressed
            _put(stop, l, _at(stop, l) | firing)
            _put(nf, l, _at(nf, l) + firing)
            _put(shots, l, _at(shots, l) + per_unit * firing)
    for k in range(_at(tb.fb, target), _at(tb.fb, target + 1)):
        row = _at(tb.fu, k) * L
        for l in range(l0, l1):
            _put(living, l, _at(living, l) + np.int64(_at(st.hp, row + l) > 0))


@kernel_function
def _plain_to_hit(tb, st, tt, sc, shot, p_value, p_flags):
    """A plain attack's BM for coming under fire (§3.3, TP 1.9.4: an attack needs someone firing and a living unit
    of the target, else no attack and no BM, TP-FAQ Place Blast Marker; at a broken target a no-save hit, lane by
    lane: _broken_hits) and its to-hit rolls (§3.5): a need of 7+ lane by lane (_to_hit), the others in lock-step,
    one masked loop per die (as wargame_odds.kernels.epic.dice._roll).  Returns (dice rolled, the lanes that attack lie
    in lo..hi)."""
    L = LANES
    rows = sc.rows
    on, nf, shots, need, living = (rows[PL_ON * L:], rows[PL_NF * L:], rows[PL_SHOTS * L:], rows[PL_NEED * L:],
                                   rows[PL_LIVING * L:])
    hits, face, was_broken, killed, carry = (rows[PL_HITS * L:], rows[PL_FACE * L:], rows[PL_BROKEN * L:],
                                             rows[PL_KILLS * L:], rows[PL_CARRY * L:])
    l0, l1, target = shot.l0, shot.l1, shot.target
    not_ic = np.int64((p_flags & H_IC) == 0)
    nd = 0
    most = 0
    lo = l1
    hi = l0
    for l in range(l0, l1):
        attack = _at(on, l) & np.int64(_at(nf, l) > 0) & np.int64(_at(living, l) > 0)
        _put(on, l, attack)
        lo = _min(lo, l if attack else l1)
        hi = _max(hi, l + 1 if attack else l0)
        _put(st.bm, target * L + l, _at(st.bm, target * L + l) + attack * (1 - _at(was_broken, l)))
        if attack and _at(was_broken, l):
            for i in range(8):
                sc.acc[i] = 0
            nd += _broken_hits(tb, st, tt, sc, l, target, INT1, shot.splashes)
            _put(killed, l, sc.acc[ACC_KILLS])
            _put(carry, l, sc.acc[ACC_CARRY])
        mod = _at(sc.lane_mod, l) - np.int64(_at(sc.lane_cover, l) != 0) * not_ic
        _put(need, l, p_value - mod)
        n = _at(shots, l) * attack
        if attack and p_value - mod > 6:
            for _ in range(n):
                h, k2 = _to_hit(st.rs, l, p_value, mod)
                nd += k2
                _put(hits, l, _at(hits, l) + h)
            n = 0
        nd += n
        _put(shots, l, n)
        most = _max(most, n)
    for j in range(most):
        rejected = 0
        for l in range(lo, hi):
            f = _lane_die(st.rs, l, np.int64(j < _at(shots, l)))
            _put(face, l, f)
            _put(hits, l, _at(hits, l) + np.int64((f > 1) & (f >= _at(need, l))))  # f 0: no die, or redrawn
            rejected |= np.int64(j < _at(shots, l)) & np.int64(f == 0)
        if rejected:
            for l in range(lo, hi):
                if j < _at(shots, l) and _at(face, l) == 0:
                    f = _d6(st.rs, l)
                    _put(hits, l, _at(hits, l) + np.int64((f != 1) & (f >= _at(need, l))))
    return nd, lo, hi


@inlined_function
def _plain_lanes(tb, st, tt, sc, shot, plain):
    """:func:`shoot_lanes`' plain attacks (``plain``: :func:`_plain_attack`'s answer) in the lanes of ``l0..l1`` that
    attack: the steps of §3 up to the to-hit rolls in lock-step across the lanes, each a loop over the lanes
    without branches (units outer, lanes inner: a unit's row of ``hp`` is contiguous; :func:`_plain_who_fires`,
    :func:`_plain_to_hit`).  Then lane by lane (§3.7–§3.11): hit j on the j-th exposed unit from the front,
    round-robin (what the allocation does when every unit can take every hit and holds one), each resolved in turn
    (where they are no more than the exposed units, a walk over the first living units, one hit each); the kills'
    BMs (at a broken target no-save hits), and the break test of a target that was not broken.  A lane's generator
    moves only for its own dice, so each lane's dice are its stream's in the order of its trial.  Returns the dice
    rolled."""
    L = LANES
    rows = sc.rows
    acc = sc.acc
    _, p_kind, p_flags, p_value, simple = plain
    target, n_exposed, crossfire = shot.target, shot.n_exposed, shot.crossfire
    worse = np.int64(crossfire) + np.int64((p_flags & H_SNIPER) != 0)  # Crossfire, Sniper (TP 1.11, 2.1.14)
    t0, t1 = _at(tb.fb, target), _at(tb.fb, target + 1)
    _plain_who_fires(tb, st, tt, sc, shot)
    nd, lo, hi = _plain_to_hit(tb, st, tt, sc, shot, p_value, p_flags)
    for l in range(lo, hi):
        if not _at(rows, PL_ON * L + l):
            continue
        nh = _at(rows, PL_HITS * L + l)
        living = _at(rows, PL_LIVING * L + l)
        broken_before = _at(rows, PL_BROKEN * L + l) != 0
        for i in range(8):
            acc[i] = 0
        acc[ACC_PLACED] = 1 - np.int64(broken_before)  # the BM for coming under fire
        acc[ACC_KILLS] = _at(rows, PL_KILLS * L + l)
        acc[ACC_CARRY] = _at(rows, PL_CARRY * L + l)
        n_living = living - acc[ACC_KILLS]
        cs = _at(sc.lane_cs, l) if _at(sc.lane_cover, l) else NO_ROLL
        walk = nh <= (n_living if n_exposed == NONE else _min(n_living, n_exposed))
        ne = 0
        if not walk:  # §3.4 the exposed units, branch-free; the hits go round them
            for k in range(t0, t1):
                u = _at(tb.fu, k)
                sc.ex[ne] = u
                ne += (_at(st.hp, u * L + l) > 0) & ((n_exposed == NONE) | (ne < n_exposed))
        k = t0
        i = 0
        for _ in range(nh if walk or ne > 0 else 0):
            if walk:  # one hit each for the first nh living units
                while k < t1 and _at(st.hp, _at(tb.fu, k) * L + l) == 0:
                    k += 1
                u = _at(tb.fu, k)
                k += 1
            else:
                u = _at(sc.ex, i)
                i = i + 1 if i + 1 < ne else 0
            if not simple:
                nd += _resolve_hit(st.rs, st.hp, st.alive, st.wst, tb.units, tt.tu, tb.sets.n_words, l, u, p_kind,
                                   p_flags, cs, crossfire, acc)
            elif _at(st.hp, u * L + l) > 0:  # _resolve_hit inline, its save the first roll at most
                first, _ = _save_targets(p_kind, p_flags, _cell(tb.units, u, U_COLS, U_ARMOUR),
                                         cs if _cell(tt.tu, u, TU_COLS, TU_TYPE) == INF else NO_ROLL, FALSE, worse)
                rolled = first < NO_ROLL  # saves._save's first roll, inline (a call per hit costs the lanes)
                nd += rolled
                if not (rolled and _d6(st.rs, l) >= first):
                    _unsaved_hit(st.hp, st.alive, tb.units, tt.tu, tb.sets.n_words, l, u, FALSE, crossfire, acc)
        if broken_before:
            if acc[ACC_MARKERS] > 0:  # (a call passes every array of its arguments: none for nothing)
                nd += _broken_hits(tb, st, tt, sc, l, target, acc[ACC_MARKERS], shot.splashes)
        else:
            _place(l, target, acc[ACC_MARKERS], acc, st.bm)
            size = living - acc[ACC_KILLS]  # (every unit of the target has a damage capacity of 1)
            if size > 0 and _fails_at_size(tb.forms, st.bm, target, l, size):
                nd += _break(tb, st, l, target)
        sc.res[l] = nh
        sc.res[L + l] = acc[ACC_KILLS]
        sc.res[2 * L + l] = acc[ACC_PLACED]
    return nd
