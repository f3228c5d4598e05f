"""GdB benchmark: kernel and reference trials per second on one thread (per-core figures)."""
from __future__ import annotations

import statistics
from pathlib import Path

import wargame_odds.analysis.gdb as gdb
from wargame_odds.analysis.gdb.compile import compile_model

from timing import trial_rates  # benchmarks/timing.py (run.py puts this folder on sys.path)

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
    kernel, reference, results = trial_rates(gdb, model, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    return {"system": "gdb", "scenario": SCENARIO.stem, "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference,
            "dice_per_trial": statistics.mean(_dice_per_trial(model, r) for r in results)}

if __name__ == "__main__":
    print(bench())
