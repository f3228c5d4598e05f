"""``make bench``: kernel speed against the reference engines and the raw generator, in one run.

Prints per-core medians (one Numba thread) and the ratios the project tracks:
kernel / reference trials per second, the kernel's dice rate as a share of the raw
generator's D6 rate, and the kernel's trials per second divided by the raw generator's D6 per
second ("trials per raw D6": issue 27 §6 tracks it for the Epic assault and turn).  Absolute figures drift
between machines; the ratios hold.  A benchmark may add a line of its own (``note``: the T9A close combat's
trials per raw D6 and its cold compile).  Then the
first-run costs of ``compile_cost.py``: the Epic kernel's cold compile (CPU seconds, peak memory),
``wargame-odds --help`` and a warm 1,000-trial run (wall seconds).
"""
from __future__ import annotations

import importlib
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit

from wargame_odds.analysis.run.numba_cache import prepare_kernels
from wargame_odds.kernels.rng import d6, seed_stream

HERE = Path(__file__).resolve().parent


@njit(cache=True)
def _raw_d6(n, key0, key1):
    state = np.empty(4, np.uint64)
    seed_stream(state, key0, key1, 0)
    total = 0
    for _ in range(n):
        total += d6(state)
    return total


def raw_d6_per_second(repeats: int = 5, n: int = 50_000_000) -> float:
    """Median D6 per second of the inline generator alone (one core)."""
    _raw_d6(1000, np.uint64(1), np.uint64(2))
    rates = []
    for r in range(repeats):
        start = time.perf_counter()
        _raw_d6(n, np.uint64(r + 1), np.uint64(7))
        rates.append(n / (time.perf_counter() - start))
    return statistics.median(rates)


def cpu() -> str:
    """The CPU's model and its widest vector instructions (the ratios differ between AVX2 and AVX-512)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    vectors = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model}, {vectors}"


def main() -> int:
    prepare_kernels()  # before _raw_d6 is loaded from Numba's cache
    numba.set_num_threads(1)
    sys.path.insert(0, str(HERE))
    print(f"CPU: {cpu()}")
    raw = raw_d6_per_second()
    print(f"raw generator (xoshiro256** + Lemire D6), one core: {raw / 1e9:.2f} G D6/s (median of 5)")
    print()
    header = f"{'system':<7} {'scenario':<28} {'kernel trials/s':>16} {'reference trials/s':>19} " \
             f"{'kernel/ref':>11} {'dice/trial':>10} {'kernel D6/s':>12} {'of raw':>7} {'trials/raw D6':>14}"
    print(header)
    print("-" * len(header))
    notes = []
    for path in sorted(HERE.glob("bench_*.py")):
        figures = importlib.import_module(path.stem).bench()
        notes += [figures["note"](raw)] if "note" in figures else []
        kernel = figures["kernel_trials_per_s"]
        reference = figures["reference_trials_per_s"]
        dice_rate = kernel * figures["dice_per_trial"]
        print(f"{figures['system']:<7} {figures['scenario'][:28]:<28} {kernel / 1e6:>14.2f} M "
              f"{reference / 1e3:>17.1f} k {kernel / reference:>10.0f}x {figures['dice_per_trial']:>10.1f} "
              f"{dice_rate / 1e9:>10.2f} G {dice_rate / raw:>6.0%} {kernel / raw:>14.2e}")
    print("\n".join(notes))
    print()
    importlib.import_module("compile_cost").main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
