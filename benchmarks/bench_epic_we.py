"""Epic war-engine benchmark: kernel and reference trials per second on one thread (per-core figures).

Scenario ``scenarios/epic_war_engines.toml``: war engines with void shields, power fields, critical
hits and a titan-killer weapon on both sides, beside ordinary units (issue 14).  Timed and counted
exactly as ``bench_epic.py`` times its 8 v 8 scenario, so ``run.py`` prints the same ratios.
"""
from __future__ import annotations

from pathlib import Path

import analysis.epic as epic
from analysis.epic.compile import compile_scenario

from bench_epic import KERNEL_TRIALS, REFERENCE_TRIALS, dice_per_trial  # benchmarks/ (run.py puts it on sys.path)
from timing import trial_rates

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "epic_war_engines.toml"


def bench(repeats: int = 5) -> dict:
    compiled = compile_scenario(epic.load(SCENARIO))
    kernel, reference, _ = trial_rates(epic, compiled, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    return {"system": "epic", "scenario": "war engines (WE)", "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference, "dice_per_trial": dice_per_trial(compiled)}


if __name__ == "__main__":
    print(bench())
