"""The 9th Age charges (docs/t9a.md §3): charge range, failed charges, reactions, several chargers.

``load(path)`` or ``loads(toml_text)`` -> scenario; ``simulate(scenario, ...)`` -> :class:`T9AResult`;
``trace(scenario, seed=...)`` -> one trial told step by step; ``charge_table(...)`` -> exact
P(success) for a grid of distances and Advance Rates.  ``SYSTEM`` is the charge behind the
:class:`~wargame_odds.analysis.intake.systems.System` protocol.
"""
from __future__ import annotations

import math
from functools import cached_property

import click
import numpy as np

from ..intake import systems
from ..intake.arguments import check_flag
from ..intake.errors import ArgumentError, UserError
from ..intake.user_text import printable
from ..run.runner import DEFAULT_MAX_TRIALS, DEFAULT_TRIALS, check_argument, run, stream_key
from ..intake.systems import System
from ...kernels import t9a as _kernel
from ...kernels.rng import Run

from .charge.exact import MAX_TABLE_VALUES, charge_table, check_values
from .charge.layout import build_layout, kernel_arrays
from .charge.model import DICE, MAX_ADVANCE_RATE, MAX_INCHES, Model, load, loads
from .charge.results import T9AResult, build_result

__all__ = ["load", "loads", "simulate", "trace", "charge_table", "exact_combat", "T9AResult", "Model", "DICE",
           "SYSTEM"]


class KernelJob:
    """The Numba kernel as a runner job: the charge kernel, or with ``[combat]`` the charge-and-combat kernel
    (``trial_streams``: one stream per trial, for paired comparisons; combat only)."""

    def __init__(self, model: Model, trial_streams: bool = False):
        self.model = model
        self.layout = build_layout(model)
        self.arrays = kernel_arrays(model, self.layout)
        self.combat = None
        if model.combat is not None:
            from .combat.layout import combat_arrays

            self.combat = combat_arrays(model.combat, self.layout)
        elif trial_streams:
            raise NotImplementedError("trial streams need a [combat] scenario")
        self.trial_streams = bool(trial_streams)

    def run_chunk(self, key0, key1, first_block, n_trials):
        a = self.arrays
        run = Run(key0=np.uint64(key0), key1=np.uint64(key1), first_block=np.int64(first_block),
                  n_trials=np.int64(n_trials))
        if self.combat is not None:
            from ...kernels import t9a_combat

            return t9a_combat.run_chunk(run, self.trial_streams, a, self.combat, self.layout.size)
        return _kernel.run_chunk(run, a, self.layout.size)

    def precision_successes(self, counts):
        """P(each charger arrives), or catches / reaches its redirected target under a flee."""
        out = []
        for i in range(self.model.n):
            k = self.layout.scalar(counts, f"{i}:arrives")
            if self.model.reaction == "flee":
                k = self.layout.scalar(counts, f"{i}:catches") + \
                    self.layout.scalar(counts, f"{i}:redirect_arrives")
            out.append(k)
        return np.array(out, np.int64)


class ReferenceJob(KernelJob):
    """The pure-Python reference engine through the same runner and counts."""

    def run_chunk(self, key0, key1, first_block, n_trials):
        from .charge import reference  # imported only when used: a kernel run does without it

        return reference.run_chunk(self.model, self.layout, key0, key1, first_block, n_trials,
                                   self.trial_streams)


def exact_combat(scenario, exact: bool = False) -> dict:
    """The close combat's outcome probabilities, expected HP lost and distributions, exact, given that the charge
    arrives (docs/t9a.md "Close combat"): the ``melee.given_contact`` keys of :func:`simulate`'s result.
    ``exact=True`` gives fractions instead of floats."""
    from .combat.exact import fight

    check_flag("exact", exact)
    combat = _model(scenario).combat
    if combat is None:
        raise ArgumentError("scenario", getattr(scenario, "title", scenario), "a scenario with a [combat] table")
    return fight(combat, exact=exact)


def _model(scenario) -> Model:
    return scenario if isinstance(scenario, Model) else load(scenario)


def simulate(scenario, *, trials: int = DEFAULT_TRIALS, seed: int = 0, precision: float | None = None,
             threads: int | None = None, chunk_trials: int | None = None,
             progress: bool | None = None, max_trials: int = DEFAULT_MAX_TRIALS, cell: tuple = (),
             engine: str = "kernel") -> T9AResult:
    """Simulate ``scenario`` (a loaded model or a path); ``engine="reference"`` runs
    the pure-Python engine instead of the kernel, same counts and result shape."""
    check_argument("engine", engine)
    model = _model(scenario)
    job = {"kernel": KernelJob, "reference": ReferenceJob}[engine](model)
    counts, info = run(job, trials=trials, seed=seed, precision=precision, max_trials=max_trials,
                       chunk_trials=chunk_trials, threads=threads, progress=progress, cell=cell)
    return build_result(model, job.layout, counts, info, engine)


def trace(scenario, *, seed: int = 0) -> str:
    """One trial of the reference engine, every roll, modifier and decision with its clause."""
    from .charge import reference

    return printable(reference.trace(_model(scenario), *stream_key(seed)))


def _floats(text: str, what: str) -> list[float]:
    """'6:16:0.5' (start:stop:step, stop included) or '6,8,10': finite, at most MAX_TABLE_VALUES."""
    allowed = (f"a list like 6,8,10 or a range start:stop:step with step > 0; finite numbers, at most "
               f"{MAX_TABLE_VALUES} values")
    try:
        numbers = [float(x) for x in text.split(":" if ":" in text else ",")]
        if not all(np.isfinite(numbers)) or (":" in text and (len(numbers) != 3 or numbers[2] <= 0)):
            raise ValueError
    except ValueError:
        raise UserError("command line", what, f"cannot read {text!r}", allowed) from None
    if ":" in text:
        start, stop, step = numbers
        count = math.floor((stop - start) / step + 0.5) + 1
        if count > MAX_TABLE_VALUES:
            raise UserError("command line", what, f"{text!r} gives {count} values", allowed)
        return list(np.round(np.arange(start, stop + step / 2, step), 6))
    if len(numbers) > MAX_TABLE_VALUES:
        raise UserError("command line", what, f"{len(numbers)} values", allowed)
    return numbers


@click.command(name="t9a-table")
@click.option("--distances", default="4:20:1", show_default=True,
              help="Distances: 6,8,10 or start:stop:step (inches).")
@click.option("--advance-rates", default="4,5,8,9", show_default=True, help="Advance Rates.")
@click.option("--dice", default="2d6", show_default=True,
              help=f"Comma-separated dice variants: {', '.join(DICE)}.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON records.")
def table_command(distances, advance_rates, dice, as_json):
    """Exact P(charge range reaches) for T9A distances x Advance Rates (full dice enumeration)."""
    t = charge_table(check_values(_floats(distances, "--distances"), "command line", "--distances", MAX_INCHES),
                     check_values(_floats(advance_rates, "--advance-rates"), "command line", "--advance-rates",
                                  MAX_ADVANCE_RATE),
                     dice.split(","))
    if as_json:
        click.echo(t.to_json(orient="records"))
        return
    wide = t.pivot_table(index="distance", columns=["dice", "advance_rate"], values="p_success")
    click.echo("exact P(charge range >= distance), full enumeration of the dice")
    click.echo(wide.to_string(float_format=lambda v: f"{v:.4f}"))


cli_commands = [table_command]


class T9ASystem(System):
    """The 9th Age's charges and close combat behind the :class:`~wargame_odds.analysis.intake.systems.System`
    protocol."""

    name = "t9a"
    title = systems.title("t9a")
    scenario_type = Model
    bounds = {"MAX_INCHES": MAX_INCHES, "MAX_ADVANCE_RATE": MAX_ADVANCE_RATE, "MAX_TABLE_VALUES": MAX_TABLE_VALUES}
    cli_commands = cli_commands
    load = staticmethod(load)
    loads = staticmethod(loads)
    simulate = staticmethod(simulate)
    trace = staticmethod(trace)

    def headline(self, data: dict, table=None) -> list[str]:
        from .headline import t9a

        return t9a(data)

    def summary(self, data: dict) -> list[str]:
        from .headline import t9a_summary

        return t9a_summary(data)

    @cached_property
    def decisions(self):
        from .decisions import T9ADecisions

        return T9ADecisions(self, {"kernel": KernelJob, "reference": ReferenceJob})


SYSTEM = T9ASystem()
