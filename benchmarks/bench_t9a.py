"""T9A benchmark: kernel and reference trials per second on one thread (per-core figures)."""
from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import analysis.t9a as t9a
from analysis.runner import stream_key
from analysis.t9a import reference

SCENARIO = Path(__file__).resolve().parents[1] / "analysis" / "scenarios" / "t9a" / "three_chargers.toml"
KERNEL_TRIALS = 2_000_000
REFERENCE_TRIALS = 20_000


class _CountingRandom(random.Random):
    """random.Random that counts the dice it rolls."""

    rolled = 0

    def randint(self, a, b):
        _CountingRandom.rolled += 1
        return super().randint(a, b)


def _dice_per_trial(model, trials: int = 20_000) -> float:
    """Mean dice per trial.  The kernel rolls exactly the dice the rules call for, as the
    reference does, so the reference's counted rolls measure it (both follow §3 step by step)."""
    _CountingRandom.rolled = 0
    key0, key1 = stream_key(0)
    rng = _CountingRandom((key0 << 64) | key1)
    for _ in range(trials):
        reference.trial(model, rng)
    return _CountingRandom.rolled / trials


def bench(repeats: int = 5) -> dict:
    model = t9a.load(SCENARIO)
    t9a.simulate(model, trials=4096, seed=0, threads=1)          # compile / load the cache
    kernel, ref = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        t9a.simulate(model, trials=KERNEL_TRIALS, seed=r, threads=1)
        kernel.append(KERNEL_TRIALS / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        t9a.simulate(model, trials=REFERENCE_TRIALS, seed=r, engine="reference")
        ref.append(REFERENCE_TRIALS / (time.perf_counter() - t0))
    return {"system": "t9a", "scenario": SCENARIO.stem,
            "kernel_trials_per_s": statistics.median(kernel),
            "reference_trials_per_s": statistics.median(ref),
            "dice_per_trial": _dice_per_trial(model)}


if __name__ == "__main__":
    print(bench())
