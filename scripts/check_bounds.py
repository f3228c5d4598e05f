"""``make check-bounds``: every Epic scenario the project ships or tests, run with Numba's bounds checking on.

    python scripts/check_bounds.py [--subset] [--fresh]

The kernels are compiled with ``NUMBA_BOUNDSCHECK=1``, so that every array index (``a[i]``, and the kernel's
one-load ``_at`` / ``_put``: kernels/epic/access.py) raises IndexError when it is out of bounds. Numba's on-disk
cache does not record that option, so the compiles go to a cache of their own: ``numba-cache-boundscheck`` beside
the usual one (only bounds-checked compiles ever write it; kernels/ changes drop its stale entries as they do the
usual cache's), or with ``--fresh`` an empty temporary folder. Numba cannot cache a bounds-checked function that
indexes an array (it warns "Cannot cache compiled function ... dynamic globals"), the block function included, so
every run compiles the kernel afresh: with ``NUMBA_OPT=0``, as LLVM's optimisation passes (most of a cold compile's
CPU) change no index the kernel reads, only how fast it runs; the cases are small. The script first checks that the
check can fail (an index past the end raises), then runs each case: every shipped Epic scenario (assaults, turns; an
aircraft turn runs on the reference engine) and every scenario of the kernel's tests (benchmarks/fingerprint.py's
list, and the withdrawal-fire cases of tests/epic/test_withdrawal_fire.py), one block of trials on block streams and
one on trial streams. ``--subset``: a few cases that reach both kernel variants, the war-engine rules, the turn's
plain and full shooting and its withdrawal fire (CI). Exit 1 names the cases that fail.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIALS = 4096
SUBSET = ("analysis/scenarios/epic/warband_vs_warlord_titan.toml",
          "analysis/scenarios/epic/turns/ork_warband_shoots_then_assaults_guard.toml",
          "analysis/scenarios/epic/turns/devastators_hold_overwatch_for_the_rout.toml",
          "benchmarks/scenarios/epic_turn.toml",
          "tests/epic/test_kernel.py::we_further_self_hit_chained_splash",
          "tests/epic/test_kernel_round_robin.py::split_knight_vs_shielded_titan",
          "tests/epic/test_turn_kernel_war_engines.py::mixed_war_engine_and_infantry")


def _cache_dir(fresh: bool) -> str:
    if fresh:
        return tempfile.mkdtemp(prefix="numba-boundscheck-")
    from wargame_odds.kernels import default_cache_dir

    return str(default_cache_dir().parent / "numba-cache-boundscheck")


def _check_can_fail() -> str | None:
    """None if an index past the end of an array raises IndexError in a jitted ``_at``, else what went wrong."""
    import numpy as np
    from numba import njit

    from wargame_odds.kernels.epic.access import _at

    @njit
    def past(a, i):
        return _at(a, i)

    try:
        past(np.zeros(3, np.int64), 3)
    except IndexError:
        return None
    return "an index past the end of an array did not raise: the run is not bounds-checked"


def _withdrawal_fire_cases() -> dict[str, str]:
    """The kernel cases of tests/epic/test_withdrawal_fire.py (``KERNEL_CASES``), named as the fingerprint names a
    test's scenarios."""
    tests = ROOT / "tests" / "epic"
    sys.path.insert(0, str(tests))  # the test module imports its helpers as top-level modules
    try:
        from test_withdrawal_fire import KERNEL_CASES
    finally:
        sys.path.remove(str(tests))
    return {f"tests/epic/test_withdrawal_fire.py::{name}": text for name, text in KERNEL_CASES.items()}


def _run_cases(subset: bool) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from wargame_odds.analysis import epic
    from wargame_odds.analysis.epic.engine import turn_kernel_unsupported
    from benchmarks.fingerprint import epic_scenarios
    from wargame_odds.analysis.run.runner import stream_key

    cases = epic_scenarios() | _withdrawal_fire_cases()
    if subset:
        cases = {name: cases[name] for name in SUBSET}
    key0, key1 = stream_key(11)
    failures = []
    for name, scenario in cases.items():
        scenario = epic.loads(scenario, name.rsplit("::", 1)[-1]) if isinstance(scenario, str) else scenario
        try:
            if epic._is_turn(scenario) and turn_kernel_unsupported(epic._compiled_turn(scenario)) is not None:
                epic.simulate(scenario, trials=64, seed=11, progress=False)  # the reference engine
                continue
            from wargame_odds.analysis.epic.engine import KernelArrays

            arrays = KernelArrays.build_turn(epic._compiled_turn(scenario)) if epic._is_turn(scenario) \
                else KernelArrays.build(epic._compiled(scenario))
            for trial_streams in (False, True):
                arrays.run(key0, key1, 0, TRIALS, trial_streams)
        except IndexError as error:
            failures.append(f"{name}: {error}")
    if not subset:  # the shipped aircraft turns, which run on the reference engine, are not in the fingerprint
        for path in sorted((ROOT / "analysis" / "scenarios" / "epic" / "aircraft").glob("*.toml")):
            epic.simulate(epic.load(str(path)), trials=64, seed=11, progress=False)
    print(f"bounds-checked: {len(cases)} case(s), {len(failures)} out of bounds")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/check_bounds.py", description=__doc__.split("\n")[0])
    parser.add_argument("--subset", action="store_true", help="a few cases that reach every kernel path (CI)")
    parser.add_argument("--fresh", action="store_true", help="compile into an empty temporary cache")
    args = parser.parse_args(argv)
    if os.environ.get("WARGAME_ODDS_BOUNDSCHECK_CHILD") != "1":  # compile with the check, in its own cache
        cache = _cache_dir(args.fresh)
        env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_OPT="0", NUMBA_CACHE_DIR=cache,
                   WARGAME_ODDS_BOUNDSCHECK_CHILD="1")
        try:
            return subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env, check=False).returncode
        finally:
            if args.fresh:
                shutil.rmtree(cache, ignore_errors=True)
    problem = _check_can_fail()
    if problem:
        print(problem)
        return 1
    failures = _run_cases(args.subset)
    print("\n".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
