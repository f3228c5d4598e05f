"""Numba kernels for Epic Armageddon (NetEA) assaults and the regroup roll.

Arrays in, counts out: ``analysis/epic/engine.py`` turns a ``CompiledEpic`` into the integer tables
below and the kernel runs the procedure of ``docs/epic-engine.md`` (clauses cited as §n there, TP =
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
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from . import epic_turn  # the turn's lane steps (they use this module's helpers: imported as a module)
from .jit import njit, thread_count
from .rng import _FOUR, _INV53, _LOW32, _ONE, _SIX, _THREE, _U11, _U32, BLOCK_TRIALS, next_reg, seed_stream

NO_ROLL = 7  # a to-hit or save value no D6 reaches

# Unit table columns (int64[N, U_COLS]); units in allocation order (CompiledEpic.units).
# U_SAVE = min(armour, cover); U_SNIPE = a sniper's target (Inspiring, Leader or Supreme Commander);
# U_LOSS_BM = its losses give a winner BMs (not Expendable, unless its whole formation is).
# U_ASSAULT: of an assault formation; U_TARGET: and directly engaged (bc / ff: hits can reach it);
# U_BCT: and bc, fighting in contact (not a firefighting Skimmer / Support Craft); U_INSPC: an Inspiring unit that counts for the result (§5, switch `inspiring`);
# U_SIMPLE: neither Reinforced Armour nor Invulnerable Save (an ordinary hit = one save roll);
# U_WORD, U_BIT: its bit in its side's alive masks (unit = side_base[side] + 64 * word + bit); U_WE: type WE.
# War-engine rules (read only by the lane-by-lane path of scenarios with R_WE; docs/epic-engine.md §10):
# U_VOID void shields, U_PF_FIX / U_PF_D3 / U_PF_D6 power fields (K + D3s + D6s, rolled at the start of each
# trial), U_SHADOW shadowfields, U_HOLO holofield, U_KNIGHT knight shield, U_INV_ON the invulnerable-type
# save's target (6 invulnerable, 5 deflector, 4 living metal; NO_ROLL none) and U_INV_DEG once a critical has
# taken the deflector shield away, U_CRIT its critical kind (CRIT_*), U_CRIT_DMG the points it does,
# U_CRIT_THEN a degraded unit's later kind, U_COVER its cover save, U_REGEN regeneration, U_SPLASH_ON the D6 a
# critical's splash hits on (0: none) and U_SPLASH_KIND the kind of those hits (0 ordinary,
# 1 macro-weapon, 2 titan killer (1), 3 no save; a self_hit critical's hits on itself too), U_HOLO_LOST its
# degrade critical takes the holofield away; U_DISRUPT_BM a disrupt hit on it gives a winner a BM (U_LOSS_BM:
# its losses do; 0 for an Automaton or Automata unit), U_AUTOMATON it may save a broken formation's no-save
# hit, U_NECRON it may return in the end phase; U_FURTHER_ON an extra_damage critical's further D6 (0: none),
# U_SELF_HITS / U_SELF_ON a self_hit critical's D6 and the roll that hits;
# U_CHARS its attached characters that added damage capacity (a Land Train's battlecars: a lose_character
# critical removes one at random), their DC in U_CH_DC + i and void shields in U_CH_VS + i (i < U_CHARS).
U_FORM, U_ENG, U_SAVE, U_ARMOUR, U_DC, U_RA, U_INV, U_FEARLESS, U_INSPIRING, U_LEADER, U_SC, U_SPEED0, \
    U_SNIPE, U_LOSS_BM, U_SIDE, U_ASSAULT, U_TARGET, U_BCT, U_INSPC, U_SIMPLE, U_WORD, U_BIT, U_WE, \
    U_VOID, U_PF_FIX, U_PF_D3, U_PF_D6, U_SHADOW, U_HOLO, U_KNIGHT, U_INV_ON, U_INV_DEG, U_CRIT, U_CRIT_DMG, \
    U_CRIT_THEN, U_COVER, U_REGEN, U_SPLASH_ON, U_SPLASH_KIND, U_HOLO_LOST, U_DISRUPT_BM, \
    U_AUTOMATON, U_NECRON, U_FURTHER_ON, U_SELF_HITS, U_SELF_ON, U_CHARS = range(47)
MAX_CHARACTERS = 4  # per unit (analysis/epic/model.py: at most 4 characters per group)
U_CH_DC = 47
U_CH_VS = U_CH_DC + MAX_CHARACTERS
U_COLS = U_CH_VS + MAX_CHARACTERS
# Attack-source table columns (int64[S, S_COLS]): a unit's main dice or one extra-attack line.
# S_BC: the unit is engaged bc (uses S_VC while in contact).  S_REACH: where the row's hits may land while
# the unit is in contact: REACH_ANY (every directly engaged enemy unit), or for a war engine's rows (TP 3.1.2)
# REACH_CONTACT (its CC dice: only enemy units fighting in base contact, U_BCT) or REACH_NON_CONTACT (its FF
# dice: only the others); out of contact every row reaches any unit.
# War-engine rules (R_WE; docs/epic-engine.md §10): S_FF_VC its hits at S_VC are firefight hits too (those at
# S_VN always are: void shields, power fields and shadowfields stop them), S_LANCE, S_IC ignore cover,
# S_DISRUPT, S_TK_N / S_TK_SIDES / S_TK_PLUS a titan killer's damage against a war engine (N dice + K),
# S_SUPPORT supporting fire, S_DVC / S_DVN its to-hit values once a critical has degraded its unit; S_SPARE -1
# for an extra-attack line, else (main dice of a war engine, whose count is its starting DC) how many points of
# starting DC its unit may lose with its characters before this row rolls fewer dice (the FF rest of the dice
# goes first: TP 3.1.2; spec §10.4 lose_character).
S_UNIT, S_N, S_D3, S_VC, S_VN, S_CLASS, S_BC, S_REACH, S_FF_VC, S_LANCE, S_IC, S_DISRUPT, S_TK_N, S_TK_SIDES, \
    S_TK_PLUS, S_SUPPORT, S_DVC, S_DVN, S_SPARE = range(19)
S_COLS = 19
# Critical kinds (docs/epic-engine.md §10.4), U_CRIT.
CRIT_NONE, CRIT_DESTROYED, CRIT_EXTRA_DAMAGE, CRIT_BREACH, CRIT_FIRE, CRIT_DEGRADE, CRIT_SELF_HIT, \
    CRIT_LOSE_CHARACTER = range(8)
REACH_ANY, REACH_CONTACT, REACH_NON_CONTACT = range(3)
# Source groups (rows of the source table are sorted by group): side * 3 + step.
# Dice pools: the sources that roll one D6 (no D3) are pooled per group by (to-hit in contact, to-hit not
# in contact, hit class) as a unit mask (``pmask`` uint64[P, W], bounds ``pb`` by group, ``pinfo`` int64[P,
# P_COLS]); a pool rolls one D6 per living unit of its mask.  Other sources stay rows of ``src``.
P_VC, P_VN, P_CLASS = range(3)
P_COLS = 3
G_FIRST, G_NORMAL, G_SUPPORT = 0, 1, 2
# Hit classes: kind (0 ordinary, 1 macro-weapon, 2 titan-killer) + 3 if sniper.
N_CLASSES = 6
# Formation table columns (int64[F, F_COLS]).
# F_ANY_SC / F_ANY_LEADER: the formation has a Supreme Commander / a Leader (skips counting them).
# F_N: its units; F_SIZE0: its starting size (WE = starting DC); F_SPEED0: it has a non-Fearless speed-0
# bc / ff unit (withdrawal kills it); F_ANY_WE: it has a war engine; F_WE_WD: damage each of its
# non-Fearless war engines takes when it withdraws (enemy units within 15 cm, TP 3.2.4), 0 if it has none.
# F_OUTSIDE: a turn scenario's formation that takes no part in the assault (docs/epic-turn.md §2).
F_SIDE, F_ASSAULT, F_INIT, F_BM0, F_BROKEN0, F_TSKNF, F_MOB, F_ENEMY30, F_CAP, F_ANY_SC, F_ANY_LEADER, \
    F_N, F_SIZE0, F_SPEED0, F_ANY_WE, F_WE_WD, F_OUTSIDE = range(17)
F_COLS = 17
# Rule switches (int64[R_COLS]).
# R_WE: the scenario uses war-engine rules (shields, fields, criticals, titan-killer dice, special saves,
# lance, ignore cover, disrupt): its hits are resolved lane by lane (_we_allocations_lane).
# R_TURN: a turn scenario: each trial's activations run first (kernels/epic_turn.py), then its assault if any.
R_SUM, R_NAT1, R_MAX_ROUNDS, R_SF_KILLS, R_INSP_ENGAGED, R_LEADERS, R_SC_REROLL, R_RALLY, R_WE, R_TURN = range(10)
R_COLS = 10
# Side-level count offsets (int64[O_COLS]); O_NO_ASSAULT: a turn's trials without an assault.
O_ATT, O_DEF, O_NONE, O_UNRES, O_NOROLL, O_ROUNDS, O_MARGIN, O_MAX_MARGIN, O_NO_ASSAULT = range(9)
O_COLS = 9
# Per-formation count offsets (int64[F, FO_COLS]).
# FO_CRIT .. FO_SH_E: the war-engine results of a formation with war engines or shielded units (spec §10.9).
FO_DESTROYED, FO_BROKEN_A, FO_BROKEN_E, FO_TESTED, FO_PASSED, FO_CAS, FO_CAS_A, FO_BM_A, FO_BM_E, FO_CRIT, \
    FO_DMG_A, FO_DMG_E, FO_SH_A, FO_SH_E = range(14)
FO_COLS = 14
# Unit sets as bit masks (uint64[2, M_COLS, W] per side, W words of 64 units; a formation's uint64[F, W]):
# every unit of the side (M_ALL), of its assault formations (M_ASSAULT), directly engaged ones (M_TARGET,
# in allocation order), bc ones that fight in contact (M_BC: their enemy is in contact), Inspiring ones that count for the result (M_INSP), war engines
# (M_WE), Leaders (M_LEADER), Supreme Commanders (M_SC), non-Fearless units of its assault formations
# (M_XHIT, those extra hits reach).  The living units are ``alive[w, side]``: counts are popcounts (a WE
# counting its starting DC).
M_ALL, M_ASSAULT, M_TARGET, M_BC, M_INSP, M_WE, M_LEADER, M_SC, M_XHIT = range(9)
M_COLS = 9

BC, OUT = 0, 2
ATTACKER, DEFENDER = 0, 1
WIN_ATT, WIN_DEF, WIN_NONE, WIN_UNRESOLVED = O_ATT, O_DEF, O_NONE, O_UNRES  # winner code = its count slot
WIN_NO_ASSAULT = O_NO_ASSAULT

#: Trial streams: trial ``t`` draws from the stream ``(key0, key1 ^ TRIAL_STREAM_KEY, t)``.
TRIAL_STREAM_KEY = np.uint64(0x5452494C5354524D)
_ZERO = np.uint64(0)


@intrinsic
def _popcount(typingctx, x):
    """Set bits of a uint64 (LLVM ctpop), as int64."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return types.int64(types.uint64), codegen


@intrinsic
def _lowest_bit(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz), as int64."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.uint64), codegen


@intrinsic
def _at(typingctx, a, i):
    """``a.flat[i]`` of a C-contiguous integer array, for ``0 <= i < a.size``: one load, without the
    negative-index wraparound and shape reads of ``a[...]`` (which, for the ~40 arrays of the block
    function, cost registers and stack reloads)."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        return builder.load(builder.gep(ary.data, [idx], inbounds=True))
    return a.dtype(a, i), codegen


@intrinsic
def _put(typingctx, a, i, v):
    """``a.flat[i] = v`` (as ``_at``)."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        val = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        builder.store(val, builder.gep(ary.data, [idx], inbounds=True))
        return context.get_dummy_value()
    return types.none(a, i, v), codegen


# Builtin min / max compile to calls here (which spill every register): these small functions are
# inlined by LLVM instead. No helper uses Numba's IR-level inline="always": it made Numba type every
# helper again at each call site (~170 s CPU and 1.6 GB for a cold compile, against ~100 s and 0.5 GB).

@njit(cache=True)
def _min(a, b):
    return a if a < b else b


@njit(cache=True)
def _max(a, b):
    return a if a > b else b


@njit(cache=True)
def _bump(a, i, v):
    """``a.flat[i] += v``."""
    _put(a, i, _at(a, i) + v)


LANES = 128
LANE_INT = np.int32  # the integer rows of _run_block (see the module docstring)
# Rows of the per-lane scratch array ``lv`` (one array with constant row offsets, so that LLVM can
# vectorise the lane loops without runtime alias checks between them).
# LV_SIZE: a formation's size (WE = starting DC); LV_SCR0 / LV_SCR1: each side's Supreme Commander re-rolls left.
LV_A, LV_HH, LV_NN, LV_UN, LV_DEAD, LV_EX, LV_HIT, LV_CNT, LV_BMA, LV_BMD, LV_RAWA, LV_RAWD, \
    LV_NATT, LV_NDEF, LV_INSA, LV_INSD, LV_LEAD, LV_MOD, LV_OK, LV_TEST, LV_KILLS, LV_DFD, LV_ATT, LV_ATTT, \
    LV_SLOT0, LV_SLOT1, LV_SLOT2, LV_SIZE, LV_SCR0, LV_SCR1 = range(30)
LV_ROWS = 30
# The rows of _run_block's ``per_form`` table (each ``[formation * LANES + lane]``), by index: 0 bm, 1 broken,
# 2 losses_bm, 3 tested, 4 passed, 5 bm_a, 6 broken_a, 7 fa, 8 cas_a, 9 dmg_a, 10 sh_a, 11 broken0; and of its
# ``per_lane`` table (each ``[lane]``): 0 winner, 1 margin, 2 by_roll, 3 rnd, 4 live, 5 fight, 6 fight0, 7 ended,
# 8 contact, 9 val, 10 nn, 11 h, 12 d, 13 d2, 14 d3, 15 d4, 16 nmw, 17 ntk, 18 cap, 19 qq, 20 rr, 21 prefix,
# 22 snipe, 23 snipe_un, 24 loser, 25 cons, 26 withdrew, 27 start, 28 test_die, 29 test_need (a turn's action
# tests, kernels.epic_turn.turn_lanes).  The phase functions take the tables and name the rows they use.
FORM_ROWS = 12
LANE_ROWS = 30


# The generator: lane l's xoshiro256** state is rs[l], rs[L + l], rs[2L + l], rs[3L + l].

@njit(cache=True)
def _word(rs, l):
    w, s0, s1, s2, s3 = next_reg(_at(rs, l), _at(rs, LANES + l), _at(rs, 2 * LANES + l), _at(rs, 3 * LANES + l))
    _put(rs, l, s0)
    _put(rs, LANES + l, s1)
    _put(rs, 2 * LANES + l, s2)
    _put(rs, 3 * LANES + l, s3)
    return w


@njit(cache=True)
def _die(rs, l, sides, threshold):
    """One die of ``sides`` faces for lane ``l`` (Lemire on the high 32 bits, exact rejection)."""
    m = (_word(rs, l) >> _U32) * sides
    while (m & _LOW32) < threshold:
        m = (_word(rs, l) >> _U32) * sides
    return np.int64(m >> _U32) + 1


@njit(cache=True)
def _roll(rs, out, sides, threshold, need, off, j):
    """One die into ``out[l]`` for each lane ``l`` with ``j < need[off + l]``; the other lanes' generators do
    not move, so a trial's dice depend only on its own stream.  (A rare rejected draw, marked 0, is redone
    lane by lane.)  Returns the number of dice rolled."""
    rej = _ZERO
    n = 0
    for l in range(LANES):
        s0 = _at(rs, l)
        s1 = _at(rs, LANES + l)
        s2 = _at(rs, 2 * LANES + l)
        s3 = _at(rs, 3 * LANES + l)
        w, n0, n1, n2, n3 = next_reg(s0, s1, s2, s3)
        use = j < _at(need, off + l)
        n += use
        _put(rs, l, n0 if use else s0)
        _put(rs, LANES + l, n1 if use else s1)
        _put(rs, 2 * LANES + l, n2 if use else s2)
        _put(rs, 3 * LANES + l, n3 if use else s3)
        m = (w >> _U32) * sides
        bad = use & ((m & _LOW32) < threshold)
        _put(out, l, 0 if bad else np.int64(m >> _U32) + 1)
        rej |= np.uint64(bad)
    if rej != _ZERO:
        for l in range(LANES):
            if _at(out, l) == 0:
                _put(out, l, _die(rs, l, sides, threshold))
    return n


@njit(cache=True)
def _uniform(rs, l):
    return np.float64(_word(rs, l) >> _U11) * _INV53


@njit(cache=True)
def _abit(alive, side, w, l, n_words):
    return _at(alive, (side * n_words + w) * LANES + l)


@njit(cache=True)
def _clear_unit(alive, units, u, l, n_words, dead):
    """Clear unit ``u``'s alive bit in lane ``l`` if ``dead`` (0 / 1)."""
    side = _at(units, u * U_COLS + U_SIDE)
    i = (side * n_words + _at(units, u * U_COLS + U_WORD)) * LANES + l
    bit = np.uint64(dead) << np.uint64(_at(units, u * U_COLS + U_BIT))
    _put(alive, i, _at(alive, i) & ~bit)


@njit(cache=True)
def _rows_living(alive, masks, fmasks, side, kind, f, out, off, n_words, wes, web, units, weighted):
    """``out[off + l]`` = living units of ``side`` in each lane, only those of set ``kind`` if ``kind`` >= 0
    and of formation ``f`` if ``f`` >= 0 (a WE counting its starting DC if ``weighted``); lane loops
    without calls, so LLVM vectorises them."""
    for l in range(LANES):
        _put(out, off + l, 0)
    for w in range(n_words):
        m = ~_ZERO
        if kind >= 0:
            m &= _at(masks, (2 * w + side) * M_COLS + kind)
        if f >= 0:
            m &= _at(fmasks, f * n_words + w)
        row = (side * n_words + w) * LANES
        for l in range(LANES):
            _put(out, off + l, _at(out, off + l) + _popcount(_at(alive, row + l) & m))
    if weighted:
        for k in range(_at(web, side), _at(web, side + 1)):
            u = _at(wes, k)
            w = _at(units, u * U_COLS + U_WORD)
            sh = np.uint64(_at(units, u * U_COLS + U_BIT))
            if f >= 0 and _at(units, u * U_COLS + U_FORM) != f:
                continue
            if kind >= 0 and (_at(masks, (2 * w + side) * M_COLS + kind) >> sh) & _ONE == _ZERO:
                continue
            extra = _at(units, u * U_COLS + U_DC) - 1
            row = (side * n_words + w) * LANES
            for l in range(LANES):
                _put(out, off + l, _at(out, off + l) + extra * np.int64((_at(alive, row + l) >> sh) & _ONE))


@njit(cache=True)
def _rows_count(alive, masks, fmasks, side, kind, out, off, n_words, wes, web, units, weighted):
    """``_rows_living`` over all of ``side``'s formations."""
    _rows_living(alive, masks, fmasks, side, kind, -1, out, off, n_words, wes, web, units, weighted)


@njit(cache=True)
def _rows_any(alive, masks, fmasks, side, kind, out, off, n_words, wes, web, units):
    """``out[off + l]`` = 1 if ``side`` has a living unit in set ``kind`` in lane ``l``, else 0."""
    _rows_living(alive, masks, fmasks, side, kind, -1, out, off, n_words, wes, web, units, False)
    for l in range(LANES):
        _put(out, off + l, np.int64(_at(out, off + l) > 0))


@njit(cache=True)
def _rows_fcount(alive, fmasks, masks, forms, f, kind, out, off, n_words, wes, web, units, weighted):
    """``_rows_living`` of formation ``f`` (in set ``kind`` unless ``kind`` < 0)."""
    _rows_living(alive, masks, fmasks, _at(forms, f * F_COLS + F_SIDE), kind, f, out, off, n_words, wes, web,
                 units, weighted)


@njit(cache=True)
def _assault_sides_living(alive, masks, fmasks, lv, n_words, wes, web, units):
    """``lv`` rows LV_DFD / LV_ATT: 1 in each lane where the defenders / attackers have a living unit in
    an assault formation (the §3 and §4 early ends)."""
    _rows_any(alive, masks, fmasks, DEFENDER, M_ASSAULT, lv, LV_DFD * LANES, n_words, wes, web, units)
    _rows_any(alive, masks, fmasks, ATTACKER, M_ASSAULT, lv, LV_ATT * LANES, n_words, wes, web, units)


@njit(cache=True)
def _end_lanes(l, end, wn, winner, fight, live):
    """Lane ``l``'s trial ends now (``end`` 0 / 1) with winner code ``wn``: no roll, no more rounds."""
    _put(winner, l, wn if end else _at(winner, l))
    _put(fight, l, _at(fight, l) & (1 - end))
    _put(live, l, _at(live, l) & (1 - end))


@njit(cache=True)
def _unsaved_lane(rs, l, cls, u, units):
    """(1 if one hit of class ``cls`` on unit ``u`` is not saved, dice rolled) in lane ``l`` (spec §2)."""
    sniper = cls >= 3
    kind = cls - 3 * sniper
    failed = True
    nd = 0
    if kind == 0:
        target = _at(units, u * U_COLS + U_SAVE) + sniper
        if target < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < target
        armour = _at(units, u * U_COLS + U_ARMOUR) + sniper  # the re-roll is on armour (TP-FAQ Reinforced Armour)
        if _at(units, u * U_COLS + U_RA) and failed and armour < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < armour
    elif kind == 1 and _at(units, u * U_COLS + U_RA):
        target = _at(units, u * U_COLS + U_ARMOUR) + sniper
        if target < NO_ROLL:
            nd += 1
            failed = _die(rs, l, _SIX, _FOUR) < target
    if _at(units, u * U_COLS + U_INV) and failed:
        nd += 1
        failed = _die(rs, l, _SIX, _FOUR) < 6
    return np.int64(failed), nd


@njit(cache=True)
def _general_hits(rs, l, u, units, n):
    """(unsaved hits, dice) of ``n`` ordinary hits on unit ``u`` in lane ``l`` (Reinforced Armour or
    Invulnerable Save: a save may take more than one roll)."""
    un = 0
    nd = 0
    for _ in range(n):
        f, k = _unsaved_lane(rs, l, 0, u, units)
        un += f
        nd += k
    return un, nd


@njit(cache=True)
def _round_robin_lane(l, side, n_any, n_contact, n_other, units, hp, tgt, tgb, taken):
    """The round-robin of one allocation on ``side`` in lane ``l``, decided before its saves: ``n_any`` hits any of
    its living directly engaged units may take, ``n_contact`` a war engine's hits that only those fighting in base
    contact may take, ``n_other`` those only the others may take.  Pass after pass, each unit in allocation order
    that may take a hit left takes 1, a war engine a block of its starting DC, from the hits only its kind of
    unit may take first: one count per unit for every hit of the kind (TP 1.9.6, 1.12.5, 3.1.2, 3.2.1; spec §2).
    ``taken[k - tgb[side]]``: the hits target ``k`` takes.  Hits no unit may take are lost."""
    k0 = _at(tgb, side)
    k1 = _at(tgb, side + 1)
    for k in range(k0, k1):
        _put(taken, k - k0, 0)
    left = n_any + n_contact + n_other
    while left > 0:
        took = 0
        for k in range(k0, k1):
            u = _at(tgt, k)
            if _at(hp, u * LANES + l) == 0:
                continue
            contact = _at(units, u * U_COLS + U_BCT)
            own = n_contact if contact else n_other
            t = _min(_at(units, u * U_COLS + U_DC), own + n_any)
            from_own = _min(t, own)
            n_contact -= from_own * contact
            n_other -= from_own * (1 - contact)
            n_any -= t - from_own
            _put(taken, k - k0, _at(taken, k - k0) + t)
            took += t
        if took == 0:
            break
        left -= took
    return


@njit(cache=True)
def _allocation_lane(rs, l, side, cls, n_any, n_contact, n_other, units, hp, alive, losses_bm, tgt, tgb, n_words,
                     taken):
    """One allocation of hits of class ``cls`` (no sniper) on ``side`` in lane ``l`` (_round_robin_lane), then their
    saves and damage unit by unit, casualties removed (TP 1.9.6, 1.12.5, 3.1.2; spec §2).  Returns (damage
    inflicted, dice rolled)."""
    inflicted = 0
    nd = 0
    _round_robin_lane(l, side, n_any, n_contact, n_other, units, hp, tgt, tgb, taken)
    k0 = _at(tgb, side)
    for k in range(k0, _at(tgb, side + 1)):
        n = _at(taken, k - k0)
        if n == 0:
            continue
        u = _at(tgt, k)
        hpu = _at(hp, u * LANES + l)
        unsaved = 0
        for _ in range(n):
            f, k2 = _unsaved_lane(rs, l, cls, u, units)
            unsaved += f
            nd += k2
        done = _min(unsaved, hpu)
        _put(hp, u * LANES + l, hpu - done)
        fl = _at(units, u * U_COLS + U_FORM) * LANES + l
        _put(losses_bm, fl, _at(losses_bm, fl) + done * _at(units, u * U_COLS + U_LOSS_BM))
        inflicted += done
        _clear_unit(alive, units, u, l, n_words, np.int64(done == hpu and done > 0))
    return inflicted, nd


@njit(cache=True)
def _snipe_lane(rs, l, side, hits, hs, units, alive, masks, base, n_words):
    """(target, unsaved hits, dice) of the sniper hits on ``side`` in lane ``l``."""
    snipe = -1
    first = -1
    for w in range(n_words):
        m = _abit(alive, side, w, l, n_words) & _at(masks, (2 * w + side) * M_COLS + M_TARGET)
        while m != _ZERO:
            u = _at(base, side) + 64 * w + _lowest_bit(m)
            m &= m - _ONE
            if first < 0:
                first = u
            if _at(units, u * U_COLS + U_SNIPE):
                snipe = u
                break
        if snipe >= 0:
            break
    if snipe < 0:
        snipe = first
    unsaved = 0
    nd = 0
    for cls in range(3, N_CLASSES):
        for _ in range(_at(hits, (hs * N_CLASSES + cls) * LANES + l)):
            f, k = _unsaved_lane(rs, l, cls, snipe, units)
            unsaved += f
            nd += k
    return snipe, unsaved, nd


@njit(cache=True)
def _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
    """Can formation ``f``'s withdrawal cost it anything (:func:`_withdraw_lane`): trapped units, war-engine damage,
    or speed-0 units that die (``speed_zero_die``)?"""
    return _at(trapped, f) > 0.0 or _at(forms, f * F_COLS + F_WE_WD) > 0 or (
        speed_zero_die and _at(forms, f * F_COLS + F_SPEED0) != 0)


@njit(cache=True)
def _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, speed_zero_die, forms, alive, n_words, wst, n_units, mode,
                   splashes, splash, n_forms, losses_bm, kills, bm, broken, stk):
    """Withdrawal of formation ``f`` in lane ``l`` (spec §6.2; a war engine's damage rolls for criticals,
    booked as ``mode`` says, spec §10.4).  Returns the dice rolled for criticals and splashes."""
    p = _at(trapped, f)
    we_damage = _at(forms, f * F_COLS + F_WE_WD)
    nd = 0
    if _withdrawal_can_cost(trapped, forms, f, speed_zero_die):
        for k in range(_at(fb, f), _at(fb, f + 1)):
            u = _at(fu, k)
            if _at(hp, u * LANES + l) == 0 or _at(units, u * U_COLS + U_FEARLESS):
                continue
            kill = False
            if speed_zero_die and _at(units, u * U_COLS + U_SPEED0) and _at(units, u * U_COLS + U_ENG) != OUT:
                kill = True
            elif _at(units, u * U_COLS + U_WE):  # 1 damage per enemy unit within 15 cm, no save (TP 3.2.4)
                nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, we_damage, mode, 0, units, hp, wst, n_units, alive,
                                       n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
            elif p > 0.0:
                kill = _uniform(rs, l) < p
            if kill:
                _put(hp, u * LANES + l, 0)
                _clear_unit(alive, units, u, l, n_words, 1)
    return nd


# -- war-engine rules, lane by lane (scenarios with R_WE; docs/epic-engine.md §10, cited as spec §10.n; the
# reference engine's steps are analysis/epic/war_engines.py).  Per-unit state rows of ``wst``:
# [(row * n_units + u) * LANES + lane].  W_DIED: when it was destroyed (a number that grows with each death in
# the block; splash victims are the units living when a splash reaches their formation).  W_LOST_DC /
# W_LOST_VOID: the starting DC and void shields it lost with its characters (lose_character), W_LOST_CHARS
# which of them (bit i: its character i, units column U_CH_DC + i); W_BLOCK its block in the allocation under
# way (its starting DC when the allocation began: the hits are allocated before any is resolved).
W_VOID, W_FIELD, W_SHADOW, W_CRIT, W_BREACH, W_FIRE, W_DEGRADED, W_DIED, W_LOST_DC, W_LOST_VOID, \
    W_LOST_CHARS, W_BLOCK = range(12)
W_ROWS = 12
# Where damage is booked (_book_lane): during the fight (kills and the losses a winner takes as BMs), after
# it (losses only: a splash from a war engine destroyed by extra hits may reach the winner), in the end phase
# (BMs on the unit's unbroken formation; critical effects wait for the next end phase), or in a turn's shooting
# attack (every point's BM held in ``losses_bm`` for kernels.epic_turn to place: docs/epic-turn.md §3.13).
BOOK_FIGHT, BOOK_LOSSES, BOOK_END_PHASE, BOOK_SHOT = range(4)
# Damage with its consequences (_we_resolve_lane) starts from a hit (shields and saves first), from points on
# the hull, or from a critical's splash.  It runs the reference engine's nested steps (a critical's effect at
# once, before the next point: TP 3.2.3) on an explicit stack ``stk``: stk[0] the death counter, then frames of
# FRAME ints (kind, unit, a, b, c, d): T_HULL (a points left, b 1 if they place BMs), T_FURTHER (an extra_damage
# critical's further D6), T_SELF (a self-hit D6 left), T_SPLASH (a formation, b its next unit, c victims left
# there, d the death counter when its victims were chosen), T_LOSE (a lose_character critical's random
# character).  A run holds at most 1 + 2 × the damage capacity of all units frames (each frame past the first
# comes from a critical, at most two of them live at once, and each critical from a point of damage): the stack
# is sized so (_stack_frames).
E_HIT, E_HULL, E_SPLASH = range(3)
T_HULL, T_FURTHER, T_SELF, T_SPLASH, T_LOSE = range(5)
FRAME = 6
# A hit's flags (``how``): a sniper's, lance, ignore cover, supporting fire, firefight (shields stop it), disrupt.
H_SNIPER, H_LANCE, H_IC, H_SUPPORT, H_FF, H_DISRUPT = 1, 2, 4, 8, 16, 32


@njit(cache=True)
def _stack_frames(dc0):
    """Frames of the _we_resolve_lane stack: 1 + 2 × the starting damage capacity of all units (``dc0``)."""
    total = 0
    for u in range(dc0.size):
        total += _at(dc0, u)
    return 1 + 2 * total


@njit(cache=True)
def _wat(wst, row, u, l, n_units):
    return _at(wst, (row * n_units + u) * LANES + l)


@njit(cache=True)
def _wput(wst, row, u, l, n_units, v):
    _put(wst, (row * n_units + u) * LANES + l, v)


@njit(cache=True)
def _d6(rs, l):
    return _die(rs, l, _SIX, _FOUR)


@njit(cache=True)
def _we_start_lane(rs, l, units, wst, n_units):
    """A trial's war-engine state in lane ``l``: shields and shadowfields up, power-field dice rolled once
    (spec §10.8.5), no critical effect yet.  Returns the dice rolled."""
    nd = 0
    for u in range(n_units):
        fields = _at(units, u * U_COLS + U_PF_FIX)
        for _ in range(_at(units, u * U_COLS + U_PF_D3)):
            fields += _die(rs, l, _THREE, _ONE)
        for _ in range(_at(units, u * U_COLS + U_PF_D6)):
            fields += _d6(rs, l)
        nd += _at(units, u * U_COLS + U_PF_D3) + _at(units, u * U_COLS + U_PF_D6)
        _wput(wst, W_VOID, u, l, n_units, _at(units, u * U_COLS + U_VOID))
        _wput(wst, W_FIELD, u, l, n_units, fields)
        _wput(wst, W_SHADOW, u, l, n_units, _at(units, u * U_COLS + U_SHADOW))
        for row in (W_CRIT, W_BREACH, W_FIRE, W_DEGRADED, W_DIED, W_LOST_DC, W_LOST_VOID, W_LOST_CHARS):
            _wput(wst, row, u, l, n_units, 0)
    return nd


@njit(cache=True)
def _book_lane(units, u, l, points, markers, mode, ck, losses_bm, kills, bm, broken):
    """Book ``points`` of damage done to unit ``u`` in lane ``l`` (``markers`` of them placing BMs if its
    formation wins, an Automaton's none): losses until the end phase, and in the fight kills for the other side
    (times ``ck``: 0 for supporting fire whose kills do not count; none for Automata); in the end phase, BMs on
    its unbroken formation (spec §6.4, §10.4, §10.6, §10.7; TP-SR Automaton, Automata); in a turn's shooting
    attack (BOOK_SHOT), every marker in ``losses_bm`` for kernels.epic_turn to place (docs/epic-turn.md §3.13)."""
    fl = _at(units, u * U_COLS + U_FORM) * LANES + l
    if mode == BOOK_SHOT:  # a BM per point, Expendable or not (analysis.epic.shooting.AttackState.book_damage)
        _put(losses_bm, fl, _at(losses_bm, fl) + markers)
    elif mode != BOOK_END_PHASE:
        _put(losses_bm, fl, _at(losses_bm, fl) + markers * _at(units, u * U_COLS + U_LOSS_BM))
    if mode == BOOK_FIGHT:
        kl = (1 - _at(units, u * U_COLS + U_SIDE)) * LANES + l
        _put(kills, kl, _at(kills, kl) + points * ck)
    elif mode == BOOK_END_PHASE and _at(broken, fl) == 0:
        _put(bm, fl, _at(bm, fl) + points)


@njit(cache=True)
def _we_saved_lane(rs, l, u, units, kind, sniper, lance, ignore_cover, support, main, wst, n_units, invulnerable):
    """(1 if one hit (or one titan-killer point) on unit ``u`` is saved, dice) in lane ``l`` (spec §10.3): the
    main save (armour or cover; a holofield's 3+ or a knight shield's unmodified 4+ instead; none with
    ``main`` false), the Reinforced Armour re-roll on armour (only against ordinary hits without lance), then
    the invulnerable-type save (6+; deflector 5+, living metal 4+) unless ``invulnerable`` is false.
    ``kind`` 3: no save at all."""
    if kind == 3:
        return 0, 0
    worse = np.int64(sniper)
    armour = _min(_at(units, u * U_COLS + U_ARMOUR) + worse, NO_ROLL)
    ra = _at(units, u * U_COLS + U_RA) != 0
    degraded = _wat(wst, W_DEGRADED, u, l, n_units) != 0
    holo = _at(units, u * U_COLS + U_HOLO) != 0 and not (degraded and _at(units, u * U_COLS + U_HOLO_LOST))
    nd = 0
    failed = True
    if main:
        if holo:
            target = _min(3 + worse, NO_ROLL)
        elif _at(units, u * U_COLS + U_KNIGHT) and support == 0:
            target = 4
        elif kind == 0:
            cover = NO_ROLL if ignore_cover else _min(_at(units, u * U_COLS + U_COVER) + worse, NO_ROLL)
            target = _min(armour, cover)
        elif kind == 1 and ra:
            target = armour
        else:
            target = NO_ROLL
        if target < NO_ROLL:
            nd += 1
            failed = _d6(rs, l) < target
        if failed and ra and kind == 0 and not lance and armour < NO_ROLL:
            nd += 1
            failed = _d6(rs, l) < armour
    inv = _at(units, u * U_COLS + (U_INV_DEG if degraded else U_INV_ON)) if invulnerable else NO_ROLL
    if failed and inv < NO_ROLL:
        nd += 1
        failed = _d6(rs, l) < inv
    return np.int64(not failed), nd


@njit(cache=True)
def _shields_lane(l, u, points, wst, n_units):
    """Void shields, then power fields, stop one of a hit's ``points`` each on unit ``u`` in lane ``l``; what is
    left is absorbed whole by a shadowfield (TP-SR Imperial Void Shields, Power Fields, Dark Eldar Technology;
    spec §10.2).  Returns the points left for the saves."""
    for row in (W_VOID, W_FIELD):
        s = _wat(wst, row, u, l, n_units)
        down = _min(s, points)
        _wput(wst, row, u, l, n_units, s - down)
        points -= down
    if points == 0:
        return 0
    s = _wat(wst, W_SHADOW, u, l, n_units)
    if s > 0:
        _wput(wst, W_SHADOW, u, l, n_units, s - 1)
        return 0
    return points


@njit(cache=True)
def _we_hit_lane(rs, l, u, kind, how, damage, units, wst, n_units):
    """Shields and saves against one hit on living unit ``u`` in lane ``l`` (spec §10.2, §10.3, §10.5): ``kind``
    0 ordinary, 1 macro-weapon, 2 titan killer, 3 no save (a splash); ``how`` its H_* flags; ``damage`` its
    points (a titan-killer hit on a war engine: rolled at allocation, else 1).  A firefight hit first takes down
    void shields, then power fields, one per point, and what is left is absorbed whole by a shadowfield;
    close-combat hits go straight through.  Each point left is saved on its own, except that a holofield saves
    a hit of more than one point whole (and its points then take only the invulnerable save).  Returns (points
    that reach the hull, 1 if the hit got past the shields, dice rolled)."""
    points = damage
    if how & H_FF:
        points = _shields_lane(l, u, points, wst, n_units)
        if points == 0:
            return 0, 0, 0
    sniper = (how & H_SNIPER) != 0
    lance = (how & H_LANCE) != 0
    ic = (how & H_IC) != 0
    support = np.int64((how & H_SUPPORT) != 0)
    nd = 0
    degraded = _wat(wst, W_DEGRADED, u, l, n_units) != 0
    holo = _at(units, u * U_COLS + U_HOLO) != 0 and not (degraded and _at(units, u * U_COLS + U_HOLO_LOST))
    whole = damage > 1 and holo
    if whole:
        saved, k = _we_saved_lane(rs, l, u, units, kind, sniper, lance, ic, support, True, wst, n_units, True)
        nd += k
        if saved:
            return 0, 1, nd
    unsaved = 0
    for _ in range(points):
        saved, k = _we_saved_lane(rs, l, u, units, kind, sniper, lance, ic, support, not whole, wst, n_units, True)
        nd += k
        unsaved += 1 - saved
    return unsaved, 1, nd


@njit(cache=True)
def _push(stk, top, kind, u, a, b):
    """Push a frame (``kind``, unit ``u``, a, b, 0, 0) onto ``stk`` holding ``top`` frames; returns the new top."""
    i = 1 + top * FRAME
    _put(stk, i, kind)
    _put(stk, i + 1, u)
    _put(stk, i + 2, a)
    _put(stk, i + 3, b)
    _put(stk, i + 4, 0)
    _put(stk, i + 5, 0)
    return top + 1


@njit(cache=True)
def _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk):
    """Unit ``u`` is destroyed in lane ``l``: no DC left, its alive bit cleared and, with war-engine rules, the
    next death number stamped on it (for the splash victims of a _we_resolve_lane run)."""
    _put(hp, u * LANES + l, 0)
    _clear_unit(alive, units, u, l, n_words, 1)
    if wst.size > 0:
        t = _at(stk, 0) + 1
        _put(stk, 0, t)
        _wput(wst, W_DIED, u, l, n_units, t)


@njit(cache=True)
def _starting_dc(units, wst, u, l, n_units):
    """Unit ``u``'s starting DC in lane ``l``: its scenario value less what it lost with its characters (spec
    §10.4 lose_character); what a war engine rolls, takes per allocation pass and counts for its formation."""
    dc = _at(units, u * U_COLS + U_DC)
    if wst.size == 0:
        return dc
    return dc - _wat(wst, W_LOST_DC, u, l, n_units)


@njit(cache=True)
def _lose_character_lane(rs, l, u, mode, ck, units, hp, wst, n_units, alive, n_words, losses_bm, kills, bm, broken,
                         stk):
    """A lose_character critical on war engine ``u`` in lane ``l`` that still has a character adding damage
    capacity (DATA land-train; spec §10.4): one of them, picked by a die with a face for each (in their order),
    is removed; the starting DC and void shields drop by the character's (the shields up at most to the new
    number) and so does the DC left, those points booked as damage (``mode``, placing BMs); at 0 it is
    destroyed.  Returns the dice rolled."""
    lost = np.uint64(_wat(wst, W_LOST_CHARS, u, l, n_units))
    n = _at(units, u * U_COLS + U_CHARS)
    sides = np.uint64(n - _popcount(lost))
    pick = _die(rs, l, sides, (_ONE << _U32) % sides) - 1
    c = 0
    for i in range(n):
        if (lost >> np.uint64(i)) & _ONE == _ZERO:
            if pick == 0:
                c = i
                break
            pick -= 1
    dc = _at(units, u * U_COLS + U_CH_DC + c)
    void_lost = _wat(wst, W_LOST_VOID, u, l, n_units) + _at(units, u * U_COLS + U_CH_VS + c)
    _wput(wst, W_LOST_CHARS, u, l, n_units, np.int64(lost | (_ONE << np.uint64(c))))
    _wput(wst, W_LOST_DC, u, l, n_units, _wat(wst, W_LOST_DC, u, l, n_units) + dc)
    _wput(wst, W_LOST_VOID, u, l, n_units, void_lost)
    _wput(wst, W_VOID, u, l, n_units, _min(_wat(wst, W_VOID, u, l, n_units),
                                           _at(units, u * U_COLS + U_VOID) - void_lost))
    left = _at(hp, u * LANES + l)
    gone = _min(dc, left)
    if gone > 0:
        _put(hp, u * LANES + l, left - gone)
        _book_lane(units, u, l, gone, gone, mode, ck, losses_bm, kills, bm, broken)
        if gone == left:
            _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk)
    return 1


@njit(cache=True)
def _less_lost_capacity(units, wst, n_units, hp, masks, side, kind, f, out, off):
    """``out[off + l]`` (living units of ``side``, a war engine counting its starting DC; only those of set
    ``kind`` if ``kind`` >= 0 and of formation ``f`` if ``f`` >= 0: _rows_living) less the starting DC their
    living war engines lost with their characters in lane ``l`` (spec §0, §10.4 lose_character)."""
    if wst.size == 0:
        return
    for u in range(n_units):
        if _at(units, u * U_COLS + U_CHARS) == 0 or _at(units, u * U_COLS + U_SIDE) != side \
                or (f >= 0 and _at(units, u * U_COLS + U_FORM) != f):
            continue
        w = _at(units, u * U_COLS + U_WORD)
        if kind >= 0 and (_at(masks, (2 * w + side) * M_COLS + kind) >> np.uint64(_at(units, u * U_COLS + U_BIT))) \
                & _ONE == _ZERO:
            continue
        for l in range(LANES):
            if _at(hp, u * LANES + l) > 0:
                _put(out, off + l, _at(out, off + l) - _wat(wst, W_LOST_DC, u, l, n_units))


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


@njit(cache=True)
def _critical_lane(u, l, top, mode, ck, units, hp, wst, n_units, alive, n_words, splashes, losses_bm, kills, bm,
                   broken, stk):
    """A critical hit's effect on unit ``u`` in lane ``l``, at once (TP 3.2.3, 3.2.4; spec §10.4): destroyed (the
    DC it had left counts as kills and losses, then its splash), more points (an extra_damage critical's own
    kind then its further D6), a self hit, a reactor breach or a fire (rolled in the end phase); the first
    degrade critical degrades it with its damage, the later ones take the ``then`` kind (1 point for
    extra_damage); a lose_character critical removes a random character that added damage capacity (T_LOSE,
    _lose_character_lane), or with none left destroys it.  What follows is pushed onto ``stk`` (``top``
    frames); returns the new top."""
    kind = _at(units, u * U_COLS + U_CRIT)
    more = _at(units, u * U_COLS + U_CRIT_DMG)
    own = True
    if kind == CRIT_DEGRADE:
        if _wat(wst, W_DEGRADED, u, l, n_units) == 0:
            _wput(wst, W_DEGRADED, u, l, n_units, 1)
            return _push(stk, top, T_HULL, u, more, 1)
        kind = _at(units, u * U_COLS + U_CRIT_THEN)
        more = 1
        own = False
    if kind == CRIT_LOSE_CHARACTER:  # a random character that added DC goes (T_LOSE); with none left, destroyed
        if _at(units, u * U_COLS + U_CHARS) > _popcount(np.uint64(_wat(wst, W_LOST_CHARS, u, l, n_units))):
            return _push(stk, top, T_LOSE, u, 0, 0)
        kind = CRIT_DESTROYED
    splashes_here = splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0
    if kind == CRIT_DESTROYED:
        left = _at(hp, u * LANES + l)
        if left > 0:
            _book_lane(units, u, l, left, left, mode, ck, losses_bm, kills, bm, broken)
            _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk)
        if splashes_here:
            top = _push(stk, top, T_SPLASH, u, -1, 0)
    elif kind == CRIT_EXTRA_DAMAGE:
        if own and _at(units, u * U_COLS + U_FURTHER_ON) > 0:
            top = _push(stk, top, T_FURTHER, u, 0, 0)
        top = _push(stk, top, T_HULL, u, more, 1)
    elif kind == CRIT_SELF_HIT:
        top = _push(stk, top, T_SELF, u, _at(units, u * U_COLS + U_SELF_HITS), 0)
    elif kind == CRIT_BREACH:
        _wput(wst, W_BREACH, u, l, n_units, _wat(wst, W_BREACH, u, l, n_units) + 1)
    elif kind == CRIT_FIRE:
        _wput(wst, W_FIRE, u, l, n_units, _wat(wst, W_FIRE, u, l, n_units) + 1)
    return top


@njit(cache=True)
def _we_resolve_lane(rs, l, entry, u0, kind, how, points, mode, ck, units, hp, wst, n_units, alive, n_words,
                     splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk):
    """Damage to unit ``u0`` in lane ``l`` and all that follows from it, in the reference engine's order (spec
    §10.2–§10.6): ``entry`` E_HIT a hit of ``kind`` with flags ``how`` and ``points`` damage (shields, a disrupt
    hit's BM, saves), E_HULL ``points`` straight to the hull (with H_DISRUPT in ``how``: points that place no BM,
    TP 2.2.2), E_SPLASH ``u0``'s critical splash.  Each point
    removes 1 DC (points beyond its DC are lost), is booked as ``mode`` says (_book_lane) and, for a unit with a
    critical effect, rolls a D6: on a 6 the effect applies at once (not in the end phase, whose criticals
    resolve in the next one), before the next point; a splash (of a destroyed war engine, of a further-damage
    roll of 1, after self hits) hits the first ``splash[g, s]`` units of each formation g (s: the source's
    formation) living when it reaches g, the source excepted, each on a D6 of ``U_SPLASH_ON`` or more, with a
    firefight hit of ``U_SPLASH_KIND``; a war engine it destroys splashes at once too.  Returns the dice rolled."""
    effects = mode != BOOK_END_PHASE
    nd = 0
    top = 0
    if entry == E_HIT:
        unsaved, past, nd = _we_hit_lane(rs, l, u0, kind, how, points, units, wst, n_units)
        disrupt = (how & H_DISRUPT) != 0
        if disrupt and past and mode == BOOK_FIGHT:  # a BM for the hit itself, none for its points (TP 2.2.2)
            fl = _at(units, u0 * U_COLS + U_FORM) * LANES + l
            _put(losses_bm, fl, _at(losses_bm, fl) + _at(units, u0 * U_COLS + U_DISRUPT_BM))
        if unsaved == 0:
            return nd
        top = _push(stk, top, T_HULL, u0, unsaved, np.int64(not disrupt))
    elif entry == E_HULL:
        marks = np.int64((how & H_DISRUPT) == 0)
        if _at(units, u0 * U_COLS + U_CRIT) == CRIT_NONE:  # nothing can follow: no frame
            left = _at(hp, u0 * LANES + l)
            done = _min(points, left)
            if done > 0:
                _put(hp, u0 * LANES + l, left - done)
                _book_lane(units, u0, l, done, done * marks, mode, ck, losses_bm, kills, bm, broken)
                if done == left:
                    _destroyed_lane(units, hp, wst, n_units, alive, n_words, u0, l, stk)
            return 0
        top = _push(stk, top, T_HULL, u0, points, marks)
    else:
        top = _push(stk, top, T_SPLASH, u0, -1, 0)
    while top > 0:
        i = 1 + (top - 1) * FRAME
        t = _at(stk, i)
        u = _at(stk, i + 1)
        if t == T_HULL:
            left = _at(hp, u * LANES + l)
            n = _at(stk, i + 2)
            if n == 0 or left == 0:
                top -= 1
                continue
            _put(stk, i + 2, n - 1)
            _put(hp, u * LANES + l, left - 1)
            _book_lane(units, u, l, 1, _at(stk, i + 3), mode, ck, losses_bm, kills, bm, broken)
            if left == 1:
                _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk)
            if _at(units, u * U_COLS + U_CRIT) == CRIT_NONE:
                continue
            nd += 1
            if _d6(rs, l) < 6:
                continue
            _wput(wst, W_CRIT, u, l, n_units, 1)
            if effects:
                top = _critical_lane(u, l, top, mode, ck, units, hp, wst, n_units, alive, n_words, splashes,
                                     losses_bm, kills, bm, broken, stk)
        elif t == T_FURTHER:  # after the critical's extra damage, if it still lives
            top -= 1
            if _at(hp, u * LANES + l) > 0:
                nd += 1
                r = _d6(rs, l)
                if r >= _at(units, u * U_COLS + U_FURTHER_ON):
                    top = _push(stk, top, T_HULL, u, 1, 1)
                elif r == 1 and splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
                    top = _push(stk, top, T_SPLASH, u, -1, 0)
        elif t == T_SELF:  # each D6 on U_SELF_ON or more: a hit of the splash's kind on itself; then the splash
            n = _at(stk, i + 2)
            if n == 0:
                top -= 1
                if splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
                    top = _push(stk, top, T_SPLASH, u, -1, 0)
                continue
            _put(stk, i + 2, n - 1)
            nd += 1
            if _d6(rs, l) >= _at(units, u * U_COLS + U_SELF_ON) and _at(hp, u * LANES + l) > 0:
                unsaved, _, k = _we_hit_lane(rs, l, u, _at(units, u * U_COLS + U_SPLASH_KIND), H_FF, 1, units, wst,
                                             n_units)
                nd += k
                if unsaved > 0:
                    top = _push(stk, top, T_HULL, u, unsaved, 1)
        elif t == T_LOSE:
            top -= 1
            nd += _lose_character_lane(rs, l, u, mode, ck, units, hp, wst, n_units, alive, n_words, losses_bm, kills,
                                       bm, broken, stk)
        else:  # T_SPLASH
            g = _at(stk, i + 2)
            s_f = _at(units, u * U_COLS + U_FORM)
            if _at(stk, i + 4) == 0:  # the next formation within reach: its victims are the units living now
                g += 1
                while g < n_forms and _at(splash, g * n_forms + s_f) == 0:
                    g += 1
                if g == n_forms:
                    top -= 1
                    continue
                _put(stk, i + 2, g)
                _put(stk, i + 3, _at(fb, g))
                _put(stk, i + 4, _at(splash, g * n_forms + s_f))
                _put(stk, i + 5, _at(stk, 0))
                continue
            then = _at(stk, i + 5)
            kk = _at(stk, i + 3)
            v = -1
            while kk < _at(fb, g + 1):
                w = _at(fu, kk)
                kk += 1
                if w != u and (_at(hp, w * LANES + l) > 0 or _wat(wst, W_DIED, w, l, n_units) > then):
                    v = w
                    break
            if v < 0:
                _put(stk, i + 4, 0)
                continue
            _put(stk, i + 3, kk)
            _put(stk, i + 4, _at(stk, i + 4) - 1)
            nd += 1
            if _d6(rs, l) < _at(units, u * U_COLS + U_SPLASH_ON) or _at(hp, v * LANES + l) == 0:
                continue  # missed, or destroyed since its formation's victims were chosen: the hit is wasted
            unsaved, _, k = _we_hit_lane(rs, l, v, _at(units, u * U_COLS + U_SPLASH_KIND), H_FF, 1, units, wst,
                                         n_units)
            nd += k
            if unsaved > 0:
                top = _push(stk, top, T_HULL, v, unsaved, 1)
    return nd


@njit(cache=True)
def _automaton_saved(rs, l, u, units, wst, n_units):
    """(1 if unit ``u`` saves a broken formation's no-save hit in lane ``l``, dice): only an Automaton may, with
    its own save and no invulnerable save (TP-SR Automaton; the assault's §6.3 hits and a turn's shooting)."""
    if not _at(units, u * U_COLS + U_AUTOMATON):
        return 0, 0
    return _we_saved_lane(rs, l, u, units, 0, False, False, False, 0, True, wst, n_units, False)


@njit(cache=True)
def _broken_hit_lane(rs, l, u, units, hp, wst, n_units, alive, n_words, splashes, splash, fu, fb, n_forms,
                     losses_bm, kills, bm, broken, stk):
    """The no-save hit a BM becomes on broken formation's unit ``u`` in lane ``l`` (TP 1.13.4; spec §6.3): an
    Automaton may save it with its own save, no invulnerable save (TP-SR Automaton); a war engine's point rolls
    for criticals (spec §10.4).  Returns the dice rolled."""
    saved, nd = _automaton_saved(rs, l, u, units, wst, n_units)
    if saved:
        return nd
    return nd + _we_resolve_lane(rs, l, E_HULL, u, 0, 0, 1, BOOK_LOSSES, 0, units, hp, wst, n_units, alive, n_words,
                                 splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)


@njit(cache=True)
def _we_reach(src, sff, k, l, kind, sniper_pass):
    """The reach of source row ``k``'s hits in lane ``l`` if they belong to the allocation of ``kind``, in its
    sniper or its round-robin part, else -1.  (A war engine's row has its reach only while it is in contact:
    bit 1 of ``sff``; sniper hits of any kind go with the ordinary hits.)"""
    cls = _at(src, k * S_COLS + S_CLASS)
    sniper = cls >= 3
    if sniper != sniper_pass or (kind != 0 if sniper else cls != kind):
        return -1
    return _at(src, k * S_COLS + S_REACH) if _at(sff, k * LANES + l) >> 1 else REACH_ANY


@njit(cache=True)
def _we_next_row(src, sff, shits, k, g1, l, kind, reach):
    """The first source row from ``k`` (before ``g1``, else ``g1``) with round-robin hits of (``kind``, ``reach``)
    in lane ``l``."""
    while k < g1 and (_at(shits, k * LANES + l) == 0 or _we_reach(src, sff, k, l, kind, False) != reach):
        k += 1
    return k


@njit(cache=True)
def _we_how(src, sff, k, l, sniper):
    """The flags (H_*) of a hit of source row ``k`` in lane ``l``."""
    return (H_SNIPER * np.int64(sniper) + H_LANCE * np.int64(_at(src, k * S_COLS + S_LANCE) != 0)
            + H_IC * np.int64(_at(src, k * S_COLS + S_IC) != 0)
            + H_SUPPORT * np.int64(_at(src, k * S_COLS + S_SUPPORT) != 0)
            + H_FF * (_at(sff, k * LANES + l) & 1)
            + H_DISRUPT * np.int64(_at(src, k * S_COLS + S_DISRUPT) != 0))


@njit(cache=True)
def _we_damage(rs, l, src, k, hk, u, units):
    """(damage, dice) of a hit of kind ``hk`` of source row ``k`` allocated to unit ``u``: a titan-killer hit on a
    war engine rolls its damage at once (TP 3.2.5), any other hit does 1."""
    if hk != 2 or not _at(units, u * U_COLS + U_WE):
        return 1, 0
    tk_n = _at(src, k * S_COLS + S_TK_N)
    damage = _at(src, k * S_COLS + S_TK_PLUS)
    for _ in range(tk_n):
        damage += _die(rs, l, _THREE, _ONE) if _at(src, k * S_COLS + S_TK_SIDES) == 3 else _d6(rs, l)
    return damage, tk_n


@njit(cache=True)
def _we_allocations_lane(rs, l, side, g0, g1, src, shits, sff, units, hp, alive, tgt, tgb, n_words, wst, n_units,
                         elig, ck, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk):
    """Every allocation of the hits of source rows ``g0``..``g1`` on ``side`` in lane ``l``, as the reference
    engine makes them (spec §2, §10.5): the sniper and ordinary hits, then the macro-weapon hits, then the
    titan-killer hits, each to the living directly engaged units as the allocation begins.  The sniper hits
    go to their target; the others round-robin from the nearest, pass after pass, each unit that may take a hit
    left taking a block of its starting DC (1 for a unit that is no war engine), a war engine's hits that reach
    only units in base contact, or only the others, first to the units they may reach, then the hits any unit
    may take, all on one count (TP 1.9.6, 1.12.5, 3.1.2, 3.2.1; a titan-killer hit counts as the points rolled
    for it, TP 3.2.5).  Each hit is resolved in allocation order (a hit on a unit already destroyed is wasted)
    with all that follows it (_we_resolve_lane); damage is booked as kills (times ``ck``) and losses.
    ``elig``: scratch.  Returns the dice rolled."""
    nd = 0
    for kind in range(3):
        n = 0
        for k in range(g0, g1):
            if _we_reach(src, sff, k, l, kind, False) >= 0 or _we_reach(src, sff, k, l, kind, True) >= 0:
                n += _at(shits, k * LANES + l)
        if n == 0:
            continue
        ne = 0
        sn_target = -1
        for i in range(_at(tgb, side), _at(tgb, side + 1)):
            u = _at(tgt, i)
            if _at(hp, u * LANES + l) > 0:
                _put(elig, ne, u)
                _wput(wst, W_BLOCK, u, l, n_units, _starting_dc(units, wst, u, l, n_units))
                ne += 1
                if sn_target < 0 and _at(units, u * U_COLS + U_SNIPE):
                    sn_target = u
        if ne == 0:
            continue  # the hits are lost
        if sn_target < 0:
            sn_target = _at(elig, 0)
        for k in range(g0, g1):  # the sniper hits (TP 2.1.14)
            if _we_reach(src, sff, k, l, kind, True) < 0:
                continue
            hk = _at(src, k * S_COLS + S_CLASS) - 3
            for _ in range(_at(shits, k * LANES + l)):
                damage, k2 = _we_damage(rs, l, src, k, hk, sn_target, units)
                nd += k2
                if _at(hp, sn_target * LANES + l) > 0:
                    nd += _we_resolve_lane(rs, l, E_HIT, sn_target, hk, _we_how(src, sff, k, l, True), damage,
                                           BOOK_FIGHT, ck, units, hp, wst, n_units, alive, n_words, splashes, splash,
                                           fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
        # the round-robin: one cursor (row, hits left in it) per reach
        k_any = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_ANY)
        k_con = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_CONTACT)
        k_oth = _we_next_row(src, sff, shits, g0, g1, l, kind, REACH_NON_CONTACT)
        n_any = _at(shits, k_any * LANES + l) if k_any < g1 else 0
        n_con = _at(shits, k_con * LANES + l) if k_con < g1 else 0
        n_oth = _at(shits, k_oth * LANES + l) if k_oth < g1 else 0
        took = True
        while took:
            took = False
            for e in range(ne):
                u = _at(elig, e)
                contact = _at(units, u * U_COLS + U_BCT) != 0
                used = 0
                while used < _wat(wst, W_BLOCK, u, l, n_units):
                    if contact and n_con > 0:
                        reach, k = REACH_CONTACT, k_con
                        n_con -= 1
                    elif not contact and n_oth > 0:
                        reach, k = REACH_NON_CONTACT, k_oth
                        n_oth -= 1
                    elif n_any > 0:
                        reach, k = REACH_ANY, k_any
                        n_any -= 1
                    else:
                        break
                    if reach == REACH_CONTACT and n_con == 0:
                        k_con = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_con = _at(shits, k_con * LANES + l) if k_con < g1 else 0
                    elif reach == REACH_NON_CONTACT and n_oth == 0:
                        k_oth = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_oth = _at(shits, k_oth * LANES + l) if k_oth < g1 else 0
                    elif reach == REACH_ANY and n_any == 0:
                        k_any = _we_next_row(src, sff, shits, k + 1, g1, l, kind, reach)
                        n_any = _at(shits, k_any * LANES + l) if k_any < g1 else 0
                    hk = _at(src, k * S_COLS + S_CLASS)
                    damage, k2 = _we_damage(rs, l, src, k, hk, u, units)
                    nd += k2
                    used += damage
                    took = True
                    if _at(hp, u * LANES + l) == 0:
                        continue  # already destroyed: the hit is wasted
                    nd += _we_resolve_lane(rs, l, E_HIT, u, hk, _we_how(src, sff, k, l, False), damage, BOOK_FIGHT,
                                           ck, units, hp, wst, n_units, alive, n_words, splashes, splash, fu, fb,
                                           n_forms, losses_bm, kills, bm, broken, stk)
    return nd


@njit(cache=True)
def _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, dmg, dmg_off, sh, sh_off):
    """``dmg[dmg_off + l]``: DC lost by formation ``f``'s war engines and shielded units in each lane (a
    destroyed one its starting DC); ``sh[sh_off + l]``: their void shields, power fields and shadowfields up
    (0 without war-engine rules ``we``) (spec §10.9)."""
    for l in range(LANES):
        _put(dmg, dmg_off + l, 0)
        _put(sh, sh_off + l, 0)
    for kk in range(_at(fweb, f), _at(fweb, f + 1)):
        u = _at(fwe, kk)
        dc = _at(units, u * U_COLS + U_DC)
        for l in range(LANES):
            _put(dmg, dmg_off + l, _at(dmg, dmg_off + l) + dc - _at(hp, u * LANES + l))
        if we:
            for l in range(LANES):
                up = (_wat(wst, W_VOID, u, l, n_units) + _wat(wst, W_FIELD, u, l, n_units)
                      + _wat(wst, W_SHADOW, u, l, n_units)) * np.int64(_at(hp, u * LANES + l) > 0)
                _put(sh, sh_off + l, _at(sh, sh_off + l) + up)


@njit(cache=True)
def _any_necron(units, fu, fb, f):
    """Has formation ``f`` a unit with TP-SR Necron Technology?"""
    for kk in range(_at(fb, f), _at(fb, f + 1)):
        if _at(units, _at(fu, kk) * U_COLS + U_NECRON):
            return True
    return False


@njit(cache=True)
def _end_phase_step2_lane(rs, l, f, fwe, fweb, fu, fb, units, hp, wst, n_units, alive, n_words, forms, bm, broken,
                          trapped, splashes, splash, n_forms, losses_bm, kills, stk):
    """End-phase step 2 for formation ``f`` in lane ``l``, before the rally (spec §10.7), unit by unit: each
    fire rolls a D6 (1: a point of damage and a new fire, which first rolls in the next end phase; 2–4: a
    point; 5–6: put out), then each reactor breach while it lives (1: destroyed, with its splash; 2–3: a
    point; 4–6: repaired); a war engine with regeneration regains 1 DC, a unit with void shields one
    shield; then, if it has a living unit, its last destroyed Necron unit returns with its full DC (TP-SR
    Necron Technology).  Damage done here adds BMs to its unbroken formation; if ``f``'s BMs grew, its break
    test follows (broken: BMs removed, it withdraws as after a failed rally).  Returns the dice rolled."""
    nd = 0
    i = f * LANES + l
    before = _at(bm, i)
    for kk in range(_at(fweb, f), _at(fweb, f + 1)):
        u = _at(fwe, kk)
        if _at(hp, u * LANES + l) == 0:
            continue
        fires = _wat(wst, W_FIRE, u, l, n_units)
        breaches = _wat(wst, W_BREACH, u, l, n_units)
        if fires + breaches > 0:
            new_fires = 0
            for _ in range(fires):
                r = _d6(rs, l)
                nd += 1
                if r >= 5:
                    fires -= 1
                    continue
                new_fires += np.int64(r == 1)
                nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, 1, BOOK_END_PHASE, 0, units, hp, wst, n_units, alive,
                                       n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
            _wput(wst, W_FIRE, u, l, n_units, fires + new_fires)
            for _ in range(breaches):
                left = _at(hp, u * LANES + l)
                if left == 0:
                    break
                r = _d6(rs, l)
                nd += 1
                if r >= 4:
                    breaches -= 1
                elif r >= 2:
                    nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, 1, BOOK_END_PHASE, 0, units, hp, wst, n_units,
                                           alive, n_words, splashes, splash, fu, fb, n_forms, losses_bm, kills, bm,
                                           broken, stk)
                else:  # the reactor explodes: destroyed, its DC left count as damage (spec §10.4), its splash
                    _book_lane(units, u, l, left, left, BOOK_END_PHASE, 0, losses_bm, kills, bm, broken)
                    _destroyed_lane(units, hp, wst, n_units, alive, n_words, u, l, stk)
                    if splashes and _at(units, u * U_COLS + U_SPLASH_ON) > 0:
                        nd += _we_resolve_lane(rs, l, E_SPLASH, u, 0, 0, 0, BOOK_END_PHASE, 0, units, hp, wst,
                                               n_units, alive, n_words, splashes, splash, fu, fb, n_forms, losses_bm,
                                               kills, bm, broken, stk)
            _wput(wst, W_BREACH, u, l, n_units, breaches)
        left = _at(hp, u * LANES + l)
        if left > 0:
            if _at(units, u * U_COLS + U_REGEN):
                _put(hp, u * LANES + l, _min(left + 1, _starting_dc(units, wst, u, l, n_units)))
            _wput(wst, W_VOID, u, l, n_units, _min(_wat(wst, W_VOID, u, l, n_units) + 1,
                                                   _at(units, u * U_COLS + U_VOID)
                                                   - _wat(wst, W_LOST_VOID, u, l, n_units)))
    living = False
    back = -1
    for kk in range(_at(fb, f), _at(fb, f + 1)):
        u = _at(fu, kk)
        if _at(hp, u * LANES + l) > 0:
            living = True
        elif _at(units, u * U_COLS + U_NECRON):
            back = u  # the last in allocation order, the farthest from the enemy (spec §10.8.7)
    if living and back >= 0:
        _put(hp, back * LANES + l, _starting_dc(units, wst, back, l, n_units))
        a = (_at(units, back * U_COLS + U_SIDE) * n_words + _at(units, back * U_COLS + U_WORD)) * LANES + l
        _put(alive, a, _at(alive, a) | (_ONE << np.uint64(_at(units, back * U_COLS + U_BIT))))
    if _at(bm, i) > before:
        size = 0
        for kk in range(_at(fb, f), _at(fb, f + 1)):
            u = _at(fu, kk)
            size += _starting_dc(units, wst, u, l, n_units) * np.int64(_at(hp, u * LANES + l) > 0)
        if size > 0 and _at(bm, i) >= (2 * size if _at(forms, f * F_COLS + F_TSKNF) else size):
            _put(bm, i, 0)
            _put(broken, i, 1)
            nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, False, forms, alive, n_words, wst, n_units,
                                 BOOK_END_PHASE, splashes, splash, n_forms, losses_bm, kills, bm, broken, stk)
    return nd


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


@njit(cache=True, _nrt=False)
def _result_roll(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, wst, hp, kills, lv, rules,
                 per_form, per_lane):
    """§5 the result roll of the lanes still fighting: margin, winner, whether the assault goes on; marks the lanes
    whose trial ended; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    max_rounds = rules[R_MAX_ROUNDS]
    nd = 0
    bm, broken = per_form[0], per_form[1]
    winner, margin, by_roll, rnd, live = per_lane[0], per_lane[1], per_lane[2], per_lane[3], per_lane[4]
    fight, fight0, ended, d, d2 = per_lane[5], per_lane[6], per_lane[7], per_lane[12], per_lane[13]
    d3, d4 = per_lane[14], per_lane[15]
    nd += _roll(rs, d, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d2, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d3, _SIX, _FOUR, fight, 0, 0)
    nd += _roll(rs, d4, _SIX, _FOUR, fight, 0, 0)
    for r in (LV_BMA, LV_BMD, LV_RAWA, LV_RAWD):
        for l in range(L):
            lv[r * L + l] = 0
    for f in range(n_forms):  # BMs held (a broken formation: its units) and raw BMs, per side
        if not forms[f, F_ASSAULT]:
            continue
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, forms[f, F_SIDE], -1, f, lv, LV_CNT * L)
        tsk = forms[f, F_TSKNF]
        held_row = (LV_BMA if forms[f, F_SIDE] == ATTACKER else LV_BMD) * L
        raw_row = (LV_RAWA if forms[f, F_SIDE] == ATTACKER else LV_RAWD) * L
        for l in range(L):  # a formation with no living unit holds none (TP 1.12.10)
            brk = _at(broken, f * L + l)
            cnt = _at(lv, LV_CNT * L + l)
            bmf = _at(bm, f * L + l) * np.int64(cnt > 0)
            _put(lv, held_row + l, _at(lv, held_row + l) + (cnt if brk else (bmf >> tsk)))
            _put(lv, raw_row + l, _at(lv, raw_row + l) + (cnt if brk else bmf))
    _rows_count(alive, flat_masks, flat_fmasks, ATTACKER, M_ASSAULT, lv, LV_NATT * L, n_words, wes, web, units,
                True)
    _rows_count(alive, flat_masks, flat_fmasks, DEFENDER, M_ASSAULT, lv, LV_NDEF * L, n_words, wes, web, units,
                True)
    _less_lost_capacity(units, wst, n_units, hp, flat_masks, ATTACKER, M_ASSAULT, -1, lv, LV_NATT * L)
    _less_lost_capacity(units, wst, n_units, hp, flat_masks, DEFENDER, M_ASSAULT, -1, lv, LV_NDEF * L)
    _rows_count(alive, flat_masks, flat_fmasks, ATTACKER, M_INSP, lv, LV_INSA * L, n_words, wes, web, units, False)
    _rows_count(alive, flat_masks, flat_fmasks, DEFENDER, M_INSP, lv, LV_INSD * L, n_words, wes, web, units, False)
    use_sum = rules[R_SUM] != 0
    for l in range(L):
        n_att = _at(lv, LV_NATT * L + l)
        n_def = _at(lv, LV_NDEF * L + l)
        bm_att = _at(lv, LV_BMA * L + l)
        bm_def = _at(lv, LV_BMD * L + l)
        mod = _at(kills, l) - _at(kills, L + l) + _at(lv, LV_INSA * L + l) - _at(lv, LV_INSD * L + l)
        mod += np.int64(n_att > n_def) + np.int64(n_att > 2 * n_def) - np.int64(n_def > n_att) \
            - np.int64(n_def > 2 * n_att)
        mod += np.int64(_at(lv, LV_RAWA * L + l) == 0) - np.int64(_at(lv, LV_RAWD * L + l) == 0) \
            + np.int64(bm_def > bm_att) - np.int64(bm_att > bm_def)
        fl = _at(fight, l)
        a1 = _at(d, l)
        a2 = _at(d2, l)
        e1 = _at(d3, l)
        e2 = _at(d4, l)
        mg = (a1 + a2 - e1 - e2 if use_sum else _max(a1, a2) - _max(e1, e2)) + mod
        decided = fl & np.int64(mg != 0)
        _put(margin, l, mg if fl else _at(margin, l))
        _put(by_roll, l, _at(by_roll, l) | decided)
        _put(winner, l, (WIN_ATT if mg > 0 else WIN_DEF) if decided else _at(winner, l))
        last = fl & np.int64(_at(rnd, l) == max_rounds)
        go_on = fl & (1 - decided) & (1 - last)
        _put(live, l, _at(live, l) & (1 - decided) & (1 - last))
        _put(rnd, l, _at(rnd, l) + go_on)
    for l in range(L):  # the lanes whose trial ended in this round
        ended[l] = fight0[l] & (1 - live[l])
    return nd


@njit(cache=True, _nrt=False)
def _extra_hits(rs, all_tsknf, xh, xhb, alive, n_words, units, forms, fu, fb, hp, wst, we, splashes, splash, kills,
                stk, lv, per_form, per_lane):
    """§6 consequences of a decided assault: the loser, its extra hits (§6.1: no saves, front to back); returns the
    dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nd = 0
    bm, broken, losses_bm = per_form[0], per_form[1], per_form[2]
    winner, margin, ended, loser, cons = per_lane[0], per_lane[1], per_lane[7], per_lane[24], per_lane[25]
    for l in range(L):
        wn = winner[l]
        c = ended[l] & np.int64((wn == WIN_ATT) | (wn == WIN_DEF))
        cons[l] = c
        los = DEFENDER if wn == WIN_ATT else ATTACKER
        loser[l] = los
        e = margin[l] if margin[l] > 0 else -margin[l]
        e = e // 2 if all_tsknf[los] else e
        lv[LV_EX * L + l] = e * c
    for side in range(2):  # §6.1 extra hits, no saves, front to back
        if xhb[side + 1] == xhb[side]:
            continue
        for l in range(L):
            lv[LV_HIT * L + l] = cons[l] & np.int64(loser[l] == side)
        for k in range(xhb[side], xhb[side + 1]):
            u = xh[k]
            arow = (side * n_words + units[u, U_WORD]) * L
            sh = np.uint64(units[u, U_BIT])
            hrow = u * L
            dc = units[u, U_DC]
            if we and units[u, U_CRIT] != CRIT_NONE:  # its damage rolls for criticals (spec §10.4)
                for l in range(L):
                    a = np.int64((alive[arow + l] >> sh) & _ONE) & lv[LV_HIT * L + l]
                    block = _min(_starting_dc(units, wst, u, l, n_units), lv[LV_EX * L + l]) * a
                    lv[LV_EX * L + l] -= block
                    if block > 0:
                        nd += _we_resolve_lane(rs, l, E_HULL, u, 0, 0, block, BOOK_LOSSES, 0, units, hp, wst,
                                               n_units, alive, n_words, splashes, splash, fu, fb, n_forms,
                                               losses_bm, kills, bm, broken, stk)
                continue
            for l in range(L):  # a block of up to its starting DC; hits beyond its remaining DC are lost
                a = np.int64((_at(alive, arow + l) >> sh) & _ONE) & _at(lv, LV_HIT * L + l)
                hpu = _at(hp, hrow + l)
                block = _min(dc, _at(lv, LV_EX * L + l)) * a
                take = _min(hpu, block)
                _put(lv, LV_EX * L + l, _at(lv, LV_EX * L + l) - block)
                _put(hp, hrow + l, hpu - take)
                _put(lv, LV_DEAD * L + l, a & np.int64(hpu == take))
            for l in range(L):
                _put(alive, arow + l, _at(alive, arow + l) & ~(np.uint64(_at(lv, LV_DEAD * L + l)) << sh))
    return nd


@njit(cache=True, _nrt=False)
def _formation_consequences(rs, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb, fwe, fweb, hp,
                            wst, we, trapped, splashes, splash, kills, stk, lv, rules, per_form, per_lane):
    """§6.2–§6.4: the loser's assault and other formations break, withdraw or take hits, the winner's take break
    tests; then each formation's state and its war engines' after the assault; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nd = 0
    bm, broken, losses_bm, bm_a, broken_a = per_form[0], per_form[1], per_form[2], per_form[5], per_form[6]
    fa, cas_a, dmg_a, sh_a, broken0 = per_form[7], per_form[8], per_form[9], per_form[10], per_form[11]
    loser, cons = per_lane[24], per_lane[25]
    for f in range(n_forms):  # §6.2 the loser's assault formations
        if not forms[f, F_ASSAULT]:
            continue
        fs = forms[f, F_SIDE]
        for l in range(L):  # already broken when the assault began: destroyed (Fearless units stay)
            _put(lv, LV_HIT * L + l, _at(cons, l) & np.int64(_at(loser, l) == fs) & _at(broken0, f * L + l))
        if forms[f, F_BROKEN0] or rules[R_TURN]:
            for kk in range(fb[f], fb[f + 1]):
                u = fu[kk]
                if units[u, U_FEARLESS]:
                    continue
                hrow = u * L
                arow = (fs * n_words + units[u, U_WORD]) * L
                sh = np.uint64(units[u, U_BIT])
                for l in range(L):
                    kill = _at(lv, LV_HIT * L + l)
                    _put(hp, hrow + l, 0 if kill else _at(hp, hrow + l))
                    _put(alive, arow + l, _at(alive, arow + l) & ~(np.uint64(kill) << sh))
        if not forms[f, F_BROKEN0] or rules[R_TURN]:  # breaks and withdraws
            for l in range(L):
                hit = _at(cons, l) & np.int64(_at(loser, l) == fs) & (1 - _at(broken0, f * L + l))
                _put(lv, LV_HIT * L + l, hit)
                _put(bm, f * L + l, 0 if hit else _at(bm, f * L + l))
                _put(broken, f * L + l, _at(broken, f * L + l) | hit)
            if trapped[f] > 0.0 or forms[f, F_SPEED0] or forms[f, F_WE_WD]:
                for l in range(L):
                    if lv[LV_HIT * L + l]:
                        nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, True, forms, alive, n_words,
                                             wst, n_units, BOOK_LOSSES, splashes, splash, n_forms, losses_bm,
                                             kills, bm, broken, stk)
    for f in range(n_forms):  # §6.3 the loser's other formations
        if forms[f, F_ASSAULT] or forms[f, F_OUTSIDE]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, fs, -1, f, lv, LV_CNT * L)
        any_hit_broken = 0
        any_fail = 0
        for l in range(L):  # an unbroken one takes a BM and a break test; a broken one takes a hit (below)
            hit = _at(cons, l) & np.int64(_at(loser, l) == fs)
            brk = _at(broken, f * L + l)
            h_unbroken = hit & (1 - brk)
            nb = _at(bm, f * L + l) + h_unbroken
            cnt = _at(lv, LV_CNT * L + l)
            fails = h_unbroken & np.int64(nb >= (2 * cnt if tsk else cnt))
            _put(bm, f * L + l, 0 if fails else nb)
            _put(broken, f * L + l, brk | fails)
            _put(lv, LV_HIT * L + l, hit & brk)
            _put(lv, LV_OK * L + l, fails)
            any_hit_broken |= hit & brk
            any_fail |= fails
        if any_hit_broken and not tsk:
            for l in range(L):
                if lv[LV_HIT * L + l]:
                    for kk in range(fb[f], fb[f + 1]):
                        u = fu[kk]
                        if hp[u * L + l] > 0 and not units[u, U_FEARLESS]:
                            nd += _broken_hit_lane(rs, l, u, units, hp, wst, n_units, alive, n_words, splashes,
                                                   splash, fu, fb, n_forms, losses_bm, kills, bm, broken, stk)
                            break
        if any_fail:
            for l in range(L):
                if lv[LV_OK * L + l]:
                    nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, True, forms, alive, n_words, wst,
                                         n_units, BOOK_LOSSES, splashes, splash, n_forms, losses_bm, kills, bm,
                                         broken, stk)
    for f in range(n_forms):  # §6.4 the winner's assault formations not broken at the start
        if not forms[f, F_ASSAULT] or forms[f, F_BROKEN0]:
            continue
        fs = forms[f, F_SIDE]
        tsk = forms[f, F_TSKNF]
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_CNT * L, n_words, wes, web, units, True)
        _less_lost_capacity(units, wst, n_units, hp, flat_masks, fs, -1, f, lv, LV_CNT * L)
        for l in range(L):
            win = cons[l] & np.int64(loser[l] != fs) & (1 - broken0[f * L + l])
            nb = bm[f * L + l] + losses_bm[f * L + l] * win
            size = lv[LV_CNT * L + l]
            fails = win & np.int64(nb >= (2 * size if tsk else size))
            bm[f * L + l] = 0 if fails else nb
            broken[f * L + l] |= fails
    for f in range(n_forms):  # the state after the assault
        _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units, False)
        n_f = forms[f, F_N]
        for l in range(L):  # destroyed / broken and alive / unbroken; a destroyed one holds no BMs
            al = np.int64(_at(fa, f * L + l) > 0)
            _put(bm_a, f * L + l, _at(bm, f * L + l) * al)
            _put(broken_a, f * L + l, _at(broken, f * L + l) & al)
            _put(cas_a, f * L + l, n_f - _at(fa, f * L + l))
    for f in range(n_forms):  # its war engines after the assault (spec §10.9)
        if fweb[f + 1] > fweb[f]:
            _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, dmg_a, f * L, sh_a, f * L)
    return nd


@njit(cache=True, _nrt=False)
def _end_phase(rs, any_sc, alive, flat_masks, flat_fmasks, n_words, wes, web, units, forms, fu, fb, fwe, fweb, hp, wst,
               we, trapped, splashes, splash, kills, stk, lv, rules, per_form, per_lane):
    """The end phase of the lanes whose trial ended: war engines' step 2 (spec §10.7), the rally (§7, with Supreme
    Commander re-rolls), shadowfields back; returns the dice rolled."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    nat1 = rules[R_NAT1]
    sc_reroll = rules[R_SC_REROLL] != 0
    use_leaders = rules[R_LEADERS] != 0
    nd = 0
    bm, broken, losses_bm, tested, passed = per_form[0], per_form[1], per_form[2], per_form[3], per_form[4]
    fa = per_form[7]
    ended, d, withdrew = per_lane[7], per_lane[12], per_lane[26]
    any_withdrew = 0
    if rules[R_RALLY] and we:  # spec §10.7: end-phase step 2, before the rally
        for f in range(n_forms):
            if fweb[f + 1] == fweb[f] and not _any_necron(units, fu, fb, f):
                continue
            for l in range(L):
                if ended[l]:
                    nd += _end_phase_step2_lane(rs, l, f, fwe, fweb, fu, fb, units, hp, wst, n_units, alive,
                                                n_words, forms, bm, broken, trapped, splashes, splash, n_forms,
                                                losses_bm, kills, stk)
        for f in range(n_forms):
            _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units, False)
    if rules[R_RALLY]:  # §7
        nat1_ok = np.int64(nat1 == 0)
        for side in range(2):  # each side's Supreme Commander re-rolls this turn: one per living SC
            if sc_reroll and any_sc[side]:
                _rows_count(alive, flat_masks, flat_fmasks, side, M_SC, lv, (LV_SCR0 + side) * L, n_words, wes,
                            web, units, False)
            else:
                for l in range(L):
                    lv[(LV_SCR0 + side) * L + l] = 0
        for f in range(n_forms):
            init = forms[f, F_INIT]
            e30 = forms[f, F_ENEMY30]
            mob = forms[f, F_MOB]
            tsk = forms[f, F_TSKNF]
            if use_leaders and forms[f, F_ANY_LEADER]:
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, M_LEADER, lv, LV_LEAD * L, n_words, wes,
                             web, units, False)
            else:
                for l in range(L):
                    lv[LV_LEAD * L + l] = 0
            if forms[f, F_ANY_WE]:  # its size: a war engine counts its starting DC (TP 3.0)
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, lv, LV_SIZE * L, n_words, wes, web,
                             units, True)
                _less_lost_capacity(units, wst, n_units, hp, flat_masks, forms[f, F_SIDE], -1, f, lv, LV_SIZE * L)
            else:
                for l in range(L):
                    _put(lv, LV_SIZE * L + l, _at(fa, f * L + l))
            for l in range(L):  # who tests (a formation with a living unit and BMs or broken)
                living = _at(fa, f * L + l)
                brk = _at(broken, f * L + l)
                bmf = _at(bm, f * L + l)
                _put(lv, LV_TEST * L + l, _at(ended, l) & np.int64(living > 0) & (np.int64(bmf > 0) | brk))
                mob_mod = (2 if living > 10 else (1 if living > 5 else 0)) if mob else 0
                _put(lv, LV_MOD * L + l, -e30 - 2 * brk + mob_mod)
            nd += _roll(rs, d, _SIX, _FOUR, lv, LV_TEST * L, 0)
            for l in range(L):
                roll = _at(d, l)
                mod = _at(lv, LV_MOD * L + l)
                _put(lv, LV_OK * L + l, np.int64(roll + mod >= init) & (np.int64(roll != 1) | nat1_ok))
            fs = forms[f, F_SIDE]
            if sc_reroll and any_sc[fs]:  # a failed test spends one of the army's re-rolls, once (TP 2.1.15)
                pool = (LV_SCR0 + fs) * L
                for l in range(L):
                    if lv[LV_TEST * L + l] and not lv[LV_OK * L + l] and lv[pool + l] > 0:
                        lv[pool + l] -= 1
                        roll = _die(rs, l, _SIX, _FOUR)
                        nd += 1
                        lv[LV_OK * L + l] = np.int64(roll + lv[LV_MOD * L + l] >= init and (roll != 1 or nat1_ok))
            wd_any = 0
            trap = np.int64(trapped[f] > 0.0 or forms[f, F_WE_WD] > 0)
            for l in range(L):
                brk = _at(broken, f * L + l)
                bmf = _at(bm, f * L + l)
                test = _at(lv, LV_TEST * L + l)
                ok = _at(lv, LV_OK * L + l)
                cut = (1 + tsk) * _at(lv, LV_LEAD * L + l)
                size = _at(lv, LV_SIZE * L + l)
                pass_broken = _max((size if tsk else size >> 1) - cut, 0)
                pass_unbroken = _max((bmf >> 1) - cut, 0)
                passes = test & ok
                _put(tested, f * L + l, test)
                _put(passed, f * L + l, passes)
                _put(bm, f * L + l, (pass_broken if brk else pass_unbroken) if passes else bmf)
                _put(broken, f * L + l, brk & (1 - passes))
                wd = trap & test & brk & (1 - ok)
                _put(withdrew, l, wd)
                wd_any |= wd
            if wd_any:
                any_withdrew = 1
                for l in range(L):
                    if withdrew[l]:
                        nd += _withdraw_lane(rs, l, f, fu, fb, units, hp, trapped, False, forms, alive, n_words,
                                             wst, n_units, BOOK_END_PHASE, splashes, splash, n_forms,
                                             losses_bm, kills, bm, broken, stk)
        if any_withdrew:
            for f in range(n_forms):
                _rows_fcount(alive, flat_fmasks, flat_masks, forms, f, -1, fa, f * L, n_words, wes, web, units,
                             False)
        if we:  # shadowfields come back after the rally step (spec §10.2)
            for u in range(n_units):
                top = units[u, U_SHADOW]
                if top == 0:
                    continue
                for l in range(L):
                    i = (W_SHADOW * n_units + u) * L + l
                    up = wst[i]
                    wst[i] = up + np.int64(ended[l] and hp[u * L + l] > 0 and 0 < up < top)
    return nd


@njit(cache=True, _nrt=False)
def _record(pflat, prow, side_off, form_off, forms, hist, ho, units, fwe, fweb, hp, wst, we, lv, per_form, per_lane):
    """The counts of the lanes whose trial ended (analysis/epic/outcome.py::record): the block's count row and the
    formations' joint histograms."""
    L = LANES
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    bm, broken, tested, passed, bm_a = per_form[0], per_form[1], per_form[3], per_form[4], per_form[5]
    broken_a, fa, cas_a, dmg_a, sh_a = per_form[6], per_form[7], per_form[8], per_form[9], per_form[10]
    winner, margin, by_roll, rnd, ended = per_lane[0], per_lane[1], per_lane[2], per_lane[3], per_lane[7]
    for l in range(L):  # the counts (analysis/epic/outcome.py::record) through per-block histograms
        if not ended[l]:
            continue
        wn = winner[l]
        _bump(pflat, prow + _at(side_off, wn), 1)
        won = np.int64((wn == WIN_ATT) | (wn == WIN_DEF))  # a side won without a roll (not "no winner")
        _bump(pflat, prow + _at(side_off, O_NOROLL), won & (1 - _at(by_roll, l)))
        _bump(pflat, prow + _at(side_off, O_ROUNDS) + _at(rnd, l) - 1, np.int64(wn != WIN_NO_ASSAULT))
        if by_roll[l]:
            _bump(pflat, prow + _at(side_off, O_MARGIN) + _at(margin, l) + _at(side_off, O_MAX_MARGIN), 1)
    for f in range(n_forms):  # each formation's three joint histograms (slots in lanes, then counted)
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        h0 = ho[f, 0] + n1 - 1
        h1 = ho[f, 1]
        h2 = ho[f, 2]
        for l in range(L):
            i = f * L + l
            al = np.int64(_at(fa, i) > 0)  # after the end phase too: broken and BMs only while alive
            _put(lv, LV_SLOT0 * L + l, h0 + _at(cas_a, i) * n1 - _at(fa, i))
            _put(lv, LV_SLOT1 * L + l, h1 + _at(broken_a, i) * c1 + _min(_at(bm_a, i), c1 - 1))
            _put(lv, LV_SLOT2 * L + l, h2 + (4 * (_at(broken, i) & al) + 2 * _at(tested, i) + _at(passed, i)) * c1
                 + _min(_at(bm, i) * al, c1 - 1))
        for l in range(L):
            if _at(ended, l):
                _bump(hist, _at(lv, LV_SLOT0 * L + l), 1)
                _bump(hist, _at(lv, LV_SLOT1 * L + l), 1)
                _bump(hist, _at(lv, LV_SLOT2 * L + l), 1)
    for f in range(n_forms):  # the war-engine results (spec §10.9)
        if fweb[f + 1] == fweb[f]:
            continue
        _we_totals(fwe, fweb, f, units, hp, wst, n_units, we, lv, LV_SLOT0 * L, lv, LV_SLOT1 * L)
        for l in range(L):
            if not ended[l]:
                continue
            crit = 0
            if we:
                for kk in range(fweb[f], fweb[f + 1]):
                    crit |= wst[(W_CRIT * n_units + fwe[kk]) * L + l]
            pflat[prow + form_off[f, FO_CRIT]] += crit
            pflat[prow + form_off[f, FO_DMG_A] + dmg_a[f * L + l]] += 1
            pflat[prow + form_off[f, FO_DMG_E] + lv[LV_SLOT0 * L + l]] += 1
            pflat[prow + form_off[f, FO_SH_A] + sh_a[f * L + l]] += 1
            pflat[prow + form_off[f, FO_SH_E] + lv[LV_SLOT1 * L + l]] += 1


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
            nd += epic_turn.turn_lanes(start, rs, turn, tscr, units, forms, fu, fb, flat_fmasks, hp, alive, n_words,
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


@njit(cache=True)
def _seed_lanes(rs, state, key0, key1, first_stream):
    """Lane ``l``'s generator state in ``rs`` (the layout ``_word`` reads): the stream ``(key0, key1,
    first_stream + l)``; ``state`` (uint64[4]) is scratch."""
    for l in range(LANES):
        seed_stream(state, key0, key1, first_stream + l)
        for k in range(4):
            rs[k * LANES + l] = state[k]


@njit(cache=True)
def _fold_histograms(part, b, hist, ho, forms, form_off):
    """Add block ``b``'s joint histograms of each formation (``hist`` at the offsets ``ho``) to its count row."""
    for f in range(forms.shape[0]):
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        for ca in range(n1):
            for dead in range(n1):
                c = hist[ho[f, 0] + ca * n1 + dead]
                part[b, form_off[f, FO_CAS_A] + ca] += c
                part[b, form_off[f, FO_CAS] + dead] += c
                part[b, form_off[f, FO_DESTROYED]] += c * (dead == n1 - 1)
        for ba in range(2):
            for v in range(c1):
                c = hist[ho[f, 1] + ba * c1 + v]
                part[b, form_off[f, FO_BROKEN_A]] += c * ba
                part[b, form_off[f, FO_BM_A] + v] += c
        for code in range(8):
            for v in range(c1):
                c = hist[ho[f, 2] + code * c1 + v]
                part[b, form_off[f, FO_BROKEN_E]] += c * (code >> 2)
                part[b, form_off[f, FO_TESTED]] += c * ((code >> 1) & 1)
                part[b, form_off[f, FO_PASSED]] += c * (code & 1)
                part[b, form_off[f, FO_BM_E] + v] += c


def assault_kernel(units, src, gb, pmask, pinfo, pb, masks, fmasks, base, forms, fu, fb, fwe, fweb, splash, trapped,
                   rules, side_off, form_off, n_counts, key0, key1, first_block, n_trials, trial_streams, turn):
    """Counts of ``n_trials`` assaults and the dice rolled, summed over the stream blocks.

    The blocks run on ``thread_count()`` Python threads (Numba's thread count, without starting Numba's
    own thread pool, which this kernel does not use), each in the GIL-free ``_run_block``.
    That keeps the block function's machine code generated once: a ``prange`` driver links its IR into
    its own module and LLVM optimises and generates all of it a second time (about a third of a cold
    compile).  A block's streams depend only on its index, so the counts do not depend on the threads.
    Scalars reach the jitted functions with fixed types.  ``turn``: the turn tables of kernels/epic_turn.py, or
    None for an assault scenario.  ``_run_block`` thus has two compiled variants, each compiled once: with
    ``turn`` None, Numba prunes the branch that calls ``epic_turn.turn_lanes`` before typing it (a branch on
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
    n_turn = (epic_turn.scratch_size(units.shape[0], n_forms, turn[epic_turn.T_INFO][0, epic_turn.I_MAX_HITS])
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
