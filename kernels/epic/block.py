"""The Epic kernel's driver: blocks of lanes, RNG streams, the round loop, counts.

Arrays in, counts out: ``analysis/epic/engine.py`` turns a ``CompiledEpic`` into the integer tables of
:mod:`wargame_odds.kernels.epic.layout` and the kernel runs the procedure of ``docs/epic-engine.md`` (clauses cited as
§n there, TP = NetEA Tournament Pack). Trials run in stream blocks of ``BLOCK_TRIALS``, in parallel over blocks;
per-block counts are summed at the end, so the counts depend only on the seed and the trial count.

Lock-step lanes: a block runs ``LANES`` trials at once, one per lane, each rule step a loop over the lanes (masked,
branch-free) that LLVM vectorises; a lane whose trial ends (after any number of rounds) takes the block's next
trial, so no lane waits for another. Each lane has its own xoshiro256** stream, keyed by (block, lane), or with
``trial_streams`` by the trial's global index; a generator step is taken only for a lane that needs the die, so a
trial's dice depend on its own stream alone. Per-lane state (:class:`wargame_odds.kernels.epic.layout.Lanes`) lives in
``[row * LANES + lane]`` arrays carved from two work buffers and two row tables (``_nrt=False``: no reference counting
in the trial loop): the generator states and alive masks in a uint64 one, every other row (hit points, hits, dice, blast
markers, ...: small integers) in an int32 one, ``LANE_INT``, so that a 512-bit vector holds 16 lanes of them instead of
8; the scratch rows share one array ``lv`` with constant row offsets so that the lane loops need no runtime alias
checks. Rare paths (sniper hits, war engines with Reinforced Armour or Invulnerable saves, macro-weapon and titan-
killer hits, the hits of a war engine in base contact, trapped withdrawals, Supreme Commander re-rolls) run lane by
lane; so do, in a scenario that uses the war-engine rules of ``docs/epic-engine.md`` §10 (``rules[R_WE]``: shields and
fields, special saves, critical hits, titan-killer damage, lance, ignore cover, disrupt), the allocations, saves and
damage of every hit, in the reference engine's order, and the end-phase effects; without them those paths are never
entered. Living-unit counts are popcounts of per-side alive bit masks; the words per side are a runtime value (the
masks' shape), so one compiled kernel serves every formation size.
"""

import numpy as np

from ..jit import njit
from ..rng import BLOCK_TRIALS, seed_stream
from ..threads import block_spans, run_spans
from .access import _at, _put, inlined_function, kernel_function
from .allocation import _we_allocations
from .assault import _allocate_hits, _early_ends, _roll_hits, _supporting_fire_ends, fight
from .consequences import _extra_hits, _formation_consequences
from .damage import _stack_frames, _we_start_lanes, damage_state
from .dice import _seed_lanes
from .end_phase import _end_phase
from .layout import (FORM_ROWS, FRAME, FR_BM, FR_BROKEN, FR_BROKEN0, FR_LOSSES_BM, F_ANY_SC,
                     F_ASSAULT, F_BM0, F_BROKEN0, F_CAP, F_N, F_SIDE, F_TSKNF, G_FIRST, G_NORMAL, G_SUPPORT, LANES,
                     LANE_INT, LANE_ROWS, LN_BY_ROLL, LN_FIGHT, LN_FIGHT0, LN_LIVE, LN_MARGIN, LN_ROUND, LN_START,
                     LN_WINNER, LV_ROWS, M_ALL, M_COLS, M_TARGET, M_XHIT, N_CLASSES, R_SF_KILLS, R_TURN, R_WE,
                     TRIAL_STREAM_KEY, U_BIT, U_DC, U_SIDE, U_WORD, WIN_NO_ASSAULT, WIN_UNRESOLVED, W_ROWS, Blocks,
                     Lanes, Run, Tables, UnitSets, WeHits)
from .record import _fold_histograms, _record
from .result import _result_roll
from .turn import scratch_size, turn_consequences, turn_end_phase, turn_lanes
from .turn_layout import I_MAX_HITS


@njit(cache=True, from_python=True)
def _buffer_sizes(n_units, n_forms, n_words, n_src, we, dc0):
    """Elements of the ``LANE_INT`` and uint64 work buffers a block's :class:`Lanes` are carved from (with
    war-engine rules ``we``: the per-unit state ``wst``, the hits per source row and the stack of
    _we_resolve_lane, of ``_stack_frames(dc0)`` frames)."""
    n_int = n_units * LANES + 2 * LANES + 2 * N_CLASSES * LANES + 12 * LANES + LV_ROWS * LANES + n_units
    if we:
        n_int += W_ROWS * n_units * LANES + 2 * n_src * LANES + 1 + FRAME * _stack_frames(dc0)
    return n_int, 4 * LANES + 2 * n_words * LANES + 4


def tables(arrays) -> Tables:
    """The :class:`Tables` of a scenario's arrays (``arrays``: ``analysis/epic/engine.py::KernelArrays``, or
    anything with its fields), with what the kernel derives from them: each side's war engines, directly engaged
    units and units a lost assault's extra hits reach, in allocation order; whether every assault formation of a
    side has TSKNF and its army a Supreme Commander; the joint histograms' offsets; whether a critical's splash
    reaches a unit."""
    units, masks, forms, splash, rules = arrays.units, arrays.masks, arrays.forms, arrays.splash, arrays.rules
    n_units, n_forms, n_words = units.shape[0], forms.shape[0], masks.shape[2]
    masks_w = np.ascontiguousarray(masks.transpose(2, 0, 1))  # [w, side, set]
    lists = {M_TARGET: ([], [0]), M_XHIT: ([], [0]), -1: ([], [0])}  # -1: units of DC > 1
    for side in range(2):
        for u in range(n_units):
            if units[u, U_SIDE] != side:
                continue
            bit = np.uint64(units[u, U_BIT])
            for kind, (found, _) in lists.items():
                member = units[u, U_DC] > 1 if kind < 0 else (masks_w[units[u, U_WORD], side, kind] >> bit) & 1
                if member:
                    found.append(u)
        for found, bounds in lists.values():
            bounds.append(len(found))
    all_tsknf = np.ones(2, np.int64)
    any_sc = np.zeros(2, np.int64)
    for f in range(n_forms):
        if forms[f, F_ASSAULT] and not forms[f, F_TSKNF]:
            all_tsknf[forms[f, F_SIDE]] = 0
        any_sc[forms[f, F_SIDE]] |= forms[f, F_ANY_SC] != 0
    ho = np.zeros((n_forms, 3), np.int64)
    n_hist = 0
    for f in range(n_forms):
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        ho[f] = n_hist, n_hist + n1 * n1, n_hist + n1 * n1 + 2 * c1
        n_hist = ho[f, 2] + 8 * c1
    (tgt, tgb), (xh, xhb), (wes, web) = [(np.array(found, np.int64), np.array(bounds, np.int64))
                                        for found, bounds in lists.values()]
    fmasks = np.ascontiguousarray(arrays.fmasks)
    return Tables(units=units, src=arrays.src, gb=arrays.gb, pmask=arrays.pmask, pinfo=arrays.pinfo, pb=arrays.pb,
                  dc0=np.ascontiguousarray(units[:, U_DC]), forms=forms, fu=arrays.fu, fb=arrays.fb, fwe=arrays.fwe,
                  fweb=arrays.fweb, splash=np.ascontiguousarray(splash), trapped=arrays.trapped, rules=rules,
                  side_off=arrays.side_off, form_off=arrays.form_off,
                  sets=UnitSets(units=units, masks=masks_w.reshape(masks_w.size), fmasks=fmasks.reshape(fmasks.size),
                                wes=wes, web=web, n_words=int(n_words)),
                  base=arrays.base, ho=ho, tgt=tgt, tgb=tgb, xh=xh, xhb=xhb, all_tsknf=all_tsknf, any_sc=any_sc,
                  splashes=bool((splash > 0).any()), we=bool(rules[R_WE] != 0))


def lanes(tb: Tables, n_turn: int) -> Lanes:
    """A block's :class:`Lanes`, zeroed: views of two work buffers (:func:`_buffer_sizes`) and two row tables
    (``per_form``: FORM_ROWS rows of ``[formation * LANES + lane]``; ``per_lane``: LANE_ROWS rows of LANES)."""
    n_units, n_forms, n_src, L = tb.units.shape[0], tb.forms.shape[0], tb.src.shape[0], LANES
    n_int, n_uint = _buffer_sizes(n_units, n_forms, tb.sets.n_words, n_src, tb.we, tb.dc0)
    ibuf = np.zeros(n_int, LANE_INT)
    ubuf = np.zeros(n_uint, np.uint64)
    per_form = np.zeros((FORM_ROWS, n_forms * L), LANE_INT)
    sizes = [n_units * L, 2 * L, 2 * N_CLASSES * L, 12 * L, LV_ROWS * L, n_units]
    sizes += [W_ROWS * n_units * L, n_src * L, n_src * L] if tb.we else [0, 0, 0]
    edges = np.cumsum([0] + sizes)
    hp, kills, hits, reach_hits, lv, elig, wst, shits, sff = (ibuf[a:b] for a, b in zip(edges[:-1], edges[1:]))
    n_hist = int(tb.ho[-1, 2] + 8 * (tb.forms[-1, F_CAP] + 1)) if n_forms else 0
    return Lanes(rs=ubuf[:4 * L], alive=ubuf[4 * L:(4 + 2 * tb.sets.n_words) * L], state=ubuf[n_uint - 4:], hp=hp,
                 kills=kills, hits=hits, reach_hits=reach_hits, lv=lv, per_form=per_form,
                 per_lane=np.zeros((LANE_ROWS, L), LANE_INT), bm=per_form[FR_BM], broken=per_form[FR_BROKEN],
                 losses_bm=per_form[FR_LOSSES_BM], elig=elig, wst=wst, shits=shits, sff=sff, stk=ibuf[edges[-1]:],
                 hist=np.zeros(n_hist, np.int64), tscr=np.zeros(n_turn, np.int64))


@kernel_function
def _start_lane_trials(tb, st, run, next_t):
    """Each free lane takes the block's next trial (``LN_START``), on its own stream with ``trial_streams``;
    returns the next trial."""
    L = LANES
    live, start = st.per_lane[LN_LIVE], st.per_lane[LN_START]
    for l in range(L):
        go = np.int64(live[l] == 0 and next_t < run.n_trials)
        start[l] = go
        if go:
            if run.trial_streams:
                seed_stream(st.state, run.key0, run.key1 ^ TRIAL_STREAM_KEY, run.first_trial + next_t)
                for k in range(4):
                    st.rs[k * L + l] = st.state[k]
            next_t += 1
    return next_t


@kernel_function
def _start_trials(tb, st, run, next_t):
    """A round's start: each free lane takes the block's next trial (its stream, hit points, alive masks, formation
    state, war-engine start); returns (next trial, dice rolled, whether any lane holds a trial)."""
    L = LANES
    forms = tb.forms
    per_lane = st.per_lane
    broken0 = st.per_form[FR_BROKEN0]
    winner, margin, by_roll, rnd, live = per_lane[LN_WINNER], per_lane[LN_MARGIN], per_lane[LN_BY_ROLL], \
        per_lane[LN_ROUND], per_lane[LN_LIVE]
    fight, fight0, start = per_lane[LN_FIGHT], per_lane[LN_FIGHT0], per_lane[LN_START]
    nd = 0
    next_t = _start_lane_trials(tb, st, run, next_t)
    anylive = 0
    for l in range(L):
        go = start[l]
        winner[l] = WIN_UNRESOLVED if go else winner[l]
        margin[l] = 0 if go else margin[l]
        by_roll[l] = 0 if go else by_roll[l]
        rnd[l] = 1 if go else rnd[l]
        live[l] |= go
        st.kills[l] = 0 if go else st.kills[l]
        st.kills[L + l] = 0 if go else st.kills[L + l]
        anylive |= live[l]
    if anylive == 0:
        return next_t, nd, anylive
    for u in range(tb.units.shape[0]):
        v0 = tb.dc0[u]
        for l in range(L):
            _put(st.hp, u * L + l, v0 if _at(start, l) else _at(st.hp, u * L + l))
    if tb.we:
        nd += _we_start_lanes(st.rs, start, tb.units, st.wst)
    for s in range(2):
        for w in range(tb.sets.n_words):
            m = tb.sets.masks[(2 * w + s) * M_COLS + M_ALL]
            row = (s * tb.sets.n_words + w) * L
            for l in range(L):
                _put(st.alive, row + l, m if _at(start, l) else _at(st.alive, row + l))
    for f in range(forms.shape[0]):
        b0 = np.int64(forms[f, F_BROKEN0] != 0)
        bm0 = 0 if b0 else forms[f, F_BM0]
        for l in range(L):
            go = _at(start, l)
            _put(st.broken, f * L + l, b0 if go else _at(st.broken, f * L + l))
            _put(broken0, f * L + l, b0 if go else _at(broken0, f * L + l))
            _put(st.bm, f * L + l, bm0 if go else _at(st.bm, f * L + l))
            _put(st.losses_bm, f * L + l, 0 if go else _at(st.losses_bm, f * L + l))
    for l in range(L):
        fight[l] = live[l]
        fight0[l] = live[l]
    return next_t, nd, anylive


@kernel_function
def _after_turn(tb, st):
    """The lanes that began a turn this round: those whose engage led to an assault fight it (``fight``), the
    others end with no assault; each formation's broken flag is its state as the assault begins."""
    L = LANES
    per_lane = st.per_lane
    start, live, fight, winner = per_lane[LN_START], per_lane[LN_LIVE], per_lane[LN_FIGHT], per_lane[LN_WINNER]
    broken0 = st.per_form[FR_BROKEN0]
    for l in range(L):
        go = _at(start, l)
        _put(live, l, _at(fight, l) if go else _at(live, l))
        _put(winner, l, (WIN_UNRESOLVED if _at(fight, l) else WIN_NO_ASSAULT) if go else _at(winner, l))
    for f in range(tb.forms.shape[0]):
        for l in range(L):
            _put(broken0, f * L + l, _at(st.broken, f * L + l) if _at(start, l) else _at(broken0, f * L + l))


@inlined_function
def _assault_steps(tb, st):
    """One round's attack steps in every lane still fighting (spec §1–§4): first strike, the normal step, the early
    ends, supporting fire; each step both sides roll (§1), then each side's hits are allocated, saved and removed
    (§2: lane by lane with war-engine rules, the attacker's hits first, as the reference engine).  Returns the
    dice rolled."""
    gb, pb = tb.gb, tb.pb
    has_first = False
    has_support = False
    for g in (G_FIRST, 3 + G_FIRST):
        has_first |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    for g in (G_SUPPORT, 3 + G_SUPPORT):
        has_support |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    sf_kills = np.int64(tb.rules[R_SF_KILLS] != 0)
    fighting = st.per_lane[LN_FIGHT]
    fv = fight(tb, st)  # the steps' own view of the tables and lanes: a call passes about half of tb and st
    nd = 0
    for step in range(G_FIRST if has_first else G_NORMAL, 3):
        if step == G_SUPPORT:  # §3 early ends
            _early_ends(tb.sets, st.alive, st.lv, st.per_lane)
            if not has_support:
                break
        for side in range(2):  # §1 / §4: rolls
            nd += _roll_hits(fv, side, step)
        ck = np.int64(step != G_SUPPORT) | sf_kills
        if tb.we:  # war-engine rules: lane by lane, the attacker's hits first, as the reference engine
            wh = WeHits(tb.src, st.shits, st.sff, tb.tgt, tb.tgb, st.elig, tb.splashes)
            nd += _we_allocations(damage_state(tb, st), wh, fighting, gb, step, ck)
        else:
            for side in range(2):  # §2 allocation, saves, damage: side's units, the enemy's hits
                nd += _allocate_hits(fv, side, step, ck)
        if step == G_SUPPORT:  # §4: wiped out by supporting fire
            _supporting_fire_ends(tb.sets, st.alive, st.lv, st.per_lane)
    return nd


@inlined_function
def _one_block(tb, st, run, part, pflat, turn):
    """``run.n_trials`` assaults (or turns) of block ``run.b`` in groups of LANES lanes, from a zeroed ``st``;
    returns the dice rolled.  The lanes' generator states are seeded from the block's streams; its joint
    histograms are folded into ``part`` row ``run.b`` (``pflat``: its flat view) at the end.

    Each phase of a round is a function of its own, compiled apart: Numba's analyses of a function grow faster
    than its size, and one holding every phase was most of a cold compile."""
    _seed_lanes(st.rs, st.state, run.key0, run.key1, run.first_trial // BLOCK_TRIALS * LANES)
    prow = run.b * part.shape[1]
    nd = 0
    next_t = np.int64(0)  # an int64 from the start: plain Numba would compile _start_trials for the literal 0 too
    while True:  # one round for every lane holding a trial; a lane whose trial ended takes the next one
        next_t, k, anylive = _start_trials(tb, st, run, next_t)
        nd += k
        if anylive == 0:
            break
        if turn is not None:  # a turn scenario (rules[R_TURN]): the activations of each new trial, then its assault
            nd += turn_lanes(tb, st, turn, pflat, prow)
            _after_turn(tb, st)
        nd += _assault_steps(tb, st)
        nd += _result_roll(tb, st)
        nd += _extra_hits(tb, st)
        # a turn's withdrawal fire: after the consequences, after the rally (wargame_odds.kernels.epic.turn)
        if turn is not None:
            nd += turn_consequences(tb, st, turn, pflat, prow)
            nd += turn_end_phase(tb, st, turn, pflat, prow)
        else:
            nd += _formation_consequences(tb, st)
            nd += _end_phase(tb, st)
        _record(tb, st, pflat, prow)
    _fold_histograms(part, run.b, st.hist, tb.ho, tb.forms, tb.form_off)
    return nd


@kernel_function
def _zero_lanes(st):
    """Every array of ``st`` zeroed (a block starts from nothing)."""
    for a in (st.hp, st.kills, st.hits, st.reach_hits, st.lv, st.elig, st.wst, st.shits, st.sff, st.stk):
        a[:] = 0
    for a in (st.rs, st.alive, st.state):
        a[:] = 0
    st.per_form[:, :] = 0
    st.per_lane[:, :] = 0
    st.hist[:] = 0
    st.tscr[:] = 0


@njit(cache=True, from_python=True, nogil=True, _nrt=False)
def _run_block(tb, st, blocks, part, pflat, turn):
    """Blocks ``blocks.b0..b1`` of the run's ``blocks.n_trials`` trials (from global block ``blocks.first_block``) in
    turn, each from a zeroed ``st`` (:func:`_one_block`), into their rows of ``part``; returns the dice rolled.  One
    call per thread: Python unboxes the tables once, not once per block.  ``pflat``: a flat view of ``part`` (no
    ``reshape`` here, whose implementation made loading the cached kernel import Numba's array module, about 0.1 s
    of a warm run).  ``turn``: a turn scenario's tables (wargame_odds.kernels.epic.turn_layout.TurnTables), or None."""
    nd = 0
    for b in range(blocks.b0, blocks.b1):
        _zero_lanes(st)
        run = Run(b, min(BLOCK_TRIALS, blocks.n_trials - b * BLOCK_TRIALS), (blocks.first_block + b) * BLOCK_TRIALS,
                  blocks.key0, blocks.key1, blocks.trial_streams)
        nd += _one_block(tb, st, run, part, pflat, turn)
    return nd


def assault_kernel(tb: Tables, n_counts, key0, key1, first_block, n_trials, trial_streams, turn):
    """Counts of ``n_trials`` assaults and the dice rolled, summed over the stream blocks.

    The blocks run on Python threads (``kernels/threads.py``: Numba's thread count, without starting Numba's
    own thread pool, which this kernel does not use), each a contiguous range of them in one call of the GIL-free
    ``_run_block``.
    That keeps the block function's machine code generated once: a ``prange`` driver links its IR into
    its own module and LLVM optimises and generates all of it a second time (about a third of a cold
    compile).  A block's streams depend only on its index, so the counts do not depend on the threads.
    Scalars reach the jitted functions with fixed types.  ``turn``: the turn tables (TurnTables), or None for an
    assault scenario.  ``_run_block`` thus has two compiled variants, each compiled once: with ``turn`` None,
    Numba prunes the branch that calls ``turn_lanes`` before typing it (a branch on ``argument is not None`` is
    resolved from the argument's type), so an assault's compile includes none of the turn code; a turn scenario
    compiles its own variant on first use."""
    n_trials = np.int64(n_trials)
    n_blocks = int((n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS)
    part = np.zeros((n_blocks, n_counts), np.int64)
    flat_part = part.reshape(part.size)  # a view: the block function counts into it
    if (turn is not None) != bool(tb.rules[R_TURN]):
        raise ValueError("turn tables are given for a turn scenario (rules[R_TURN]) and only for one")
    n_turn = scratch_size(tb.units.shape[0], tb.forms.shape[0], turn.info[0, I_MAX_HITS]) if turn is not None else 0
    spans = block_spans(n_blocks)
    dice = np.zeros(max(len(spans), 1), np.int64)

    def blocks(t: int, b0: int, b1: int) -> None:
        span = Blocks(b0=np.int64(b0), b1=np.int64(b1), n_trials=n_trials, first_block=np.int64(first_block),
                      key0=np.uint64(key0), key1=np.uint64(key1), trial_streams=bool(trial_streams))
        dice[t] = _run_block(tb, lanes(tb, n_turn), span, part, flat_part, turn)

    run_spans(blocks, spans)
    return part.sum(axis=0), dice.sum()
