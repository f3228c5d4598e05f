"""Dice in lock-step lanes (lane primitives): lane ``l``'s xoshiro256** state is ``rs[l]``, ``rs[L + l]``,
``rs[2L + l]``, ``rs[3L + l]`` (``L = LANES``); a lane's generator moves only when that lane rolls, so a trial's
dice depend on its own stream alone.  One die for a lane (``_die``, ``_d6``), one masked die for every lane
(``_roll``, ``_lane_die``), a uniform draw, a to-hit roll with its 7+ rule, dice amounts (``_amount``).
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
