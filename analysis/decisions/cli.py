"""CLI commands: ``matrix``, ``sweep``, ``compare``, ``rank`` and the unit library's ``units`` / ``formations``.

``matrix``, ``compare`` and ``rank`` read a small TOML definition file (forces are library
formations ``"netea:LIST/FORMATION"`` or force files, relative to the definition file); ``sweep``
takes a scenario, a field path and values (TOML literals).  Every command prints a table, or with
``--json`` one JSON object, or with ``--csv`` the tidy table.
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import click

from ..errors import UserError
from ..reports.executor import executor_options, make_executor
from ..scenario import StrictModel, read_toml, validate
from . import api
from .definitions import CompareFields, Opponent


class _Definition(StrictModel):
    system: Literal["epic"] = "epic"
    base: str | None = None  # a scenario whose [rules] and [end_phase] apply


class MatrixDefinition(_Definition):
    attackers: list[str]
    defenders: list[str]


class CompareDefinition(_Definition, CompareFields):
    """A ``compare`` definition file."""


class RankDefinition(_Definition):
    side: Literal["attacker", "defender"] = "attacker"
    by: Literal["score", "per_100_points"] = "score"
    options: list[str]
    opponents: list[Opponent]


def _definition(path: str, model):
    data, source = read_toml(path)
    folder = Path(source).parent
    definition = validate(model, data, source)

    def resolve(spec: str) -> str:
        return spec if spec.startswith("netea:") else str(folder / spec)

    return definition, source, resolve


def _options(fn):
    options = [
        click.option("--trials", "-n", type=click.IntRange(min=1), default=api.DEFAULT_TRIALS, show_default=True,
                     help="Trials per cell."),
        click.option("--seed", "-s", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Random seed; the same seed gives the same numbers."),
        click.option("--engine", type=click.Choice(["kernel", "reference"]), default="kernel", show_default=True),
        click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object."),
        click.option("--csv", "as_csv", is_flag=True, help="Print the tidy table as CSV."),
        click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
                     help="Also save the plot to this file (PNG, SVG or PDF)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _emit(result, as_json: bool, as_csv: bool, plot_path: str | None):
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    if plot_path:
        from ..cli import save_plot

        save_plot(result, plot_path)
    if as_json:
        click.echo(result.to_json())
    elif as_csv:
        click.echo(result.to_csv(), nl=False)
    else:
        from ..headline import decision_sentences

        click.echo("\n".join(decision_sentences(result)) + "\n")
        click.echo(str(result))


@click.command("matrix")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@executor_options
def matrix_command(definition, trials, seed, engine, as_json, as_csv, plot_path, scheduler, workers):
    """Win probabilities of every attacker against every defender (DEFINITION: TOML with
    attackers = [...], defenders = [...], optional base = "scenario.toml")."""
    d, source, resolve = _definition(definition, MatrixDefinition)
    with make_executor(scheduler, workers) as executor:
        result = api.matrix([resolve(a) for a in d.attackers], [resolve(x) for x in d.defenders],
                            base=resolve(d.base) if d.base else None, trials=trials, seed=seed, engine=engine,
                            executor=executor, source=source)
    _emit(result, as_json, as_csv, plot_path)


def _value(text: str):
    """A TOML literal (3, 2.5, true, "sum"); anything else is a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


@click.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.argument("field")
@click.argument("values", nargs=-1)
@_options
@executor_options
def sweep_command(scenario, field, values, trials, seed, engine, as_json, as_csv, plot_path, scheduler, workers):
    """Simulate SCENARIO once per value of FIELD (e.g. formations[0].units[0].count, rules.result_dice,
    charger.distance); VALUES are TOML literals (3, 2.5, true, "sum")."""
    with make_executor(scheduler, workers) as executor:
        result = api.sweep(scenario, field, [_value(v) for v in values], trials=trials, seed=seed, engine=engine,
                           executor=executor)
    _emit(result, as_json, as_csv, plot_path)


@click.command("compare")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@click.option("--independent", is_flag=True, help="Independent streams instead of common random numbers.")
@click.option("--method", type=click.Choice(["batch-means", "exact-pairs"]), default="batch-means", show_default=True,
              help="Paired interval: batch means over chunked runs (fast), or exact pairs, one engine call per "
                   "trial (small runs).")
def compare_command(definition, trials, seed, engine, as_json, as_csv, plot_path, independent, method):
    """P(option A wins) − P(option B wins) with a paired 95 % interval (DEFINITION: TOML with
    option_a, option_b, [[opponents]] force/weight, optional side and base)."""
    d, source, resolve = _definition(definition, CompareDefinition)
    result = api.compare(**d.arguments(resolve), trials=trials, seed=seed, paired=not independent, method=method,
                         engine=engine, source=source)
    _emit(result, as_json, as_csv, plot_path)


@click.command("rank")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@executor_options
def rank_command(definition, trials, seed, engine, as_json, as_csv, plot_path, scheduler, workers):
    """Rank options against a weighted meta: score and win probability per 100 points (DEFINITION:
    TOML with options = [...], [[opponents]] force/weight, optional side, by and base)."""
    d, source, resolve = _definition(definition, RankDefinition)
    with make_executor(scheduler, workers) as executor:
        result = api.rank([resolve(o) for o in d.options], [resolve(o.force) for o in d.opponents],
                          weights=[o.weight for o in d.opponents], base=resolve(d.base) if d.base else None,
                          side=d.side, by=d.by, trials=trials, seed=seed, engine=engine, executor=executor,
                          source=source)
    _emit(result, as_json, as_csv, plot_path)


def _listing(frame, as_json: bool, as_csv: bool, what: str):
    if as_json:
        click.echo(frame.to_json(orient="records", force_ascii=False))
    elif as_csv:
        click.echo(frame.to_csv(index=False), nl=False)
    elif frame.empty:
        click.echo(f"no {what} found")
    else:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_colwidth", 90, "display.max_rows", None):
            click.echo(frame.to_string(index=False))


@click.group("units")
def units_group():
    """The NetEA unit library (Tournament Pack data, ISC licence)."""


@units_group.command("search")
@click.argument("word", default="")
@click.option("--json", "as_json", is_flag=True)
@click.option("--csv", "as_csv", is_flag=True)
def units_search(word, as_json, as_csv):
    """Library units whose id, name or force contains WORD, and whether the engine can model them."""
    from ..library.netea import search_units

    _listing(search_units(word), as_json, as_csv, "units")


@units_group.command("show")
@click.argument("unit")
def units_show(unit):
    """A library unit's engine profile and everything the conversion could not keep."""
    from ..library.netea import PREFIX, convert, units

    uid = unit.removeprefix(PREFIX)
    if uid not in units():
        from ..library.resolve import _suggest

        raise UserError("units show", "unit", f"unknown library unit {unit!r}", _suggest(uid))
    conv = convert(uid)
    click.echo(f"{PREFIX}{uid}: {conv.name} ({conv.type}): {conv.summary()}")
    if conv.profile is not None:
        click.echo("profile: " + conv.profile.model_dump_json(exclude_none=True))
    for rule, why in conv.ignored:
        click.echo(f"ignored: {rule} ({why})")
    for note in conv.notes:
        click.echo(f"note: {note}")


@click.group("formations")
def formations_group():
    """NetEA army-list formations with their points."""


@formations_group.command("search")
@click.argument("word", default="")
@click.option("--json", "as_json", is_flag=True)
@click.option("--csv", "as_csv", is_flag=True)
def formations_search(word, as_json, as_csv):
    """Library formations whose reference, name or units contain WORD."""
    from ..library.formations import search_formations

    _listing(search_formations(word), as_json, as_csv, "formations")


cli_commands = [matrix_command, sweep_command, compare_command, rank_command, units_group, formations_group]
