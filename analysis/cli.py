"""The ``wargame-odds`` command line.

Every registered rule system (:mod:`wargame_odds.analysis.intake.systems`) gets the same command, ``wargame-odds SYSTEM
SCENARIO.toml``, built from its ``load``, ``simulate``, ``trace`` and ``engine_for``.  Other commands live in the
modules :data:`COMMANDS` names (each with a ``cli_commands`` list; a system's own commands come from its
registration) and are imported only when used.  User mistakes print
one line on stderr and exit with status 2.
"""
from __future__ import annotations

import gc
import importlib
import math
import os
from pathlib import Path

import click

from .run import gc_pause
from .intake import systems
from .intake.errors import UserError, one_line
from .intake.user_text import elide, printable, result_csv
from .intake.run_limits import MAX_SEED, MAX_THREADS, MAX_TRIALS, REFERENCE_DEFAULT_TRIALS, SEED_RANGE

#: The rule systems' commands and their one-line help, from the registry (no system is imported for it).
SYSTEMS = {name: systems.title(name) for name in systems.names()}


def _usage_error(exc: click.UsageError):
    """click's own usage errors as one line (with the help hint), exit status 2."""
    hint = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
    click.echo(one_line(f"error: {exc.format_message()}{hint}"), err=True)
    raise click.exceptions.Exit(2)


#: Commands defined in other modules: name -> (module with a ``cli_commands`` list, one-line help).
#: A module is imported only when one of its commands runs, so ``--help`` needs click alone and a run
#: loads only what it uses; ``tests/test_cli_startup.py`` checks this table against the modules.
COMMANDS = {
    "matrix": ("wargame_odds.analysis.decisions.cli",
               "Win probabilities of every attacker against every defender (DEFINITION: "
               "TOML with attackers = [...], defenders = [...], optional base = \"scenario.toml\"); an attacker may be "
               "a table { force = ..., plan = \"shoot\", action = \"advance\" }: each plays its turn plan (default its "
               "job)."),
    "sweep": ("wargame_odds.analysis.decisions.cli",
              "Simulate SCENARIO once per value of FIELD (e.g. formations[0].units[0].count, "
              "rules.result_dice, charger.distance); VALUES are TOML literals (3, 2.5, true, \"sum\")."),
    "threshold": ("wargame_odds.analysis.decisions.cli",
                  "The value of FIELD at the edge of those that reach a target probability: "
                  "how far it can go (the largest, when the chance falls as it grows) or what it takes (the smallest, "
                  "when it rises)."),
    "compare": ("wargame_odds.analysis.decisions.cli",
                "P(option A wins) − P(option B wins) with a paired 95 % interval "
                "(DEFINITION: TOML with option_a, option_b, [[opponents]] force/weight, optional side and base; "
                "without opponents, option_a and option_b are two scenario files, e.g. a turn and its variant, "
                "optional labels)."),
    "rank": ("wargame_odds.analysis.decisions.cli",
             "Rank options against a weighted meta: score and score per 100 points "
             "(DEFINITION: TOML with options = [...], [[opponents]] force/weight, optional side, by and base)."),
    "list-search": ("wargame_odds.analysis.decisions.list_search_cli",
                    "Which detachment should I take? Race every candidate "
                    "(enumerated from a NetEA army list with its upgrades, or written by hand) against a weighted "
                    "meta on the same dice, with a guarantee (DEFINITION: TOML with army, max_points, ... or "
                    "candidates, and [[opponents]] force/weight; docs/list-search.md)."),
    "units": ("wargame_odds.analysis.decisions.cli", "The NetEA unit library (Tournament Pack data, ISC licence)."),
    "formations": ("wargame_odds.analysis.decisions.cli", "NetEA army-list formations with their points."),
    "report": ("wargame_odds.analysis.reports.cli",
               "Build (or resume) a batch report: HTML page, CSV and Parquet tables, plots."),
    "app": ("wargame_odds.analysis.app.cli",
            "A local web app: pick formations, set up a fight, a turn or a charge, read the odds "
            "(needs pip install 'wargame-odds[app]')."),
}
COMMANDS.update(systems.commands())  # a rule system's own commands (gdb-tables, t9a-table), from its registration
#: Commands that run no trials (a rule system's own commands among them: tables and templates): the collector's
#: start-up pause (:mod:`wargame_odds.analysis.run.gc_pause`), which ends after the runner's first chunk of trials
#: (:func:`wargame_odds.analysis.run.gc_pause.resume_after_first_chunk`), ends as they start.
NO_TRIALS = frozenset({"units", "formations", "app", *systems.commands()})  # app: a server, runs come later


class CliGroup(click.Group):
    """Loads the commands of :data:`COMMANDS` on first use and turns :class:`UserError` and click's
    usage errors into one line and exit status 2, without a traceback."""

    def main(self, args=None, *rest, **extra):
        """click's ``main``; run as the ``wargame-odds`` program (no ``args``: it reads the command line and the
        process ends with the command), the garbage collector pauses during start-up
        (:mod:`wargame_odds.analysis.run.gc_pause`: it resumes after the runner's first chunk, a report as it writes its
        output, a command of :data:`NO_TRIALS` as it starts) and what the command leaves is moved out of its reach
        (``gc.freeze``) before Python exits: Python's collections at exit would otherwise walk every object Numba and
        pydantic built, about a quarter of a warm 1,000-trial run's CPU, to free memory the operating system takes back
        anyway.  The program also leaves pydantic's plugins off (unless the environment sets
        ``PYDANTIC_DISABLE_PLUGINS``): looking for them reads every installed package's metadata, about 20 ms of each
        run, and the program has no use for them.  Called with ``args`` (tests, a notebook), nothing changes."""
        if args is None:
            os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
            gc_pause.pause()
        try:
            return super().main(args, *rest, **extra)
        finally:
            if args is None:
                gc.freeze()

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(exc)

    def list_commands(self, ctx):
        return sorted(set(self.commands) | set(COMMANDS) | set(systems.names()))

    def get_command(self, ctx, name):
        if name not in self.commands and name in systems.names():  # a system registered after start-up
            self.add_command(_system_command(name, systems.title(name)))
        if name in NO_TRIALS:
            gc_pause.resume()
        if name not in self.commands and name in COMMANDS:
            for command in importlib.import_module(COMMANDS[name][0]).cli_commands:
                self.add_command(command)
            if name not in NO_TRIALS:
                gc_pause.resume_after_first_chunk()
        return self.commands.get(name)

    def format_commands(self, ctx, formatter):
        """The command list of ``--help``, from :data:`COMMANDS` for commands not loaded yet."""
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = []
        for name in self.list_commands(ctx):
            command = self.commands.get(name) or click.Command(name, help=COMMANDS[name][1] if name in COMMANDS
                                                                  else systems.title(name))
            rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(exc)
        except UserError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange, which also refuses ``nan`` and ``inf`` (click lets ``nan`` through)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class ProbabilityValue(FiniteFloatRange):
    """A probability as a player types it: 0.6 or 60 (above 1 a percentage, up to 100)."""

    name = "probability"

    def __init__(self):
        super().__init__(min=0, max=1)

    def convert(self, value, param, ctx):
        from .intake.bounds import as_probability

        number = as_probability(click.FLOAT.convert(value, param, ctx))
        if number > 1:
            self.fail(f"{value} is neither a probability from 0 to 1 nor a percentage from 1 to 100", param, ctx)
        return super().convert(number, param, ctx)


class SeedValue(click.ParamType):
    """A seed: a whole number in the one range of every seed
    (:data:`~wargame_odds.analysis.intake.run_limits.SEED_RANGE`)."""

    name = "seed"

    def convert(self, value, param, ctx):
        number = click.INT.convert(value, param, ctx)
        if not 0 <= number <= MAX_SEED:
            self.fail(f"{number} is not a whole number from {SEED_RANGE}", param, ctx)
        return number


class PrecisionValue(FiniteFloatRange):
    """A 95 % half-width to reach: a fraction above 0 up to 0.5 (0.005), or percentage points from 1 up to 50 (1 is
    ±1 point)."""

    name = "precision"

    def __init__(self):
        super().__init__(min=0, max=0.5, min_open=True)

    def convert(self, value, param, ctx):
        from .intake.bounds import as_precision

        return super().convert(as_precision(click.FLOAT.convert(value, param, ctx)), param, ctx)


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="wargame-odds")
def main():
    """Monte Carlo odds for tabletop wargames, with a 95 % interval on every number."""


def simulation_options(fn):
    """The options every simulating command shares."""
    options = [
        click.option("--trials", "-n", type=click.IntRange(min=1, max=MAX_TRIALS), default=1_000_000, show_default=True,
                     help="Number of simulated trials (ignored with --precision)."),
        click.option("--seed", "-s", type=SeedValue(), default=0, show_default=True,
                     help="Random seed; the same seed gives the same numbers."),
        click.option("--precision", type=PrecisionValue(), default=None,
                     help="Run until every side-level 95 % half-width is at most this: a fraction (0.005) or, "
                          "from 1 up, percentage points (1 = ±1 point)."),
        click.option("--threads", type=click.IntRange(min=1, max=MAX_THREADS), default=None,
                     help="Numba threads (results do not depend on it)."),
        click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


class PlotFile(click.Path):
    """A plot file to write: checked when the command line is read, before anything is computed
    (a known image format, in an existing writable folder, not a folder itself)."""

    FORMATS = ("png", "svg", "pdf")

    def __init__(self):
        super().__init__(dir_okay=False)

    def convert(self, value, param, ctx):
        from .intake.scenario import shown_path

        path = Path(super().convert(value, param, ctx))
        if path.suffix.lower().lstrip(".") not in self.FORMATS:
            allowed = ", ".join("." + f for f in self.FORMATS)
            self.fail(f"{shown_path(path)!r} has no image suffix (allowed: {allowed})", param, ctx)
        folder = path.parent  # os.path never raises (a name too long is simply not a folder)
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK) or os.path.isdir(path) \
                or len(path.name) > 255:
            self.fail(f"cannot write {shown_path(path)!r} (its folder must exist and be writable)", param, ctx)
        return str(path)


def save_plot(result, path: str) -> None:
    """Write ``result.plot()`` to ``path`` (checked by :class:`PlotFile`); called after the result
    is printed, so a plot that fails cannot lose it."""
    import matplotlib

    from .output.plots import save_figure

    matplotlib.use("Agg")
    try:
        save_figure(result.plot(), path, dpi=120)
    except OSError as exc:
        raise UserError(path, None, f"cannot write the plot ({exc.strerror})", "a writable file") from None
    except Exception as exc:  # noqa: BLE001 -- any failure of matplotlib: one line, the result is printed already
        raise UserError(path, None, f"cannot draw the plot ({exc.__class__.__name__}: {elide(exc)})") from None


def _system_command(name: str, help_text: str) -> click.Command:
    @click.command(name=name, help=help_text)
    @click.argument("scenario", type=click.Path(dir_okay=False))
    @simulation_options
    @click.option("--trace", is_flag=True, help="Print one trial step by step (reference engine).")
    @click.option("--csv", "as_csv", is_flag=True,
                  help="Print the estimates as CSV (with --distributions or --at-least: that table instead).")
    @click.option("--plot", "plot_path", type=PlotFile(), default=None,
                  help="Also save the plot to this file (.png, .svg or .pdf).")
    @click.option("--distributions", is_flag=True, help="Also show every distribution: P(exactly N).")
    @click.option("--at-least", "at_least", is_flag=True,
                  help='Also show the "at least N" table of every distribution.')
    @click.option("--engine", type=click.Choice(["kernel", "reference"]), default="kernel", show_default=True,
                  help="Numba kernel, or the pure-Python reference engine (about a thousand times slower; "
                       f"{REFERENCE_DEFAULT_TRIALS:,} trials unless --trials is given). A part the kernel does not "
                       "simulate yet (an Epic turn with aircraft or spacecraft) runs on the reference engine either "
                       "way.")
    def command(scenario, trials, seed, precision, threads, as_json, trace, as_csv, plot_path, distributions,
                at_least, engine):
        if as_json and as_csv:
            raise click.UsageError("--json and --csv exclude each other")
        if as_csv and distributions and at_least:
            raise click.UsageError("--csv prints one table: give --distributions or --at-least, not both")
        if trace:
            _refuse_with_trace(click.get_current_context())
        system = systems.get(name)
        gc_pause.resume_after_first_chunk()
        model = system.load(scenario)
        if trace:
            click.echo(printable(system.trace(model, seed=seed)))  # as every system's trace is (the contract test)
            return
        trials = _engine_trials(system, model, engine, trials, precision)
        result = system.simulate(model, trials=trials, seed=seed, precision=precision, threads=threads, engine=engine)
        if as_json:
            click.echo(result.to_json())
        elif as_csv:
            click.echo(result_csv(result, distributions, at_least), nl=False)
        else:
            click.echo(result.text(distributions=distributions, at_least=at_least))
        if plot_path:
            save_plot(result, plot_path)

    return command


def _refuse_with_trace(ctx: click.Context) -> None:
    """``--trace`` prints one trial of the reference engine: an option it would ignore is a usage error."""
    given = [p.opts[0] for p in ctx.command.params if p.name not in ("scenario", "seed", "trace")
             and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
    if given:
        raise click.UsageError(f"--trace prints one trial of the reference engine; it takes only --seed, "
                               f"not {', '.join(given)}")


def _engine_trials(system, model, engine: str, trials: int, precision: float | None) -> int:
    """The trials of a run: on the reference engine (asked for, or taken because the kernel does not
    simulate a part of the turn, which one line on stderr says before the run) the default is
    :data:`REFERENCE_DEFAULT_TRIALS`, not the kernel's million, unless ``--trials`` was given."""
    used, reason = system.engine_for(model, engine)
    if reason:
        click.echo(f"note: {printable(reason)}: this run takes the pure-Python reference engine, about a thousand "
                   "times slower than the kernel", err=True)
    given = click.get_current_context().get_parameter_source("trials") is not click.core.ParameterSource.DEFAULT
    return trials if used == "kernel" or given or precision is not None else REFERENCE_DEFAULT_TRIALS


for _name, _help in SYSTEMS.items():
    main.add_command(_system_command(_name, _help))  # a system registered later is added when first named


#: How ``examples`` heads each kind of shipped file.
EXAMPLE_KINDS = {"epic": "Epic Armageddon assaults", "turn": "Epic Armageddon turns",
                 "gdb": "General de Brigade charges", "t9a": "The 9th Age charges", "matrix": "Matchup matrices",
                 "compare": "Comparisons", "rank": "Rankings", "list-search": "List searches",
                 "report": "Report definitions",
                 "force": "Forces (the decisions above name them as files beside them)"}


@main.command("examples")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
def examples_command(as_json):
    """The scenarios, decisions and reports shipped with the package, by name: every command that reads a file
    also takes such a name (wargame-odds epic epic/assault_marines_vs_warband)."""
    from .intake.examples import examples

    gc_pause.resume()
    found = examples()
    if as_json:
        import json

        click.echo(json.dumps({"examples": [vars(e) for e in found]}, ensure_ascii=False))
        return
    width = max(len(e.name) for e in found) + 2
    for kind, heading in EXAMPLE_KINDS.items():
        mine = [e for e in found if e.kind == kind]
        if mine:
            run = mine[0].command.replace(mine[0].name, "NAME")
            click.echo(f"{heading}" + (f" ({run}):" if run else ":"))
            click.echo("\n".join(f"  {e.name:<{width}}{e.title}" for e in mine) + "\n")
