"""The ``wargame-odds`` command line.

Every rule system gets the same command, ``wargame-odds SYSTEM SCENARIO.toml``, built from its
module's ``load``, ``simulate`` and ``trace``.  A system module may add its own commands through a
``cli_commands`` list.  User mistakes print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import importlib
import importlib.util

import click

from .errors import UserError

SYSTEMS = {
    "epic": "Epic Armageddon (NetEA) assaults, from the charge to the end-phase rally.",
    "gdb": "General de Brigade charge sequence.",
    "t9a": "The 9th Age charges: ranges, failed charges, reactions, several chargers.",
}


class CliGroup(click.Group):
    """Turns :class:`UserError` into one line and exit status 2, without a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UserError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="wargame-odds")
def main():
    """Monte Carlo odds for tabletop wargames, with a 95 % interval on every number."""


def simulation_options(fn):
    """The options every simulating command shares."""
    options = [
        click.option("--trials", "-n", type=click.IntRange(min=1), default=1_000_000, show_default=True,
                     help="Number of simulated trials (ignored with --precision)."),
        click.option("--seed", "-s", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Random seed; the same seed gives the same numbers."),
        click.option("--precision", type=click.FloatRange(min=0, max=0.5, min_open=True, max_open=True),
                     default=None, help="Run until every side-level 95 % half-width is at most this."),
        click.option("--threads", type=click.IntRange(min=1), default=None,
                     help="Numba threads (results do not depend on it)."),
        click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


PLOT_FORMATS = ("png", "svg", "pdf")


def save_plot(result, path: str) -> None:
    """Write ``result.plot()`` to ``path`` (PNG, SVG or PDF, by its extension)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix not in PLOT_FORMATS:
        raise UserError(path, None, "--plot: unknown file type", ", ".join(f".{f}" for f in PLOT_FORMATS))
    import matplotlib

    matplotlib.use("Agg")
    result.plot().savefig(path, dpi=120)


def _system_command(name: str, help_text: str) -> click.Command:
    @click.command(name=name, help=help_text)
    @click.argument("scenario", type=click.Path(dir_okay=False))
    @simulation_options
    @click.option("--trace", is_flag=True, help="Print one trial step by step (reference engine).")
    @click.option("--csv", "as_csv", is_flag=True,
                  help="Print the estimates as CSV (with --distributions or --at-least: that table instead).")
    @click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
                  help="Also save the plot to this file (.png, .svg or .pdf).")
    @click.option("--distributions", is_flag=True, help="Also show every distribution: P(exactly N).")
    @click.option("--at-least", "at_least", is_flag=True,
                  help='Also show the "at least N" table of every distribution.')
    def command(scenario, trials, seed, precision, threads, as_json, trace, as_csv, plot_path, distributions,
                at_least):
        if as_json and as_csv:
            raise click.UsageError("--json and --csv exclude each other")
        if as_csv and distributions and at_least:
            raise click.UsageError("--csv prints one table: give --distributions or --at-least, not both")
        module = importlib.import_module(f"analysis.{name}")
        model = module.load(scenario)
        if trace:
            click.echo(module.trace(model, seed=seed))
            return
        result = module.simulate(model, trials=trials, seed=seed, precision=precision, threads=threads)
        if plot_path:
            save_plot(result, plot_path)
        if as_json:
            click.echo(result.to_json())
        elif as_csv:
            click.echo(_csv_table(result, distributions, at_least).to_csv(index=False), nl=False)
        else:
            click.echo(result.text(distributions=distributions, at_least=at_least))

    return command


def _csv_table(result, distributions: bool, at_least: bool):
    """The table ``--csv`` prints: the estimates, every distribution, or every "at least N" table."""
    if distributions:
        return result.distributions()
    if at_least:
        from .plots import at_least_frame

        return at_least_frame(result)
    return result.table()


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
