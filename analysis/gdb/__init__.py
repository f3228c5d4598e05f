"""General de Brigade charge analyser (docs/gdb.md §2; issue 3).

``load(path)`` or ``loads(toml_text)`` ``-> Model``, ``simulate(model, trials=..., seed=...) -> Result``,
``trace(model, seed=...) -> str`` (one charge step by step) and ``sweep(model, field, values)`` (a sweep result over
any scenario field or table value, as ``wo.sweep``'s).  ``SYSTEM`` is the charge behind the
:class:`~wargame_odds.analysis.intake.systems.System` protocol.
"""
from __future__ import annotations

from functools import cached_property

import click

from ..run import runner
from ..intake import systems
from ..intake.errors import UserError
from ..intake.systems import Decisions, System
from ..intake.user_text import printable

from . import bounds as gdb_bounds
from . import reference
from .compile import KernelJob, ReferenceJob
from .model import Model, load, loads
from .results import build_result

__all__ = ["load", "loads", "simulate", "trace", "sweep", "Model", "SYSTEM"]


def _model(scenario) -> Model:
    return scenario if isinstance(scenario, Model) else load(scenario)


def simulate(scenario, *, trials: int = runner.DEFAULT_TRIALS, seed: int = 0, precision: float | None = None,
             threads: int | None = None, chunk_trials: int | None = None, progress: bool | None = None,
             max_trials: int = runner.DEFAULT_MAX_TRIALS, cell: tuple = (), engine: str = "kernel"):
    """Simulate the charge ``trials`` times (or to ``precision``) with the kernel or the reference."""
    runner.check_argument("engine", engine)
    model = _model(scenario)
    job = KernelJob(model) if engine == "kernel" else ReferenceJob(model)
    counts, info = runner.run(job, trials=trials, seed=seed, precision=precision, max_trials=max_trials,
                              chunk_trials=chunk_trials, threads=threads, progress=progress, cell=cell)
    return build_result(model, job.layout, counts, info, job.compiled.notes, engine)


def trace(scenario, *, seed: int = 0) -> str:
    """One charge resolved by the reference engine, every roll and decision with its clause."""
    model = _model(scenario)
    key0, key1 = runner.stream_key(seed)
    trial = reference.resolve(model, reference.RandomDice(key0, key1, 0), verbose=True)
    width = max(len(c) for c, _ in trial.log)
    lines = [f"{c:<{width}}  {text}" for c, text in trial.log]
    lines.append(f"{'result':<{width}}  charger {trial.charger}, defender {trial.defender}, outcome {trial.outcome}")
    return printable("\n".join(lines))


def sweep(scenario, field: str, values, *, trials: int = 200_000, seed: int = 0, **kwargs):
    """Simulate once per value of ``field`` (a scenario field or a ``tables.*`` value): the sweep result of
    :func:`wargame_odds.analysis.decisions.sweep` (``.table()``: one row per value and estimate, with 95 % intervals;
    ``.plot()``, ``.to_json()``); ``kwargs`` as there (``precision``, ``engine``, ``threads``, ``progress``,
    ``cell``)."""
    from ..decisions import sweep as sweep_values

    return sweep_values(scenario, field, values, trials=trials, seed=seed, **kwargs)


@click.group(name="gdb-tables")
def tables_command():
    """General de Brigade rule-table files: a template to fill in, and a check."""


@tables_command.command(name="template")
def template_command():
    """Print a commented rule-table file holding every table the charge sequence uses, to fill in
    from the rulebook (docs/gdb.md, "Filling in the rule tables"):
    wargame-odds gdb-tables template > my_tables.toml"""
    from .tables import template_text

    click.echo(template_text(), nl=False)


@tables_command.command(name="check")
@click.argument("path", type=click.Path(dir_okay=False))
def check_command(path):
    """Validate a rule-table file; one error line and exit 2 if it is not valid."""
    from pathlib import Path

    from .tables import load_tables

    if not Path(path).is_file():
        raise UserError(path, None, "file not found")
    tables = load_tables(str(Path(path).resolve()), source=path)
    state = "PLACEHOLDER values (placeholder = true)" if tables.placeholder else "rulebook values (placeholder = false)"
    click.echo(f"{path}: valid rule tables, {state}")


cli_commands = [tables_command]


class GdBDecisions(Decisions):
    """General de Brigade for the decision tools: sweeps over scenario fields and ``tables.*`` values."""

    def with_value(self, model, source, path, value):
        return model.replace(path, value)


class GdBSystem(System):
    """General de Brigade's charge behind the :class:`~wargame_odds.analysis.intake.systems.System` protocol."""

    name = "gdb"
    title = systems.title("gdb")
    scenario_type = Model
    bounds = {"MAX_MODIFIER": gdb_bounds.MAX_MODIFIER, "MAX_TABLE_TOTAL": gdb_bounds.MAX_TABLE_TOTAL,
              "MAX_DISTANCE": gdb_bounds.MAX_DISTANCE, "MAX_TURNS": gdb_bounds.MAX_TURNS,
              "MAX_STRENGTH": gdb_bounds.MAX_STRENGTH}
    cli_commands = cli_commands
    load = staticmethod(load)
    loads = staticmethod(loads)
    simulate = staticmethod(simulate)
    trace = staticmethod(trace)

    def headline(self, data: dict, table=None) -> list[str]:
        from .headline import gdb

        return gdb(data)

    def summary(self, data: dict) -> list[str]:
        from .headline import gdb_summary

        return gdb_summary(data)

    @cached_property
    def decisions(self):
        return GdBDecisions(self)


SYSTEM = GdBSystem()
