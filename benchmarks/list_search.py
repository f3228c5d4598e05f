"""``make bench`` (after the kernel table): list search, story A (epic/decisions/list_search_tournament).

Prints the race's trials against the single-stage plan with the same guarantee and against rank's defaults, the
cost of preparing one matchup (pair the forces, compile, find the count slots) and of one kernel call (a
one-trial batch: the runner's overhead), the race's wall time and the process's peak memory.

    .venv/bin/python -m benchmarks.list_search [--threads N]
"""
from __future__ import annotations

import argparse
import resource
import statistics
import time


def main() -> int:
    from wargame_odds.analysis.run import runner
    from wargame_odds.analysis.decisions.list_search_core import KernelEvaluator, _resolved, list_search
    from wargame_odds.analysis.decisions import api
    from wargame_odds.analysis.epic.library.upgrades import enumerate_detachments
    from wargame_odds.analysis.run.numba_cache import prepare_kernels

    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    prepare_kernels()
    system, base = api._matchup_system(None)
    found = enumerate_detachments("netea:space-marine-codex-astartes", max_points=600, caps={"Razorbacks": 3})[:200]
    forces = [_resolved(system.force(d.force(), "attacker"), []) for d in found]
    opponent = _resolved(system.force("netea:ork-war-horde/warband", "defender"), [])
    ev = KernelEvaluator(system, forces, [opponent], ["attacker"], base, 0, args.threads)
    ev._job(0, 0)  # warm
    start = time.perf_counter()
    for i in range(len(forces)):
        ev._job(i, 0)
    matchup_ms = 1e3 * (time.perf_counter() - start) / len(forces)
    job = ev._job(0, 0)[0]
    calls = []
    for _ in range(5):
        t = time.perf_counter()
        for k in range(200):
            runner.run(job, trials=1, seed=0, cell=(9, k, 0), threads=args.threads, progress=False)
        calls.append(1e3 * (time.perf_counter() - t) / 200)
    t = time.perf_counter()
    result = list_search("epic/decisions/list_search_tournament", seed=1, threads=args.threads)
    wall = time.perf_counter() - t
    race = result.race
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"list search, story A: {result.enumeration['candidates']} candidates x {result.enumeration['opponents']} "
          f"opponents, {wall:.1f} s wall ({result.run['race_s']:.1f} s racing)")
    print(f"  trials: race {race['trials']:,} (selection {race['selection_trials']:,}), single-stage plan "
          f"{race['naive_trials']:,} ({race['trials'] / race['naive_trials']:.2f}x), rank's defaults "
          f"{race['rank_trials']:,} ({race['trials'] / race['rank_trials']:.3f}x); looks {race['looks']}, "
          f"dropped per look {race['dropped_per_look'][:6]}")
    print(f"  one matchup prepared: {matchup_ms:.2f} ms (goal 2 ms); one kernel call: "
          f"{statistics.median(calls):.3f} ms (goal 0.3 ms); peak memory {peak_mb:.0f} MB (goal < 1,024)")
    print(f"  {result.sentences[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
