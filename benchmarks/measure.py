"""One source tree's timing worker for the speed guard (``benchmarks/guard.py``): it answers timing requests
on stdin, one JSON line each, with one JSON line on stdout, so that two commits stay warm side by side and
the guard can interleave them.

Run from the root of the tree to measure, with that root first on ``sys.path`` (``guard.py`` starts it so;
it uses only what every measured commit has: ``<system>.load`` / ``simulate(..., threads=1)`` of the analysis package
and the kernels' ``rng``, under the tree's own names (:func:`package_prefix`: ``wargame_odds.`` before both where the
tree's pyproject.toml maps them into the one installed package, none in older trees).
A request ``{"system": "epic", "scenario": PATH, "small": N1, "large": N2, "seed": S}`` times ``simulate`` at N1
and at N2 trials on one thread (each the faster of two runs), in CPU seconds of the
process (on a shared machine the wall clock counts the other processes' turns), and answers the marginal rate
``(N2 - N1) / (t2 - t1)`` (the fixed cost of a call, setup and result building, cancels out) with the raw
generator's D6 per second measured just before, so the guard can form trials per raw D6 from the same moment
of the same process. ``{"raw": true}`` measures the raw rate alone; an error is answered as
``{"error": "..."}`` and the worker carries on.
"""
from __future__ import annotations

import importlib
import json
import sys
import time
import tomllib
import traceback
from pathlib import Path

RAW_D6 = 50_000_000
SLOWEST = 20_000  # trials/s: slower is the reference engine


def package_prefix(tree: Path) -> str:
    """``"wargame_odds."`` when the tree's pyproject.toml maps its analysis/ and kernels/ folders into the one
    installed package (``[tool.setuptools.package-dir]``), else ``""``: an older tree's top-level packages."""
    pyproject = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    mapped = pyproject.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    return "wargame_odds." if "wargame_odds.kernels" in mapped else ""


PREFIX = package_prefix(Path.cwd())


def _raw_kernel():
    import numpy as np
    from numba import njit

    rng = importlib.import_module(PREFIX + "kernels" + ".rng")
    d6, seed_stream = rng.d6, rng.seed_stream

    @njit
    def raw_d6(n, key0, key1):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, 0)
        total = 0
        for _ in range(n):
            total += d6(state)
        return total

    raw_d6(1000, np.uint64(1), np.uint64(2))
    return lambda n, r: raw_d6(n, np.uint64(r + 1), np.uint64(7))


def _warm(system, path):
    """The scenario loaded and its kernel compiled or loaded from the cache; an error when this tree runs it at
    under :data:`SLOWEST` trials/s (on its reference engine: a turn part its kernel did not run yet)."""
    scenario = system.load(path)
    system.simulate(scenario, trials=1024, seed=0, threads=1)
    start = time.process_time()
    system.simulate(scenario, trials=1024, seed=1, threads=1)
    rate = 1024 / max(time.process_time() - start, 1e-9)
    if rate < SLOWEST:
        raise RuntimeError(f"{rate:.0f} trials/s: not on a kernel in this tree")
    return scenario


def main() -> int:
    import numba

    numba.set_num_threads(1)
    domain = importlib.import_module(PREFIX + "analysis")  # the tree's analysis package

    if not Path(domain.__file__).resolve().is_relative_to(Path.cwd().resolve()):
        raise SystemExit(f"measure.py: {domain.__name__} comes from {domain.__file__}, not from {Path.cwd()}")
    raw = _raw_kernel()
    loaded = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            start = time.process_time()
            raw(RAW_D6, request.get("seed", 0))
            answer = {"raw_d6_per_s": RAW_D6 / (time.process_time() - start)}
            if not request.get("raw"):
                system = importlib.import_module(f"{domain.__name__}.{request['system']}")
                key = (request["system"], request["scenario"])
                if key not in loaded:
                    try:
                        loaded[key] = _warm(system, request["scenario"])
                    except Exception as error:  # noqa: BLE001 - answered below, and again at each request
                        loaded[key] = error
                if isinstance(loaded[key], Exception):
                    raise loaded[key]
                seconds = [float("inf"), float("inf")]
                for run in range(4):  # small, large, small, large: each the faster of two (a stall only adds)
                    start = time.process_time()
                    system.simulate(loaded[key], trials=request[("small", "large")[run % 2]],
                                    seed=request.get("seed", 0), threads=1)
                    seconds[run % 2] = min(seconds[run % 2], time.process_time() - start)
                marginal = (request["large"] - request["small"]) / max(seconds[1] - seconds[0], 1e-9)
                answer.update(trials_per_s=marginal, seconds=seconds)
        except Exception as error:  # noqa: BLE001 - a shape one commit cannot run is reported, not fatal
            answer = {"error": f"{type(error).__name__}: {error}".splitlines()[0][:300],
                      "trace": traceback.format_exc(limit=3)[-600:]}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
