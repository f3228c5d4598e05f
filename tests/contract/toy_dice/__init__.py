"""A toy fourth rule system, to show what a new system takes: this folder and one registration line
(``wargame_odds.analysis.intake.systems.register("toy", "toy_dice", "…")``, in tests/contract/test_contract.py).

The game: a hero rolls ``dice`` six-sided dice and succeeds when their sum is at least ``target``.  The "kernel" is
NumPy, one generator per block of trials; the reference engine is pure Python, one ``random.Random`` per block
(:func:`wargame_odds.analysis.run.runner.block_rng`), so the two agree within sampling error only, as the real systems'
engines do. Its exact answer is :func:`exact_success` (all 6**dice rolls enumerated).
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from wargame_odds.analysis.run import runner
from wargame_odds.analysis.intake.bounds import Name, Title
from wargame_odds.analysis.output.estimates import Probability
from wargame_odds.analysis.output.headline import chance
from wargame_odds.analysis.output.result import Result
from wargame_odds.analysis.run.runner import block_rng
from wargame_odds.analysis.intake.scenario import StrictModel, parse_toml, read_toml, validate
from wargame_odds.analysis.intake.systems import System
from wargame_odds.analysis.intake.user_text import printable
from wargame_odds.kernels.rng import BLOCK_TRIALS

from pydantic import Field

FOLDER = Path(__file__).resolve().parent


class ToyScenario(StrictModel):
    """A hero's roll: ``dice`` D6, a success when the sum is at least ``target``."""

    system: str = "toy"
    title: Title = ""
    hero: Name
    dice: int = Field(ge=1, le=4)
    target: int = Field(ge=1, le=24)


class ToyJob:
    """Counts [trials, successes] of a chunk; ``engine``: "kernel" (NumPy) or "reference" (Python)."""

    def __init__(self, scenario: ToyScenario, engine: str):
        self.scenario, self.engine = scenario, engine

    def run_chunk(self, key0, key1, first_block, n_trials):
        successes = 0
        for b in range(-(-n_trials // BLOCK_TRIALS)):
            n = min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)
            if self.engine == "kernel":
                rolls = np.random.default_rng([key0, key1, first_block + b]).integers(1, 7, (n, self.scenario.dice))
                successes += int((rolls.sum(axis=1) >= self.scenario.target).sum())
            else:
                rng = block_rng(key0, key1, first_block + b)
                successes += sum(sum(rng.randint(1, 6) for _ in range(self.scenario.dice)) >= self.scenario.target
                                 for _ in range(n))
        return np.array([n_trials, successes], np.int64)

    def precision_successes(self, counts):
        return counts[1:2]


def load(path) -> ToyScenario:
    data, source = read_toml(path)
    return validate(ToyScenario, data, source)


def loads(text: str, source: str = "<string>") -> ToyScenario:
    return validate(ToyScenario, parse_toml(text, source), source)


def simulate(scenario, *, trials: int = 100_000, seed: int = 0, threads: int | None = None,
             precision: float | None = None, engine: str = "kernel", cell: tuple = (), **run) -> Result:
    runner.check_argument("engine", engine)
    scenario = scenario if isinstance(scenario, ToyScenario) else load(scenario)
    counts, info = runner.run(ToyJob(scenario, engine), trials=trials, seed=seed, threads=threads,
                              precision=precision, cell=cell, **run)
    tree = {"roll": {scenario.hero: {"succeeds": Probability(int(counts[1]), int(counts[0]))}}}
    return Result(system="toy", title=scenario.title or scenario.hero, info=info, tree=tree,
                  meta={"hero": scenario.hero})


def trace(scenario, *, seed: int = 0) -> str:
    scenario = scenario if isinstance(scenario, ToyScenario) else load(scenario)
    rng = block_rng(*runner.stream_key(seed), 0)
    rolls = [rng.randint(1, 6) for _ in range(scenario.dice)]
    return printable(f"{scenario.hero} rolls {rolls}: {sum(rolls)} against {scenario.target}")  # a name is data


def exact_success(dice: int, target: int) -> float:
    rolls = list(itertools.product(range(1, 7), repeat=dice))
    return sum(sum(r) >= target for r in rolls) / len(rolls)


class ToySystem(System):
    name = "toy"
    title = "A toy dice game: a hero's roll of D6 against a target."
    scenario_type = ToyScenario
    load = staticmethod(load)
    loads = staticmethod(loads)
    simulate = staticmethod(simulate)
    trace = staticmethod(trace)

    def scenarios(self) -> list[str]:
        return sorted(str(p) for p in (FOLDER / "scenarios").glob("*.toml"))

    def headline(self, data: dict, table=None) -> list[str]:
        return [f"{data['hero']} succeeds: {chance(data['roll'][data['hero']]['succeeds'])}"]

    def summary(self, data: dict) -> list[str]:
        return self.headline(data)


SYSTEM = ToySystem()
