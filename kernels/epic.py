"""Numba kernels for Epic Armageddon (NetEA) assaults and the regroup roll.

Arrays in, counts out: ``analysis/epic/engine.py`` turns a ``CompiledEpic`` into the integer tables
below and the kernel runs the procedure of ``docs/epic-engine.md`` (clauses cited as §n there, TP =
NetEA Tournament Pack).  Trials run in stream blocks of ``BLOCK_TRIALS`` (one generator stream per
block, keyed by the block index; or, with ``trial_streams``, one stream per trial keyed by the trial's
global index), in parallel over blocks; per-block counts are summed at the end, so the counts depend
only on the seed and the trial count.

Speed (``benchmarks/run.py``): the generator state lives in four local ``uint64`` variables (the
``kernels.rng`` ``*_reg`` helpers return the new state), so it stays in registers; living-unit counts per
formation and per side are popcounts of per-side alive bit masks (cleared as units die) instead of
loops over the units; hits are allocated by arithmetic (full passes + remainder over the eligible
units' starting DC, spec §2) with each unit's saves rolled and its damage applied at once,
branch-free.  The hot tables are read through ``_at`` (one load at a flat index with a constant row
width, no negative-index or shape code), and the words per side are a compile-time constant (the
length of the ``words`` tuple), so with at most 64 units a side every word loop unrolls.
"""
import numpy as np
from llvmlite import ir
from numba import njit, prange
from numba.core import types
from numba.extending import intrinsic

from .rng import _ONE, BLOCK_TRIALS, d6, seed_stream
from .rng import d3_reg as _d3
from .rng import d6_pair_reg as _d6x2
from .rng import d6_reg as _d6
from .rng import uniform_reg as _uniform

NO_ROLL = 7  # a to-hit or save value no D6 reaches

# Unit table columns (int64[N, U_COLS]); units in allocation order (CompiledEpic.units).
# U_SAVE = min(armour, cover); U_SNIPE = a sniper's target (Inspiring, Leader or Supreme Commander);
# U_LOSS_BM = its losses give a winner BMs (not Expendable, unless its whole formation is).
# U_ASSAULT: of an assault formation; U_TARGET: and directly engaged (bc / ff: hits can reach it);
# U_BCT: and bc; U_INSPC: an Inspiring unit that counts for the result (§5, switch `inspiring`);
# U_SIMPLE: neither Reinforced Armour nor Invulnerable Save (an ordinary hit = one save roll);
# U_WORD, U_BIT: its bit in its side's alive masks (unit = side_base[side] + 64 * word + bit).
U_FORM, U_ENG, U_SAVE, U_ARMOUR, U_DC, U_RA, U_INV, U_FEARLESS, U_INSPIRING, U_LEADER, U_SC, U_SPEED0, \
    U_SNIPE, U_LOSS_BM, U_SIDE, U_ASSAULT, U_TARGET, U_BCT, U_INSPC, U_SIMPLE, U_WORD, U_BIT = range(22)
U_COLS = 22
# Attack-source table columns (int64[S, S_COLS]): a unit's main dice or one extra-attack line.
# S_BC: the unit is engaged bc (uses S_VC while in contact).
S_UNIT, S_N, S_D3, S_VC, S_VN, S_CLASS, S_BC = range(7)
S_COLS = 7
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
# bc / ff unit (withdrawal kills it); F_ANY_WE: it has a war engine.
F_SIDE, F_ASSAULT, F_INIT, F_BM0, F_BROKEN0, F_TSKNF, F_MOB, F_ENEMY30, F_CAP, F_ANY_SC, F_ANY_LEADER, \
    F_N, F_SIZE0, F_SPEED0, F_ANY_WE = range(15)
F_COLS = 15
# Rule switches (int64[R_COLS]).
R_SUM, R_NAT1, R_MAX_ROUNDS, R_SF_KILLS, R_INSP_ENGAGED, R_LEADERS, R_SC_REROLL, R_RALLY = range(8)
R_COLS = 8
# Side-level count offsets (int64[O_COLS]).
O_ATT, O_DEF, O_NONE, O_UNRES, O_NOROLL, O_ROUNDS, O_MARGIN, O_MAX_MARGIN = range(8)
O_COLS = 8
# Per-formation count offsets (int64[F, FO_COLS]).
FO_DESTROYED, FO_BROKEN_A, FO_BROKEN_E, FO_TESTED, FO_PASSED, FO_CAS, FO_CAS_A, FO_BM_A, FO_BM_E = range(9)
FO_COLS = 9
# Unit sets as bit masks (uint64[2, M_COLS, W] per side, W words of 64 units; a formation's uint64[F, W]):
# every unit of the side (M_ALL), of its assault formations (M_ASSAULT), directly engaged ones (M_TARGET,
# in allocation order), bc ones (M_BC), Inspiring ones that count for the result (M_INSP), war engines
# (M_WE), Leaders (M_LEADER), Supreme Commanders (M_SC), non-Fearless units of its assault formations
# (M_XHIT, those extra hits reach).  The living units are ``alive[w, side]``: counts are popcounts (a WE
# counting its starting DC).
M_ALL, M_ASSAULT, M_TARGET, M_BC, M_INSP, M_WE, M_LEADER, M_SC, M_XHIT = range(9)
M_COLS = 9

BC, OUT = 0, 2
ATTACKER, DEFENDER = 0, 1
WIN_ATT, WIN_DEF, WIN_NONE, WIN_UNRESOLVED = O_ATT, O_DEF, O_NONE, O_UNRES  # winner code = its count slot

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


@njit(cache=True, parallel=True)
def regroup_kernel(blast_markers, bonus, key0, key1, first_block, n_trials):
    """Histogram (int64[blast_markers + 1]) of BMs removed = min(highest of 2D6 + bonus, BMs), TP 1.13.1."""
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, blast_markers + 1), np.int64)
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            part[b, min(max(d6(state), d6(state)) + bonus, blast_markers)] += 1
    return part.sum(axis=0)


# Builtin min / max compile to calls here (which spill every register): these inline instead.

@njit(cache=True, inline="always")
def _min(a, b):
    return a if a < b else b


@njit(cache=True, inline="always")
def _max(a, b):
    return a if a > b else b


# Table cells through ``_at`` (row widths are constants).

@njit(cache=True, inline="always")
def _uv(units, u, col):
    """``units[u, col]``."""
    return _at(units, u * U_COLS + col)


@njit(cache=True, inline="always")
def _fv(forms, f, col):
    """``forms[f, col]``."""
    return _at(forms, f * F_COLS + col)


@njit(cache=True, inline="always")
def _bump(a, i, v):
    """``a.flat[i] += v``."""
    _put(a, i, _at(a, i) + v)


@njit(cache=True, inline="always")
def _alive(alive, side, w):
    """Word ``w`` of ``side``'s alive mask (``alive`` uint64[W, 2])."""
    return _at(alive, 2 * w + side)


@njit(cache=True, inline="always")
def _mask(masks, side, kind, w):
    """Word ``w`` of ``side``'s unit set ``kind`` (``masks`` uint64[W, 2, M_COLS] in the block function)."""
    return _at(masks, (2 * w + side) * M_COLS + kind)


@njit(cache=True, inline="always")
def _drop(alive, side, w, bits):
    """Clear ``bits`` (units that died) in word ``w`` of ``side``'s alive mask."""
    _put(alive, 2 * w + side, _alive(alive, side, w) & ~bits)


# Bookkeeping of living units: hp (remaining DC) and the alive bit masks.

@njit(cache=True, inline="always")
def _clear(u, units, alive):
    """Unit ``u`` died: clear its alive bit."""
    _drop(alive, _uv(units, u, U_SIDE), _uv(units, u, U_WORD), _ONE << np.uint64(_uv(units, u, U_BIT)))


@njit(cache=True, inline="always")
def _kill(u, units, hp, alive):
    """Destroy the living unit ``u``."""
    hp[u] = 0
    _clear(u, units, alive)


@njit(cache=True, inline="always")
def _we_extra(m, w, side, units, base):
    """Sum of (starting DC - 1) over the war engines in mask ``m`` (word ``w`` of ``side``)."""
    c = 0
    while m != _ZERO:
        c += _uv(units, base[side] + 64 * w + _lowest_bit(m), U_DC) - 1
        m &= m - _ONE
    return c


@njit(cache=True, inline="always")
def _side_count(side, kind, weighted, alive, masks, units, base, n_words):
    """Living units of ``side`` in set ``kind`` (``weighted``: a WE counting its starting DC)."""
    c = 0
    for w in range(n_words):
        m = _alive(alive, side, w) & _mask(masks, side, kind, w)
        c += _popcount(m)
        if weighted:
            c += _we_extra(m & _mask(masks, side, M_WE, w), w, side, units, base)
    return c


@njit(cache=True, inline="always")
def _side_any(side, kind, alive, masks, n_words):
    """Does ``side`` have a living unit in set ``kind``?"""
    for w in range(n_words):
        if _alive(alive, side, w) & _mask(masks, side, kind, w) != _ZERO:
            return True
    return False


@njit(cache=True, inline="always")
def _form_count(f, weighted, forms, alive, fmasks, masks, units, base, n_words):
    """Living units of formation ``f`` (``weighted``: its size, a WE counting its starting DC, spec §0)."""
    side = _fv(forms, f, F_SIDE)
    c = 0
    for w in range(n_words):
        m = _alive(alive, side, w) & fmasks[f, w]
        c += _popcount(m)
        if weighted and _fv(forms, f, F_ANY_WE):
            c += _we_extra(m & _mask(masks, side, M_WE, w), w, side, units, base)
    return c


@njit(cache=True, inline="always")
def _withdraw(s0, s1, s2, s3, f, fu, fb, units, hp, trapped, speed_zero_die, forms, alive):
    """Withdrawal (spec §6.2): speed-0 ``bc``/``ff`` units die (if asked), other non-Fearless units
    die with probability ``trapped`` (one uniform draw each, allocation order)."""
    p = trapped[f]
    if p > 0.0 or (speed_zero_die and _fv(forms, f, F_SPEED0)):
        for k in range(fb[f], fb[f + 1]):
            u = fu[k]
            if hp[u] == 0 or _uv(units, u, U_FEARLESS):
                continue
            if speed_zero_die and _uv(units, u, U_SPEED0) and _uv(units, u, U_ENG) != OUT:
                _kill(u, units, hp, alive)
            elif p > 0.0:
                x, s0, s1, s2, s3 = _uniform(s0, s1, s2, s3)
                if x < p:
                    _kill(u, units, hp, alive)
    return s0, s1, s2, s3


@njit(cache=True, inline="always")
def _fails_break(f, forms, bm, alive, fmasks, masks, units, base, n_words):
    """Break test: BMs >= size (TSKNF: 2 x size), spec §0."""
    size = _form_count(f, True, forms, alive, fmasks, masks, units, base, n_words)
    return bm[f] >= (2 * size if _fv(forms, f, F_TSKNF) else size)


@njit(cache=True, inline="always")
def _form_kind(f, kind, forms, alive, fmasks, masks, n_words):
    """Living units of formation ``f`` in set ``kind`` (counted 1 each)."""
    side = _fv(forms, f, F_SIDE)
    c = 0
    for w in range(n_words):
        c += _popcount(_alive(alive, side, w) & fmasks[f, w] & _mask(masks, side, kind, w))
    return c


@njit(cache=True, inline="always")
def _unsaved(s0, s1, s2, s3, cls, u, units, nd):
    """1 if one hit of class ``cls`` on unit ``u`` is not saved, else 0 (spec §2 saves); ``nd`` counts dice."""
    sniper = cls >= 3
    kind = cls - 3 * sniper
    failed = True
    if kind == 0:
        target = _uv(units, u, U_SAVE) + sniper
        if target < NO_ROLL:
            nd += 1
            v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
            failed = v < target
            if _uv(units, u, U_RA) and failed:
                nd += 1
                v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
                failed = v < target
    elif kind == 1 and _uv(units, u, U_RA):
        target = _uv(units, u, U_ARMOUR) + sniper
        if target < NO_ROLL:
            nd += 1
            v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
            failed = v < target
    if _uv(units, u, U_INV) and failed:
        nd += 1
        v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
        failed = v < 6
    return np.int64(failed), s0, s1, s2, s3, nd


@njit(cache=True, inline="always")
def _damage(u, un, side, ck, units, hp, losses_bm, kills):
    """Apply ``un`` unsaved hits to the (living) unit ``u`` of ``side``, branch-free: a non-WE unit dies
    from the first, a WE loses 1 DC each; kills count for the enemy (if ``ck``), losses for ``u``'s
    formation.  Returns 1 if it died (its alive bit is the caller's to clear)."""
    hp_u = hp[u]
    done = _min(un, hp_u)
    left = hp_u - done
    hp[u] = left
    losses_bm[_uv(units, u, U_FORM)] += done * _uv(units, u, U_LOSS_BM)
    kills[1 - side] += done * ck
    return np.uint64(left == 0)


@njit(cache=True, inline="always")
def _allocate(s0, s1, s2, s3, side, hits, hs, units, hp, alive, masks, base, losses_bm, kills, ck, nd, n_words):
    """Allocate the hits ``hits[hs]`` to the living directly engaged units of ``side``, roll their saves
    and apply the damage (spec §2).

    Sniper hits go to the first Inspiring / Leader / Supreme Commander unit (else the first unit); then
    ordinary, macro-weapon and titan-killer hits continue one round-robin in allocation order, a war
    engine taking up to its starting DC hits per pass: with ``cap`` = the starting DC of the living
    eligible units, ``q, r = divmod(hits, cap)``, a unit with ``prefix`` DC before it takes
    ``q * dc + clip(r - prefix, 0, dc)`` hits, at positions ``j * cap + prefix + i`` of pass ``j`` (the
    position decides the hit class).  Allocation is decided from the living units before any save:
    the eligible units are a snapshot of the alive mask, each unit's damage applied once its own saves
    are rolled.
    """
    n_ord = _at(hits, hs * N_CLASSES + 0)
    n_mw = n_ord + _at(hits, hs * N_CLASSES + 1)
    total = n_mw + _at(hits, hs * N_CLASSES + 2)
    n_snipe = _at(hits, hs * N_CLASSES + 3) + _at(hits, hs * N_CLASSES + 4) + _at(hits, hs * N_CLASSES + 5)
    if total + n_snipe == 0:
        return s0, s1, s2, s3, nd
    cap = _side_count(side, M_TARGET, True, alive, masks, units, base, n_words)
    if cap == 0:  # no eligible unit: the hits are lost
        return s0, s1, s2, s3, nd
    snipe = -1
    snipe_unsaved = 0
    if n_snipe > 0:
        first = -1
        for w in range(n_words):
            m = _alive(alive, side, w) & _mask(masks, side, M_TARGET, w)
            while m != _ZERO:
                u = base[side] + 64 * w + _lowest_bit(m)
                m &= m - _ONE
                if first < 0:
                    first = u
                if _uv(units, u, U_SNIPE):
                    snipe = u
                    break
            if snipe >= 0:
                break
        if snipe < 0:
            snipe = first
        for cls in range(3, N_CLASSES):
            for _ in range(_at(hits, hs * N_CLASSES + cls)):
                f, s0, s1, s2, s3, nd = _unsaved(s0, s1, s2, s3, cls, snipe, units, nd)
                snipe_unsaved += f
    q = 0
    r = total
    if total >= cap:  # (a division is slow; most steps have fewer hits than units)
        q = total // cap
        r = total - q * cap
    plain = n_ord == total
    lim = r if q == 0 else cap  # the units from DC prefix ``lim`` on take no hit
    prefix = 0
    for w in range(n_words):
        if prefix >= lim:
            break
        m = _alive(alive, side, w) & _mask(masks, side, M_TARGET, w)
        dead = _ZERO
        first_unit = base[side] + 64 * w
        while m != _ZERO and prefix < lim:
            bit = _lowest_bit(m)
            m &= m - _ONE
            u = first_unit + bit
            dc = _uv(units, u, U_DC)
            part = _min(dc, _max(0, r - prefix))
            un = 0
            if plain and _uv(units, u, U_SIMPLE):  # ordinary hits, one save roll each
                h = q * dc + part
                sv = _uv(units, u, U_SAVE)
                if sv < NO_ROLL:
                    nd += h
                    for _ in range(h):
                        v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
                        un += v < sv
                else:
                    un = h
            else:
                for j in range(q + 1):
                    start = j * cap + prefix
                    for p in range(start, start + (dc if j < q else part)):
                        cls = 0 if p < n_ord else (1 if p < n_mw else 2)
                        f, s0, s1, s2, s3, nd = _unsaved(s0, s1, s2, s3, cls, u, units, nd)
                        un += f
            if u == snipe:
                un += snipe_unsaved
                snipe = -1
            prefix += dc
            dead |= _damage(u, un, side, ck, units, hp, losses_bm, kills) << np.uint64(bit)
        _drop(alive, side, w, dead)
    if snipe >= 0:  # the sniper target took no round-robin hit
        if _damage(snipe, snipe_unsaved, side, ck, units, hp, losses_bm, kills):
            _clear(snipe, units, alive)
    return s0, s1, s2, s3, nd


@njit(cache=True, inline="always")
def _consequences(s0, s1, s2, s3, winner, extra, forms, bm, broken, losses_bm, fu, fb, units, hp, fl, flb,
                  trapped, all_tsknf, alive, masks, fmasks, base, n_words):
    """Extra hits, the loser breaks or is destroyed, nearby losers, the winner's BMs (spec §6).

    ``fl[flb[3 * side + j]:flb[3 * side + j + 1]]``: the side's assault formations (j = 0), its other
    formations (1), its assault formations not broken at the start (2)."""
    loser = DEFENDER if winner == WIN_ATT else ATTACKER
    won = 1 - loser
    if extra > 0:  # §6.1: no saves, Fearless immune, front to back, a unit takes its remaining DC
        if all_tsknf[loser]:
            extra //= 2
        for w in range(n_words):
            m = _alive(alive, loser, w) & _mask(masks, loser, M_XHIT, w)
            dead = _ZERO
            while m != _ZERO and extra > 0:
                bit = _lowest_bit(m)
                m &= m - _ONE
                u = base[loser] + 64 * w + bit
                take = _min(hp[u], extra)
                extra -= take
                left = hp[u] - take
                hp[u] = left
                dead |= np.uint64(left == 0) << np.uint64(bit)
            _drop(alive, loser, w, dead)
    for k in range(flb[3 * loser], flb[3 * loser + 1]):  # §6.2
        f = fl[k]
        if _fv(forms, f, F_BROKEN0):
            for k in range(fb[f], fb[f + 1]):
                u = fu[k]
                if hp[u] > 0 and not _uv(units, u, U_FEARLESS):
                    _kill(u, units, hp, alive)
        else:
            bm[f] = 0
            broken[f] = True
            s0, s1, s2, s3 = _withdraw(s0, s1, s2, s3, f, fu, fb, units, hp, trapped, True, forms, alive)
    for k in range(flb[3 * loser + 1], flb[3 * loser + 2]):  # §6.3
        f = fl[k]
        if broken[f]:
            if not _fv(forms, f, F_TSKNF):
                for k in range(fb[f], fb[f + 1]):
                    u = fu[k]
                    if hp[u] > 0 and not _uv(units, u, U_FEARLESS):
                        hp[u] -= 1
                        if hp[u] == 0:
                            _clear(u, units, alive)
                        break
        else:
            bm[f] += 1
            if _fails_break(f, forms, bm, alive, fmasks, masks, units, base, n_words):
                bm[f] = 0
                broken[f] = True
                s0, s1, s2, s3 = _withdraw(s0, s1, s2, s3, f, fu, fb, units, hp, trapped, True, forms, alive)
    for k in range(flb[3 * won + 2], flb[3 * won + 3]):  # §6.4, branch-free
        f = fl[k]
        bm[f] += losses_bm[f]
        fails = _fails_break(f, forms, bm, alive, fmasks, masks, units, base, n_words)
        bm[f] = 0 if fails else bm[f]
        broken[f] = broken[f] | fails
    return s0, s1, s2, s3


@njit(cache=True, _nrt=False)
def _run_block(state, units, src, gb, pmask, pinfo, pb, dc0, fl, flb, forms, fu, fb, trapped, rules, side_off,
               form_off, part, b, n_trials, trial_streams, key0, key1, first_trial, hp, hits, kills, bm, broken,
               losses_bm, tested, passed, bm_a, broken_a, fa, cas_a, alive, masks, fmasks, base, all_tsknf, hist, ho,
               tally, words):
    """``n_trials`` assaults (spec §0-§7) counted into ``part[b]``; the D6 (and D3) rolled add to ``tally[0]``.

    The generator starts from ``state`` (uint64[4]); with ``trial_streams`` each trial reseeds it
    from ``(key0, key1 ^ TRIAL_STREAM_KEY, first_trial + i)``.  Work arrays: ``hp`` (remaining damage
    capacity, 1 for a unit that is not a WE); ``hits[side that rolled, class]``; ``kills`` per side;
    per formation ``bm``, ``broken``, ``losses_bm`` (losses that become a winner's BMs, TP 2.1.22),
    ``tested``, ``passed``, the state after the assault (``bm_a``, ``broken_a``, ``cas_a``), living units
    ``fa``; ``hist`` the block's joint histograms (zeros; formation ``f``'s three at offsets ``ho[f]``);
    ``alive[word, side]`` the alive masks (sets ``masks[word, side, kind]``, formations ``fmasks``, a side's
    first unit ``base[side]``); ``all_tsknf[side]``; ``words`` a tuple whose length is the words per side
    (a compile-time constant: with one word, the common case of at most 64 units a side, every word loop
    unrolls).  Compiled without the runtime (``_nrt=False``): nothing here allocates, and no reference
    counting slows the per-trial code.
    """
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    n_words = len(words)
    row = b * part.shape[1]  # part[b] as flat offsets
    max_rounds = rules[R_MAX_ROUNDS]
    has_first = False
    has_support = False
    for g in (G_FIRST, 3 + G_FIRST):
        has_first |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    for g in (G_SUPPORT, 3 + G_SUPPORT):
        has_support |= gb[g + 1] > gb[g] or pb[g + 1] > pb[g]
    first_step = G_FIRST if has_first else G_NORMAL
    sf_kills = np.int64(rules[R_SF_KILLS] != 0)
    nat1 = rules[R_NAT1]
    sc_reroll = rules[R_SC_REROLL] != 0
    use_leaders = rules[R_LEADERS] != 0
    for s in range(2):
        all_tsknf[s] = True
    for f in range(n_forms):
        if _fv(forms, f, F_ASSAULT) and not _fv(forms, f, F_TSKNF):
            all_tsknf[_fv(forms, f, F_SIDE)] = False
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    nd = 0
    for i in range(n_trials):
        if trial_streams:
            seed_stream(state, key0, key1 ^ TRIAL_STREAM_KEY, first_trial + i)
            s0 = state[0]
            s1 = state[1]
            s2 = state[2]
            s3 = state[3]
        for u in range(n_units):
            hp[u] = dc0[u]
        kills[0] = 0
        kills[1] = 0
        for s in range(2):
            for w in range(n_words):
                _put(alive, 2 * w + s, _mask(masks, s, M_ALL, w))
        for f in range(n_forms):
            broken[f] = _fv(forms, f, F_BROKEN0) != 0
            bm[f] = 0 if broken[f] else _fv(forms, f, F_BM0)
            losses_bm[f] = 0
        winner = WIN_UNRESOLVED
        margin = 0
        by_roll = False
        rnd = 1
        while True:  # one round: first strike, normal step, early ends, supporting fire, result
            ended = False
            for step in range(first_step, 3):
                if step == G_SUPPORT:  # §3 early ends, after the normal step
                    if not _side_any(DEFENDER, M_ASSAULT, alive, masks, n_words):
                        winner = WIN_ATT if _side_any(ATTACKER, M_ASSAULT, alive, masks, n_words) else WIN_NONE
                        ended = True
                        break
                    if not _side_any(ATTACKER, M_TARGET, alive, masks, n_words):
                        winner = WIN_DEF
                        ended = True
                        break
                    if not has_support:
                        break
                for side in range(2):  # §1 / §4: roll; a bc unit is in contact while an enemy bc unit lives
                    for c in range(N_CLASSES):
                        _put(hits, side * N_CLASSES + c, 0)
                    g = side * 3 + step
                    if gb[g + 1] == gb[g] and pb[g + 1] == pb[g]:
                        continue
                    contact = _side_any(1 - side, M_BC, alive, masks, n_words)
                    for p in range(pb[g], pb[g + 1]):  # dice pools: one D6 per living unit, two per word
                        val = _at(pinfo, p * P_COLS + P_VC) if contact else _at(pinfo, p * P_COLS + P_VN)
                        if val >= NO_ROLL:
                            continue
                        n = 0
                        for w in range(n_words):
                            n += _popcount(_alive(alive, side, w) & pmask[p, w])
                        nd += n
                        h = 0
                        for _ in range(n >> 1):
                            v1, v2, s0, s1, s2, s3 = _d6x2(s0, s1, s2, s3)
                            h += (v1 >= val) + (v2 >= val)
                        if n & 1:
                            v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
                            h += v >= val
                        _bump(hits, side * N_CLASSES + _at(pinfo, p * P_COLS + P_CLASS), h)
                    for k in range(gb[g], gb[g + 1]):
                        u = _at(src, k * S_COLS + S_UNIT)
                        if hp[u] == 0:
                            continue
                        bc = contact and _at(src, k * S_COLS + S_BC)
                        val = _at(src, k * S_COLS + S_VC) if bc else _at(src, k * S_COLS + S_VN)
                        if val >= NO_ROLL:
                            continue
                        n = _at(src, k * S_COLS + S_N)
                        if _at(src, k * S_COLS + S_D3):
                            n, s0, s1, s2, s3 = _d3(s0, s1, s2, s3)
                            nd += 1
                        nd += n
                        h = 0
                        for _ in range(n):
                            v, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
                            h += v >= val
                        _bump(hits, side * N_CLASSES + _at(src, k * S_COLS + S_CLASS), h)
                ck = np.int64(step != G_SUPPORT) | sf_kills
                for side in range(2):  # §2: allocation, saves and damage (side's units, the enemy's hits)
                    s0, s1, s2, s3, nd = _allocate(s0, s1, s2, s3, side, hits, 1 - side, units, hp, alive, masks,
                                                   base, losses_bm, kills, ck, nd, n_words)
                if step == G_SUPPORT:  # §4: a side wiped out by supporting fire loses without a roll
                    att = _side_any(ATTACKER, M_ASSAULT, alive, masks, n_words)
                    dfd = _side_any(DEFENDER, M_ASSAULT, alive, masks, n_words)
                    if not (att and dfd):
                        winner = WIN_ATT if att else (WIN_DEF if dfd else WIN_NONE)
                        ended = True
            if ended:
                break
            # §5 result roll: attacker score - defender score
            bm_att = 0
            bm_def = 0
            raw_att = 0
            raw_def = 0
            for f in range(n_forms):
                if not _fv(forms, f, F_ASSAULT):
                    continue
                if broken[f]:
                    raw = _form_count(f, True, forms, alive, fmasks, masks, units, base, n_words)
                    held = raw
                else:
                    raw = bm[f]
                    held = bm[f] // 2 if _fv(forms, f, F_TSKNF) else bm[f]
                if _fv(forms, f, F_SIDE) == ATTACKER:
                    bm_att += held
                    raw_att += raw
                else:
                    bm_def += held
                    raw_def += raw
            n_att = _side_count(ATTACKER, M_ASSAULT, True, alive, masks, units, base, n_words)
            n_def = _side_count(DEFENDER, M_ASSAULT, True, alive, masks, units, base, n_words)
            mod = kills[ATTACKER] - kills[DEFENDER] \
                + _side_count(ATTACKER, M_INSP, False, alive, masks, units, base, n_words) \
                - _side_count(DEFENDER, M_INSP, False, alive, masks, units, base, n_words)
            mod += (n_att > n_def) + (n_att > 2 * n_def) - (n_def > n_att) - (n_def > 2 * n_att)
            mod += (raw_att == 0) - (raw_def == 0) + (bm_def > bm_att) - (bm_att > bm_def)
            a1, a2, s0, s1, s2, s3 = _d6x2(s0, s1, s2, s3)
            d1, d2, s0, s1, s2, s3 = _d6x2(s0, s1, s2, s3)
            nd += 4
            if rules[R_SUM]:
                margin = a1 + a2 - d1 - d2 + mod
            else:
                margin = _max(a1, a2) - _max(d1, d2) + mod
            if margin != 0:
                by_roll = True
                winner = WIN_ATT if margin > 0 else WIN_DEF
                break
            if rnd == max_rounds:
                break
            rnd += 1
        if winner == WIN_ATT or winner == WIN_DEF:
            s0, s1, s2, s3 = _consequences(s0, s1, s2, s3, winner, margin if margin > 0 else -margin, forms, bm,
                                           broken, losses_bm, fu, fb, units, hp, fl, flb, trapped, all_tsknf,
                                           alive, masks, fmasks, base, n_words)
        for f in range(n_forms):
            bm_a[f] = bm[f]
            broken_a[f] = broken[f]
            fa[f] = _form_count(f, False, forms, alive, fmasks, masks, units, base, n_words)
            cas_a[f] = _fv(forms, f, F_N) - fa[f]
        if rules[R_RALLY]:  # §7: every formation with a living unit and BMs or broken (only its own
            withdrew = False  # rally changes its units); branch-free but for Supreme Commander re-rolls
            for f in range(n_forms):
                living = fa[f]
                brk = broken[f]
                bmf = bm[f]
                test = (living > 0) & ((bmf > 0) | brk)
                mod = -_fv(forms, f, F_ENEMY30) - 2 * brk
                if _fv(forms, f, F_MOB):
                    mod += 2 if living > 10 else (1 if living > 5 else 0)
                roll, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)  # rolled for every formation, used (and
                nd += test  # counted) for a tested one
                ok = (roll + mod >= _fv(forms, f, F_INIT)) & ((roll != 1) | (nat1 == 0))
                if sc_reroll and _fv(forms, f, F_ANY_SC) and test and not ok:
                    for _ in range(_form_kind(f, M_SC, forms, alive, fmasks, masks, n_words)):
                        roll, s0, s1, s2, s3 = _d6(s0, s1, s2, s3)
                        nd += 1
                        ok = (roll + mod >= _fv(forms, f, F_INIT)) & ((roll != 1) | (nat1 == 0))
                        if ok:
                            break
                leaders = 0
                if use_leaders and _fv(forms, f, F_ANY_LEADER):
                    leaders = _form_kind(f, M_LEADER, forms, alive, fmasks, masks, n_words)
                tsknf = _fv(forms, f, F_TSKNF)
                cut = (1 + tsknf) * leaders
                pass_broken = _max((living if tsknf else living // 2) - cut, 0)
                pass_unbroken = _max(bmf // 2 - cut, 0)
                passes = test & ok
                tested[f] = test
                passed[f] = passes
                bm[f] = (pass_broken if brk else pass_unbroken) if passes else bmf
                broken[f] = brk & (not passes)
                if trapped[f] > 0.0 and test and brk and not ok:  # a broken formation that fails withdraws
                    s0, s1, s2, s3 = _withdraw(s0, s1, s2, s3, f, fu, fb, units, hp, trapped, False, forms, alive)
                    withdrew = True
            if withdrew:
                for f in range(n_forms):
                    fa[f] = _form_count(f, False, forms, alive, fmasks, masks, units, base, n_words)
        # the slots of analysis/epic/outcome.py::record, per formation through three joint histograms
        # of this block (marginalised below): (casualties after the assault, after the end phase),
        # (broken, BMs after the assault), (broken, rally tested, passed, BMs after the end phase)
        _bump(part, row + side_off[winner], 1)
        _bump(part, row + side_off[O_NOROLL], np.int64(winner != WIN_UNRESOLVED and not by_roll))
        _bump(part, row + side_off[O_ROUNDS] + rnd - 1, 1)
        if by_roll:
            _bump(part, row + side_off[O_MARGIN] + margin + side_off[O_MAX_MARGIN], 1)
        for f in range(n_forms):
            n1 = _fv(forms, f, F_N) + 1
            c1 = _fv(forms, f, F_CAP) + 1
            _bump(hist, _at(ho, 3 * f) + cas_a[f] * n1 + n1 - 1 - fa[f], 1)
            _bump(hist, _at(ho, 3 * f + 1) + broken_a[f] * c1 + _min(bm_a[f], c1 - 1), 1)
            _bump(hist, _at(ho, 3 * f + 2) + (4 * broken[f] + 2 * tested[f] + passed[f]) * c1 + _min(bm[f], c1 - 1), 1)
    for f in range(n_forms):  # the joint histograms into the count slots
        n1 = _fv(forms, f, F_N) + 1
        c1 = _fv(forms, f, F_CAP) + 1
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
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    tally[0] += nd


@njit(cache=True, parallel=True)
def assault_kernel(units, src, gb, pmask, pinfo, pb, masks, fmasks, base, forms, fu, fb, trapped, rules, side_off,
                   form_off, n_counts, key0, key1, first_block, n_trials, trial_streams, words):
    """Run ``n_trials`` assaults from stream block ``first_block``: (int64[n_counts], D6 and D3 rolled).

    Tables (built by ``analysis.epic.engine.KernelArrays``, columns named above): ``units``
    int64[N, U_COLS] in allocation order; attack sources ``src`` int64[S, S_COLS] sorted by group
    ``side * 3 + step`` with bounds ``gb``; dice pools ``pmask``, ``pinfo`` (bounds ``pb`` by group); unit
    sets ``masks`` uint64[2, M_COLS, W]
    and ``fmasks`` uint64[F, W] over the bits of a side's units (its first unit ``base[side]``); ``forms``
    int64[F, F_COLS] with member units ``fu`` (bounds ``fb``) and ``trapped`` float64[F]; ``rules``
    int64[R_COLS]; count offsets ``side_off`` and ``form_off``.  ``trial_streams``: one stream per
    trial (keyed by its global index) instead of one per block.  ``words``: ``(0,) * W`` (its length, part
    of the compiled type, fixes the words per side).
    """
    if len(words) != masks.shape[2]:
        raise ValueError("words: one entry per mask word")
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, n_counts), np.int64)
    dice = np.zeros(n_blocks, np.int64)
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    dc0 = np.ascontiguousarray(units[:, U_DC])
    masks_w = np.ascontiguousarray(masks.transpose(2, 0, 1))  # word-major: constant row widths in the block
    fl = np.zeros(3 * n_forms, np.int64)  # per side: assault formations, others, assault not broken at start
    flb = np.zeros(7, np.int64)
    n_fl = 0
    for j in range(6):
        for f in range(n_forms):
            side = forms[f, F_SIDE]
            assault = forms[f, F_ASSAULT] != 0
            if side == j // 3 and ((j % 3 == 0 and assault) or (j % 3 == 1 and not assault)
                                   or (j % 3 == 2 and assault and not forms[f, F_BROKEN0])):
                fl[n_fl] = f
                n_fl += 1
        flb[j + 1] = n_fl
    ho = np.zeros((n_forms, 3), np.int64)  # offsets of each formation's joint histograms (see _run_block)
    n_hist = 0
    for f in range(n_forms):
        n1 = forms[f, F_N] + 1
        c1 = forms[f, F_CAP] + 1
        ho[f, 0] = n_hist
        ho[f, 1] = n_hist + n1 * n1
        ho[f, 2] = ho[f, 1] + 2 * c1
        n_hist = ho[f, 2] + 8 * c1
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        tally = np.zeros(1, np.int64)
        _run_block(state, units, src, gb, pmask, pinfo, pb, dc0, fl, flb, forms, fu, fb, trapped, rules, side_off,
                   form_off, part, b, min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS), trial_streams, key0, key1,
                   (first_block + b) * BLOCK_TRIALS,
                   np.empty(n_units, np.int64), np.zeros((2, N_CLASSES), np.int64),
                   np.zeros(2, np.int64), np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_),
                   np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_), np.zeros(n_forms, np.bool_),
                   np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_), np.zeros(n_forms, np.int64),
                   np.zeros(n_forms, np.int64), np.zeros((masks.shape[2], 2), np.uint64), masks_w, fmasks, base,
                   np.zeros(2, np.bool_), np.zeros(n_hist, np.int64), ho, tally, words)
        dice[b] = tally[0]
    return part.sum(axis=0), dice.sum()
