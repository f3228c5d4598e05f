"""CLI commands: ``matrix``, ``sweep``, ``threshold``, ``compare``, ``rank`` and the unit library's
``units`` / ``formations``.

``matrix``, ``compare`` and ``rank`` read a small TOML definition file (forces are library
formations ``"netea:LIST/FORMATION"`` or force files, relative to the definition file); ``sweep``
and ``threshold`` take a scenario, a field path (:mod:`.fieldpath`) and values.  Every command
prints a table, or with ``--json`` one JSON object, or with ``--csv`` the tidy table.
"""
from __future__ import annotations

import math
import shutil
import textwrap
import tomllib
from pathlib import Path
from typing import Literal

import click
from pydantic import Field

from ..intake.bounds import MAX_FORCES, MAX_VALUES, FilePath, Name, Title
from ..cli import PlotFile, ProbabilityValue, SeedValue, save_plot
from ..intake.errors import UserError
from ..run.executor import executor_options, make_executor
from ..intake.user_text import csv_text, printable
from ..intake.scenario import MAX_TOML_DEPTH, StrictModel, read_toml, validate
from ..run import runner
from . import api
from ..epic.decisions_plans import Plan
from .definitions import CompareFields, Opponent


class _Definition(StrictModel):
    system: Literal["epic"] = "epic"
    title: Title | None = None  # the result's title (default: made from the options), and in `wargame-odds examples`
    base: FilePath | None = None  # a scenario whose [rules] and [end_phase] apply


class PlannedOption(Plan):
    """An option with its turn plan: ``{ force = "netea:...", plan = "shoot", action = "advance" }``."""

    force: FilePath


def _plans(entries: list, resolve) -> tuple[list[str], list]:
    """The forces of a definition's options (a force, or a table with its plan) and their plans (None: each option's
    job; an option given as a plain force plays its job)."""
    forces = [resolve(e.force) if isinstance(e, PlannedOption) else resolve(e) for e in entries]
    plans = [e.model_dump(exclude={"force"}) | ({"then": resolve(e.then)} if e.then else {})
             if isinstance(e, PlannedOption) else None for e in entries]
    return forces, plans if any(p is not None for p in plans) else None


class MatrixDefinition(_Definition):
    attackers: list[FilePath | PlannedOption] = Field(max_length=MAX_FORCES)
    defenders: list[FilePath] = Field(max_length=MAX_FORCES)


class CompareDefinition(_Definition, CompareFields):
    """A ``compare`` definition file: each option a force, or a table with its turn plan."""

    option_a: FilePath | PlannedOption
    option_b: FilePath | PlannedOption

    def arguments(self, resolve) -> dict:
        (option_a, option_b), plans = _plans([self.option_a, self.option_b], resolve)
        fields = super().arguments(lambda spec: spec if isinstance(spec, PlannedOption) else resolve(spec))
        return fields | {"option_a": option_a, "option_b": option_b, "plans": plans}


class ScenarioCompareDefinition(StrictModel):
    """A ``compare`` definition without opponents: two whole scenario files (e.g. a turn scenario and
    its variant), compared as they stand."""

    system: Literal["epic"] = "epic"
    title: Title | None = None
    side: Literal["attacker", "defender"] = "attacker"
    option_a: FilePath
    option_b: FilePath
    labels: list[Name] | None = Field(None, min_length=2, max_length=2)

    def arguments(self, resolve) -> dict:
        return {"option_a": resolve(self.option_a), "option_b": resolve(self.option_b), "side": self.side,
                "labels": self.labels}


class RankDefinition(_Definition):
    side: Literal["attacker", "defender"] = "attacker"
    by: Literal["score", "per_100_points"] = "score"
    indifference: float = Field(1.0, gt=0, le=50)  # percentage points: "within δ of the best" (paired)
    options: list[FilePath | PlannedOption] = Field(max_length=MAX_FORCES)
    opponents: list[Opponent] = Field(max_length=MAX_FORCES)


def _definition(path: str, model):
    data, source = read_toml(path)
    folder = Path(source).parent
    definition = validate(model, data, source)

    def resolve(spec: str) -> str:
        return spec if spec.startswith("netea:") else str(folder / spec)

    return definition, source, resolve


def _options(fn):
    options = [
        click.option("--trials", "-n", type=click.IntRange(min=1, max=runner.MAX_TRIALS), default=api.DEFAULT_TRIALS,
                     show_default=True, help="Trials per cell."),
        click.option("--seed", "-s", type=SeedValue(), default=0, show_default=True,
                     help="Random seed; the same seed gives the same numbers."),
        click.option("--engine", type=click.Choice(["kernel", "reference"]), default="kernel", show_default=True),
        click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object."),
        click.option("--csv", "as_csv", is_flag=True, help="Print the tidy table as CSV."),
        click.option("--plot", "plot_path", type=PlotFile(), default=None,
                     help="Also save the plot to this file (PNG, SVG or PDF)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _emit(result, as_json: bool, as_csv: bool, plot_path: str | None, title: str | None = None):
    if title:
        result.title = title
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    if as_json:  # the result first: a plot that fails cannot lose it
        click.echo(result.to_json())
    elif as_csv:
        click.echo(result.to_csv(), nl=False)
    else:
        from ..output.headline import decision_sentences

        sentences = decision_sentences(result) if result.kind != "threshold" else []  # its lines lead its text
        if sentences:
            click.echo(printable("\n".join(sentences) + "\n"))
        click.echo(str(result))
    if plot_path:
        save_plot(result, plot_path)


@click.command("matrix")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@executor_options
def matrix_command(definition, trials, seed, engine, as_json, as_csv, plot_path, scheduler, workers):
    """Win probabilities of every attacker against every defender (DEFINITION: TOML with
    attackers = [...], defenders = [...], optional base = "scenario.toml"); an attacker may be a table
    { force = ..., plan = "shoot", action = "advance" }: each plays its turn plan (default its job)."""
    d, source, resolve = _definition(definition, MatrixDefinition)
    with make_executor(scheduler, workers) as executor:
        attackers, plans = _plans(d.attackers, resolve)
        result = api.matrix(attackers, [resolve(x) for x in d.defenders], plans=plans,
                            base=resolve(d.base) if d.base else None, trials=trials, seed=seed, engine=engine,
                            executor=executor, source=source)
    _emit(result, as_json, as_csv, plot_path, d.title)


def _value(text: str):
    """A TOML literal (3, 2.5, true, "sum"); anything else is a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise UserError("command line", "VALUES", "a value nested too deeply",
                        f"at most {MAX_TOML_DEPTH} levels") from None


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


def _value_range(text: str) -> list:
    """``0:8`` (both ends included), ``0:8:2``, ``2.5:4:0.5`` or a comma list of TOML literals (``1,3,5``)."""
    allowed = "start:stop or start:stop:step (stop included, step > 0) or a comma list such as 1,3,5"
    if ":" in text:
        try:
            parts = [tomllib.loads(f"v = {p.strip()}")["v"] for p in text.split(":")]
        except tomllib.TOMLDecodeError:
            parts = None
        if (not parts or len(parts) not in (2, 3) or not all(isinstance(p, (int, float)) and not isinstance(p, bool)
                                                              and math.isfinite(p) for p in parts)):
            raise UserError("command line", "--values", f"cannot read {text!r}", allowed + "; finite numbers")
        start, stop, step = (parts + [1])[:3]
        if step <= 0 or stop < start or (stop - start) / step >= MAX_VALUES:
            raise UserError("command line", "--values", f"cannot read {text!r}",
                            allowed + f", at most {MAX_VALUES:,} values")
        count = int((stop - start) / step + 1e-9) + 1
        return [start + i * step if isinstance(start + step, int) else round(start + i * step, 9)
                for i in range(count)]
    items = [v.strip() for v in text.split(",")]
    if not all(items):
        raise UserError("command line", "--values", f"an empty value in {text!r}", allowed)
    return [_value(v) for v in items]


@click.command("threshold")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.argument("field")
@click.option("--values", "values_text", required=True,
              help="Values of FIELD to search: 0:8 (ends included), 0:8:2 or 1,3,5.")
@click.option("--quantity", default="sides.attacker_wins", show_default=True,
              help="The probability to reach: a result path such as formations[Warband].destroyed.")
@click.option("--at-least", type=ProbabilityValue(), default=None,
              help="Target: the probability is at least this (0.6 or 60 for 60 %).")
@click.option("--at-most", type=ProbabilityValue(), default=None,
              help="Target: the probability is at most this (0.1 or 10 for 10 %).")
@click.option("--largest/--smallest", "largest", default=None,
              help="Force the largest (or smallest) value that meets the target.  Default: the largest when the "
                   "chance falls as the value grows, the smallest when it rises.")
@_options
def threshold_command(scenario, field, values_text, quantity, at_least, at_most, largest, trials, seed, engine,
                      as_json, as_csv, plot_path):
    """The value of FIELD at the edge of those that reach a target probability: how far it can go (the largest,
    when the chance falls as it grows) or what it takes (the smallest, when it rises)."""
    if (at_least is None) == (at_most is None):
        raise click.UsageError("give one of --at-least P or --at-most P")
    result = api.threshold(scenario, field, _value_range(values_text), quantity=quantity, at_least=at_least,
                           at_most=at_most, largest=largest, trials=trials, seed=seed, engine=engine)
    _emit(result, as_json, as_csv, plot_path)


@click.command("compare")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@click.option("--independent", is_flag=True, help="Independent streams instead of common random numbers.")
@click.option("--method", type=click.Choice(["batch-means", "exact-pairs"]), default=None,
              help="Force the paired interval: batch means over whole blocks of trials, or exact pairs, one engine "
                   "call per trial.  Default: the narrowest interval per second on the engine (batch means on the "
                   "kernel, exact pairs on the reference engine); the output says which and why.")
def compare_command(definition, trials, seed, engine, as_json, as_csv, plot_path, independent, method):
    """P(option A wins) − P(option B wins) with a paired 95 % interval (DEFINITION: TOML with
    option_a, option_b, [[opponents]] force/weight, optional side and base; without opponents,
    option_a and option_b are two scenario files, e.g. a turn and its variant, optional labels).  Against
    opponents each option plays its turn plan: its job by default, or a table { force = ..., plan = "assault" |
    "shoot" | "shoot_then_assault", action = "sustained_fire" | "advance" | "double", then = ... }."""
    data, _ = read_toml(definition)
    d, source, resolve = _definition(definition, CompareDefinition if "opponents" in data
                                     else ScenarioCompareDefinition)
    result = api.compare(**d.arguments(resolve), trials=trials, seed=seed, paired=not independent, method=method,
                         engine=engine, source=source)
    _emit(result, as_json, as_csv, plot_path, d.title)


@click.command("rank")
@click.argument("definition", type=click.Path(dir_okay=False))
@_options
@executor_options
def rank_command(definition, trials, seed, engine, as_json, as_csv, plot_path, scheduler, workers):
    """Rank options against a weighted meta: score and score per 100 points (DEFINITION: TOML with
    options = [...], [[opponents]] force/weight, optional side, by and base).  Each option plays its turn plan:
    its job by default (a shooting formation shoots, any other assaults), or a table { force = ..., plan =
    "assault" | "shoot" | "shoot_then_assault", action = "sustained_fire" | "advance" | "double", then = ... }."""
    d, source, resolve = _definition(definition, RankDefinition)
    with make_executor(scheduler, workers) as executor:
        options, plans = _plans(d.options, resolve)
        result = api.rank(options, [resolve(o.force) for o in d.opponents], plans=plans,
                          weights=[o.weight for o in d.opponents], base=resolve(d.base) if d.base else None,
                          side=d.side, by=d.by, trials=trials, seed=seed, engine=engine, executor=executor,
                          indifference=d.indifference, source=source)
    _emit(result, as_json, as_csv, plot_path, d.title)


def _listing(frame, as_json: bool, as_csv: bool, what: str):
    if as_json:
        click.echo(frame.to_json(orient="records", force_ascii=False))
    elif as_csv:
        click.echo(csv_text(frame), nl=False)
    elif frame.empty:
        click.echo(f"no {what} found")
    else:
        click.echo(_cards(frame, min(100, max(60, shutil.get_terminal_size((80, 24)).columns))))


def _cards(frame, width: int) -> str:
    """A search listing that fits a terminal ``width`` columns wide: a row's first column (its reference) on a line
    of its own, then its other columns as "column: value", wrapped and indented (``--csv`` gives the table)."""
    cards = []
    for row in frame.itertuples(index=False):
        values = [f"{column.replace('_', ' ')}: {value}" for column, value in zip(frame.columns[1:], row[1:])]
        cards.append(textwrap.fill(str(row[0]), width, break_on_hyphens=False) + "\n"
                     + textwrap.fill("; ".join(values), width, initial_indent="    ", subsequent_indent="    ",
                                       break_on_hyphens=False))
    return "\n".join(cards)


@click.group("units")
def units_group():
    """The NetEA unit library (Tournament Pack data, ISC licence)."""


@units_group.command("search")
@click.argument("word", default="")
@click.option("--json", "as_json", is_flag=True)
@click.option("--csv", "as_csv", is_flag=True)
def units_search(word, as_json, as_csv):
    """Library units whose id, name or force contains WORD, and whether the engine can model them."""
    from ..epic.library.netea import search_units

    _listing(search_units(word), as_json, as_csv, "units")


@units_group.command("show")
@click.argument("unit")
def units_show(unit):
    """A library unit's engine profile and everything the conversion could not keep."""
    from ..epic.library.netea import PREFIX, convert, units

    uid = unit.removeprefix(PREFIX)
    if uid not in units():
        from ..epic.library.resolve import _suggest

        raise UserError("units show", "unit", f"unknown library unit {unit!r}", _suggest(uid))
    conv = convert(uid)
    click.echo(f"{PREFIX}{uid}: {conv.name} ({conv.type}): {conv.summary()}")
    if conv.profile is not None:
        click.echo("profile: " + conv.profile.model_dump_json(exclude_none=True))
    for line in conv.protection():
        click.echo(line)
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
    from ..epic.library.formations import search_formations

    _listing(search_formations(word), as_json, as_csv, "formations")


cli_commands = [matrix_command, sweep_command, threshold_command, compare_command, rank_command,
                units_group, formations_group]
