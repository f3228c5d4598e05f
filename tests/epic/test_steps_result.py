"""Step tests of ``kernels/epic/result.py`` (the result roll) against its exact margins.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from numba import njit

from wargame_odds.analysis.epic.exact_steps import result_margins
from wargame_odds.kernels.epic.layout import (
    LANES, LN_FIGHT, LN_MARGIN, LN_WINNER, WIN_ATT,
    WIN_DEF)
from wargame_odds.kernels.epic.result import _result_roll
from test_reference import formation

from epic_step_state import L, TROOPER, _close, _start, _state


@njit(cache=True)
def _kernel_result(tb, st, kills_att, kills_def, key1, reps, margins):
    for rep in range(reps):
        _start(tb, st, key1 + np.uint64(rep))
        for l in range(LANES):
            st.kills[l] = kills_att
            st.kills[LANES + l] = kills_def
        _result_roll(tb, st)
        for l in range(LANES):
            won = st.per_lane[LN_WINNER, l] == WIN_ATT or st.per_lane[LN_WINNER, l] == WIN_DEF
            margins[st.per_lane[LN_MARGIN, l] + 20] += 1 if won else 0
            margins[20] += 0 if won or st.per_lane[LN_FIGHT, l] == 0 else 1


@pytest.mark.parametrize("kills", [(0, 0), (2, 0), (1, 3)])
def test_result_roll_matches_the_exact_margins_tp_1_12_7(compile_epic, kills):
    """TP 1.12.7 (spec §5): each side's highest of 2D6 plus its modifiers (here only kills: equal sizes, no BMs on
    either side), the attacker's margin; a tie is another round.  The kernel's margins (_result_roll) at 5σ of
    the exact distribution (wargame_odds.analysis.epic.exact_steps.result_margins), 128 × 300 rolls, seed fixed."""
    compiled = compile_epic({"a": TROOPER, "d": TROOPER}, [formation("A", "attacker", [("a", 2, "bc")]),
                                                           formation("D", "defender", [("d", 2, "bc")])])
    tb, st = _state(compiled)
    reps = 300
    margins = np.zeros(41, np.int64)
    _kernel_result(tb, st, kills[0], kills[1], np.uint64(33), reps, margins)
    exact = result_margins(kills[0], kills[1])
    n = reps * L
    for margin in range(-20, 21):
        assert _close(int(margins[margin + 20]), n, F(exact.get(margin, 0))), (margin, margins[margin + 20] / n)


# -- withdrawal fire: the shooting step's trigger (exact who fires, 5 sigma against the exact attack) ----------------

