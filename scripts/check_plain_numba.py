"""``make check-plain-numba``: every shipped scenario that runs on a kernel (Epic assaults and turns, GdB, T9A)
gives byte-identical JSON in the extended Numba mode and with plain ``numba.njit`` (``WARGAME_ODDS_PLAIN_NUMBA=1``,
kernels/jit.py), each mode compiling into an empty cache folder of its own (docs/numba.md).

It takes several minutes of CPU (the plain cold compiles of the Epic kernel's assault and turn variants), too long
for the test suite, which compares a GdB and a T9A scenario (tests/test_plain_numba.py).  ``--subset`` (run by CI,
``.ci/run``) compares the shipped Epic assaults only (one compile of the assault variant in each mode, a few
minutes of CPU).  Exit status 1 names the scenarios that differ.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "analysis" / "scenarios"
TRIALS = 5000

#: Each shipped scenario that runs on a kernel, as one JSON line per scenario: {path: to_json()}.
_RUN_ALL = """
import json, sys
from pathlib import Path
from wargame_odds import analysis
from wargame_odds.analysis.epic import engine_for
root, subset = Path(sys.argv[1]), sys.argv[3] == "subset"
for system in ("epic",) if subset else ("epic", "gdb", "t9a"):
    module = getattr(analysis, system)
    for path in sorted((root / system).rglob("*.toml")):
        if "decisions" in path.parts:
            continue
        if system == "epic" and engine_for(str(path))[0] != "kernel":
            continue  # aircraft: the reference engine only
        if subset and "turns" in path.parts:
            continue
        result = module.simulate(module.load(str(path)), trials=int(sys.argv[2]), seed=5, progress=False)
        print(json.dumps({str(path.relative_to(root)): result.to_json()}), flush=True)
"""


def run_all(plain: bool, subset: bool = False) -> dict[str, str]:
    """Every scenario's JSON (``subset``: the Epic assaults'), in a process of the given mode with an empty cache
    folder."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, WARGAME_ODDS_PLAIN_NUMBA="1" if plain else "0")
        child = subprocess.run([sys.executable, "-c", _RUN_ALL, str(SCENARIOS), str(TRIALS),
                                "subset" if subset else "all"], env=env,
                               capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise SystemExit(f"the {'plain' if plain else 'extended'} run failed:\n{child.stderr[-3000:]}")
    results = {}
    for line in child.stdout.splitlines():
        results.update(json.loads(line))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", action="store_true", help="the shipped Epic assaults only (a few minutes of CPU)")
    subset = parser.parse_args().subset
    extended, plain = run_all(plain=False, subset=subset), run_all(plain=True, subset=subset)
    differing = sorted(path for path in extended.keys() | plain.keys() if extended.get(path) != plain.get(path))
    for path in differing:
        print(f"differs between the extended and the plain Numba mode: {path}")
    what = "shipped Epic assaults" if subset else "shipped scenarios"
    print(f"{len(extended) - len(differing)} of {len(extended)} {what} identical in both modes "
          f"({TRIALS:,} trials each, seed 5)")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
