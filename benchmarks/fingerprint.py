"""Same dice, same numbers: the counts every kernel gives for a fixed seed, checked against a committed record.

``python -m benchmarks.fingerprint --check`` (from the checkout root) runs every case below on the kernels and
compares each case's digest with ``benchmarks/fingerprint.json``: it prints the cases that differ and exits 1,
or prints the totals and exits 0.  ``--write`` records the digests of the code as it is.  A refactor keeps every
digest; a commit that changes results on purpose writes the file again and says which totals changed and why
(docs/fingerprint.md).

Cases: every shipped Epic scenario the kernel runs (``analysis/scenarios/epic``), the Epic benchmark scenarios,
and every scenario of the kernel's tests (``tests/epic/scenarios``, with the scenarios those tests build, read by
``tests/epic/scenario_data.py``; no test module is imported), each on block streams and on trial streams (the
``trial_streams`` option of ``KernelArrays.run``); and every shipped General de Brigade and The 9th Age
scenario, through the runner in one chunk and in chunks of one block (the two must agree).  A case's digest
is the first 12 hex digits of the SHA-256 of its counts (and, for Epic, the number of dice rolled) as int64.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RECORD = Path(__file__).resolve().parent / "fingerprint.json"
TRIALS = 20_000
SEED = 1
TEST_DIR = ROOT / "tests" / "epic"


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()[:12]


def epic_scenarios() -> dict[str, object]:
    """Every Epic case: name -> a scenario (an ``EpicScenario``, or TOML text)."""
    from wargame_odds.analysis import epic
    from wargame_odds.analysis.intake.errors import UserError

    cases: dict[str, object] = {}
    for path in sorted((ROOT / "analysis" / "scenarios" / "epic").rglob("*.toml")):
        try:
            cases[str(path.relative_to(ROOT))] = epic.load(str(path))
        except UserError:  # a decision or matrix definition, or a formation file: no scenario of its own
            continue
    for path in sorted((ROOT / "benchmarks" / "scenarios").glob("epic_*.toml")):
        cases[str(path.relative_to(ROOT))] = epic.load(str(path))
    sys.path.insert(0, str(TEST_DIR))  # the kernel tests' scenario data: no test module, nothing from pytest
    try:
        scenario_data = importlib.import_module("scenario_data")
    finally:
        sys.path.remove(str(TEST_DIR))
    cases.update(scenario_data.fingerprint_cases())
    return cases


def epic_digests(cases: dict[str, object]) -> tuple[dict[str, str], set[str]]:
    """(case/streams -> digest, the names of the turn cases) for the cases the kernel runs."""
    from wargame_odds.analysis import epic
    from wargame_odds.analysis.epic import _compiled, _compiled_turn, _is_turn, _turn_engine
    from wargame_odds.analysis.epic.engine import KernelArrays
    from wargame_odds.analysis.run.runner import stream_key

    key0, key1 = stream_key(SEED)
    digests, turns = {}, set()
    for name, scenario in cases.items():
        scenario = epic.loads(scenario, name.rsplit("::", 1)[-1]) if isinstance(scenario, str) else scenario
        if _is_turn(scenario):
            compiled = _compiled_turn(scenario)
            if _turn_engine(compiled, "kernel")[0] != "kernel":  # runs on the reference engine (aircraft)
                continue
            arrays = KernelArrays.build_turn(compiled)
        else:
            arrays = KernelArrays.build(_compiled(scenario))
        for streams, trial_streams in (("block", False), ("trial", True)):
            counts, dice = arrays.run(key0, key1, 0, TRIALS, trial_streams)
            line = f"{name} [{streams} streams]"
            digests[line] = digest(counts, [dice])
            if _is_turn(scenario):
                turns.add(line)
    return digests, turns


def gdb_t9a_digests() -> dict[str, str]:
    """Every shipped GdB and T9A scenario through the runner; one chunk and one-block chunks must agree."""
    from wargame_odds.analysis import gdb, t9a
    from wargame_odds.analysis.run import runner
    from wargame_odds.analysis.gdb.compile import KernelJob as GdbJob
    from wargame_odds.analysis.t9a import KernelJob as T9aJob
    from wargame_odds.kernels.rng import BLOCK_TRIALS

    digests = {}
    for system, module, job_class in (("gdb", gdb, GdbJob), ("t9a", t9a, T9aJob)):
        for path in sorted((ROOT / "analysis" / "scenarios" / system).glob("*.toml")):
            job = job_class(module.load(str(path)))
            whole, _ = runner.run(job, trials=TRIALS, seed=SEED, progress=False)
            chunked, _ = runner.run(job, trials=TRIALS, seed=SEED, progress=False, chunk_trials=BLOCK_TRIALS)
            name = str(path.relative_to(ROOT))
            digests[name] = digest(whole) if np.array_equal(whole, chunked) else "chunks-differ"
    return digests


def total(lines: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{k} {v}\n" for k, v in sorted(lines.items())).encode()).hexdigest()[:12]


def compute() -> dict:
    from wargame_odds.analysis.run.numba_cache import prepare_kernels

    prepare_kernels()  # first: the Epic cases call the kernel directly, and Numba's cache would give them the code
    # cached before a helper's module changed (wargame_odds.analysis.run.numba_cache)
    epic_lines, turns = epic_digests(epic_scenarios())
    other = gdb_t9a_digests()
    return {
        "definition": f"{TRIALS} trials, seed {SEED}; benchmarks/fingerprint.py",
        "totals": {"epic": total(epic_lines), "epic_turns": total({k: epic_lines[k] for k in turns}),
                   "gdb_t9a": total(other)},
        "epic": dict(sorted(epic_lines.items())),
        "gdb_t9a": dict(sorted(other.items())),
    }


def differences(recorded: dict, now: dict) -> list[str]:
    out = []
    for section in ("epic", "gdb_t9a"):
        old, new = recorded.get(section, {}), now[section]
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                out.append(f"{name}: {old.get(name, 'not recorded')} -> {new.get(name, 'gone')}")
    return out


def _totals(record: dict) -> str:
    t = record["totals"]
    return f"Epic {t['epic']} (turns {t['epic_turns']}), GdB/T9A {t['gdb_t9a']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fingerprint", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="recompute and compare with benchmarks/fingerprint.json")
    mode.add_argument("--write", action="store_true", help="recompute and write benchmarks/fingerprint.json")
    args = parser.parse_args(argv)
    now = compute()
    lines = len(now["epic"]) + len(now["gdb_t9a"])
    if args.write:
        RECORD.write_text(json.dumps(now, indent=1) + "\n")
        print(f"fingerprint written: {lines} cases; {_totals(now)}")
        return 0
    recorded = json.loads(RECORD.read_text())
    diff = differences(recorded, now)
    if diff:
        print(f"fingerprint differs from {RECORD.relative_to(ROOT)} in {len(diff)} of {lines} cases "
              f"(recorded {_totals(recorded)}; now {_totals(now)}):")
        print("\n".join(diff))
        return 1
    print(f"fingerprint: same dice, same numbers in all {lines} cases; {_totals(now)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
