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

from analysis import epic
from analysis.epic.model import EpicScenario
from epic_helpers import SIGMAS

TRIALS = 20_000
SHOTS = 6
BOYZ = 6
UNSAVED = F(5, 6)  # a 6+ save fails


def _scenario(weapon: dict, action: str, keys: dict) -> EpicScenario:
    units = {"gun": {"type": "INF", "armour": 4, "cc": 4, "ff": 4,
                     "weapons": [{"name": "gun", "range": 45, "count": 2, **weapon}]},
             "boyz": {"type": "INF", "armour": 6, "cc": 4, "ff": 6}}
    return EpicScenario.model_validate({
        "system": "epic", "units": units,
        "formations": [{"name": "Shooter", "side": "attacker", "initiative": 1,
                        "units": [{"unit": "gun", "count": 3}]},
                       {"name": "Target", "side": "defender", "initiative": 1,
                        "units": [{"unit": "boyz", "count": BOYZ}]}],
        "turn": [{"formation": "Shooter", "action": action, "target": "Target", **keys}]})


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


CASES = {  # case: (weapon line, action, activation keys, P(hit), exposed units)
    # 4+ at Advance (no modifier): up to 6 hits alternate between the 2 exposed Boyz, so hits wrap round onto a
    # unit already destroyed and are lost
    "round-robin over 2 exposed units, hits on the dead lost": ({"ap": 4}, "advance", {"exposed": 2}, F(1, 2), 2),
    # 6+ on a Double (−1): a 7+ roll, a 6 then 4+ (TP 1.9.5); every Boy exposed, each hit on its own unit
    "a 7+ to-hit roll: a 6, then 4+": ({"ap": 6}, "double", {}, F(1, 6) * F(1, 2), BOYZ),
    # AP6+/AT6+ at infantry only: AP without a policy (§3.5), 5+ on Sustained Fire (+1)
    "AP and AT at infantry: AP, on Sustained Fire": ({"ap": 6, "at": 6}, "sustained_fire", {}, F(1, 3), BOYZ),
}


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
