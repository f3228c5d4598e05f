"""A plain attack on the Numba kernel (kernels/epic/shooting.py: alike weapon lines at a target needing no choice, whose
hits the kernel counts and resolves round-robin without listing them) against exact values.

docs/epic-turn.md §3.5 (to-hit rolls, TP 1.9.5), §3.7 (hits allocated round-robin from the front to the exposed
units, a hit on a unit already destroyed lost; TP 1.9.6, TP-FAQ Allocate Hits), §3.8 (saves) and §3.10 (a BM for
coming under fire and one per kill; TP 1.9.4).  Each case is one activation of 3 shooters with two shots each at
6 Boyz (6+ save, so a kill per unsaved hit); the mean kills and BMs placed are compared with the exact values at
5 standard errors of the exact distribution (20,000 trials, fixed seed).
"""
from __future__ import annotations

from fractions import Fraction as F
from math import comb, sqrt

import pytest

from wargame_odds.analysis import epic
from epic_helpers import SIGMAS
from scenario_data import PLAIN_CASES as CASES
from scenario_data import plain_attack as _scenario

TRIALS = 20_000
SHOTS = 6
UNSAVED = F(5, 6)  # a 6+ save fails


def _kills(p_hit: F, exposed: int) -> dict[int, F]:
    """Exact distribution of the kills: Binomial(SHOTS, p_hit) hits, the j-th on exposed unit j modulo ``exposed``;
    a unit dies when one of its hits is unsaved (its later hits are lost)."""
    dist: dict[int, F] = {}
    for hits in range(SHOTS + 1):
        p_hits = comb(SHOTS, hits) * p_hit ** hits * (1 - p_hit) ** (SHOTS - hits)
        kills = {0: F(1)}
        for unit in range(exposed):
            dies = 1 - (1 - UNSAVED) ** (hits // exposed + (unit < hits % exposed))
            after: dict[int, F] = {}
            for k, p in kills.items():
                after[k] = after.get(k, F(0)) + p * (1 - dies)
                after[k + 1] = after.get(k + 1, F(0)) + p * dies
            kills = after
        for k, p in kills.items():
            dist[k] = dist.get(k, F(0)) + p_hits * p
    return dist


@pytest.mark.parametrize("case", sorted(CASES))
def test_plain_attack_tp_1_9_5_and_1_9_6_kernel_matches_exact_values(case):
    """The kernel's kills and BMs placed (1 for coming under fire and 1 per kill, TP 1.9.4) against the exact
    distribution of the kills, within 5 of its standard errors."""
    weapon, action, keys, p_hit, exposed = CASES[case]
    dist = _kills(p_hit, exposed)
    mean = sum(k * p for k, p in dist.items())
    sd = sqrt(float(sum(k * k * p for k, p in dist.items()) - mean * mean))
    turn = epic.simulate(_scenario(weapon, action, keys), trials=TRIALS, seed=11).to_dict()["turn"]["1"]
    limit = SIGMAS * sd / sqrt(TRIALS)
    assert abs(turn["kills_mean"] - float(mean)) <= limit, (case, turn["kills_mean"], float(mean))
    assert abs(turn["blast_markers_placed_mean"] - 1 - float(mean)) <= limit, (case, turn["blast_markers_placed_mean"])
