"""GdB benchmark: kernel and reference trials per second on one thread (per-core figures)."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import analysis.gdb as gdb
from analysis.gdb.compile import compile_model

SCENARIO = Path(__file__).resolve().parents[1] / "analysis" / "scenarios" / "gdb" / "flank_charge_with_support.toml"
KERNEL_TRIALS = 4_000_000
REFERENCE_TRIALS = 20_000


def _dice_per_trial(model, result) -> float:
    """Mean D6 per kernel trial, from the kernel's own counts: every eligible firer rolls the fire
    dice; the charger tests unless destroyed; the defender tests after a charger PASS (§2.1)."""
    tables, n = model.tables, result.trials
    fire = compile_model(model).n_firers * tables.fire.dice * n
    tests = tables.morale.dice * ((n - result["charger", "ELIMINATED"].k) + result["charger", "PASS"].k)
    return (fire + tests) / n


def bench(repeats: int = 5) -> dict:
    model = gdb.load(SCENARIO)
    gdb.simulate(model, trials=4096, seed=0, threads=1)            # compile / load the cache
    kernel, ref, dice = [], [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        res = gdb.simulate(model, trials=KERNEL_TRIALS, seed=r, threads=1)
        kernel.append(KERNEL_TRIALS / (time.perf_counter() - t0))
        dice.append(_dice_per_trial(model, res))
        t0 = time.perf_counter()
        gdb.simulate(model, trials=REFERENCE_TRIALS, seed=r, engine="reference")
        ref.append(REFERENCE_TRIALS / (time.perf_counter() - t0))
    return {"system": "gdb", "scenario": SCENARIO.stem,
            "kernel_trials_per_s": statistics.median(kernel),
            "reference_trials_per_s": statistics.median(ref),
            "dice_per_trial": statistics.mean(dice)}


if __name__ == "__main__":
    print(bench())
