"""The state every Epic kernel step test starts from (the ``test_steps_*.py`` files beside it, one per kernel
module): the scenario's tables (``wargame_odds.kernels.epic.block.tables``) and a zeroed
:class:`wargame_odds.kernels.epic.layout.Lanes` (``block.lanes``) whose lanes all begin a trial (``_start``), and
the 5σ check of a count against an exact probability."""
from __future__ import annotations

from fractions import Fraction as F
from math import sqrt

import numpy as np
from numba import njit

from wargame_odds.analysis.epic.engine import KernelArrays
from epic_helpers import SIGMAS
from wargame_odds.kernels.epic import block
from wargame_odds.kernels.epic.dice import _seed_lanes
from wargame_odds.kernels.epic.layout import (
    LANES, LN_LIVE, Run)


ENGINE = {"type": "WE", "armour": 5, "cc": 4, "ff": 4, "damage_capacity": 3}

TROOPER = {"type": "INF", "armour": 5, "cc": 4, "ff": 4}

L = LANES
KEY0, KEY1 = np.uint64(0x1234), np.uint64(0x5678)


@njit(cache=True)
def _start(tb, st, key1):
    """Every lane begins a trial of the block (streams keyed by ``KEY0``, ``key1``): hit points, alive masks,
    formation state as _start_trials sets them."""
    _seed_lanes(st.rs, st.state, KEY0, key1, 0)
    st.per_lane[LN_LIVE, :] = 0
    block._start_trials(tb, st, Run(0, LANES, 0, KEY0, key1, False), 0)


def _state(compiled, seed: int = 0):
    arrays = KernelArrays.build(compiled)
    tb = block.tables(arrays)
    st = block.lanes(tb, 0)
    _start(tb, st, np.uint64(seed))
    return tb, st



def _turn_outcome(kernel, tb, tt, st, flag, seed: int, n_res: int):
    """A turn step's run from the start of a trial in every lane (:func:`_start` keyed by ``seed``, the turn's
    scratch zeroed): ``kernel(tb, st, tt, flag, res)``, ``res`` the ``n_res`` rows of per-lane results it fills.
    Returns (its answer, copies of the hit points, BMs, broken flags, ``res`` and generator states after)."""
    _start(tb, st, np.uint64(seed))
    st.tscr[:] = 0
    res = np.zeros(n_res * L, np.int64)
    answer = kernel(tb, st, tt, flag, res)
    return answer, tuple(a.copy() for a in (st.hp, st.bm, st.broken, res, st.rs))

# -- allocation: one round-robin per hit kind, war-engine blocks, restricted hits (exact) ----------------------


def _close(count: int, n: int, p: F) -> bool:
    if p in (0, 1):
        return count == p * n
    return abs(count / n - float(p)) <= SIGMAS * sqrt(float(p * (1 - p)) / n)

