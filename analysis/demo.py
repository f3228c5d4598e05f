"""``wargame-odds demo``: run every shipped example scenario and write the results."""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tempfile
from importlib.resources import files
from pathlib import Path

import click

from . import SYSTEMS


def shipped_scenarios() -> list[tuple[str, Path]]:
    """(system, path) for every example scenario shipped with the package."""
    root = files("analysis").joinpath("scenarios")
    found = []
    for system in SYSTEMS:
        folder = Path(str(root.joinpath(system)))
        if folder.is_dir() and importlib.util.find_spec(f"analysis.{system}"):
            found += [(system, p) for p in sorted(folder.glob("*.toml"))]
    return found


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


@click.command()
@click.option("--trials", "-n", type=click.IntRange(min=1), default=1_000_000, show_default=True)
@click.option("--seed", "-s", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--out", type=click.Path(file_okay=False), default="reports/out/demo", show_default=True,
              help="Folder for the JSON results.")
def demo(trials, seed, out):
    """Simulate every shipped example scenario, print its table and write its JSON."""
    results = {}
    for system, path in shipped_scenarios():
        module = importlib.import_module(f"analysis.{system}")
        result = module.simulate(module.load(path), trials=trials, seed=seed)
        click.echo(f"\n== {system}: {path.name}")
        click.echo(str(result))
        results[f"{system}/{path.stem}"] = result.to_dict()
    target = Path(out) / "results.json"
    _write_atomically(target, json.dumps(results, indent=1))
    click.echo(f"\nwrote {target}")


cli_commands = [demo]
