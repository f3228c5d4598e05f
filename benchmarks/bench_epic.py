"""Epic benchmark: kernel and reference trials per second on one thread (per-core figures).

Standard scenario: 8 v 8 engaged plus a support formation (``scenarios/epic_8v8.toml``).  The
dice per trial are the kernel's own count (every D6 and D3 it rolls, from a separate run), not an
estimate.
"""
from __future__ import annotations

from pathlib import Path

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.compile import compile_scenario
from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.analysis.run.runner import stream_key

from timing import trial_rates  # benchmarks/timing.py (run.py puts this folder on sys.path)

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "epic_8v8.toml"
KERNEL_TRIALS = 4_000_000
REFERENCE_TRIALS = 10_000
DICE_TRIALS = 1_000_000


def dice_per_trial(compiled) -> float:
    """Mean D6 (and D3) the kernel rolls per trial, counted inside the kernel."""
    key0, key1 = stream_key(0)
    _, dice = KernelArrays.build(compiled).run(key0, key1, 0, DICE_TRIALS)
    return dice / DICE_TRIALS


def bench_scenario(path: Path, label: str, repeats: int) -> dict:
    """Kernel and reference trials per second and the kernel's dice per trial for one Epic scenario."""
    compiled = compile_scenario(epic.load(path))
    kernel, reference, _ = trial_rates(epic, compiled, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    return {"system": "epic", "scenario": label, "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference, "dice_per_trial": dice_per_trial(compiled)}


def bench(repeats: int = 5) -> dict:
    return bench_scenario(SCENARIO, "8 v 8 plus support", repeats)

if __name__ == "__main__":
    print(bench())
