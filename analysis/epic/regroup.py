"""The regroup roll on its own (TP 1.13.1, 2.1.8; ``docs/epic-engine.md`` §8), computed exactly.

A formation that regroups removes min(highest of 2D6 + Leaders, blast markers held).  The 36 rolls of
2D6 are enumerated with fractions, so every probability is exact and its 95 % interval is the point.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np

from ..bounds import MAX_BLAST_MARKERS
from ..errors import ArgumentError
from ..estimates import ExactDistribution, ExactProbability
from ..result import Result
from ..runner import RunInfo

TWO_D6 = list(product(range(1, 7), repeat=2))


def regroup_removed(blast_markers: int, leaders: int = 0) -> dict[int, Fraction]:
    """{markers removed: exact probability}: min(highest of 2D6 + leaders, blast_markers), TP 1.13.1."""
    removed: dict[int, Fraction] = {}
    for dice in TWO_D6:
        k = min(max(dice) + leaders, blast_markers)
        removed[k] = removed.get(k, Fraction(0)) + Fraction(1, len(TWO_D6))
    return removed


def exact_regroup(blast_markers: int, leaders: int = 0) -> Result:
    """Distributions of blast markers removed and left by one regroup, and P(all removed), exact."""
    for name, value in (("blast_markers", blast_markers), ("leaders", leaders)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= MAX_BLAST_MARKERS:
            raise ArgumentError(name, value, f"a whole number from 0 to {MAX_BLAST_MARKERS}")
    removed = regroup_removed(int(blast_markers), int(leaders))
    removed_dist = ExactDistribution(removed)
    left_dist = ExactDistribution({int(blast_markers) - k: p for k, p in removed.items()})
    tree = {"regroup": {
        "all_removed": ExactProbability.of(removed.get(int(blast_markers), Fraction(0))),
        "removed_mean": removed_dist.mean(),
        "left_mean": left_dist.mean(),
        "removed": removed_dist,
        "left": left_dist,
    }}
    title = f"Regroup with {blast_markers} blast marker(s) and {leaders} Leader(s)"
    info = RunInfo(trials=len(TWO_D6), seed=0, extra={"method": "exact"})
    return Result(system="epic-regroup", title=title, info=info, tree=tree,
                  meta={"blast_markers": int(blast_markers), "leaders": int(leaders), "method": "exact"},
                  notes=["exact: every probability is enumerated over the 36 rolls of 2D6, so each interval "
                         "is the value itself"])
