"""The ``wargame-odds report`` command."""
from __future__ import annotations

import click

from .build import build
from .definition import load_report
from ..run.executor import executor_options, make_executor


@click.command(name="report")
@click.argument("definition", type=click.Path(dir_okay=False))  # a file, or a shipped name (reports/demo)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: out/NAME beside the definition; reports/out/NAME for a shipped one).")
@executor_options
def report(definition, out, scheduler, workers):
    """Build (or resume) a batch report: HTML page, CSV and Parquet tables, plots."""
    parsed = load_report(definition)  # every mistake is reported before anything runs
    with make_executor(scheduler, workers) as executor:
        index = build(parsed, out=out, executor=executor)
    click.echo(str(index))


cli_commands = [report]
