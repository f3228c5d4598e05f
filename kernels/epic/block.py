"""The Epic kernel's driver: blocks of lanes, RNG streams, the round loop, counts.

Arrays in, counts out: ``analysis/epic/engine.py`` turns a ``CompiledEpic`` into the integer tables of
:mod:`kernels.epic.layout` and the kernel runs the procedure of ``docs/epic-engine.md`` (clauses cited as §n there, TP =
NetEA Tournament Pack).  Trials run in stream blocks of ``BLOCK_TRIALS``, in parallel over blocks;
per-block counts are summed at the end, so the counts depend only on the seed and the trial count.

Lock-step lanes: a block runs ``LANES`` trials at once, one per lane, each rule step a loop over the
lanes (masked, branch-free) that LLVM vectorises; a lane whose trial ends (after any number of rounds)
takes the block's next trial, so no lane waits for another.  Each lane has its own xoshiro256** stream,
keyed by (block, lane), or with ``trial_streams`` by the trial's global index; a generator step is taken
only for a lane that needs the die, so a trial's dice depend on its own stream alone.  Per-lane state
lives in ``[row * LANES + lane]`` arrays carved from two work buffers and two row tables (``_nrt=False``: no
reference counting in the trial loop): the generator states and alive masks in a uint64 one, every other row
(hit points, hits, dice, blast markers, ...: small integers) in an int32 one, ``LANE_INT``, so that a
512-bit vector holds 16 lanes of them instead of 8; the scratch rows share one array ``lv`` with constant row offsets so that
the lane loops need no runtime alias checks.  Rare paths (sniper hits, war engines with Reinforced
Armour or Invulnerable saves, macro-weapon and titan-killer hits, the hits of a war engine in base contact,
trapped withdrawals, Supreme Commander re-rolls) run lane by lane; so do, in a scenario that uses the
war-engine rules of ``docs/epic-engine.md`` §10 (``rules[R_WE]``: shields and fields, special saves, critical
hits, titan-killer damage, lance, ignore cover, disrupt), the allocations, saves and damage of every hit, in the
reference engine's order, and the end-phase effects; without them those paths are never entered.
Living-unit counts are popcounts of per-side alive bit masks; the words per side are a runtime value
(the masks' shape), so one compiled kernel serves every formation size.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..jit import njit, thread_count
from ..rng import BLOCK_TRIALS, _ONE, seed_stream
from .access import _at, _put
from .allocation import _we_allocations_lane
from .assault import _allocate_hits, _early_ends, _roll_hits, _supporting_fire_ends
from .consequences import _extra_hits, _formation_consequences
from .damage import _stack_frames, _we_start_lane
from .dice import _seed_lanes
from .end_phase import _end_phase
from .layout import (ATTACKER, DEFENDER, FORM_ROWS, FRAME, F_ANY_SC, F_ASSAULT, F_BM0, F_BROKEN0, F_CAP, F_N, F_SIDE,
                     F_TSKNF, G_FIRST, G_NORMAL, G_SUPPORT, LANES, LANE_INT, LANE_ROWS, LV_ROWS, M_ALL, M_COLS,
                     M_TARGET, M_XHIT, N_CLASSES, R_LEADERS, R_SF_KILLS, R_TURN, R_WE, TRIAL_STREAM_KEY, U_BIT, U_DC,
                     U_SIDE, U_WORD, WIN_NO_ASSAULT, WIN_UNRESOLVED, W_ROWS)
from .record import _fold_histograms, _record
from .result import _result_roll
from .turn import scratch_size, turn_lanes
from .turn_layout import I_MAX_HITS, T_INFO


@njit(cache=True, from_python=True)
def _buffer_sizes(n_units, n_forms, n_words, n_src, we, dc0):
    """Elements of the ``LANE_INT`` and uint64 work buffers ``_run_block`` carves its arrays from (with
    war-engine rules ``we``: the per-unit state ``wst``, the hits per source row, a scratch list and the
    stack of _we_resolve_lane, of ``_stack_frames(dc0)`` frames)."""
    frames = _stack_frames(dc0)
    n_int = 4 + 3 * (n_units + 1) + 9 + n_units * LANES + 2 * LANES + 2 * N_CLASSES * LANES + 12 * LANES \
        + LV_ROWS * LANES + n_units
    if we:
        n_int += W_ROWS * n_units * LANES + 2 * n_src * LANES + 1 + FRAME * frames
    return n_int, 2 * n_words * LANES + 4


@njit(cache=True, _nrt=False)
def _start_trials(rs, state, key0, key1, first_trial, trial_streams, n_trials, next_t, dc0, units, forms, flat_masks,
                  n_words, alive, hp, kills, wst, we, per_form, per_lane):
    """A round's start: each free lane takes the block's next trial (its stream, hit points, alive masks, formation
    state, war-engine start); returns (next trial, dice rolled, whether any lane holds a trial)."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nd = 0
    bm, broken, losses_bm, broken0 = per_form[0], per_form[1], per_form[2], per_form[11]
    winner, margin, by_roll, rnd, live = per_lane[0], per_lane[1], per_lane[2], per_lane[3], per_lane[4]
    fight, fight0, start = per_lane[5], per_lane[6], per_lane[27]
    for l in range(L):
        st = np.int64(live[l] == 0 and next_t < n_trials)
        start[l] = st
        if st:
            if trial_streams:
                seed_stream(state, key0, key1 ^ TRIAL_STREAM_KEY, first_trial + next_t)
                for k in range(4):
                    rs[k * L + l] = state[k]
            next_t += 1
    anylive = 0
    for l in range(L):
        st = start[l]
        winner[l] = WIN_UNRESOLVED if st else winner[l]
        margin[l] = 0 if st else margin[l]
        by_roll[l] = 0 if st else by_roll[l]
        rnd[l] = 1 if st else rnd[l]
        live[l] |= st
        kills[l] = 0 if st else kills[l]
        kills[L + l] = 0 if st else kills[L + l]
        anylive |= live[l]
    if anylive == 0:
        return next_t, nd, anylive
    for u in range(n_units):
        v0 = dc0[u]
        for l in range(L):
            _put(hp, u * L + l, v0 if _at(start, l) else _at(hp, u * L + l))
    if we:
        for l in range(L):
            if start[l]:
                nd += _we_start_lane(rs, l, units, wst, n_units)
    for s in range(2):
        for w in range(n_words):
            m = flat_masks[(2 * w + s) * M_COLS + M_ALL]
            row = (s * n_words + w) * L
            for l in range(L):
                _put(alive, row + l, m if _at(start, l) else _at(alive, row + l))
    for f in range(n_forms):
        b0 = np.int64(forms[f, F_BROKEN0] != 0)
        bm0 = 0 if b0 else forms[f, F_BM0]
        for l in range(L):
            st = _at(start, l)
            _put(broken, f * L + l, b0 if st else _at(broken, f * L + l))
            _put(broken0, f * L + l, b0 if st else _at(broken0, f * L + l))
            _put(bm, f * L + l, bm0 if st else _at(bm, f * L + l))
            _put(losses_bm, f * L + l, 0 if st else _at(losses_bm, f * L + l))
    for l in range(L):
        fight[l] = live[l]
        fight0[l] = live[l]
    return next_t, nd, anylive


@njit(cache=True, from_python=True, nogil=True, _nrt=False)
def _run_block(ibuf, per_form, per_lane, ubuf, rs, units, src, gb, pmask, pinfo, pb, dc0, forms, fu, fb, fwe, fweb,
               splash, trapped, rules, side_off, form_off, masks, flat_masks, flat_fmasks, base, part, pflat, b,
               n_trials, trial_streams, key0, key1, first_trial, hist, ho, turn, tscr):
    """``n_trials`` assaults in groups of LANES lanes; returns the dice rolled.  ``per_form`` (FORM_ROWS rows of
    ``[formation * L + lane]``) and ``per_lane`` (LANE_ROWS rows of L), zeroed, and ``flat_masks``, ``flat_fmasks``
    and ``pflat``, flat views of ``masks``, the formation masks and ``part``, come from the caller: no
    ``reshape`` here, whose implementation made loading the cached kernel import Numba's array module (about
    0.1 s of a warm run); rows sliced from the work buffer instead made the compile longer and larger.

    The lanes' generator states ``rs`` are seeded here from the block's streams (``first_trial`` is the block's
    first trial), and the block's joint histograms ``hist`` are folded into ``part`` row ``b`` at the end: each
    entry point Python calls costs a warm run a read from the cache.

    Each phase of a round is a function of its own, compiled apart (``_start_trials`` to ``_record``, above):
    Numba's analyses of a function grow faster than its size, and this one holding every phase was most of
    a cold compile."""
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    n_words = masks.shape[0]
    L = LANES
    has_first = False
    has_support = False
    for g in (G_FIRST, 3 + G_FIRST):
        has_first |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    for g in (G_SUPPORT, 3 + G_SUPPORT):
        has_support |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    first_step = G_FIRST if has_first else G_NORMAL
    sf_kills = np.int64(rules[R_SF_KILLS] != 0)
    use_leaders = rules[R_LEADERS] != 0
    turn_on = rules[R_TURN] != 0
    io = 0
    uo = 0
    all_tsknf = ibuf[io:io + 2]
    io += 2
    all_tsknf[:] = 1
    any_sc = ibuf[io:io + 2]  # the side's army has a Supreme Commander
    io += 2
    any_sc[:] = 0
    for f in range(n_forms):
        if forms[f, F_ASSAULT] and not forms[f, F_TSKNF]:
            all_tsknf[forms[f, F_SIDE]] = 0
        if forms[f, F_ANY_SC]:
            any_sc[forms[f, F_SIDE]] = 1
    # war engines per side (units with DC > 1), targets per side, XHIT units per side, in allocation order
    wes = ibuf[io:io + n_units + 1]
    io += n_units + 1
    web = ibuf[io:io + 3]
    io += 3
    tgt = ibuf[io:io + n_units + 1]
    io += n_units + 1
    tgb = ibuf[io:io + 3]
    io += 3
    xh = ibuf[io:io + n_units + 1]
    io += n_units + 1
    xhb = ibuf[io:io + 3]
    io += 3
    nw = 0
    nt = 0
    nx = 0
    for side in range(2):
        for u in range(n_units):
            if units[u, U_SIDE] != side:
                continue
            w = units[u, U_WORD]
            bit = np.uint64(units[u, U_BIT])
            if units[u, U_DC] > 1:
                wes[nw] = u
                nw += 1
            if (masks[w, side, M_TARGET] >> bit) & _ONE:
                tgt[nt] = u
                nt += 1
            if (masks[w, side, M_XHIT] >> bit) & _ONE:
                xh[nx] = u
                nx += 1
        web[side + 1] = nw
        tgb[side + 1] = nt
        xhb[side + 1] = nx
    alive = ubuf[uo:uo + 2 * n_words * L]
    uo += 2 * n_words * L
    hp = ibuf[io:io + n_units * L]
    io += n_units * L
    kills = ibuf[io:io + 2 * L]
    io += 2 * L
    hits = ibuf[io:io + 2 * N_CLASSES * L]
    io += 2 * N_CLASSES * L
    reach_hits = ibuf[io:io + 12 * L]  # [((side * 2 + reach - 1) * 3 + kind) * L + lane]: a WE's hits in contact
    io += 12 * L
    bm, broken, losses_bm = per_form[0], per_form[1], per_form[2]
    broken0 = per_form[11]  # broken when the assault begins (a turn's shooting may break it)
    winner, live, fight, start = per_lane[0], per_lane[4], per_lane[5], per_lane[27]
    prow = b * part.shape[1]
    lv = ibuf[io:io + LV_ROWS * L]
    io += LV_ROWS * L
    state = ubuf[uo:uo + 4]
    uo += 4
    _seed_lanes(rs, state, key0, key1, first_trial // BLOCK_TRIALS * L)  # first_trial: the block's, from the caller
    we = rules[R_WE] != 0  # war-engine rules: hits resolved lane by lane, per-unit state in wst
    n_src = src.shape[0]
    n_w = W_ROWS * n_units * L if we else 0
    wst = ibuf[io:io + n_w]
    io += n_w
    shits = ibuf[io:io + n_src * L * we]  # [row * L + lane]: hits of each source row, and whether firefight
    io += n_src * L * we
    sff = ibuf[io:io + n_src * L * we]
    io += n_src * L * we
    elig = ibuf[io:io + n_units]  # scratch of the allocations: a unit list, or the hits each unit takes
    io += n_units
    n_stk = (1 + FRAME * _stack_frames(dc0)) * we  # the stack of _we_resolve_lane
    stk = ibuf[io:io + n_stk]
    io += n_stk
    splashes = False  # has a unit a critical with a splash that reaches a unit (spec §10.6)?
    for i in range(splash.size):
        splashes |= _at(splash, i) > 0
    nd = 0
    next_t = 0
    for l in range(L):
        live[l] = 0
    while True:  # one round for every lane holding a trial; a lane whose trial ended takes the next one
        next_t, k, anylive = _start_trials(rs, state, key0, key1, first_trial, trial_streams, n_trials, next_t, dc0,
                                           units, forms, flat_masks, n_words, alive, hp, kills, wst, we, per_form,
                                           per_lane)
        nd += k
        if anylive == 0:
            break
        if turn is not None:  # a turn scenario (rules[R_TURN]): the activations of each new trial, then its assault
            nd += turn_lanes(start, rs, turn, tscr, units, forms, fu, fb, flat_fmasks, hp, alive, n_words,
                                       bm, broken, trapped, wst, n_units, splash, n_forms, losses_bm, kills,
                                       use_leaders, pflat, prow, stk, fight, per_lane[28], per_lane[29])
            for l in range(L):
                st = _at(start, l)
                _put(live, l, _at(fight, l) if st else _at(live, l))
                _put(winner, l, (WIN_UNRESOLVED if _at(fight, l) else WIN_NO_ASSAULT) if st else _at(winner, l))
            for f in range(n_forms):
                for l in range(L):
                    _put(broken0, f * L + l, _at(broken, f * L + l) if _at(start, l) else _at(broken0, f * L + l))
        for step in range(first_step, 3):
            if step == G_SUPPORT:  # §3 early ends
                _early_ends(alive, flat_masks, flat_fmasks, n_words, wes, web, units, lv, per_lane)
                if not has_support:
                    break
            for side in range(2):  # §1 / §4: rolls
                nd += _roll_hits(side, step, rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, src, gb,
                                 pmask, pinfo, pb, hp, hits, reach_hits, wst, shits, sff, we, turn_on, per_form,
                                 per_lane)
            ck = np.int64(step != G_SUPPORT) | sf_kills
            if we:  # war-engine rules: lane by lane, the attacker's hits first, as the reference engine
                for l in range(L):
                    if fight[l]:
                        for side in (DEFENDER, ATTACKER):
                            g = (1 - side) * 3 + step
                            nd += _we_allocations_lane(rs, l, side, gb[g], gb[g + 1], src, shits, sff, units, hp,
                                                       alive, tgt, tgb, n_words, wst, n_units, elig, ck, splashes,
                                                       splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
            for side in range(0 if we else 2):  # §2 allocation, saves, damage: side's units, the enemy's hits
                nd += _allocate_hits(side, step, ck, rs, alive, flat_masks, n_words, wes, web, tgt, tgb, units, src,
                                     gb, base, hp, hits, reach_hits, kills, lv, per_form, per_lane, elig)
            if step == G_SUPPORT:  # §4: wiped out by supporting fire
                _supporting_fire_ends(alive, flat_masks, flat_fmasks, n_words, wes, web, units, lv, per_lane)
        nd += _result_roll(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, wst, hp, kills, lv,
                           rules, per_form, per_lane)
        nd += _extra_hits(rs, all_tsknf, xh, xhb, alive, n_words, units, forms, fu, fb, hp, wst, we, splashes, splash,
                          kills, stk, lv, per_form, per_lane)
        nd += _formation_consequences(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb,
                                      fwe, fweb, hp, wst, we, trapped, splashes, splash, kills, stk, lv, rules,
                                      per_form, per_lane)
        nd += _end_phase(rs, any_sc, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb, fwe,
                         fweb, hp, wst, we, trapped, splashes, splash, kills, stk, lv, rules, per_form, per_lane)
        _record(pflat, prow, side_off, form_off, forms, hist, ho, units, fwe, fweb, hp, wst, we, lv, per_form,
                per_lane)
    _fold_histograms(part, b, hist, ho, forms, form_off)
    return nd


def assault_kernel(units, src, gb, pmask, pinfo, pb, masks, fmasks, base, forms, fu, fb, fwe, fweb, splash, trapped,
                   rules, side_off, form_off, n_counts, key0, key1, first_block, n_trials, trial_streams, turn):
    """Counts of ``n_trials`` assaults and the dice rolled, summed over the stream blocks.

    The blocks run on ``thread_count()`` Python threads (Numba's thread count, without starting Numba's
    own thread pool, which this kernel does not use), each in the GIL-free ``_run_block``.
    That keeps the block function's machine code generated once: a ``prange`` driver links its IR into
    its own module and LLVM optimises and generates all of it a second time (about a third of a cold
    compile).  A block's streams depend only on its index, so the counts do not depend on the threads.
    Scalars reach the jitted functions with fixed types.  ``turn``: the turn tables of kernels/py, or
    None for an assault scenario.  ``_run_block`` thus has two compiled variants, each compiled once: with
    ``turn`` None, Numba prunes the branch that calls ``turn_lanes`` before typing it (a branch on
    ``argument is not None`` is resolved from the argument's type), so an assault's compile includes none of
    the turn code; a turn scenario compiles its own variant on first use."""
    key0, key1, first_block, n_trials = np.uint64(key0), np.uint64(key1), np.int64(first_block), np.int64(n_trials)
    trial_streams = bool(trial_streams)
    n_blocks = int((n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS)
    part = np.zeros((n_blocks, n_counts), np.int64)
    flat_part = part.reshape(part.size)  # a view: the block function counts into it
    dice = np.zeros(n_blocks, np.int64)
    n_forms = forms.shape[0]
    dc0 = np.ascontiguousarray(units[:, U_DC])
    masks_w = np.ascontiguousarray(masks.transpose(2, 0, 1))
    flat_masks = masks_w.reshape(masks_w.size)  # [w, side, kind]
    flat_fmasks = np.ascontiguousarray(fmasks).reshape(fmasks.size)
    ho = np.zeros((n_forms, 3), np.int64)
    n_hist = 0
    for f in range(n_forms):
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        ho[f, 0] = n_hist
        ho[f, 1] = n_hist + n1 * n1
        ho[f, 2] = ho[f, 1] + 2 * c1
        n_hist = ho[f, 2] + 8 * c1
    n_int, n_uint = _buffer_sizes(units.shape[0], n_forms, masks.shape[2], src.shape[0], bool(rules[R_WE] != 0),
                                  dc0)
    if (turn is not None) != bool(rules[R_TURN]):
        raise ValueError("turn tables are given for a turn scenario (rules[R_TURN]) and only for one")
    n_turn = (scratch_size(units.shape[0], n_forms, turn[T_INFO][0, I_MAX_HITS])
              if turn is not None else 0)

    def block(task: int) -> None:
        b = np.int64(task)
        rs = np.zeros(4 * LANES, np.uint64)  # seeded by _run_block
        hist = np.zeros(n_hist, np.int64)
        tscr = np.zeros(n_turn, np.int64)
        dice[b] = _run_block(np.zeros(n_int, LANE_INT), np.zeros((FORM_ROWS, n_forms * LANES), LANE_INT),
                             np.zeros((LANE_ROWS, LANES), LANE_INT), np.zeros(n_uint, np.uint64), rs, units, src, gb,
                             pmask, pinfo, pb, dc0, forms, fu, fb, fwe, fweb, splash, trapped, rules, side_off,
                             form_off, masks_w, flat_masks, flat_fmasks, base, part, flat_part, b,
                             min(np.int64(BLOCK_TRIALS), n_trials - b * BLOCK_TRIALS), trial_streams, key0, key1,
                             (first_block + b) * BLOCK_TRIALS, hist, ho, turn, tscr)

    threads = min(thread_count(), n_blocks)
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            for _ in pool.map(block, range(n_blocks)):  # re-raises a block's error
                pass
    else:
        for task in range(n_blocks):
            block(task)
    return part.sum(axis=0), dice.sum()
