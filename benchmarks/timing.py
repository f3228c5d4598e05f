"""Shared timing for the ``bench_*.py`` modules: per-core trial rates of a kernel and its reference."""
from __future__ import annotations

import statistics
import time


def trial_rates(system, scenario, kernel_trials: int, reference_trials: int, repeats: int = 5):
    """Median trials/s of ``system.simulate`` on one thread (kernel, after a warm-up that compiles or
    loads the cache) and with ``engine="reference"``; also the kernel results, one per repeat."""
    system.simulate(scenario, trials=4096, seed=0, threads=1)
    kernel, reference, results = [], [], []
    for r in range(repeats):
        start = time.perf_counter()
        results.append(system.simulate(scenario, trials=kernel_trials, seed=r, threads=1))
        kernel.append(kernel_trials / (time.perf_counter() - start))
        start = time.perf_counter()
        system.simulate(scenario, trials=reference_trials, seed=r, engine="reference")
        reference.append(reference_trials / (time.perf_counter() - start))
    return statistics.median(kernel), statistics.median(reference), results
