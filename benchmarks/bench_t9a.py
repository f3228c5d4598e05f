"""T9A benchmark: kernel and reference trials per second on one thread (per-core figures)."""
from __future__ import annotations

import random
from pathlib import Path

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.run.runner import stream_key
from wargame_odds.analysis.t9a.charge import reference
from wargame_odds.analysis.t9a.charge.layout import build_layout

from timing import trial_rates  # benchmarks/timing.py (run.py puts this folder on sys.path)

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
    """Mean dice per trial the rules call for, counted on the reference engine (which rolls each of them; the
    charge kernel rolls the same, both following §3 step by step)."""
    _CountingRandom.rolled = 0
    key0, key1 = stream_key(0)
    rng = _CountingRandom((key0 << 64) | key1)
    layout = build_layout(model)
    counts = layout.zeros()
    for _ in range(trials):
        reference.charge_and_fight(model, layout, counts, rng)
    return _CountingRandom.rolled / trials


def bench(repeats: int = 5) -> dict:
    model = t9a.load(SCENARIO)
    kernel, reference_rate, _ = trial_rates(t9a, model, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    return {"system": "t9a", "scenario": SCENARIO.stem, "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference_rate, "dice_per_trial": _dice_per_trial(model)}

if __name__ == "__main__":
    print(bench())
