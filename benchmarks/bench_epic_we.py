"""Epic war-engine benchmark: kernel and reference trials per second on one thread (per-core figures).

Scenario ``scenarios/epic_war_engines.toml``: war engines with void shields, power fields, critical
hits and a titan-killer weapon on both sides, beside ordinary units (issue 14).  Timed and counted
exactly as ``bench_epic.py`` times its 8 v 8 scenario, so ``run.py`` prints the same ratios.
"""
from __future__ import annotations

from pathlib import Path

from bench_epic import bench_scenario  # benchmarks/ (run.py puts it on sys.path)

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "epic_war_engines.toml"


def bench(repeats: int = 5) -> dict:
    return bench_scenario(SCENARIO, "war engines (WE)", repeats)


if __name__ == "__main__":
    print(bench())
