"""T9A close-combat benchmark (issue 31): five lance knights charge 25 spearmen and fight up to three rounds.
Kernel and reference trials per second on one thread, the kernel's trials per raw D6 (its rate over the raw
generator's D6 rate measured in the same run; aim ≥ 5·10⁻³) and the cold compile of the combat kernel (CPU
seconds and peak memory of a process that compiles it into an empty cache).  "dice/trial" counts the dice
the rules call for (the reference rolls each); the kernel draws a part's unsaved wounds with one uniform."""
from __future__ import annotations

from pathlib import Path

import wargame_odds.analysis.t9a as t9a

from bench_t9a import _dice_per_trial  # benchmarks/ is on sys.path (run.py)
from compile_cost import cold_epic_compile
from timing import trial_rates

SCENARIO = Path(__file__).resolve().parents[1] / "analysis" / "scenarios" / "t9a" / "knights_charge_spear_block.toml"
KERNEL_TRIALS = 2_000_000
REFERENCE_TRIALS = 5_000
AIM = 5e-3
COLD = f"""
import wargame_odds.analysis.t9a as t9a
t9a.simulate(t9a.load({str(SCENARIO)!r}), trials=1000, seed=0, progress=False)
"""


def bench(repeats: int = 5) -> dict:
    model = t9a.load(SCENARIO)
    kernel, reference_rate, _ = trial_rates(t9a, model, KERNEL_TRIALS, REFERENCE_TRIALS, repeats)
    cpu, peak = cold_epic_compile(COLD)

    def note(raw: float) -> str:
        return (f"t9a close combat ({SCENARIO.stem}, 3 rounds): {kernel / 1e6:.2f} M trials/s one thread = "
                f"{kernel / raw:.2e} trials per raw D6 (aim >= {AIM:.0e}); cold compile of the combat kernel "
                f"{cpu:.0f} s CPU, peak {peak:.0f} MiB resident")

    return {"system": "t9a", "scenario": "combat " + SCENARIO.stem, "kernel_trials_per_s": kernel,
            "reference_trials_per_s": reference_rate, "dice_per_trial": _dice_per_trial(model, 5_000), "note": note}


if __name__ == "__main__":
    print(bench())
