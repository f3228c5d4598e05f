"""The Epic turn in the Numba kernel: the activations of the trials a block's lanes begin, before their assaults.

``kernels.epic.block._run_block`` calls :func:`turn_lanes` in each round where lanes start a trial of a turn
scenario (``rules[R_TURN]``), once their starting state is set.  The activations (action test, shooting, regroup,
overwatch, the charge and the overwatch fire it draws) change each lane's units (``hp`` and the alive masks),
blast markers and broken flags in place; the assault steps then fight from that state (or not at all:
:func:`turn_lanes` sets ``fight[l]`` when the ``engage`` activation led to an assault), followed by the end phase.
Each activation's results are counted into the block's count row.

The steps mirror the reference engine clause by clause (``analysis/epic/turn.py``, ``analysis/epic/shooting.py``;
``docs/epic-turn.md`` §2, §3, cited as §3.n; TP = NetEA Tournament Pack).  War engines are shot at with the
assault's war-engine steps (``kernels.epic.saves._shields_lane``, ``kernels.epic.damage._we_resolve_lane``:
damage, criticals, splashes) on the lane's war-engine state ``wst`` (empty without war-engine rules), which the
assault and the end phase then carry on; their damage is booked ``BOOK_SHOT``, its BMs drained from
``losses_bm`` by the attack (§3.13).  Activation by activation, and each step lane by lane (scalar code: a turn's
shooting is short and branchy), so that one :func:`kernels.epic.shooting.shoot_lanes` call makes an attack in
every lane and a lane's dice keep the order of its trial.  Like ``_run_block``, the steps are compiled without
reference counting (``_nrt=False``): they only take views of the caller's arrays.
"""
import numpy as np

from ..jit import njit
from ..rng import _FOUR, _SIX
from .access import _at, _bump, _min, _put
from .breaks import _break, _fails_break_test
from .dice import _d6, _roll
from .layout import F_COLS, F_INIT, F_SIDE, F_TSKNF, LANES, NO_ROLL, U_COLS, U_LEADER, U_VOID, W_VOID
from .shooting import PL_ROWS, shoot_lanes
from .turn_layout import (ADVANCE, AP_AT_AUTO, A_ACTION, A_AP_AT, A_COVER, A_COVER_SAVE, A_CROSSFIRE, A_DECLARE,
                          A_EXPOSED, A_FORM, A_HOLD, A_IN_RANGE, A_MAY_SHOOT, A_N_BMA, A_N_BMP, A_N_HITS, A_N_KILLS,
                          A_OWF0, A_OWF1, A_OW_COVER, A_O_ACTED, A_O_BMA, A_O_BMP, A_O_BROKEN, A_O_HITS, A_O_KILLS,
                          A_O_PASSED, A_RETAIN, A_TARGET, A_TEMPLATES, DECLARE_AUTO, DOUBLE, ENGAGE, HOLD, HOLD_REGROUP,
                          HOLD_SHOOT, I_MAX_HITS, I_SPLASHES, MARSHAL, NONE, NO_ATTACK, OVERWATCH, SUSTAINED_FIRE,
                          TF_OVERWATCH, TO_HIT_MODIFIER, T_ACTS, T_BAR, T_FORMS, T_INFO, T_OWF, T_TU, T_WB, T_WPN)
from .units import _any_alive, _cell, _lanes_any_alive, _wat, _wput


def scratch_size(n_units, n_forms, max_hits):
    """Elements of the per-block scratch array :func:`turn_lanes` works in (its per-lane state, then
    :func:`shoot_lanes`', the per-lane rows of :func:`_plain_lanes` last)."""
    return (n_forms + 8 + PL_ROWS) * LANES + n_forms + 5 * n_units + 4 * max_hits + 8


@njit(cache=True, _nrt=False)
def _regroup(rs, l, f, fu, fb, units, forms, hp, bm, use_leaders, wst, n_units):
    """Regroup points = the higher of 2D6 + 1 per Leader (Marines 2) (TP 1.13.1, 2.1.8): they remove BMs, then
    the points left repair void shields that are down, front war engine first, at most the BMs held plus the
    shields down (TP-SR Imperial Void Shields; reading, docs/epic-turn.md §2).  Returns the dice rolled."""
    L = LANES
    leaders = 0
    missing = 0
    for k in range(_at(fb, f), _at(fb, f + 1)):
        u = _at(fu, k)
        if _at(hp, u * L + l) > 0:
            leaders += _cell(units, u, U_COLS, U_LEADER) * np.int64(use_leaders)
            if wst.size > 0:
                missing += _cell(units, u, U_COLS, U_VOID) - _wat(wst, W_VOID, u, l, n_units)
    per_leader = 2 if _cell(forms, f, F_COLS, F_TSKNF) else 1
    a = _d6(rs, l)
    b = _d6(rs, l)
    i = f * L + l
    points = min(max(a, b) + per_leader * leaders, _at(bm, i) + missing)
    removed = min(points, _at(bm, i))
    bm[i] -= removed
    repairs = points - removed
    for k in range(_at(fb, f), _at(fb, f + 1)):
        if repairs == 0:
            break
        u = _at(fu, k)
        if _at(hp, u * L + l) > 0:
            up = _wat(wst, W_VOID, u, l, n_units)
            fixed = min(repairs, _cell(units, u, U_COLS, U_VOID) - up)
            _wput(wst, W_VOID, u, l, n_units, up + fixed)
            repairs -= fixed
    return 2


@njit(cache=True, _nrt=False)
def turn_lanes(start, rs, T, scr, units, forms, fu, fb, fmasks, hp, alive, n_words, bm, broken, trapped, wst, n_units,
               splash, n_forms, losses_bm, kills, use_leaders, pflat, prow, stk, fight, test_die, test_need):
    """The activations of the trials that the lanes ``l`` with ``start[l]`` begin (analysis.epic.turn.run_turn_trial
    up to the assault), counted into ``pflat[prow + ...]``; ``fight[l]``: the engage led to an assault.  Activation
    by activation: which lanes act and their action tests for all lanes at once (``kernels.epic.dice._roll``: a lane's
    generator moves only if it rolls), then the rest lane by lane; every lane's dice still come from its own
    stream in the order of its own trial, and each attack is one :func:`shoot_lanes` call for all the lanes.
    ``fmasks``: the formations' unit bits (``fmasks[f * n_words + w]``); ``test_die`` and ``test_need``: int32 rows
    (as ``_roll`` takes them) for the action tests' dice and who rolls.  Returns the dice rolled."""
    L = LANES
    acts = T[T_ACTS]
    owf = T[T_OWF]
    wpn, wb, tu, bar = T[T_WPN], T[T_WB], T[T_TU], T[T_BAR]
    mh = T[T_INFO][0, I_MAX_HITS]
    splashes = T[T_INFO][0, I_SPLASHES] != 0
    overwatch = scr[0:n_forms * L]  # [f * L + l]
    o = n_forms * L
    lane_mod = scr[o:o + L]  # the lane's attack in this activation: its to-hit modifier, NO_ATTACK none
    lane_cover = scr[o + L:o + 2 * L]
    lane_cs = scr[o + 2 * L:o + 3 * L]
    acted = scr[o + 3 * L:o + 4 * L]
    passed = scr[o + 4 * L:o + 5 * L]
    res = scr[o + 5 * L:o + 8 * L]  # hits, kills, BMs placed of the lane's attack
    work = scr[o + 8 * L:]  # shoot_lanes' scratch
    for l in range(L):  # lane loops with _at / _put, without branches: LLVM vectorises them
        _put(fight, l, 0 if _at(start, l) else _at(fight, l))
    for f in range(n_forms):
        ow = T[T_FORMS][f, TF_OVERWATCH]
        for l in range(L):
            _put(overwatch, f * L + l, ow if _at(start, l) else _at(overwatch, f * L + l))
    nd = 0
    for k in range(acts.shape[0]):
        f = acts[k, A_FORM]
        action = acts[k, A_ACTION]
        target = acts[k, A_TARGET]
        side = _cell(forms, f, F_COLS, F_SIDE)
        _lanes_any_alive(alive, fmasks, side, f, n_words, acted)
        for l in range(L):  # who acts: neither broken nor wiped out (TP 1.13); acting ends an overwatch (TP 1.10)
            a = _at(acted, l) & np.int64(_at(start, l) != 0) & np.int64(_at(broken, f * L + l) == 0)
            _put(acted, l, a)
            _put(lane_mod, l, NO_ATTACK)
            _put(overwatch, f * L + l, 0 if a else _at(overwatch, f * L + l))
        if action == HOLD:
            for l in range(L):
                _put(passed, l, _at(acted, l))  # declared Hold: no action test (reading)
        else:  # the action tests (TP 1.6.2, 1.6.3)
            for l in range(L):
                _put(test_need, l, _at(acted, l))
            nd += _roll(rs, test_die, _SIX, _FOUR, test_need, 0, 0)
            need = forms[f, F_INIT] + acts[k, A_RETAIN]
            for l in range(L):
                _put(passed, l, _at(acted, l)
                       & np.int64(np.int64(_at(test_die, l)) - np.int64(_at(bm, f * L + l) > 0) >= need))
        attacks = False
        for l in range(L):
            if not acted[l]:
                continue
            shoots = False
            hold = action == HOLD
            modifier = 0
            if not hold and not passed[l]:
                bm[f * L + l] += 1
                if _fails_break_test(hp, fu, fb, units, forms, bm, f, l):  # broken in its own action (TP 1.13.3)
                    nd += _break(rs, l, f, fu, fb, units, hp, trapped, forms, alive, n_words, wst, n_units,
                                 splash, n_forms, losses_bm, kills, bm, broken, stk)
                else:
                    hold = True
            if hold:  # the Hold (TP 1.6.1): shoot at modifier 0, move, or regroup
                if acts[k, A_HOLD] == HOLD_SHOOT and target != NONE:
                    shoots = True
                    modifier = 0
                elif acts[k, A_HOLD] == HOLD_REGROUP:
                    nd += _regroup(rs, l, f, fu, fb, units, forms, hp, bm, use_leaders, wst, n_units)
            elif passed[l]:
                if action == ADVANCE or action == DOUBLE or action == SUSTAINED_FIRE:
                    shoots = True
                    modifier = TO_HIT_MODIFIER[action]
                elif action == MARSHAL and target != NONE:  # shoots at −1, then regroups (below)
                    shoots = True
                    modifier = -1
                elif action == OVERWATCH:
                    overwatch[f * L + l] = 1
                elif action == ENGAGE:
                    for i in range(acts[k, A_OWF0], acts[k, A_OWF1]):  # overwatch fire at the charger (TP 1.10)
                        g = owf[i, 0]
                        if not overwatch[g * L + l] or _at(broken, g * L + l) \
                                or not _any_alive(alive, fmasks, _cell(forms, g, F_COLS, F_SIDE), g, l, n_words):
                            continue
                        overwatch[g * L + l] = 0
                        lane_mod[l] = 0
                        lane_cover[l] = 0
                        lane_cs[l] = NO_ROLL
                        nd += shoot_lanes(rs, l, l + 1, lane_mod, lane_cover, lane_cs, res, g, f, NONE, NONE, 0,
                                          AP_AT_AUTO, DECLARE_AUTO, NONE, wpn, wb, tu, bar, mh, splashes, work, units,
                                          forms, fu, fb, hp, alive, n_words, bm, broken, trapped, wst, n_units, splash,
                                          n_forms, losses_bm, kills, stk)
                        lane_mod[l] = NO_ATTACK  # its results are not the activation's
            if shoots:  # the attack at its target, with the target's overwatch cover (TP 1.8.4)
                cover = acts[k, A_COVER]
                cover_save = acts[k, A_COVER_SAVE]
                if overwatch[target * L + l] and not cover and acts[k, A_OW_COVER]:
                    cover = 1
                    cover_save = 5  # infantry on overwatch count as in cover, 5+ (TP 1.8.4)
                lane_mod[l] = modifier
                lane_cover[l] = cover
                lane_cs[l] = cover_save
                attacks = True
        if attacks:  # the attacks of every lane
            nd += shoot_lanes(rs, 0, L, lane_mod, lane_cover, lane_cs, res, f, target, acts[k, A_IN_RANGE],
                              acts[k, A_EXPOSED], acts[k, A_CROSSFIRE], acts[k, A_AP_AT], acts[k, A_DECLARE],
                              acts[k, A_TEMPLATES], wpn, wb, tu, bar, mh, splashes, work, units, forms, fu, fb, hp,
                              alive, n_words, bm, broken, trapped, wst, n_units, splash, n_forms, losses_bm, kills, stk)
        if action == MARSHAL:
            for l in range(L):
                if passed[l] and not _at(broken, f * L + l):  # after its attack, unless broken
                    nd += _regroup(rs, l, f, fu, fb, units, forms, hp, bm, use_leaders, wst, n_units)
        n_acted = 0
        n_passed = 0
        for l in range(L):
            n_acted += _at(acted, l)
            n_passed += _at(passed, l)
        pflat[prow + acts[k, A_O_ACTED]] += n_acted
        pflat[prow + acts[k, A_O_PASSED]] += n_passed
        target_living = lane_cover  # rows free once the attack is made and counted
        if target != NONE and (action == ENGAGE or acts[k, A_MAY_SHOOT]):
            _lanes_any_alive(alive, fmasks, _cell(forms, target, F_COLS, F_SIDE), target, n_words, target_living)
        if action == ENGAGE:  # a passed engage after the overwatch fire: broken or dead before contact, or nobody
            living = acted  # to charge: no assault (TP 1.13.3); the lane made no attack in between
            _lanes_any_alive(alive, fmasks, side, f, n_words, living)
            for l in range(L):
                go = _at(living, l) & _at(target_living, l) & np.int64(_at(broken, f * L + l) == 0)
                _put(fight, l, go if _at(passed, l) else _at(fight, l))
        if acts[k, A_MAY_SHOOT]:  # its results (docs/epic-turn.md §4), counted for every starting lane
            o_hits, top_hits = prow + acts[k, A_O_HITS], acts[k, A_N_HITS] - 1
            o_kills, top_kills = prow + acts[k, A_O_KILLS], acts[k, A_N_KILLS] - 1
            o_bmp, top_bmp = prow + acts[k, A_O_BMP], acts[k, A_N_BMP] - 1
            o_bma, top_bma = prow + acts[k, A_O_BMA], acts[k, A_N_BMA] - 1
            n_broken = 0
            for l in range(L):
                st = np.int64(_at(start, l) != 0)
                shot = np.int64(_at(lane_mod, l) != NO_ATTACK)
                alive_g = _at(target_living, l)
                brk = np.int64(_at(broken, target * L + l) != 0)
                standing = alive_g * (1 - brk)
                n_broken += st * brk * alive_g
                _bump(pflat, o_hits + _min(shot * _at(res, l), top_hits), st)
                _bump(pflat, o_kills + _min(shot * _at(res, L + l), top_kills), st)
                _bump(pflat, o_bmp + _min(shot * _at(res, 2 * L + l), top_bmp), st)
                _bump(pflat, o_bma + _min(standing * _at(bm, target * L + l), top_bma), st)
            pflat[prow + acts[k, A_O_BROKEN]] += n_broken
    return nd
