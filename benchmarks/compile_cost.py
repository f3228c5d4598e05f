"""First-run costs, each measured in a fresh process: the cold compile of the Epic kernel for an assault
and, apart, for a turn, in the extended mode and in plain Numba's (``WARGAME_ODDS_PLAIN_NUMBA=1``, kernels/jit.py)
(CPU seconds and peak resident memory, each with an empty Numba cache),
``wargame-odds --help`` and a warm 1,000-trial CLI run (wall and CPU seconds, cache filled), and the floor
under the warm runs: a Python process that only imports the libraries they all import (and exits as the
program does).

CPU and memory come from the kernel's own accounting of the child process (``os.wait4``: the
``RUSAGE_CHILDREN`` figures of that one child), so they include Python's start-up and imports.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_SCENARIO = ROOT / "analysis" / "scenarios" / "epic" / "assault_marines_vs_warband.toml"
#: A shipped scenario of each system for the warm-run timing.
WARM_RUNS = {"epic": README_SCENARIO, "gdb": ROOT / "analysis" / "scenarios" / "gdb" / "column_vs_line.toml",
             "t9a": ROOT / "analysis" / "scenarios" / "t9a" / "flee_reaction.toml"}
CLI = Path(sys.executable).with_name("wargame-odds")
#: The libraries every warm run imports (the kernels' runtime, the scenario models, the command line), with
#: the garbage collector paused as the program pauses it (wargame_odds.analysis.run.gc_pause), then the program's exit
#: (``gc.freeze``, wargame_odds.analysis.cli): the floor under the warm runs' times that the program's own code does not
#: set.
WARM_RUN_IMPORTS = "import gc; gc.disable(); import numba, click; from pydantic import BaseModel; gc.freeze()"

#: The shipped turn scenario of ``make demo``: its first run compiles the block function's turn variant.
TURN_SCENARIO = ROOT / "analysis" / "scenarios" / "epic" / "turns" / "devastators_then_assault_marines.toml"

#: Check that each jitted function of the Epic kernel was compiled for one signature at most, in either mode.  (The
#: block function has two variants, ``turn`` None for an assault and the turn tables for a turn: a process that ran
#: both holds both, but each of these processes runs one kind only.)  Plain Numba compiles a function once per set
#: of argument types its call sites pass, a constant typed as its value: the kernel's call sites pass int64 and bool
#: values (tests/epic/test_call_site_types.py), and this finds a call site that does not.
_ONE_SIGNATURE_EACH = """
from numba.core.dispatcher import Dispatcher
import sys
import wargame_odds.kernels.epic.block
twice = {f"{name}.{fname}": f.signatures
         for name, module in list(sys.modules.items()) if name.startswith("wargame_odds.kernels.epic.")
         for fname, f in vars(module).items() if isinstance(f, Dispatcher) and len(f.signatures) > 1}
assert not twice, twice
"""
#: Compile the Epic kernel for the README's first scenario and run it with 65 units a side (two mask
#: words) too: one compile serves both.
_COLD_EPIC = f"""
import wargame_odds.analysis.epic as epic
scenario = epic.load({str(README_SCENARIO)!r})
epic.simulate(scenario, trials=1000, seed=0, progress=False)
epic.simulate(scenario.replace("formations[0].units[0].count", 65), trials=1000, seed=0, progress=False)
""" + _ONE_SIGNATURE_EACH
#: Compile the Epic kernel for a turn scenario (its activations, then the assault).
_COLD_TURN = f"""
import wargame_odds.analysis.epic as epic
epic.simulate(epic.load({str(TURN_SCENARIO)!r}), trials=1000, seed=0, progress=False)
""" + _ONE_SIGNATURE_EACH


def child_cost(argv: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """(CPU seconds, peak resident MiB, wall seconds) of one child process; it must exit 0."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {child.stderr.read().decode()[-2000:]}")
    child.stderr.close()
    peak = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)  # bytes on macOS, KiB elsewhere
    return usage.ru_utime + usage.ru_stime, peak, wall


def cold_epic_compile(script: str = _COLD_EPIC, plain: bool = False) -> tuple[float, float]:
    """CPU seconds and peak MiB of a process that compiles the Epic kernel into an empty cache (for an
    assault; ``_COLD_TURN``: for a turn), in the extended mode or, ``plain``, with plain ``numba.njit``."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, WARGAME_ODDS_PLAIN_NUMBA="1" if plain else "0")
        cpu, peak, _ = child_cost([sys.executable, "-c", script], env)
    return cpu, peak


def cli_cost(args: list[str], repeats: int = 5, program: list[str] | None = None) -> tuple[float, float]:
    """Median (wall seconds, CPU seconds) of ``wargame-odds ARGS`` (or of ``program`` ARGS; after one run
    that fills the caches).  On a loaded machine the wall time is mostly waiting for a core; the CPU time
    is the program's.  Warm means Python's bytecode cache too, as a user's runs have it:
    PYTHONDONTWRITEBYTECODE is dropped."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = (program or [str(CLI)]) + args
    child_cost(argv, env)
    runs = [child_cost(argv, env) for _ in range(repeats)]
    return statistics.median(r[2] for r in runs), statistics.median(r[0] for r in runs)


def main() -> int:
    for plain in (False, True):
        mode = "plain numba.njit (WARGAME_ODDS_PLAIN_NUMBA=1)" if plain else "extended mode (the default)"
        cpu, peak = cold_epic_compile(plain=plain)
        print(f"cold compile of the Epic kernel, {mode}: {cpu:.0f} s CPU, peak {peak:.0f} MiB resident "
              f"(targets < 60 s, < 1024 MiB)")
        cpu, peak = cold_epic_compile(_COLD_TURN, plain=plain)
        print(f"cold compile of the Epic kernel's turn variant (a turn scenario first, empty cache), {mode}: "
              f"{cpu:.0f} s CPU, peak {peak:.0f} MiB resident")
    help_wall, help_cpu = cli_cost(["--help"])
    warm = {system: cli_cost([system, str(path), "--trials", "1000"]) for system, path in WARM_RUNS.items()}
    print(f"wargame-odds --help: {help_wall:.2f} s wall ({help_cpu:.2f} s CPU); warm 1,000-trial runs: "
          + ", ".join(f"{system} {wall:.2f} s wall ({cpu:.2f} s CPU)" for system, (wall, cpu) in warm.items())
          + " (targets < 1 s wall; medians of 5)")
    floor_wall, floor_cpu = cli_cost(["-c", WARM_RUN_IMPORTS], program=[sys.executable])
    print(f"floor under the warm runs (`python -c \"{WARM_RUN_IMPORTS}\"`): {floor_wall:.2f} s wall "
          f"({floor_cpu:.2f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
