"""CLI command ``list-search``: which detachment should I take?  (docs/list-search.md)"""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..cli import PlotFile, save_plot
from ..intake.errors import UserError
from ..run.executor import executor_options, make_executor
from ..intake.scenario import read_toml, validate
from ..intake.user_text import csv_text, printable
from ..run import runner
from .list_search_core import ListSearchDefinition, candidates_of, list_search, plan

COLUMNS = ["rank", "candidate", "formation", "upgrades", "points", "score", "ci95_lo", "ci95_hi", "per_100_points",
           "behind_best", "behind_lo", "behind_hi", "status", "trials_per_opponent"]


def _num(x, fmt: str = "{:.1f}") -> str:
    return "" if x != x else fmt.format(x)  # NaN: not measured (a dropped candidate, the best's own gap)


def _table(frame, top: int) -> str:
    shown = frame[frame.status != "dropped"].head(max(top, 1))
    lines = [f"{'#':>3}  {'candidate':<60} {'pts':>5} {'score':>6} {'95 % interval':>14} {'behind':>7} "
             f"{'behind 95 %':>15}  status"]
    for r in shown.itertuples():
        interval = f"{_num(r.ci95_lo)}–{_num(r.ci95_hi)}" if r.ci95_lo == r.ci95_lo else ""
        best = r.status == "best"
        behind = "" if best else _num(r.behind_best, "{:.2f}")
        behind_ci = "" if best or r.behind_lo != r.behind_lo else \
            f"{_num(r.behind_lo, '{:.2f}')} to {_num(r.behind_hi, '{:.2f}')}"
        lines.append(f"{r.rank:>3}  {printable(r.candidate)[:60]:<60} {_num(r.points, '{:.0f}'):>5} "
                     f"{_num(r.score):>6} {interval:>14} {behind:>7} {behind_ci:>15}  {r.status}")
    dropped = int((frame.status == "dropped").sum())
    if dropped:
        lines.append(f"     ({dropped} dropped by the race; --json or --csv lists every candidate)")
    return "\n".join(lines)


def _export(definition: str, directory: str, keys: dict) -> int:
    """Write each candidate as a force file ``NNNN.toml`` in ``directory`` (matrix and rank run them)."""
    from ..reports.definition import to_toml

    data, source = read_toml(definition)
    data.update(keys)
    defn = validate(ListSearchDefinition, data, source)
    folder = Path(source).parent
    cands = candidates_of(defn, lambda p: p if p.startswith("netea:") else str(folder / p), source, [])
    out = Path(directory)
    if out.exists() and any(out.iterdir()):
        raise UserError(directory, None, "the folder is not empty", "a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    for k, c in enumerate(cands):
        force = c.force if isinstance(c.force, dict) else {"name": c.name, "formations": [{"library": c.force}]}
        (out / f"{k + 1:04d}.toml").write_text(to_toml(force), encoding="utf-8")
    return len(cands)


@click.command("list-search")
@click.argument("definition", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the candidate counts and the planned trials; run nothing.")
@click.option("--export-candidates", "export_dir", default=None, type=click.Path(file_okay=False),
              help="Write each candidate as a force file into this folder (matrix and rank run them).")
@click.option("--top", type=click.IntRange(1, 100), default=5, show_default=True,
              help="Candidates confirmed and shown.")
@click.option("--indifference", type=float, default=None, help="δ in percentage points (default: the definition's, 1).")
@click.option("--confidence", type=float, default=None, help="Percent (default: the definition's, 95).")
@click.option("--max-trials", type=click.IntRange(1, 10**12), default=None,
              help="Stop the race after about this many trials (then no guarantee is printed).")
@click.option("--seed", "-s", type=click.IntRange(min=0, max=runner.MAX_SEED), default=0, show_default=True)
@click.option("--threads", type=click.IntRange(1, 256), default=None, help="Numba threads per kernel call.")
@click.option("--add-to", "add_to", default=None,
              help="A detachment of the army (\"Tactical + Captain\"): each candidate assaults beside it.")
@click.option("--points-left", type=click.IntRange(1, 100_000), default=None,
              help="With --add-to: the points the added detachment may cost.")
@click.option("--pareto", is_flag=True, help="Also print the Pareto front: no other candidate has both fewer "
              "points and a higher score.")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the ranking as CSV.")
@executor_options
@click.option("--plot", "plot_path", type=PlotFile(), default=None,
              help="Also save the plot to this file (PNG, SVG or PDF).")
def list_search_command(definition, dry_run, export_dir, top, indifference, confidence, max_trials, seed, threads,
                        add_to, points_left, pareto, as_json, as_csv, plot_path, scheduler, workers):
    """Which detachment should I take?  Race every candidate (enumerated from a NetEA army list with its
    upgrades, or written by hand) against a weighted meta on the same dice, with a guarantee (DEFINITION:
    TOML with army, max_points, ... or candidates, and [[opponents]] force/weight; docs/list-search.md)."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    keys = {k: v for k, v in (("add_to", add_to), ("points_left", points_left)) if v is not None}
    if export_dir:
        n = _export(definition, export_dir, keys)
        click.echo(f"{n} candidate force files written to {printable(export_dir)}")
        return
    if dry_run:
        data, source = read_toml(definition)
        data.update(keys)
        for key, value in (("indifference", indifference), ("confidence", confidence)):
            if value is not None:
                data[key] = value
        folder = Path(source).parent
        p = plan(validate(ListSearchDefinition, data, source), source,
                 lambda s: s if s.startswith("netea:") else str(folder / s))
        if as_json:
            click.echo(json.dumps({k: v for k, v in p.items()}, indent=2))
            return
        click.echo(f"{p['candidates']} candidates × {p['opponents']} opponents = {p['matchups']} matchups")
        for k, v in sorted(p["per_formation"].items(), key=lambda kv: -kv[1]):
            click.echo(f"  formation {printable(k)}: {v}")
        for k, v in sorted(p["per_upgrade"].items(), key=lambda kv: -kv[1]):
            click.echo(f"  upgrade {printable(k)}: {v}")
        click.echo(f"planned: screen {p['planned_screen_trials']:,} trials, KN first stage "
                   f"{p['planned_first_stage_trials']:,} (then sequential); rank's defaults "
                   f"{p['rank_default_trials']:,}")
        for note in p["notes"]:
            click.echo(f"note: {printable(note)}")
        return
    with make_executor(scheduler, workers) as executor:
        result = list_search(definition, seed=seed, top=top, indifference=indifference, confidence=confidence,
                             max_trials=max_trials, threads=threads, executor=executor, **keys)
    if as_json:
        click.echo(result.to_json())
    elif as_csv:
        click.echo(csv_text(result.frame[COLUMNS]), nl=False)
    else:
        click.echo(printable(result.title))
        click.echo(printable("\n".join(result.sentences)))
        click.echo(_table(result.frame, top))
        for note in result.notes:
            click.echo(printable(f"note: {note}"))
        if pareto:
            click.echo("Pareto front (points → score):")
            for r in result.pareto().itertuples():
                click.echo(printable(f"  {r.points:>5}  {r.score:5.1f}  {r.candidate}  ({r.status})"))
    if plot_path:
        save_plot(result, plot_path)


cli_commands = [list_search_command]
