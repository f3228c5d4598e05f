"""Epic Armageddon (NetEA): assaults from the charge to the end-phase rally, and whole turns.

``load(path)`` (or ``loads(toml_text)``) ``→ simulate(scenario, trials=..., seed=...) → result.table() / .plot() /
.to_json()``; ``trace(scenario, seed=...)`` prints one trial from the reference engine;
``regroup(...)``, ``rally(...)``, ``action_test(...)`` and ``assault_result(...)`` compute those steps on
their own, exactly (fractions; TP 1.13.1, 1.14.1, 1.6.2, 1.12.7).
The model the engines implement is documented in ``docs/epic-engine.md``; turn scenarios (``[[turn]]``)
in ``docs/epic-turn.md``.
"""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

from ..run import runner
from ..intake import systems
from ..run.runner import block_rng
from ..intake.scenario import parse_toml, read_toml, validate
from ..intake.systems import System
from ..intake.user_text import printable
from .bounds import MAX_BLAST_MARKERS, MAX_EXTRA_ATTACKS, MAX_POINTS, MAX_SPEED_CM
from .compile import CompiledEpic, compile_scenario
from .model import EpicScenario
from .outcome import EpicResult, build_result, precision_successes, record
from .exact_steps import exact_action_test, exact_assault_result, exact_rally
from .regroup import exact_regroup  # imported here: the submodule would otherwise shadow regroup()

__all__ = ["load", "loads", "simulate", "trace", "engine_for", "regroup", "rally", "action_test", "assault_result",
           "EpicScenario", "EpicResult", "SYSTEM"]


def load(path: str | Path) -> EpicScenario:
    """Read and validate a scenario file (a string is always a path; text goes to :func:`loads`)."""
    data, source = read_toml(path)
    scenario = validate(EpicScenario, data, source)
    scenario._source = source
    return scenario


def loads(text: str, source: str = "<string>") -> EpicScenario:
    """Validate a scenario given as TOML text (``source`` names it in error messages)."""
    scenario = validate(EpicScenario, parse_toml(text, source), source)
    scenario._source = source
    return scenario


def _compiled(scenario) -> CompiledEpic:
    if isinstance(scenario, CompiledEpic):
        return scenario
    if not isinstance(scenario, EpicScenario):
        scenario = load(scenario)
    return compile_scenario(scenario)


class ReferenceJob:
    """Runs the pure-Python reference engine through the shared runner.

    ``trial_streams``: trial ``t`` (global index) gets a generator of its own, keyed
    ``(key0, key1 ^ TRIAL_STREAM_KEY, t)``, as the kernel's trial streams; otherwise one per block.
    """

    def __init__(self, compiled: CompiledEpic, trial_streams: bool = False):
        from .reference import run_trial
        from .turn_result import refuse_turn

        refuse_turn(compiled, "reference assault job")  # a turn runs through simulate() (TurnJob)
        self.compiled = compiled
        self.trial_streams = bool(trial_streams)
        self._run_trial = run_trial

    def run_chunk(self, key0, key1, first_block, n_trials):
        from ...kernels.epic.layout import TRIAL_STREAM_KEY
        from ...kernels.rng import BLOCK_TRIALS

        counts = self.compiled.layout.zeros()
        if self.trial_streams:
            first = first_block * BLOCK_TRIALS
            for t in range(first, first + n_trials):
                record(self.compiled, self._run_trial(self.compiled, block_rng(key0, key1 ^ int(TRIAL_STREAM_KEY), t)),
                       counts)
            return counts
        for b in range(-(-n_trials // BLOCK_TRIALS)):
            rng = block_rng(key0, key1, first_block + b)
            for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
                record(self.compiled, self._run_trial(self.compiled, rng), counts)
        return counts

    def precision_successes(self, counts):
        return precision_successes(self.compiled, counts)


def simulate(scenario, *, trials: int = runner.DEFAULT_TRIALS, seed: int = 0, precision: float | None = None,
             threads: int | None = None, chunk_trials: int | None = None, progress: bool | None = None,
             max_trials: int = runner.DEFAULT_MAX_TRIALS, cell: tuple = (), engine: str = "kernel") -> EpicResult:
    """Simulate ``trials`` assaults (or until ``precision``) and return an :class:`EpicResult`.

    ``engine="reference"`` runs the pure-Python reference engine instead of the Numba kernel
    (about a thousand times slower; for checks).  A turn with a part the kernel does not simulate yet
    (:func:`engine_for`) runs on the reference engine either way, and its result says so in a note.
    """
    if _is_turn(scenario):
        return _simulate_turn(scenario, engine, trials=trials, seed=seed, precision=precision, threads=threads,
                              chunk_trials=chunk_trials, progress=progress, max_trials=max_trials, cell=cell)
    runner.check_argument("engine", engine)
    compiled = _compiled(scenario)
    if engine == "kernel":
        from .engine import KernelJob

        job = KernelJob(compiled)
    else:
        job = ReferenceJob(compiled)
    counts, info = runner.run(job, trials=trials, seed=seed, precision=precision, max_trials=max_trials,
                              chunk_trials=chunk_trials, threads=threads, progress=progress, cell=cell)
    return build_result(compiled, counts, info, engine=engine)


def trace(scenario, *, seed: int = 0) -> str:
    """One trial, step by step, from the reference engine: every roll and decision with its clause."""
    from .reference import run_trial

    if _is_turn(scenario):
        return printable(_trace_turn(scenario, seed))
    compiled = _compiled(scenario)
    lines: list[str] = [f"{compiled.scenario.title}: one trial, seed {seed} (reference engine)"]
    key0, key1 = runner.stream_key(seed)
    outcome = run_trial(compiled, block_rng(key0, key1, 0), log=lines.append)
    lines.append(f"outcome: winner={outcome.winner} rounds={outcome.rounds} margin={outcome.margin}")
    return printable("\n".join(lines))


# -- turn scenarios (docs/epic-turn.md) ----------------------------------------------------------------

def _is_turn(scenario) -> bool:
    if isinstance(scenario, CompiledEpic):
        return bool(scenario.scenario.turn)
    return bool((scenario if isinstance(scenario, EpicScenario) else load(scenario)).turn)


def engine_for(scenario, engine: str = "kernel") -> tuple[str, str | None]:
    """The engine a run of ``scenario`` takes when ``engine`` is asked for, and why, when that is not the one
    asked for: a turn with a part the Numba kernel does not simulate yet (aircraft, spacecraft, a Land Train
    that can lose its battlecars; docs/epic-turn.md §7) runs on the pure-Python reference engine."""
    if not _is_turn(scenario):
        runner.check_argument("engine", engine)
        return engine, None
    return _turn_engine(_compiled_turn(scenario), engine)


def _turn_engine(c, engine: str) -> tuple[str, str | None]:
    """:func:`engine_for` of a compiled turn."""
    runner.check_argument("engine", engine)
    if engine == "reference":
        return engine, None
    from .engine import turn_kernel_unsupported

    unsupported = turn_kernel_unsupported(c)
    if unsupported is None:
        return engine, None
    field, feature = unsupported
    return "reference", f"the Numba kernel does not simulate {feature} yet ({field})"


def _compiled_turn(scenario):
    from .turn_result import compile_turn

    if isinstance(scenario, CompiledEpic):
        scenario = scenario.scenario
    return compile_turn(scenario if isinstance(scenario, EpicScenario) else load(scenario))


def _simulate_turn(scenario, engine: str, **run_args):
    from .turn_result import TurnJob, build_turn_result

    c = _compiled_turn(scenario)
    engine, reason = _turn_engine(c, engine)
    if engine == "kernel":
        from .engine import KernelJob

        job = KernelJob(c)
    else:
        job = TurnJob(c)
    counts, info = runner.run(job, **run_args)
    return build_turn_result(c, counts, info, engine=engine, reason=reason)


def _trace_turn(scenario, seed: int) -> str:
    from .turn import run_turn_trial

    c = _compiled_turn(scenario)
    lines: list[str] = [f"{c.scenario.title}: one turn, seed {seed} (reference engine)"]
    key0, key1 = runner.stream_key(seed)
    outcome = run_turn_trial(c.compiled, c.weapons, block_rng(key0, key1, 0), log=lines.append)
    result = outcome.assault
    lines.append("outcome: " + (f"winner={result.winner} rounds={result.rounds} margin={result.margin}"
                                if result.winner is not None else "no assault"))
    return "\n".join(lines)


def regroup(blast_markers: int, leaders: int = 0):
    """The regroup roll (TP 1.13.1): removes min(highest of 2D6 + leaders, blast_markers).

    Returns a result with the exact distributions of markers removed and left and P(all removed)
    (enumerated with fractions; each interval is the value itself).
    """
    return exact_regroup(blast_markers, leaders)


def rally(initiative: int, *, blast_markers: int = 0, broken: bool = False, units: int = 1, leaders: int = 0,
          enemy_within_30cm: bool = False, army_rules=(), supreme_commander_reroll: bool = False,
          natural_one_fails: bool = False):
    """One end-phase rally test (TP 1.14.1): D6 + modifiers ≥ initiative, −2 broken, −1 enemy within
    30 cm, Mob Rule +1 / +2 with more than 5 / 10 ``units`` (``army_rules=["mob-rule"]``); a pass removes
    half the BMs rounded up (broken: keeps ⌊units/2⌋; They Shall Know No Fear: units) and 1 per Leader
    (TSKNF: 2) (TP 2.1.8); ``supreme_commander_reroll`` re-rolls a failed test once (TP 2.1.15).

    Returns a result with the exact P(passes), P(still broken) and the BMs held afterwards (a formation
    still broken holds none).
    """
    return exact_rally(initiative, blast_markers, broken, units, leaders, enemy_within_30cm, army_rules,
                       supreme_commander_reroll, natural_one_fails)


def action_test(initiative: int, *, blast_markers: int = 0, retain: bool = False, modifier: int = 0,
                supreme_commander_reroll: bool = False):
    """One action test (TP 1.6.2, 1.6.3): D6 ≥ initiative, −1 with any BM, −1 when ``retain``-ing the
    initiative, plus an army-list ``modifier``; a 1 is no automatic failure (TP-FAQ); exact P(passes)."""
    return exact_action_test(initiative, blast_markers, retain, modifier, supreme_commander_reroll)


def assault_result(attacker_modifier: int = 0, defender_modifier: int = 0, *, result_dice: str = "highest"):
    """One assault result roll (TP 1.12.7): each side's highest of 2D6 plus its modifiers (kills, more
    units, no BMs, ...); exact P(attacker wins / tie / defender wins), P(attacker wins | no tie) and the
    distribution of the margin (attacker − defender: the loser's extra hits). ``result_dice="sum"`` is
    the non-TP variant (§9.1)."""
    return exact_assault_result(attacker_modifier, defender_modifier, result_dice)


class EpicSystem(System):
    """Epic Armageddon behind the :class:`~wargame_odds.analysis.intake.systems.System` protocol."""

    name = "epic"
    title = systems.title("epic")
    scenario_type = EpicScenario
    bounds = {"MAX_BLAST_MARKERS": MAX_BLAST_MARKERS, "MAX_EXTRA_ATTACKS": MAX_EXTRA_ATTACKS,
              "MAX_SPEED_CM": MAX_SPEED_CM, "MAX_POINTS": MAX_POINTS}
    load = staticmethod(load)
    loads = staticmethod(loads)
    simulate = staticmethod(simulate)
    trace = staticmethod(trace)
    engine_for = staticmethod(engine_for)

    def scenarios(self) -> list[str]:
        """Its shipped assaults and turns, by name."""
        from ..intake.examples import examples

        return [e.name for e in examples() if e.kind in ("epic", "turn")]

    def headline(self, data: dict, table=None) -> list[str]:
        from .headline import epic

        return epic(data, table)

    def summary(self, data: dict) -> list[str]:
        from .headline import epic_summary

        return epic_summary(data)

    def decision_notes(self, result) -> list[str]:
        from .headline import scoring_assumption

        return scoring_assumption(result)

    @cached_property
    def decisions(self):
        from .decisions import EpicDecisions

        return EpicDecisions(self, ReferenceJob)


SYSTEM = EpicSystem()
