"""The regroup roll on its own (TP 1.13.1, 2.1.8; ``docs/epic-engine.md`` §8).

A formation that regroups removes min(highest of 2D6 + Leaders, blast markers held).
:func:`simulate_regroup` runs the Numba ``regroup_kernel`` through the shared runner and returns the
distributions of markers removed and left, with P(all removed), each with 95 % intervals.
"""
from __future__ import annotations

import numpy as np

from .. import runner
from ..estimates import Distribution, Probability
from ..result import Result


class RegroupJob:
    """Runner job: the histogram of markers removed (index = markers removed)."""

    def __init__(self, blast_markers: int, leaders: int):
        self.blast_markers = blast_markers
        self.leaders = leaders

    def run_chunk(self, key0, key1, first_block, n_trials):
        from kernels.epic import regroup_kernel

        return regroup_kernel(self.blast_markers, self.leaders, np.uint64(key0), np.uint64(key1),
                              first_block, n_trials)

    def precision_successes(self, counts):
        return counts[-1:]  # P(all removed)


def simulate_regroup(blast_markers: int, leaders: int = 0, *, trials: int = runner.DEFAULT_TRIALS,
                     seed: int = 0) -> Result:
    """Distributions of blast markers removed and left by one regroup, and P(all removed)."""
    for name, value in (("blast_markers", blast_markers), ("leaders", leaders)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number ≥ 0, got {value!r}")
    counts, info = runner.run(RegroupJob(int(blast_markers), int(leaders)), trials=trials, seed=seed)
    removed = Distribution(counts)
    left = Distribution(counts[::-1])
    tree = {"regroup": {
        "all_removed": Probability(int(counts[-1]), info.trials),
        "removed_mean": removed.mean(),
        "left_mean": left.mean(),
        "removed": removed,
        "left": left,
    }}
    title = f"Regroup with {blast_markers} blast marker(s) and {leaders} Leader(s)"
    return Result(system="epic-regroup", title=title, info=info, tree=tree,
                  meta={"blast_markers": int(blast_markers), "leaders": int(leaders)})
