"""Dice in lock-step lanes (lane primitives): lane ``l``'s xoshiro256** state is ``rs[l]``, ``rs[L + l]``,
``rs[2L + l]``, ``rs[3L + l]`` (``L = LANES``); a lane's generator moves only when that lane rolls, so a trial's
dice depend on its own stream alone.  One die for a lane (``_die``, ``_d6``), one masked die for every lane
(``_roll``, ``_lane_die``), masked dice counted against a target in one loop a pass (``_tally``), four dice in a
row for every lane (``_roll_four``), a uniform draw, a to-hit roll with its 7+ rule, dice amounts (``_amount``).
"""
import numpy as np

from ..rng import _FOUR, _INV53, _LOW32, _ONE, _SIX, _THREE, _U11, _U32, next_reg, seed_stream
from .access import _ZERO, _at, _put, kernel_function
from .layout import LANES


@kernel_function
def _word(rs, l):
    w, s0, s1, s2, s3 = next_reg(_at(rs, l), _at(rs, LANES + l), _at(rs, 2 * LANES + l), _at(rs, 3 * LANES + l))
    _put(rs, l, s0)
    _put(rs, LANES + l, s1)
    _put(rs, 2 * LANES + l, s2)
    _put(rs, 3 * LANES + l, s3)
    return w


@kernel_function
def _die(rs, l, sides, threshold):
    """One die of ``sides`` faces for lane ``l`` (Lemire on the high 32 bits, exact rejection)."""
    m = (_word(rs, l) >> _U32) * sides
    while (m & _LOW32) < threshold:
        m = (_word(rs, l) >> _U32) * sides
    return np.int64(m >> _U32) + 1


@kernel_function
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


@kernel_function
def _uniform(rs, l):
    return np.float64(_word(rs, l) >> _U11) * _INV53


@kernel_function
def _d6(rs, l):
    return _die(rs, l, _SIX, _FOUR)


@kernel_function
def _tally(rs, need, need_off, target, target_off, out, out_off, d, maxn, weight):
    """``maxn`` passes of :func:`_roll` (a D6 in pass ``j`` for each lane ``l`` with ``j < need[need_off + l]``),
    each die that shows ``target[target_off + l]`` or more adding ``weight`` to ``out[out_off + l]``, in one loop
    per pass: the same dice as ``_roll`` then a count (``d``: a row of scratch; a rare rejected draw is redone lane
    by lane before the next pass, as ``_roll`` does).  Returns the number of dice rolled."""
    nd = 0
    for j in range(maxn):
        rej = _ZERO
        for l in range(LANES):
            s0 = _at(rs, l)
            s1 = _at(rs, LANES + l)
            s2 = _at(rs, 2 * LANES + l)
            s3 = _at(rs, 3 * LANES + l)
            w, n0, n1, n2, n3 = next_reg(s0, s1, s2, s3)
            use = j < _at(need, need_off + l)
            nd += use
            _put(rs, l, n0 if use else s0)
            _put(rs, LANES + l, n1 if use else s1)
            _put(rs, 2 * LANES + l, n2 if use else s2)
            _put(rs, 3 * LANES + l, n3 if use else s3)
            m = (w >> _U32) * _SIX
            bad = use & ((m & _LOW32) < _FOUR)
            face = 0 if bad else np.int64(m >> _U32) + 1
            _put(d, l, face)
            hit = use & (face >= _at(target, target_off + l))
            _put(out, out_off + l, _at(out, out_off + l) + weight * np.int64(hit))
            rej |= np.uint64(bad)
        if rej != _ZERO:
            for l in range(LANES):
                if _at(d, l) == 0 and j < _at(need, need_off + l):
                    hit = _d6(rs, l) >= _at(target, target_off + l)
                    _put(out, out_off + l, _at(out, out_off + l) + weight * np.int64(hit))
    return nd


@kernel_function
def _roll_four(rs, d1, d2, d3, d4, use):
    """Four D6 in a row, into ``d1[l]`` .. ``d4[l]``, for each lane ``l`` with ``use[l]``: the same dice as four
    calls of :func:`_roll` with ``use`` as the need, in one loop (the generator state stays in registers).  A lane
    with a rejected draw among its four keeps its generator and rolls them again lane by lane (:func:`_d6`).
    Returns the number of dice rolled."""
    rej = _ZERO
    n = 0
    for l in range(LANES):
        s0 = _at(rs, l)
        s1 = _at(rs, LANES + l)
        s2 = _at(rs, 2 * LANES + l)
        s3 = _at(rs, 3 * LANES + l)
        w1, t0, t1, t2, t3 = next_reg(s0, s1, s2, s3)
        w2, t0, t1, t2, t3 = next_reg(t0, t1, t2, t3)
        w3, t0, t1, t2, t3 = next_reg(t0, t1, t2, t3)
        w4, t0, t1, t2, t3 = next_reg(t0, t1, t2, t3)
        m1 = (w1 >> _U32) * _SIX
        m2 = (w2 >> _U32) * _SIX
        m3 = (w3 >> _U32) * _SIX
        m4 = (w4 >> _U32) * _SIX
        bad = np.int64(((m1 & _LOW32) < _FOUR) | ((m2 & _LOW32) < _FOUR) | ((m3 & _LOW32) < _FOUR)
                       | ((m4 & _LOW32) < _FOUR))
        u = np.int64(_at(use, l) != 0)
        n += u
        go = u & (1 - bad)
        _put(rs, l, t0 if go else s0)
        _put(rs, LANES + l, t1 if go else s1)
        _put(rs, 2 * LANES + l, t2 if go else s2)
        _put(rs, 3 * LANES + l, t3 if go else s3)
        _put(d1, l, 0 if u & bad else np.int64(m1 >> _U32) + 1)
        _put(d2, l, np.int64(m2 >> _U32) + 1)
        _put(d3, l, np.int64(m3 >> _U32) + 1)
        _put(d4, l, np.int64(m4 >> _U32) + 1)
        rej |= np.uint64(u & bad)
    if rej != _ZERO:
        for l in range(LANES):
            if _at(use, l) != 0 and _at(d1, l) == 0:
                _put(d1, l, _d6(rs, l))
                _put(d2, l, _d6(rs, l))
                _put(d3, l, _d6(rs, l))
                _put(d4, l, _d6(rs, l))
    return 4 * n


@kernel_function
def _seed_lanes(rs, state, key0, key1, first_stream):
    """Lane ``l``'s generator state in ``rs`` (the layout ``_word`` reads): the stream ``(key0, key1,
    first_stream + l)``; ``state`` (uint64[4]) is scratch."""
    for l in range(LANES):
        seed_stream(state, key0, key1, first_stream + l)
        for k in range(4):
            rs[k * LANES + l] = state[k]


@kernel_function
def _amount(rs, l, n, sides, plus):
    """``n`` dice of ``sides`` (3 or 6) plus ``plus``: a weapon's shots, barrage points or titan-killer damage
    (wargame_odds.analysis.epic.dice.Dice.roll).  Returns (amount, dice rolled)."""
    amount = plus
    for _ in range(n):
        amount += _die(rs, l, _THREE, _ONE) if sides == 3 else _d6(rs, l)
    return amount, n


@kernel_function
def _to_hit(rs, l, value, modifier):
    """One to-hit roll: D6 ≥ value − modifier, a natural 1 misses, 7/8/9 need a 6 then 4+/5+/6, 10+ cannot
    hit (TP 1.9.5).  Returns (hit, dice rolled)."""
    need = value - modifier
    if need >= 10:
        return False, 0
    first = _d6(rs, l)
    if first == 1:
        return False, 1
    if need <= 6:
        return first >= need, 1
    if first < 6:
        return False, 1
    return _d6(rs, l) >= need - 3, 2


@kernel_function
def _lane_die(rs, l, use):
    """One D6 for lane ``l`` if ``use`` (1 / 0), branch-free (``_roll``'s step): the face, 0 when
    ``use`` is 0 or the draw is rejected (then the caller redraws it with :func:`_d6`); a lane that does not roll
    keeps its generator."""
    L = LANES
    s0 = _at(rs, l)
    s1 = _at(rs, L + l)
    s2 = _at(rs, 2 * L + l)
    s3 = _at(rs, 3 * L + l)
    w, n0, n1, n2, n3 = next_reg(s0, s1, s2, s3)
    _put(rs, l, n0 if use else s0)
    _put(rs, L + l, n1 if use else s1)
    _put(rs, 2 * L + l, n2 if use else s2)
    _put(rs, 3 * L + l, n3 if use else s3)
    m = (w >> _U32) * _SIX
    good = use & np.int64((m & _LOW32) >= _FOUR)
    return (np.int64(m >> _U32) + 1) * good
