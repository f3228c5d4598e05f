"""The ``wargame-odds`` command line.

Every rule system gets the same command, ``wargame-odds SYSTEM SCENARIO.toml``, built from its
module's ``load``, ``simulate`` and ``trace``.  A system module may add its own commands through a
``cli_commands`` list.  User mistakes print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import importlib
import importlib.util
import math

import click

from .errors import UserError
from .runner import MAX_SEED, MAX_THREADS, MAX_TRIALS

SYSTEMS = {
    "epic": "Epic Armageddon (NetEA) assaults, from the charge to the end-phase rally.",
    "gdb": "General de Brigade charge sequence.",
    "t9a": "The 9th Age charges: ranges, failed charges, reactions, several chargers.",
}


def _usage_error(exc: click.UsageError):
    """click's own usage errors as one line (with the help hint), exit status 2."""
    hint = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
    click.echo(" ".join(f"error: {exc.format_message()}{hint}".split()), err=True)
    raise click.exceptions.Exit(2)


class CliGroup(click.Group):
    """Turns :class:`UserError` and click's usage errors into one line and exit status 2, without
    a traceback."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            _usage_error(exc)

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


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="wargame-odds")
def main():
    """Monte Carlo odds for tabletop wargames, with a 95 % interval on every number."""


def simulation_options(fn):
    """The options every simulating command shares."""
    options = [
        click.option("--trials", "-n", type=click.IntRange(min=1, max=MAX_TRIALS), default=1_000_000, show_default=True,
                     help="Number of simulated trials (ignored with --precision)."),
        click.option("--seed", "-s", type=click.IntRange(min=0, max=MAX_SEED), default=0, show_default=True,
                     help="Random seed; the same seed gives the same numbers."),
        click.option("--precision", type=FiniteFloatRange(min=0, max=0.5, min_open=True, max_open=True),
                     default=None, help="Run until every side-level 95 % half-width is at most this."),
        click.option("--threads", type=click.IntRange(min=1, max=MAX_THREADS), default=None,
                     help="Numba threads (results do not depend on it)."),
        click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _system_command(name: str, help_text: str) -> click.Command:
    @click.command(name=name, help=help_text)
    @click.argument("scenario", type=click.Path(dir_okay=False))
    @simulation_options
    @click.option("--trace", is_flag=True, help="Print one trial step by step (reference engine).")
    def command(scenario, trials, seed, precision, threads, as_json, trace):
        module = importlib.import_module(f"analysis.{name}")
        model = module.load(scenario)
        if trace:
            click.echo(module.trace(model, seed=seed))
            return
        result = module.simulate(model, trials=trials, seed=seed, precision=precision, threads=threads)
        click.echo(result.to_json() if as_json else str(result))

    return command


#: Modules that add commands beyond the per-system ones (each exposes a ``cli_commands`` list).
COMMAND_MODULES = ("analysis.decisions.cli", "analysis.reports.cli")


def _register():
    for module_name in COMMAND_MODULES:
        if importlib.util.find_spec(module_name.rsplit(".", 1)[0]) and importlib.util.find_spec(module_name):
            for extra in importlib.import_module(module_name).cli_commands:
                main.add_command(extra)
    for name, help_text in SYSTEMS.items():
        if importlib.util.find_spec(f"analysis.{name}") is None:
            continue
        main.add_command(_system_command(name, help_text))
        module = importlib.import_module(f"analysis.{name}")
        for extra in getattr(module, "cli_commands", []):
            main.add_command(extra)


_register()
