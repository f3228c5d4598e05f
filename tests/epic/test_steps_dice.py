"""Step tests of ``kernels/epic/dice.py``'s lock-step passes: ``_tally`` (the to-hit and save dice counted in the
pass that rolls them) and ``_roll_four`` (the result roll's four dice in one pass) roll exactly the dice of the
masked pass ``_roll`` they replace: the same faces counted, the same generator states after, the same number of
dice, lane by lane, rejected draws included (a lane whose state has ``s1 = 0`` draws the word 0, which Lemire's
exact D6 rejects).  Same dice, same numbers: a trial's dice depend only on its own stream (issue 39 §5).
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from wargame_odds.kernels.epic.dice import _roll, _roll_four, _tally
from wargame_odds.kernels.rng import _FOUR, _SIX
from wargame_odds.kernels.epic.layout import LANES

L = LANES


def _states(seed: int, rejecting: int) -> np.ndarray:
    """Generator states for the lanes (``rs`` layout: word ``k`` of lane ``l`` at ``k * LANES + l``), the first
    ``rejecting`` lanes with ``s1 = 0``: their next draw is rejected."""
    rs = np.random.default_rng(seed).integers(1, 2**63, 4 * L, dtype=np.int64).astype(np.uint64)
    rs[L:L + rejecting] = 0
    return rs


@njit(cache=True)
def _tally_by_roll(rs, need, target, out, d, maxn, weight):
    nd = 0
    for j in range(maxn):
        nd += _roll(rs, d, _SIX, _FOUR, need, 0, j)
        for l in range(LANES):
            out[l] += weight * ((j < need[l]) & (d[l] >= target[l]))
    return nd


@njit(cache=True)
def _tally_lanes(rs, need, target, out, d, maxn, weight):
    return _tally(rs, need, 0, target, 0, out, 0, d, maxn, weight)


@njit(cache=True)
def _four_by_roll(rs, d1, d2, d3, d4, use):
    return (_roll(rs, d1, _SIX, _FOUR, use, 0, 0) + _roll(rs, d2, _SIX, _FOUR, use, 0, 0)
            + _roll(rs, d3, _SIX, _FOUR, use, 0, 0) + _roll(rs, d4, _SIX, _FOUR, use, 0, 0))


@njit(cache=True)
def _four(rs, d1, d2, d3, d4, use):
    return _roll_four(rs, d1, d2, d3, d4, use)


@pytest.mark.parametrize("weight", [1, -1])
@pytest.mark.parametrize("seed", [3, 4])
def test_tally_rolls_and_counts_the_dice_of_roll(seed, weight):
    """TP 1.12.5 (to-hit: one D6 per die, a hit on the value or more) and TP 1.9.6 (a save per hit): ``_tally``'s
    passes count, per lane, the dice of the masked pass ``_roll`` that show the target or more (``weight`` -1: a
    save taken off the hits), and leave every generator where ``_roll`` leaves it, rejected draws redone."""
    rng = np.random.default_rng(seed)
    need = rng.integers(0, 5, L).astype(np.int32)
    target = rng.integers(2, 8, L).astype(np.int32)
    start = rng.integers(0, 4, L).astype(np.int32)
    maxn = int(need.max())
    rs_a, rs_b = _states(seed, 5), _states(seed, 5)
    out_a, out_b = start.copy(), start.copy()
    d_a, d_b = np.zeros(L, np.int32), np.zeros(L, np.int32)
    nd_a = _tally_by_roll(rs_a, need, target, out_a, d_a, maxn, weight)
    nd_b = _tally_lanes(rs_b, need, target, out_b, d_b, maxn, weight)
    assert nd_a == nd_b == int(need.sum())
    np.testing.assert_array_equal(out_a, out_b)
    np.testing.assert_array_equal(rs_a, rs_b)


@pytest.mark.parametrize("seed", [5, 6])
def test_roll_four_rolls_the_dice_of_four_rolls(seed):
    """TP 1.12.7 (the result roll: each side's 2D6): ``_roll_four`` gives each lane that fights the four faces of
    four masked passes of ``_roll`` and leaves its generator where they leave it, a lane with a rejected draw
    included; a lane that does not fight keeps its generator."""
    use = (np.random.default_rng(seed).random(L) < 0.6).astype(np.int32)
    use[:3] = 1  # lanes 0-2 reject their first draw and fight
    rs_a, rs_b = _states(seed, 4), _states(seed, 4)
    d_a = [np.zeros(L, np.int32) for _ in range(4)]
    d_b = [np.zeros(L, np.int32) for _ in range(4)]
    nd_a = _four_by_roll(rs_a, *d_a, use)
    nd_b = _four(rs_b, *d_b, use)
    assert nd_a == nd_b == 4 * int(use.sum())
    np.testing.assert_array_equal(rs_a, rs_b)
    fights = use == 1
    for a, b in zip(d_a, d_b):
        np.testing.assert_array_equal(a[fights], b[fights])
        assert a[fights].min() >= 1 and a[fights].max() <= 6
