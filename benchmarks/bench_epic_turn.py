"""Epic turn benchmark: kernel and reference trials per second on one thread (per-core figures).

Scenario: two formations shoot (Sustained Fire, Advance), a third engages, then the end phase
(``scenarios/epic_turn.toml``).  The dice per trial are the kernel's own count, as in bench_epic.py.
"""
from __future__ import annotations

from pathlib import Path

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.epic.engine import KernelArrays
from wargame_odds.analysis.epic.turn_result import compile_turn
from wargame_odds.analysis.run.runner import stream_key

from bench_epic import DICE_TRIALS  # benchmarks/ (run.py puts this folder on sys.path)
from timing import trial_rates

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "epic_turn.toml"
KERNEL_TRIALS = 1_000_000
REFERENCE_TRIALS = 2_000


def bench(repeats: int = 5) -> dict:
    model = epic.load(SCENARIO)
    kernel, reference, _ = trial_rates(epic, model, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    key0, key1 = stream_key(0)
    _, dice = KernelArrays.build_turn(compile_turn(model)).run(key0, key1, 0, DICE_TRIALS)
    return {"system": "epic", "scenario": "turn: shoot, shoot, assault", "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference, "dice_per_trial": dice / DICE_TRIALS}


if __name__ == "__main__":
    print(bench())
