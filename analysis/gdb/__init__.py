"""General de Brigade charge analyser (docs/gdb.md §2; issue 3).

``load(path)`` or ``loads(toml_text)`` ``-> Model``, ``simulate(model, trials=..., seed=...) -> Result``,
``trace(model, seed=...) -> str`` (one charge step by step) and ``sweep(model, field, values)``
(a tidy pandas table over any scenario field or table value).
"""
from __future__ import annotations

import click

from ..run import runner
from ..intake.errors import ArgumentError, UserError
from ..intake.user_text import printable

from . import reference
from .compile import KernelJob, ReferenceJob
from .model import Model, load, loads
from .results import build_result

__all__ = ["load", "loads", "simulate", "trace", "sweep", "Model"]


def _model(scenario) -> Model:
    return scenario if isinstance(scenario, Model) else load(scenario)


def simulate(scenario, trials: int = 1_000_000, seed: int = 0, precision: float | None = None,
             threads: int | None = None, chunk_trials: int | None = None, progress: bool | None = None,
             max_trials: int = runner.DEFAULT_MAX_TRIALS, cell: tuple = (), engine: str = "kernel"):
    """Simulate the charge ``trials`` times (or to ``precision``) with the kernel or the reference."""
    runner.check_argument("engine", engine)
    model = _model(scenario)
    job = KernelJob(model) if engine == "kernel" else ReferenceJob(model)
    counts, info = runner.run(job, trials=trials, seed=seed, precision=precision, max_trials=max_trials,
                              chunk_trials=chunk_trials, threads=threads, progress=progress, cell=cell)
    return build_result(model, job.layout, counts, info, job.compiled.notes, engine)


def trace(scenario, seed: int = 0) -> str:
    """One charge resolved by the reference engine, every roll and decision with its clause."""
    model = _model(scenario)
    key0, key1 = runner.stream_key(seed)
    trial = reference.resolve(model, reference.RandomDice(key0, key1, 0), verbose=True)
    width = max(len(c) for c, _ in trial.log)
    lines = [f"{c:<{width}}  {text}" for c, text in trial.log]
    lines.append(f"{'result':<{width}}  charger {trial.charger}, defender {trial.defender}, outcome {trial.outcome}")
    return printable("\n".join(lines))


def sweep(scenario, field: str, values, trials: int = 200_000, seed: int = 0, **kwargs):
    """Simulate once per value of ``field``; a tidy table (one row per value and estimate, with
    95 % intervals).  Every value uses the same seed (common random numbers)."""
    import pandas as pd

    from ..intake.arguments import bounded_list
    from ..intake.bounds import MAX_VALUES

    for name, value in (("trials", trials), ("seed", seed)):
        runner.check_argument(name, value)
    if not isinstance(field, str):
        raise ArgumentError("field", field, "a field path (text) such as charger.distance")
    values = bounded_list("values", values, MAX_VALUES, "values")
    if not values:
        raise ArgumentError("values", values, "one or more values")
    model = _model(scenario)
    frames = []
    for value in values:
        table = simulate(model.replace(field, value), trials=trials, seed=seed, **kwargs).table()
        table.insert(0, "value", value)
        table.insert(0, "field", field)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


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
