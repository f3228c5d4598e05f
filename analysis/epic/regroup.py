"""The regroup roll on its own (TP 1.13.1, 2.1.8; ``docs/epic-engine.md`` §8), computed exactly.

A formation that regroups removes min(highest of 2D6 + Leaders, blast markers held).  The 36 rolls of
2D6 are enumerated with fractions, so every probability is exact and its 95 % interval is the point.
The other small steps (rally, action test, result roll) are in :mod:`wargame_odds.analysis.epic.exact_steps`.
"""
from __future__ import annotations

from fractions import Fraction

from ..intake.bounds import MAX_BLAST_MARKERS
from ..output.estimates import ExactDistribution, ExactProbability
from ..output.result import Result
from .exact_steps import TWO_D6, exact_result, whole_number


def regroup_removed(blast_markers: int, leaders: int = 0) -> dict[int, Fraction]:
    """{markers removed: exact probability}: min(highest of 2D6 + leaders, blast_markers), TP 1.13.1."""
    removed: dict[int, Fraction] = {}
    for dice in TWO_D6:
        k = min(max(dice) + leaders, blast_markers)
        removed[k] = removed.get(k, Fraction(0)) + Fraction(1, len(TWO_D6))
    return removed


def exact_regroup(blast_markers: int, leaders: int = 0) -> Result:
    """Distributions of blast markers removed and left by one regroup, and P(all removed), exact."""
    blast_markers = whole_number("blast_markers", blast_markers, 0, MAX_BLAST_MARKERS)
    leaders = whole_number("leaders", leaders, 0, MAX_BLAST_MARKERS)
    removed = regroup_removed(blast_markers, leaders)
    removed_dist = ExactDistribution(removed)
    left_dist = ExactDistribution({blast_markers - k: p for k, p in removed.items()})
    tree = {"regroup": {
        "all_removed": ExactProbability.of(removed.get(blast_markers, Fraction(0))),
        "removed_mean": removed_dist.mean(),
        "left_mean": left_dist.mean(),
        "removed": removed_dist,
        "left": left_dist,
    }}
    title = f"Regroup with {blast_markers} blast marker(s) and {leaders} Leader(s)"
    return exact_result("epic-regroup", title, tree, {"blast_markers": blast_markers, "leaders": leaders},
                        len(TWO_D6), "2D6")
