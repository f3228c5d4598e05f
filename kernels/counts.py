"""Count helpers shared by the kernels."""
import numpy as np
from numba import njit


@njit(cache=True)
def sum_blocks(part):
    """Column sums of the per-block count rows ``part`` (int64[blocks, counts]): the chunk's counts.

    A plain loop instead of ``part.sum(axis=0)``: Numba's array-sum implementation would make every
    cached kernel that calls it import Numba's array-maths module (and SciPy's linear algebra) when it
    is loaded from the cache, most of a warm run's start-up (analysis/numba_cache.py)."""
    counts = np.zeros(part.shape[1], np.int64)
    for b in range(part.shape[0]):
        for c in range(part.shape[1]):
            counts[c] += part[b, c]
    return counts
