"""The Epic turn in the Numba kernel: the activations of the trials a block's lanes begin, before their assaults.

``wargame_odds.kernels.epic.block._run_block`` calls :func:`turn_lanes` in each round where lanes start a trial of a
turn scenario (``rules[R_TURN]``), once their starting state is set.  The activations (action test, shooting, regroup,
overwatch, the charge and the overwatch fire it draws) change each lane's units (``hp`` and the alive masks), blast
markers and broken flags in place; the assault steps then fight from that state (or not at all: :func:`turn_lanes` sets
``fight[l]`` when the ``engage`` activation led to an assault), followed by the end phase. Each activation's results are
counted into the block's count row.  Overwatch fire at a withdrawing formation (docs/epic-turn.md §2a) is one more
trigger of the shooting step (:func:`_withdrawal_fire`): after an activation, and, in place of the assault's own steps,
after the consequences (:func:`turn_consequences`) and after the rally (:func:`turn_end_phase`).

The steps mirror the reference engine clause by clause (``analysis/epic/turn.py``, ``analysis/epic/shooting.py``;
``docs/epic-turn.md`` §2, §3, cited as §3.n; TP = NetEA Tournament Pack).  War engines are shot at with the
assault's war-engine steps (``wargame_odds.kernels.epic.saves._shields_lane``,
``wargame_odds.kernels.epic.damage._we_resolve_lane``: damage, criticals, splashes) on the lane's war-engine state
``wst`` (empty without war-engine rules), which the assault and the end phase then carry on; their damage is booked
``BOOK_SHOT``, its BMs drained from ``losses_bm`` by the attack (§3.13).  Activation by activation, and each step lane
by lane (scalar code: a turn's shooting is short and branchy), so that one
:func:`wargame_odds.kernels.epic.shooting.shoot_lanes` call makes an attack in every lane and a lane's dice keep the
order of its trial.  Like ``_run_block``, the steps are compiled without reference counting (``_nrt=False``): they only
take views of the caller's arrays.
"""
import numpy as np

from ..rng import _FOUR, _SIX
from .access import ANY, FALSE, INT0, _at, _bump, _cell, _min, _put, inlined_function, kernel_function
from .breaks import _break, _fails_break_test
from .consequences import _after_assault, _breaks_and_withdrawals
from .dice import _d6, _roll
from .end_phase import _end_phase, _end_phase_effects, _rally_step, _shadowfields_back
from .layout import (FR_ALIVE, FR_BROKEN0, FR_PASSED, FR_TESTED, F_COLS, F_INIT, F_SIDE, F_TSKNF, LANES, LANES64,
                     LN_CONS, LN_ENDED, LN_FIGHT, LN_LOSER, LN_START, LN_TEST_DIE, LN_TEST_NEED, NO_ROLL, R_LEADERS,
                     R_RALLY, U_COLS, U_LEADER, U_VOID, W_VOID)
from .shoot_fire import _fire_team
from .shooting import shoot_lanes
from .turn_layout import (ADVANCE, AP_AT_AUTO, A_ACTION, A_AP_AT, A_COVER, A_COVER_SAVE, A_CROSSFIRE, A_DECLARE,
                          A_EXPOSED, A_FORM, A_HOLD, A_IN_RANGE, A_MAY_SHOOT, A_N_BMA, A_N_BMP, A_N_HITS, A_N_KILLS,
                          A_OWF0, A_OWF1, A_OW_COVER, A_O_ACTED, A_O_BMA, A_O_BMP, A_O_BROKEN, A_O_HITS, A_O_KILLS,
                          A_O_PASSED, A_RETAIN, A_TARGET, A_TEMPLATES, A_WF0, A_WF1, DECLARE_AUTO, DOUBLE, ENGAGE, HOLD,
                          HOLD_REGROUP, HOLD_SHOOT, I_END_WF0, I_END_WF1, I_MAX_HITS, I_SPLASHES, MARSHAL, NONE,
                          NO_ATTACK, OVERWATCH, PL_ROWS, SUSTAINED_FIRE, TF_OVERWATCH, TO_HIT_MODIFIER, WF_AP_AT, WF_AT,
                          WF_COVER, WF_COVER_SAVE, WF_DECLARE, WF_EXPOSED, WF_FORM, WF_IN_RANGE, WF_N_HITS, WF_N_KILLS,
                          WF_O_FIRED, WF_O_HITS, WF_O_KILLS, WF_TEMPLATES, Shot, ShotScratch)
from .units import _any_alive, _lanes_any_alive, _rows_fcount, _wat, _wput


def scratch_size(n_units, n_forms, max_hits):
    """Elements of the per-block scratch array :func:`turn_lanes` works in (its per-lane state, then the
    shooting's, the per-lane rows of a plain attack: :func:`shot_scratch`; the withdrawal fire's two per-formation
    rows last: :func:`withdrawal_rows`)."""
    return (3 * n_forms + 8 + PL_ROWS) * LANES + n_forms + 5 * n_units + 4 * max_hits + 8


@kernel_function
def withdrawal_rows(tb, scr):
    """The withdrawal fire's rows of the turn's scratch ``scr``, ``[f * LANES + l]`` each: ``mark``, the broken flags
    before a step, then whether the formation withdrew in it; ``engage``, the same for the engage activation, kept
    from the lane's turn to its assault's consequences (:func:`turn_consequences`)."""
    n = tb.forms.shape[0] * LANES
    return scr[scr.size - 2 * n:scr.size - n], scr[scr.size - n:]


@kernel_function
def shot_scratch(tb, tt, scr):
    """The turn's scratch ``scr`` (:func:`scratch_size`, after its formations' overwatch flags ``scr[:F * LANES]``
    and the action rows acted / passed ``scr[F * LANES + 3L:F * LANES + 5L]``) as the shooting's
    :class:`ShotScratch`."""
    L = LANES
    n_units = tb.units.shape[0]
    n_forms = tb.forms.shape[0]
    mh = tt.info[0, I_MAX_HITS]
    o = n_forms * L
    lane_mod, lane_cover, lane_cs, res = scr[o:o + L], scr[o + L:o + 2 * L], scr[o + 2 * L:o + 3 * L], \
        scr[o + 5 * L:o + 8 * L]
    o += 8 * L
    cand, ex, live, cnt = scr[o:o + n_units], scr[o + n_units:o + 2 * n_units], scr[o + 2 * n_units:o + 3 * n_units], \
        scr[o + 3 * n_units:o + 4 * n_units]
    o += 4 * n_units
    hkind, hflag, hunit, hline = scr[o:o + mh], scr[o + mh:o + 2 * mh], scr[o + 2 * mh:o + 3 * mh], \
        scr[o + 3 * mh:o + 4 * mh]
    o += 4 * mh
    acc, spl, ushots = scr[o:o + 8], scr[o + 8:o + 8 + n_forms], scr[o + 8 + n_forms:o + 8 + n_forms + n_units]
    o += 8 + n_forms + n_units
    return ShotScratch(lane_mod, lane_cover, lane_cs, res, cand, ex, live, cnt, hkind, hflag, hunit, hline, acc, spl,
                       ushots, scr[o:o + PL_ROWS * L])


@kernel_function
def _attack(l0, l1, shooter, target, in_range, n_exposed, crossfire, ap_at, declare_at, per_template, splashes):
    """A :class:`Shot` (its values int64 whatever the call site passes, so that :func:`shoot_lanes` is compiled
    once)."""
    return Shot(l0, l1, shooter, target, in_range, n_exposed, crossfire, ap_at, declare_at, per_template, splashes)


@kernel_function
def _regroup(tb, st, l, f):
    """Regroup points = the higher of 2D6 + 1 per Leader (Marines 2) (TP 1.13.1, 2.1.8): they remove BMs, then
    the points left repair void shields that are down, front war engine first, at most the BMs held plus the
    shields down (TP-SR Imperial Void Shields; reading, docs/epic-turn.md §2).  Returns the dice rolled."""
    L = LANES
    units, wst, hp, bm = tb.units, st.wst, st.hp, st.bm
    n_units = units.shape[0]
    use_leaders = tb.rules[R_LEADERS] != 0
    leaders = 0
    missing = 0
    for k in range(_at(tb.fb, f), _at(tb.fb, f + 1)):
        u = _at(tb.fu, k)
        if _at(hp, u * L + l) > 0:
            leaders += _cell(units, u, U_COLS, U_LEADER) * np.int64(use_leaders)
            if wst.size > 0:
                missing += _cell(units, u, U_COLS, U_VOID) - _wat(wst, W_VOID, u, l, n_units)
    per_leader = 2 if _cell(tb.forms, f, F_COLS, F_TSKNF) else 1
    a = _d6(st.rs, l)
    b = _d6(st.rs, l)
    i = f * L + l
    points = min(max(a, b) + per_leader * leaders, _at(bm, i) + missing)
    removed = min(points, _at(bm, i))
    bm[i] -= removed
    repairs = points - removed
    for k in range(_at(tb.fb, f), _at(tb.fb, f + 1)):
        if repairs == 0:
            break
        u = _at(tb.fu, k)
        if _at(hp, u * L + l) > 0:
            up = _wat(wst, W_VOID, u, l, n_units)
            fixed = min(repairs, _cell(units, u, U_COLS, U_VOID) - up)
            _wput(wst, W_VOID, u, l, n_units, up + fixed)
            repairs -= fixed
    return 2


@kernel_function
def _action_tests(tb, st, tt, sc, k, acted, passed):
    """Activation ``k`` in the lanes that begin a trial (LN_START): who acts (``acted``: the formation neither broken
    nor wiped out, TP 1.13; acting ends its overwatch, TP 1.10) and who passes its action test (``passed``; TP 1.6.2,
    1.6.3: D6 − 1 with any BM ≥ initiative, + 1 to retain; a declared Hold takes none, a reading), for all lanes at
    once (wargame_odds.kernels.epic.dice._roll: a lane's generator moves only if it rolls).  Returns the dice rolled."""
    L = LANES
    acts = tt.acts
    f = acts[k, A_FORM]
    start = st.per_lane[LN_START]
    overwatch = st.tscr
    _lanes_any_alive(st.alive, tb.sets.fmasks, _cell(tb.forms, f, F_COLS, F_SIDE), f, tb.sets.n_words, acted)
    for l in range(L):  # lane loops with _at / _put, without branches: LLVM vectorises them
        a = _at(acted, l) & np.int64(_at(start, l) != 0) & np.int64(_at(st.broken, f * L + l) == 0)
        _put(acted, l, a)
        _put(sc.lane_mod, l, NO_ATTACK)
        _put(overwatch, f * L + l, 0 if a else _at(overwatch, f * L + l))
    if acts[k, A_ACTION] == HOLD:
        for l in range(L):
            _put(passed, l, _at(acted, l))  # declared Hold: no action test (reading)
        return 0
    test_die, test_need = st.per_lane[LN_TEST_DIE], st.per_lane[LN_TEST_NEED]
    for l in range(L):
        _put(test_need, l, _at(acted, l))
    nd = _roll(st.rs, test_die, _SIX, _FOUR, test_need, INT0, INT0)
    need = tb.forms[f, F_INIT] + acts[k, A_RETAIN]
    for l in range(L):
        _put(passed, l, _at(acted, l) & np.int64(np.int64(_at(test_die, l)) - np.int64(_at(st.bm, f * L + l) > 0)
                                                 >= need))
    return nd


@inlined_function
def _overwatch_fire(tb, st, tt, sc, k, acted, passed):
    """The overwatch fire an engage of activation ``k`` draws in each lane where it acts and passes its test (TP
    1.10): each formation listed that is on overwatch, unbroken and has a living unit shoots at the charger (to-hit
    modifier 0, no cover), its overwatch then spent; its results are not the activation's.  One
    :func:`shoot_lanes` call per formation listed, for all the lanes where it shoots: a lane's dice keep the order of
    its trial, since nothing else of the activation rolls in a lane that passed an engage before its overwatch fire
    (a failed engage's Hold fire comes after, in the lanes that failed).  Returns the dice rolled."""
    L = LANES
    acts = tt.acts
    f = acts[k, A_FORM]
    overwatch = st.tscr
    splashes = tt.info[0, I_SPLASHES] != 0
    nd = 0
    for i in range(acts[k, A_OWF0], acts[k, A_OWF1]):
        g = tt.owf[i, 0]
        side = _cell(tb.forms, g, F_COLS, F_SIDE)
        attacks = False
        for l in range(L):
            fires = acted[l] != 0 and passed[l] != 0 and overwatch[g * L + l] != 0 and not _at(st.broken, g * L + l) \
                and _any_alive(st.alive, tb.sets.fmasks, side, g, l, tb.sets.n_words)
            sc.lane_mod[l] = 0 if fires else NO_ATTACK
            sc.lane_cover[l] = 0
            sc.lane_cs[l] = NO_ROLL
            overwatch[g * L + l] = 0 if fires else overwatch[g * L + l]
            attacks |= fires
        if attacks:
            nd += shoot_lanes(tb, st, tt, sc, _attack(INT0, LANES64, g, f, NONE, NONE, INT0, AP_AT_AUTO, DECLARE_AUTO,
                                                      NONE, splashes))
    for l in range(L):
        sc.lane_mod[l] = NO_ATTACK
    return nd


@kernel_function
def _withdrawal_fire(tb, st, tt, sc, e0, e1, withdrew, pflat, prow):
    """The withdrawal-fire entries ``e0..e1`` (rows of ``tt.wf``) in list order, in every lane ``l`` where the
    entry's formation ``at`` withdrew (``withdrew[at * LANES + l]``): when ``at`` has a living unit and the entry's
    formation is on overwatch, unbroken and has a unit that can fire
    (:func:`wargame_odds.kernels.epic.shoot_fire._fire_team`: living, in range, not suppressed), it makes one shooting
    attack at ``at`` (to-hit modifier 0; ``at`` is broken, so its BMs are no-save hits) and leaves overwatch; else no
    attack, and it stays on overwatch (TP 1.10, 1.13.3, 1.13.4; epic-shooting §3.10, §5; docs/epic-turn.md §2a).  All
    the lanes' attacks of an entry are one :func:`shoot_lanes` call.  Counted: fired, and the attack's hits and kills.
    Returns the dice rolled."""
    L = LANES
    wf = tt.wf
    overwatch = st.tscr
    splashes = tt.info[0, I_SPLASHES] != 0
    nd = 0
    for e in range(e0, e1):
        g, at = wf[e, WF_FORM], wf[e, WF_AT]
        shot = _attack(INT0, LANES64, g, at, wf[e, WF_IN_RANGE], wf[e, WF_EXPOSED], INT0, wf[e, WF_AP_AT],
                       wf[e, WF_DECLARE], wf[e, WF_TEMPLATES], splashes)
        attacks = False
        for l in range(L):
            fires = withdrew[at * L + l] != 0 and overwatch[g * L + l] != 0 and not st.broken[g * L + l] \
                and _any_alive(st.alive, tb.sets.fmasks, _cell(tb.forms, g, F_COLS, F_SIDE), g, l, tb.sets.n_words) \
                and _any_alive(st.alive, tb.sets.fmasks, _cell(tb.forms, at, F_COLS, F_SIDE), at, l, tb.sets.n_words) \
                and _fire_team(tb.fb, tb.fu, st.hp, st.bm, tt.tu, tb.forms, tb.units, sc.cand, g, wf[e, WF_IN_RANGE],
                               l) > 0
            sc.lane_mod[l] = 0 if fires else NO_ATTACK
            sc.lane_cover[l] = wf[e, WF_COVER]
            sc.lane_cs[l] = wf[e, WF_COVER_SAVE]
            overwatch[g * L + l] = 0 if fires else overwatch[g * L + l]
            attacks |= fires
        if not attacks:
            continue
        nd += shoot_lanes(tb, st, tt, sc, shot)
        o_hits, top_hits = prow + wf[e, WF_O_HITS], wf[e, WF_N_HITS] - 1
        o_kills, top_kills = prow + wf[e, WF_O_KILLS], wf[e, WF_N_KILLS] - 1
        for l in range(L):
            if sc.lane_mod[l] != NO_ATTACK:
                pflat[prow + wf[e, WF_O_FIRED]] += 1
                pflat[o_hits + _min(sc.res[l], top_hits)] += 1
                pflat[o_kills + _min(sc.res[L + l], top_kills)] += 1
                sc.lane_mod[l] = NO_ATTACK
    return nd


@kernel_function
def _lane_actions(tb, st, tt, sc, k, acted, passed):
    """Activation ``k``'s action in each lane that acts, once its test is rolled: a failed test is a BM and a Hold,
    or breaks the formation (TP 1.6.1, 1.13.3); the Hold shoots at modifier 0, moves or regroups (TP 1.6.1); a
    passed Advance, Double or Sustained Fire shoots (TP 1.9.5 modifiers), a Marshal shoots at −1 then regroups,
    Overwatch waits (TP 1.10), a passed engage has drawn its overwatch fire already (:func:`_overwatch_fire`).  A
    lane that shoots gets its to-hit modifier, cover and cover save (infantry on overwatch count as in cover, 5+:
    TP 1.8.4) in ``sc``.
    Returns (any lane shoots, dice rolled)."""
    L = LANES
    acts = tt.acts
    f, action, target = acts[k, A_FORM], acts[k, A_ACTION], acts[k, A_TARGET]
    overwatch = st.tscr
    nd = 0
    attacks = False
    for l in range(L):
        if not acted[l]:
            continue
        shoots = False
        hold = action == HOLD
        modifier = 0
        if not hold and not passed[l]:  # a BM; broken in its own action if it fails its break test (TP 1.13.3)
            st.bm[f * L + l] += 1
            if _fails_break_test(st.hp, tb.fu, tb.fb, tb.units, tb.forms, st.bm, f, l):
                nd += _break(tb, st, l, f)
            else:
                hold = True
        if hold:
            if acts[k, A_HOLD] == HOLD_SHOOT and target != NONE:
                shoots = True
            elif acts[k, A_HOLD] == HOLD_REGROUP:
                nd += _regroup(tb, st, l, f)
        elif passed[l]:
            if action == ADVANCE or action == DOUBLE or action == SUSTAINED_FIRE:
                shoots = True
                modifier = TO_HIT_MODIFIER[action]
            elif action == MARSHAL and target != NONE:  # shoots at −1, then regroups (_activation)
                shoots = True
                modifier = -1
            elif action == OVERWATCH:
                overwatch[f * L + l] = 1
        if shoots:  # the attack at its target, with the target's overwatch cover (TP 1.8.4)
            cover = acts[k, A_COVER]
            cover_save = acts[k, A_COVER_SAVE]
            if overwatch[target * L + l] and not cover and acts[k, A_OW_COVER]:
                cover = 1
                cover_save = 5
            sc.lane_mod[l] = modifier
            sc.lane_cover[l] = cover
            sc.lane_cs[l] = cover_save
            attacks = True
    return attacks, nd


@kernel_function
def _count_activation(tb, st, tt, sc, k, pflat, prow):
    """Activation ``k``'s results (docs/epic-turn.md §4), counted for every lane that began a trial: how many acted
    and passed their test, and for an activation that may shoot the histograms of its hits, kills, BMs placed and
    the target's BMs after (while it stands), and whether its target is broken.  ``sc.lane_cover`` then holds
    whether the target has a living unit (an engage's too, for :func:`turn_lanes`)."""
    L = LANES
    acts = tt.acts
    target = acts[k, A_TARGET]
    start = st.per_lane[LN_START]
    o = tb.forms.shape[0] * L
    acted, passed = st.tscr[o + 3 * L:o + 4 * L], st.tscr[o + 4 * L:o + 5 * L]
    n_acted = 0
    n_passed = 0
    for l in range(L):
        n_acted += _at(acted, l)
        n_passed += _at(passed, l)
    pflat[prow + acts[k, A_O_ACTED]] += n_acted
    pflat[prow + acts[k, A_O_PASSED]] += n_passed
    target_living = sc.lane_cover  # rows free once the attack is made and counted
    if target != NONE and (acts[k, A_ACTION] == ENGAGE or acts[k, A_MAY_SHOOT]):
        _lanes_any_alive(st.alive, tb.sets.fmasks, _cell(tb.forms, target, F_COLS, F_SIDE), target, tb.sets.n_words,
                         target_living)
    if not acts[k, A_MAY_SHOOT]:
        return
    o_hits, top_hits = prow + acts[k, A_O_HITS], acts[k, A_N_HITS] - 1
    o_kills, top_kills = prow + acts[k, A_O_KILLS], acts[k, A_N_KILLS] - 1
    o_bmp, top_bmp = prow + acts[k, A_O_BMP], acts[k, A_N_BMP] - 1
    o_bma, top_bma = prow + acts[k, A_O_BMA], acts[k, A_N_BMA] - 1
    n_broken = 0
    for l in range(L):
        go = np.int64(_at(start, l) != 0)
        shot = np.int64(_at(sc.lane_mod, l) != NO_ATTACK)
        alive_g = _at(target_living, l)
        brk = np.int64(_at(st.broken, target * L + l) != 0)
        standing = alive_g * (1 - brk)
        n_broken += go * brk * alive_g
        _bump(pflat, o_hits + _min(shot * _at(sc.res, l), top_hits), go)
        _bump(pflat, o_kills + _min(shot * _at(sc.res, L + l), top_kills), go)
        _bump(pflat, o_bmp + _min(shot * _at(sc.res, 2 * L + l), top_bmp), go)
        _bump(pflat, o_bma + _min(standing * _at(st.bm, target * L + l), top_bma), go)
    pflat[prow + acts[k, A_O_BROKEN]] += n_broken


@inlined_function
def _activation(tb, st, tt, sc, k, pflat, prow):
    """Activation ``k`` in every lane that begins a trial: the action tests (:func:`_action_tests`), an engage's
    overwatch fire (:func:`_overwatch_fire`), each lane's action (:func:`_lane_actions`), the attacks of every lane
    in one :func:`shoot_lanes` call, a Marshal's regroup after its attack, the counts (:func:`_count_activation`);
    after a passed engage (and its overwatch fire) the lane fights its assault (``LN_FIGHT``) unless the charger is
    broken or gone or its target is (TP 1.13.3).  With withdrawal-fire entries, the formations that broke in it
    withdrew: its entries fire last (:func:`_withdrawal_fire`), an engage's after its assault
    (:func:`turn_consequences`).  Returns the dice rolled."""
    L = LANES
    acts = tt.acts
    f, action, target = acts[k, A_FORM], acts[k, A_ACTION], acts[k, A_TARGET]
    n_forms = tb.forms.shape[0]
    o = n_forms * L
    acted, passed = st.tscr[o + 3 * L:o + 4 * L], st.tscr[o + 4 * L:o + 5 * L]
    fight = st.per_lane[LN_FIGHT]
    start = st.per_lane[LN_START]
    wf0, wf1 = acts[k, A_WF0], acts[k, A_WF1]
    mark, engage = withdrawal_rows(tb, st.tscr)
    before = engage if action == ENGAGE else mark  # an engage's withdrawals wait for its assault's
    if wf1 > wf0:
        for i in range(n_forms * L):
            before[i] = st.broken[i] if start[i % L] else before[i]
    nd = _action_tests(tb, st, tt, sc, k, acted, passed)
    if action == ENGAGE and acts[k, A_OWF1] > acts[k, A_OWF0]:  # the lanes that passed: before their charge
        nd += _overwatch_fire(tb, st, tt, sc, k, acted, passed)
    attacks, k2 = _lane_actions(tb, st, tt, sc, k, acted, passed)
    nd += k2
    if attacks:  # the attacks of every lane
        nd += shoot_lanes(tb, st, tt, sc, _attack(INT0, LANES64, f, target, acts[k, A_IN_RANGE], acts[k, A_EXPOSED],
                                                  acts[k, A_CROSSFIRE], acts[k, A_AP_AT], acts[k, A_DECLARE],
                                                  acts[k, A_TEMPLATES], tt.info[0, I_SPLASHES] != 0))
    if action == MARSHAL:
        for l in range(L):
            if passed[l] and not _at(st.broken, f * L + l):  # after its attack, unless broken
                nd += _regroup(tb, st, l, f)
    _count_activation(tb, st, tt, sc, k, pflat, prow)
    if action == ENGAGE:  # a passed engage after the overwatch fire: broken or dead before contact, or nobody
        living = acted  # to charge: no assault (TP 1.13.3); the lane made no attack in between
        _lanes_any_alive(st.alive, tb.sets.fmasks, _cell(tb.forms, f, F_COLS, F_SIDE), f, tb.sets.n_words, living)
        for l in range(L):
            go = _at(living, l) & _at(sc.lane_cover, l) & np.int64(_at(st.broken, f * L + l) == 0)
            _put(fight, l, go if _at(passed, l) else _at(fight, l))
    if wf1 > wf0:  # who withdrew in this activation: every break in it is a withdrawal (TP 1.9.7, 1.13.3)
        for i in range(n_forms * L):
            before[i] = (st.broken[i] & (1 - before[i])) if start[i % L] else (0 if action != ENGAGE else before[i])
        if action != ENGAGE:  # after everything else the activation does (docs/epic-turn.md §2a)
            nd += _withdrawal_fire(tb, st, tt, sc, wf0, wf1, mark, pflat, prow)
    return nd


@inlined_function
def turn_lanes(tb, st, tt, pflat, prow):
    """The activations of the trials that the lanes ``l`` with ``LN_START`` begin
    (wargame_odds.analysis.epic.turn.run_turn_trial up to the assault), counted into ``pflat[prow + ...]``;
    ``LN_FIGHT``: the engage led to an assault.  Activation by activation (:func:`_activation`): which lanes act and
    their action tests for all lanes at once, then the rest lane by lane; every lane's dice still come from its own
    stream in the order of its own trial, and each attack is one :func:`shoot_lanes` call for all the lanes.  The turn's
    scratch ``st.tscr`` holds each formation's overwatch flag ``[f * LANES + l]``, then the shooting's
    (:func:`shot_scratch`).  Returns the dice rolled."""
    L = LANES
    start = st.per_lane[LN_START]
    fight = st.per_lane[LN_FIGHT]
    overwatch = st.tscr
    sc = shot_scratch(tb, tt, st.tscr)
    for l in range(L):
        _put(fight, l, 0 if _at(start, l) else _at(fight, l))
    for f in range(tb.forms.shape[0]):
        ow = tt.forms[f, TF_OVERWATCH]
        for l in range(L):
            _put(overwatch, f * L + l, ow if _at(start, l) else _at(overwatch, f * L + l))
    nd = 0
    for k in range(tt.acts.shape[0]):
        nd += _activation(tb, st, tt, sc, k, pflat, prow)
    return nd


@inlined_function
def turn_consequences(tb, st, tt, pflat, prow):
    """§6.2–§6.4 in the lanes whose trial ended
    (:func:`wargame_odds.kernels.epic.consequences._breaks_and_withdrawals`), then the engage activation's withdrawal
    fire, after all the assault's consequences (docs/epic-turn.md §2a: at a formation that withdrew in the activation,
    or as the loser or another losing formation that broke; a winner that breaks does not withdraw, TP 1.12.9), then
    each formation's state after the assault (:func:`wargame_odds.kernels.epic.consequences._after_assault`).  Returns
    the dice rolled."""
    L = LANES
    acts = tt.acts
    nd = _breaks_and_withdrawals(tb, st)
    for k in range(acts.shape[0]):
        if acts[k, A_ACTION] != ENGAGE or acts[k, A_WF1] == acts[k, A_WF0]:
            continue
        mark, engage = withdrawal_rows(tb, st.tscr)
        ended, loser, cons = st.per_lane[LN_ENDED], st.per_lane[LN_LOSER], st.per_lane[LN_CONS]
        broken0 = st.per_form[FR_BROKEN0]
        for f in range(tb.forms.shape[0]):
            fs = tb.forms[f, F_SIDE]
            for l in range(L):
                i = f * L + l
                lost = cons[l] & np.int64(loser[l] == fs) & st.broken[i] & (1 - broken0[i])
                mark[i] = ended[l] & (engage[i] | lost)
        nd += _withdrawal_fire(tb, st, tt, shot_scratch(tb, tt, st.tscr), acts[k, A_WF0], acts[k, A_WF1], mark,
                               pflat, prow)
    _after_assault(tb, st)
    return nd


@inlined_function
def turn_end_phase(tb, st, tt, pflat, prow):
    """The end phase of the lanes whose trial ended (:func:`wargame_odds.kernels.epic.end_phase._end_phase`), with the
    withdrawal fire of ``[end_phase]`` after the whole rally step, before shadowfields come back, at the
    formations that withdrew in it: broken by end-phase damage, or failing the rally while broken (TP 1.14.1;
    docs/epic-turn.md §2a).  Returns the dice rolled."""
    L = LANES
    e0, e1 = tt.info[0, I_END_WF0], tt.info[0, I_END_WF1]
    if e1 == e0 or not tb.rules[R_RALLY]:
        return _end_phase(tb, st)
    n_forms = tb.forms.shape[0]
    mark, _ = withdrawal_rows(tb, st.tscr)
    ended = st.per_lane[LN_ENDED]
    tested, passed, fa = st.per_form[FR_TESTED], st.per_form[FR_PASSED], st.per_form[FR_ALIVE]
    for i in range(n_forms * L):
        mark[i] = st.broken[i]
    nd = _end_phase_effects(tb, st)
    for i in range(n_forms * L):
        mark[i] = st.broken[i] & (1 - mark[i])  # broken by end-phase damage: it withdrew (spec §10.7)
    nd += _rally_step(tb, st)
    for i in range(n_forms * L):  # failed while broken: it withdraws again (TP 1.14.1)
        mark[i] = ended[i % L] & (mark[i] | (tested[i] & (1 - passed[i]) & st.broken[i]))
    nd += _withdrawal_fire(tb, st, tt, shot_scratch(tb, tt, st.tscr), e0, e1, mark, pflat, prow)
    for f in range(n_forms):
        _rows_fcount(tb.sets, tb.forms, st.alive, f, ANY, fa, f * L, FALSE)
    _shadowfields_back(tb, st)
    return nd
