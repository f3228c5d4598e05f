"""Warm start-up of the ``wargame-odds`` program: ``--help`` and a 1,000-trial run of an Epic assault, an Epic turn
and a T9A charge, each with the caches filled (one run of each case first), as a user's later runs have them.

Issue 38 §7's rule: a warm 1,000-trial run stays under 1 s.  The cases run in turn, round after round, so that the
machine's load falls on all alike; the medians of wall and CPU seconds (``os.wait4``: the child's user + system
time, Python's start-up included) and of peak resident memory are printed with the CPU model and the load average
before and after.  On a shared, loaded machine the wall time is mostly waiting for a core: compare the CPU times.
(Until issue 38 this script also ran each case without the extended mode's own loader of cached kernels, which was
then deleted: docs/numba.md has those numbers.)

    python -m benchmarks.warm_start [--rounds 7]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

from benchmarks.compile_cost import child_cost

CLI = Path(sys.executable).with_name("wargame-odds")
CASES = {
    "--help": ["--help"],
    "epic assault": ["epic", "epic/assault_marines_vs_warband", "--trials", "1000", "--seed", "1"],
    "epic turn": ["epic", "epic/turns/devastators_then_assault_marines", "--trials", "1000", "--seed", "1"],
    "t9a charge": ["t9a", "t9a/three_chargers", "--trials", "1000", "--seed", "1"],
}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(rounds: int) -> dict[str, list[tuple[float, float, float]]]:
    """{case: [(wall s, CPU s, peak MiB) per run]}, after one run of each case that fills the caches."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WARGAME_ODDS_PLAIN_NUMBA")}
    for args in CASES.values():
        child_cost([str(CLI), *args], env)
    runs: dict[str, list[tuple[float, float, float]]] = {case: [] for case in CASES}
    for _ in range(rounds):
        for case, args in CASES.items():
            cpu, peak, wall = child_cost([str(CLI), *args], env)
            runs[case].append((wall, cpu, peak))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="runs of each case (default 7)")
    rounds = parser.parse_args().rounds
    load_before = os.getloadavg()
    runs = measure(rounds)
    load_after = os.getloadavg()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; load average before {load_before[0]:.1f}, "
          f"after {load_after[0]:.1f}; {rounds} runs of each case, medians")
    print("| warm run | wall | CPU | peak memory |")
    print("|---|---|---|---|")
    for case, measured in runs.items():
        wall, cpu, peak = (statistics.median(column) for column in zip(*measured))
        print(f"| wargame-odds {' '.join(CASES[case])} | {wall:.2f} s | {cpu:.2f} s | {peak:.0f} MiB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
