"""Warm start-up of the ``wargame-odds`` program with and without the extended mode's load side
(``analysis/numba_loader.py``: cached kernels loaded without Numba's target refresh, their bitcode unparsed, Numba's
runtime module read back from the cache), on one filled Numba cache (issue 38 §7).

Each case is a warm run (the caches filled by one run of each case in each arm first): ``--help``, a 1,000-trial
Epic assault, a 1,000-trial Epic turn and a 1,000-trial T9A charge.  "without" runs the same program with the
load side left out (its module replaced by one whose loader does nothing), so that the kernels load through
Numba's own path; the compile side (``kernels/link_only.py``) and the cache are the same in both arms.  The arms
run in alternating order, pair after pair, so that the machine's load falls on both alike; the medians of wall
and CPU seconds (``os.wait4``: the child's user + system time, Python's start-up included) are printed with the
CPU model and the load average before and after.  On a shared, loaded machine the wall time is mostly waiting for
a core: compare the CPU times.

    python -m benchmarks.warm_start [--pairs 7]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys

from benchmarks.compile_cost import child_cost

CASES = {
    "--help": ["--help"],
    "epic assault": ["epic", "epic/assault_marines_vs_warband", "--trials", "1000", "--seed", "1"],
    "epic turn": ["epic", "epic/turns/devastators_then_assault_marines", "--trials", "1000", "--seed", "1"],
    "t9a charge": ["t9a", "t9a/three_chargers", "--trials", "1000", "--seed", "1"],
}
#: The program as the ``wargame-odds`` console script runs it (``analysis.cli:main``); its first argument is the
#: arm: ``without`` puts a module in place of ``analysis.numba_loader`` whose loader does nothing.
_PROGRAM = """
import sys
if sys.argv.pop(1) == "without":
    import types
    sys.modules["analysis.numba_loader"] = types.SimpleNamespace(load_kernels_without_refresh=lambda: None)
sys.argv[0] = "wargame-odds"
from analysis.cli import main
sys.exit(main())
"""
ARMS = ("with", "without")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(pairs: int) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """{(case, arm): [(wall s, CPU s) per run]}, the arms alternating which goes first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("WARGAME_ODDS_PLAIN_NUMBA", None)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for arm in ARMS:  # fill the caches (kernels, Numba's runtime module, bytecode)
        for args in CASES.values():
            child_cost([sys.executable, "-c", _PROGRAM, arm, *args], env)
    for pair in range(pairs):
        for case, args in CASES.items():
            for arm in ARMS if pair % 2 == 0 else ARMS[::-1]:
                cpu, _, wall = child_cost([sys.executable, "-c", _PROGRAM, arm, *args], env)
                runs.setdefault((case, arm), []).append((wall, cpu))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=7, help="runs of each arm per case (default 7)")
    pairs = parser.parse_args().pairs
    load_before = os.getloadavg()
    runs = measure(pairs)
    load_after = os.getloadavg()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; load average before {load_before[0]:.1f}, "
          f"after {load_after[0]:.1f}; {pairs} runs of each arm per case, medians")
    print("| warm run | wall with | wall without | CPU with | CPU without | CPU saved by the load side |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        wall = {arm: statistics.median(w for w, _ in runs[case, arm]) for arm in ARMS}
        cpu = {arm: statistics.median(c for _, c in runs[case, arm]) for arm in ARMS}
        print(f"| {case} | {wall['with']:.2f} s | {wall['without']:.2f} s | {cpu['with']:.2f} s | "
              f"{cpu['without']:.2f} s | {cpu['without'] - cpu['with']:+.2f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
