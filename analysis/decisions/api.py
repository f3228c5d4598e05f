"""matrix, sweep, compare, rank and cumulative: single simulations turned into decisions.

Random streams: every cell of a matrix, sweep or ranking runs with its own key
``(seed, *cell, i[, j])``, so its numbers equal ``simulate(cell_scenario, seed=seed,
cell=(*cell, i[, j]))`` and cells are statistically independent.  ``compare`` pairs trials instead:
see :func:`compare`.
"""
from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
import pandas as pd

from ...kernels.rng import BLOCK_TRIALS

from ..run import runner
from ..intake.arguments import LINE_BREAKS
from ..intake.bounds import MAX_FORCES, MAX_NAME_CHARS, MAX_VALUES
from ..intake.errors import ArgumentError, UserError
from ..output.estimates import Probability
from ..run.numba_cache import compile_notice
from ..output.result import Result
from ..intake.user_text import elide
from ..run.runner import RunInfo, stream_key
from ..intake import fieldpath
from . import intervals
from .results import CompareResult, CumulativeResult, MatrixResult, RankResult, SweepResult, ThresholdResult
from .systems import SYSTEMS, Force, System, system_of

DEFAULT_TRIALS = 100_000
MIN_BATCHES = 30  # batch means: a t-interval with at least 29 degrees of freedom
MAX_BATCHES = 64  # beyond this, more batches only add engine calls (small parallel calls are slow on busy cores)


def _bar(total: int, progress: bool | None, label: str):
    """The runner's progress bar (on a terminal, once a run has taken a couple of seconds)."""
    return runner.progress_bar(total, sys.stderr.isatty() if progress is None else progress, label)


def _labels(forces: list[Force]) -> list[str]:
    names = [f.name for f in forces]
    return [n if names.count(n) == 1 else f"{n} #{names[:i + 1].count(n)}" for i, n in enumerate(names)]


def _capped(items, limit: int, source: str, field: str, what: str) -> list:
    """The items of ``items`` (any iterable), refused when there are more than ``limit``: read no further than
    that, so ``range(10**8)`` costs nothing, and checked before anything runs.  A text or a mapping is not a list
    here (a text would be read letter by letter)."""
    if isinstance(items, (str, bytes, bytearray, dict)) or not isinstance(items, Iterable):
        raise UserError(source, field, f"got {elide(repr(items))}", f"a list of at most {limit:,} {what}")
    items = list(itertools.islice(items, limit + 1))
    if len(items) > limit:
        raise UserError(source, field, f"more than {limit:,} {what}", f"at most {limit:,} {what}")
    return items


def _referenced(source: str, field: str, load):
    """``load()``: a mistake in the file it reads is reported with the key that names that file."""
    try:
        return load()
    except UserError as exc:
        raise UserError(source, field, str(exc)) from None


def _force(system: System, spec, role: str, source: str, field: str) -> Force:
    return _referenced(source, field, lambda: system.force(spec, role))


def _forces(system: System, specs, role: str, what: str, source: str) -> list[Force]:
    specs = _capped(specs, MAX_FORCES, source, what, "forces")
    if not specs:
        raise UserError(source, what, "empty grid: nothing to simulate", "one or more forces")
    return [_force(system, s, role, source, f"{what}[{i}]") for i, s in enumerate(specs)]


def _check_run(**arguments) -> None:
    """A decision's run arguments, checked as ``simulate`` checks them, before anything runs (``trials=2000.5`` is
    refused, never rounded); ``method=None`` is the default method."""
    for name, value in arguments.items():
        if not (name == "method" and value is None):
            runner.check_argument(name, value)


def _check_text(name: str, value) -> None:
    """A field or quantity path: text (its own parser names what is wrong with it)."""
    if not isinstance(value, str):
        raise ArgumentError(name, value, "a field path (text) such as chargers[0].distance")


def _check_choice(source: str, field: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UserError(source, field, f"got {value!r}", ", ".join(allowed))


def _opponents(system: System, specs, side: str, source: str) -> list[Force]:
    """The forces an option of ``side`` meets: they play the other role."""
    role = "defender" if side == "attacker" else "attacker"
    return [_force(system, s, role, source, f"opponents[{j}].force") for j, s in enumerate(specs)]


def _with_plans(system: System, forces: list[Force], plans, side: str, source: str, what: str,
                fields: tuple[str, ...] | None = None) -> list[Force]:
    """Each force of ``side`` with its turn plan (docs/decisions.md, "Turn plans"): ``plans`` is None (each force's
    job), one plan for all, or a list with one per force; a plan is a name (``"shoot"``), a dict of its keys
    (``plan``, ``action``, ``then``) or a :class:`~wargame_odds.analysis.epic.decisions_plans.Plan`.  Plans are the
    attacker's: a defender receives the assault, so it takes none; a system without turns takes none either.
    ``fields``: the field that names each force in an error (default ``what[i]``)."""
    with_plan = getattr(system, "with_plan", None)
    if plans is None and (side != "attacker" or with_plan is None):
        return forces
    if side != "attacker" or with_plan is None:
        raise UserError(source, "plans", f"plans for options that play the {side}" if with_plan else
                        f"plans in a {system.name} matchup", "plans for Epic options that play the attacker (the "
                        "defender receives the assault)")
    from ..epic.decisions_plans import plan_of

    if isinstance(plans, (list, tuple)):
        plans = _capped(plans, MAX_FORCES, source, "plans", "plans")
        if len(plans) != len(forces):
            raise UserError(source, "plans", f"{len(plans)} plans for {len(forces)} {what}",
                            f"one plan per entry of {what}, or one plan for all")
    else:
        plans = [plans] * len(forces)
    fields = fields or tuple(f"{what}[{i}]" for i in range(len(forces)))
    out = []
    for field, force, spec in zip(fields, forces, plans):
        plan = plan_of(spec, source, f"{field}.plan")
        then = None
        if plan.then is not None:
            if plan.plan != "shoot_then_assault":
                raise UserError(source, f"{field}.then", f"a formation to assault after a {plan.plan!r} plan",
                                'then with plan = "shoot_then_assault"')
            then = _force(system, plan.then, side, source, f"{field}.then")
        elif plan.plan == "shoot_then_assault" and len(force.data["formations"]) < 2:
            raise UserError(source, f"{field}.then", f"{force.name!r} is one formation, and a formation acts once "
                            "a turn (TP 1.6): it cannot shoot and then assault",
                            "then = a force whose first formation engages after the shooting")
        out.append(with_plan(force, plan, then))
    return out


def _fights_every_assault(models) -> bool:
    """Whether every matchup fights an assault (:func:`_fights_an_assault`)."""
    return all(_fights_an_assault(m) for m in models)


def _score_path(system: System, model, side: str, fights: bool) -> tuple:
    """What an option is scored on: the chance to win the assault when every option's plan fights one, else the
    chance that the enemy's first formation is broken or destroyed after the end phase (two disjoint counts)."""
    if fights:
        return system.win_path(side)
    enemy = next(f.name for f in model.formations if f.side != side)
    return ("formations", enemy, "destroyed"), ("formations", enemy, "broken_after_end_phase")


#: A plan's score where some plan has no assault: the enemy formation broken or destroyed after the end phase.
ENEMY_BROKEN = "enemy_broken_or_destroyed"


def plan_sentence(plans: dict[str, str | None] | list[tuple[str, str | None]], fights: bool) -> str | None:
    """The headline's line on plans: which plan scored each option (name → plan, or (name, plan) pairs where two
    options share a name), and on what; None without plans."""
    pairs = list(plans.items()) if isinstance(plans, dict) else list(plans)
    if not any(plan for _, plan in pairs):
        return None
    said = "; ".join(f"{name}: {plan}" for name, plan in pairs)
    score = ("the chance to win the assault" if fights else
             "the chance that the enemy formation is broken or destroyed after the end phase (a plan without an "
             "assault has none to win)")
    return f"Options are scored by their plan ({said}), on {score}."


def _matchup_system(base, source: str = "base") -> tuple[System, object]:
    if base is None:
        return SYSTEMS["epic"], None
    system = _referenced(source, "base", lambda: system_of(base))
    return system, _referenced(source, "base", lambda: system.load(base))[0]


def matchup(attacker, defender, base=None):
    """The scenario of one matchup cell: ``attacker`` and ``defender`` forces on ``base``'s rules."""
    system, base_model = _matchup_system(base)
    return system.matchup(system.force(attacker, "attacker"), system.force(defender, "defender"), base_model)


def _sim_kwargs(trials, seed, precision, engine, threads):
    out = {"trials": trials, "seed": seed, "engine": engine, "progress": False}
    if precision is not None:
        out["precision"] = precision
    if threads is not None:
        out["threads"] = threads
    return out


def simulate_cell(spec: tuple):
    """Simulate one cell ``(system name, model, cell, simulate kwargs)``: what executors ship to workers."""
    name, model, cell, kwargs = spec
    return SYSTEMS[name].simulate(model, cell=cell, **kwargs)


def simulate_batches(spec: tuple, chunk_trials: int | None = None, on_batch=None):
    """Simulate one cell ``(system name, model, cell, batches, size, seed, engine, threads, path)`` in ``batches``
    batches of ``size`` trials on trial streams, batch ``b`` keyed ``(seed, *cell, b)``: (the result of all its
    trials, its successes at ``path`` per batch).  What executors ship to workers for a paired ranking, and what a
    batch-means comparison runs for each option; ``on_batch(size)`` is called after each batch (a progress bar)."""
    name, model, cell, batches, size, seed, engine, threads, path = spec
    system = SYSTEMS[name]
    job = system.job(model, engine, trial_streams=True)
    runs = []
    for b in range(batches):
        runs.append(runner.run(job, trials=size, seed=seed, cell=(*cell, b), chunk_trials=chunk_trials,
                               threads=threads, progress=False)[0])
        if on_batch is not None:
            on_batch(size)
    total = np.sum(runs, axis=0)
    slots = [_slot(system, model, job, p, len(total), engine) for p in paths_of(path)]
    info = RunInfo(trials=batches * size, seed=seed, cell=tuple(cell), chunks=batches,
                   extra={"pairing": f"trial streams, {batches} batches"})
    successes = np.array([sum(r[s] for s in slots) for r in runs], dtype=np.int64)
    return system.build(model, job, total, info, engine), successes


def _run_batched_cells(specs: dict, executor, progress, label: str) -> tuple[dict, dict]:
    """:func:`simulate_batches` of ``{index: spec}`` through ``executor``; ({index: result}, {index: successes per
    batch}).  The numbers never depend on the executor."""
    from ..run.executor import LocalExecutor

    keys = list(specs)
    results, wins = {}, {}
    total = sum(spec[3] * spec[4] for spec in specs.values())
    with _bar(total, progress, label) as bar:
        for i, (res, per_batch) in (executor or LocalExecutor()).map(simulate_batches, [specs[k] for k in keys]):
            results[keys[i]], wins[keys[i]] = res, per_batch
            bar.update(res.trials)
    return {k: results[k] for k in keys}, {k: wins[k] for k in keys}


def rank_batches(trials: int, engine: str) -> tuple[int, int]:
    """(batches, trials per batch) of a paired ranking: :func:`batch_plan`'s whole blocks on the kernel once
    ``trials`` fills 30 of them, else 30 batches of ``⌈trials / 30⌉`` trials (trial streams need no whole blocks)."""
    if engine == "kernel" and trials >= MIN_BATCHES * BLOCK_TRIALS:
        return batch_plan(trials)
    return MIN_BATCHES, -(-int(trials) // MIN_BATCHES)


def behind_the_best(per_batch: np.ndarray, best: int, delta: float) -> list[dict]:
    """Each option's score behind option ``best`` (fractions), paired by batch means: ``per_batch[i, b]`` is option
    ``i``'s weighted score in batch ``b``, every option meeting opponent j on the same dice in batch b; a Student t
    95 % interval with B − 1 degrees of freedom.  ``within_delta``: the interval's upper end is at most ``delta``."""
    out = []
    for i in range(per_batch.shape[0]):
        mean, lo, hi = intervals.t_interval(per_batch[best] - per_batch[i])
        out.append({"behind_best": mean, "behind_lo": lo, "behind_hi": hi,
                    "within_delta": bool(i == best or hi <= delta)})
    return out


def _run_cells(system: System, models: dict, cell: tuple, kwargs: dict, executor, progress, label: str) -> dict:
    """Simulate ``{index: model}`` through ``executor`` (default: this process); ``{index: result}``.

    Model ``index`` runs on stream ``(*cell, *index)``, so the numbers never depend on the executor.
    """
    from ..run.executor import LocalExecutor

    keys = list(models)
    specs = [(system.name, models[k], (*cell, *k), kwargs) for k in keys]
    results = {}
    with _bar(len(specs) * kwargs["trials"], progress, label) as bar:
        for i, res in (executor or LocalExecutor()).map(simulate_cell, specs):
            results[keys[i]] = res
            bar.update(res.trials)
    return {k: results[k] for k in keys}


def _plan_words(system: System, model, side: str) -> str | None:
    words = getattr(system, "plan_words", None)
    return words(model, side) if words else None


def _sides(model) -> dict:
    return {f.name: f.side for f in getattr(model, "formations", [])}


def cell_notes(labelled: list[tuple[str, list[str]]]) -> list[str]:
    """The notes of a decision's cells, each once: a note that every cell carries (a placeholder-tables warning)
    alone, any other followed by the labels of the cells that carry it ("… (Tactical vs Warband, Assault vs
    Warband)")."""
    carriers: dict[str, list[str]] = {}
    for label, notes in labelled:
        for note in dict.fromkeys(notes):
            carriers.setdefault(note, []).append(label)
    everyone = len(labelled)
    return [note if len(labels) == everyone else f"{note} ({', '.join(labels)})"
            for note, labels in carriers.items()]


def matrix(attackers, defenders, *, base=None, plans=None, trials: int = DEFAULT_TRIALS, seed: int = 0,
           precision: float | None = None, engine: str = "kernel", threads: int | None = None,
           progress: bool | None = None, cell: tuple = (), executor=None, source: str = "matrix") -> MatrixResult:
    """Every attacker against every defender: all reported quantities with 95 % intervals.

    ``attackers`` / ``defenders``: forces (library formations ``"netea:LIST/FORMATION"``, force
    TOML files, or dicts with ``units`` and ``formations``); ``base``: a scenario whose rules and
    end phase apply.  Cell ``(i, j)`` uses stream ``cell=(*cell, i, j)``.  ``executor``: where the
    cells run (:mod:`wargame_odds.analysis.run.executor`; default this process), with identical numbers.
    ``plans``: each attacker's turn plan (as for :func:`rank`; default its job); where a plan has no assault, every
    cell also gets ``score.enemy_broken_or_destroyed``, the grid's quantity.
    """
    _check_run(trials=trials, seed=seed, precision=precision, engine=engine, threads=threads, progress=progress,
               cell=cell)
    system, base_model = _matchup_system(base, source)
    att = _forces(system, attackers, "attacker", "attackers", source)
    dfn = _forces(system, defenders, "defender", "defenders", source)
    att = _with_plans(system, att, plans, "attacker", source, "attackers")
    a_names, d_names = _labels(att), _labels(dfn)
    models = {(i, j): system.matchup(a, d, base_model) for i, a in enumerate(att) for j, d in enumerate(dfn)}
    fights = _fights_every_assault(models.values())
    plan_words = {a_names[i]: _plan_words(system, models[(i, 0)], "attacker") for i in range(len(att))}
    kwargs = _sim_kwargs(trials, seed, precision, engine, threads)
    cells = _run_cells(system, models, cell, kwargs, executor, progress, "matrix")
    frames, notes, trades = [], [], []
    for (i, j), res in cells.items():
        model = models[(i, j)]
        table = res.table()
        if not fights:  # the plans' common score, beside every quantity of the cell
            score = counted(res, _score_path(system, model, "attacker", fights))
            table.loc[len(table)] = {"section": "score", "entity": "", "quantity": ENEMY_BROKEN,
                                     "kind": "probability", "estimate": score.p, "ci95_lo": score.ci95[0],
                                     "ci95_hi": score.ci95[1]}
        sides = _sides(model)
        table.insert(0, "side", [sides.get(e, "") if s == "formations" else ""
                                 for s, e in zip(table.section, table.entity)])
        table.insert(0, "defender", d_names[j])
        table.insert(0, "attacker", a_names[i])
        table["points_attacker"] = system.points(model, "attacker")
        table["points_defender"] = system.points(model, "defender")
        table["trials"] = res.trials
        frames.append(table)
        trade = battle_trade(model, res, "attacker", system.points(model, "attacker"))
        trades.append({"attacker": a_names[i], "defender": d_names[j]}
                      | {f"{k}{end}": x for k, v in trade.items() for end, x in zip(("", "_lo", "_hi"), v)})
        notes.append((f"{a_names[i]} vs {d_names[j]}", res.notes))
    notes = cell_notes(notes)
    return MatrixResult(cells=cells, attackers=a_names, defenders=d_names, trades=pd.DataFrame(trades),
                        system=system.name,
                        trials=trials, seed=seed, frame=pd.concat(frames, ignore_index=True),
                        title=f"{len(att)} × {len(dfn)} matchups", notes=notes,
                        meta={"cell": list(cell), "engine": engine, "plans": plan_words,
                              "plan_sentence": plan_sentence(plan_words, fights),
                              "quantity": None if fights else f"score/{ENEMY_BROKEN}"})


def sweep(scenario, field: str, values, *, trials: int = DEFAULT_TRIALS, seed: int = 0,
          precision: float | None = None, engine: str = "kernel", threads: int | None = None,
          progress: bool | None = None, cell: tuple = (), executor=None) -> SweepResult:
    """Simulate ``scenario`` once per value of ``field`` (a dotted path such as
    ``formations[0].units[0].count``, ``rules.result_dice`` or ``charger.distance``).

    Value ``k`` uses stream ``cell=(*cell, k)``.  Every value is validated before anything runs.
    ``executor``: where the cells run (as for :func:`matrix`).
    """
    _check_run(trials=trials, seed=seed, precision=precision, engine=engine, threads=threads, progress=progress,
               cell=cell)
    _check_text("field", field)
    system = system_of(scenario)
    model, source = system.load(scenario)
    values = _capped(values, MAX_VALUES, source, field, "values")
    if not values:
        raise UserError(source, field, "empty grid: no values to sweep", "one or more values")
    models = {(k,): system.with_value(model, source, field, v) for k, v in enumerate(values)}
    kwargs = _sim_kwargs(trials, seed, precision, engine, threads)
    cells = list(_run_cells(system, models, cell, kwargs, executor, progress, "sweep").values())
    frames, notes = [], []
    for k, (value, res) in enumerate(zip(values, cells)):
        table = res.table()
        table.insert(0, "value", [value] * len(table))
        table.insert(0, "cell", k)
        table.insert(0, "field", field)
        table["trials"] = res.trials
        frames.append(table)
        notes.append((f"{field} = {value}", res.notes))
    notes = cell_notes(notes)
    title = cells[0].title
    return SweepResult(cells=cells, field=field, values=values, system=system.name, trials=trials, seed=seed,
                       frame=pd.concat(frames, ignore_index=True), title=title, notes=notes,
                       meta={"field": field, "values": values, "cell": list(cell), "engine": engine})


def _common_streams_result(system: System, model, trials: int, seed: int, cell: tuple, engine: str, threads):
    """One simulation of ``model`` on the streams of ``(seed, *cell)``: with trial streams where the system
    has them (trial ``t`` draws the same dice whatever the model), else the same lane streams."""
    try:
        job = system.job(model, engine, trial_streams=True)
    except NotImplementedError:
        return system.simulate(model, trials=trials, seed=seed, cell=cell, engine=engine, threads=threads,
                               progress=False)
    counts, info = runner.run(job, trials=trials, seed=seed, cell=cell, threads=threads, progress=False)
    return system.build(model, job, counts, info, engine)


def _quantity_path(quantity: str, source: str) -> tuple:
    try:
        return tuple(str(p) for p in fieldpath.parse(quantity))
    except ValueError:
        raise UserError(source, "quantity", f"not a result path: {quantity!r}",
                        "e.g. sides.attacker_wins or formations[Warband].destroyed") from None


def _scenario_data(model) -> dict | None:
    """The scenario as a dict (names for field paths in words), where the model has one."""
    if hasattr(model, "raw"):  # T9A: the scenario file's data
        return model.raw
    dump = getattr(model, "model_dump", None)
    return dump() if dump else None


def threshold(scenario, field: str, values, *, quantity: str = "sides.attacker_wins", at_least: float | None = None,
              at_most: float | None = None, largest: bool | None = None, trials: int = DEFAULT_TRIALS, seed: int = 0,
              engine: str = "kernel", threads: int | None = None, progress: bool | None = None,
              cell: tuple = ()) -> ThresholdResult:
    """The value of ``field`` at the edge of those whose probability ``quantity`` (a result path such as
    ``sides.attacker_wins`` or ``formations[Warband].destroyed``) is at least ``at_least`` (or at most ``at_most``;
    a target above 1 is a percentage: 60 is 60 %).

    ``largest=None`` (default) answers the side a player asks about: where the chance falls as the value grows (blast
    markers, enemy units), the largest value that still reaches the target ("you can afford up to 1 blast marker");
    where it rises (own units, shots), the smallest.  ``largest=True`` / ``False`` forces the largest / smallest.
    The result says which it took and why, warns when the chance is not monotone in the value, and explains runs
    of neighbouring values with the very same chance (:mod:`.plateaus`).

    Every value runs on common random numbers: the same streams ``(seed, *cell)`` (Epic: trial ``t``
    draws from the same stream whatever the value), so differences between values are not noise of
    independent runs.  All values are simulated; the answer is read from the point estimates and the
    result says how sure it is (whether each interval clears the target).
    """
    from ..intake.bounds import as_probability
    from ..output.labels import field_words, result_words, sides_of
    from .plateaus import explain, plateaus

    _check_run(trials=trials, seed=seed, engine=engine, threads=threads, progress=progress, cell=cell)
    _check_text("field", field)
    _check_text("quantity", quantity)
    system = system_of(scenario)
    model, source = system.load(scenario)
    if (at_least is None) == (at_most is None):
        raise UserError(source, "target", "give exactly one of at_least / at_most",
                        "a probability from 0 to 1, or a percentage above 1")
    target = as_probability(at_least if at_most is None else at_most)
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 <= target <= 1:
        raise UserError(source, "target", f"got {target!r}", "a probability from 0 to 1, or a percentage from 1 to 100")
    if largest is not None and not isinstance(largest, bool):
        raise UserError(source, "largest", f"got {largest!r}", "True, False or None (the side the chance points to)")
    values = sorted(dict.fromkeys(_capped(values, MAX_VALUES, source, field, "values")))
    if not values:
        raise UserError(source, field, "no values to search", "one or more values")
    path = _quantity_path(quantity, source)
    models = [system.with_value(model, source, field, v) for v in values]  # every value checked first
    points, results = [], []
    with _bar(len(values) * trials, progress, "threshold") as bar, compile_notice():
        for value, m in zip(values, models):
            result = _common_streams_result(system, m, trials, seed, tuple(cell), engine, threads)
            try:
                estimate = result[path]
            except (KeyError, TypeError):
                estimate = None
            if not isinstance(estimate, Probability):  # a mean, a distribution or a section
                allowed = ", ".join(".".join(p) for p, leaf in result.leaves() if isinstance(leaf, Probability))
                raise UserError(source, "quantity", f"{quantity!r} is not a probability of this scenario", allowed)
            points.append({"value": value, "p": estimate.p, "ci95": list(estimate.ci95)})
            results.append(result)
            bar.update(trials)
    words = field_words(field, _scenario_data(model))
    flats = [{"from": values[i], "to": values[j],
              "why": explain(system.name, field, path, models[i:j + 1], results[i:j + 1], values[i:j + 1], words)}
             for i, j in plateaus(points)]
    return ThresholdResult(field=field, quantity=quantity, target=float(target),
                           direction="at_least" if at_most is None else "at_most", largest=largest,
                           points=points, plateaus=flats, field_words=words,
                           quantity_words=result_words(system.name, quantity, sides_of(result.to_dict(), True)),
                           system=system.name, trials=trials, seed=seed,
                           title=result.title, meta={"cell": list(cell), "engine": engine})


def meta_weights(meta, weights, source: str) -> tuple[list, np.ndarray]:
    """(opponent specs, weights normalised to sum 1) from a list, a dict or (spec, weight) pairs."""
    if isinstance(meta, dict):
        specs, given = list(meta), list(meta.values())
    else:
        meta = _capped(meta, MAX_FORCES, source, "opponents", "opponents")
        if meta and all(isinstance(m, tuple) and len(m) == 2 for m in meta):
            specs, given = [m[0] for m in meta], [m[1] for m in meta]
        else:
            specs, given = meta, weights
    if not specs:
        raise UserError(source, "opponents", "empty grid: no opponents", "one or more forces")
    if given is None:
        given = [1.0] * len(specs)
    specs = _capped(specs, MAX_FORCES, source, "opponents", "opponents")
    given = _capped(given, MAX_FORCES, source, "opponents.weight", "weights")
    allowed = "one non-negative number per opponent, with a positive sum"
    if len(given) != len(specs):
        raise UserError(source, "opponents.weight", f"{len(given)} weights for {len(specs)} opponents", allowed)
    try:
        w = np.array([float(x) for x in given])
    except (TypeError, ValueError):
        raise UserError(source, "opponents.weight", f"not numbers: {given}", allowed) from None
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise UserError(source, "opponents.weight", f"weights {given} do not sum to a positive number", allowed)
    if w.max() > np.finfo(float).max / len(w):  # the sum would overflow: the same ratios, scaled down first
        w = w / w.max()
    return specs, w / w.sum()


def _pair(system: System, role: str, option: Force, opponent: Force, base_model):
    if role == "attacker":
        return system.matchup(option, opponent, base_model)
    return system.matchup(opponent, option, base_model)


def paths_of(path: tuple) -> list[tuple]:
    """The result paths a compared count adds up: ``path`` itself (``("sides", "attacker_wins")``), or each path of a
    tuple of them (disjoint events, e.g. destroyed and broken after the end phase)."""
    return [path] if all(isinstance(key, str) for key in path) else list(path)


def counted(result, path: tuple) -> Probability:
    """The probability at ``path`` of ``result``, or of the disjoint events of several paths added up."""
    parts = [result[p] for p in paths_of(path)]
    return Probability(sum(p.k for p in parts), parts[0].n)


def _slot(system: System, model, job, path, size: int, engine: str) -> int:
    """The count slot behind the probability at ``path`` (probed through the result builder)."""
    info = RunInfo(trials=1 << 40, seed=0)
    probe = system.build(model, job, np.arange(size, dtype=np.int64), info, engine)[path]
    check = system.build(model, job, 7 * np.arange(size, dtype=np.int64) + 3, info, engine)[path]
    if not hasattr(probe, "k") or check.k != 7 * probe.k + 3:
        raise ValueError(f"{'/'.join(path)} is not a single counted probability; it cannot be paired")
    return int(probe.k)


def batch_plan(trials: int) -> tuple[int, int]:
    """(batches, trials per batch) of a batch-means comparison: at least ``trials`` trials in
    B >= 30 equal batches of whole 4096-trial blocks (so at least 122,880 trials)."""
    blocks = -(-int(trials) // BLOCK_TRIALS)
    per = -(-blocks // MAX_BATCHES)
    return max(MIN_BATCHES, -(-blocks // per)), per * BLOCK_TRIALS


def _batched_run(system, models, paths, batches, size, seed, cell, engine, threads, chunk_trials, bar):
    """Both models on trial streams, batch ``b`` keyed ``(seed, *cell, b)``, each counting its own path of
    ``paths``; (wins per option and batch, marginal results)."""
    done = [simulate_batches((system.name, m, cell, batches, size, seed, engine, threads, path),
                             chunk_trials=chunk_trials, on_batch=bar.update) for m, path in zip(models, paths)]
    return np.array([wins for _, wins in done]), [result for result, _ in done]


def _paired_run(system, models, paths, trials, seed, cell, engine, bar):
    """Run both models trial by trial on shared streams, each counting its own path of ``paths``; (2×2 table,
    marginal results)."""
    jobs = [system.job(m, engine) for m in models]
    key0, key1 = stream_key(seed, cell)
    first = [job.run_chunk(key0, key1, 0, 1) for job in jobs]
    slots = [[_slot(system, m, job, p, len(c), engine) for p in paths_of(path)]
             for m, job, c, path in zip(models, jobs, first, paths)]
    sums = [c.astype(np.int64) for c in first]
    table = np.zeros((2, 2), np.int64)
    table[int(first[0][slots[0]].sum()), int(first[1][slots[1]].sum())] += 1
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # one trial per call: waking a thread pool per call only costs (50x on a busy machine)
    try:
        for t in range(1, trials):
            ca = jobs[0].run_chunk(key0, key1, t, 1)
            cb = jobs[1].run_chunk(key0, key1, t, 1)
            sums[0] += ca
            sums[1] += cb
            table[int(ca[slots[0]].sum()), int(cb[slots[1]].sum())] += 1
            if t % 4096 == 0:
                bar.update(4096)
    finally:
        numba.set_num_threads(threads)
    bar.update(trials % 4096 or 4096)
    info = RunInfo(trials=trials, seed=seed, cell=tuple(cell), chunks=trials, extra={"pairing": "per-trial streams"})
    results = [system.build(m, job, s, info, engine) for m, job, s in zip(models, jobs, sums)]
    return table, results


def _planned_names(names: list[str], plans: list[str | None]) -> list[str]:
    """The names of two options, each followed by its plan ("Devastator (Sustained Fire)", "Devastator (assault)")
    where both have one name and their plans differ; else the names."""
    if names[0] != names[1] or None in plans or plans[0] == plans[1]:
        return names
    return [f"{name} ({plan})" for name, plan in zip(names, plans)]


def _option_labels(labels, default: list[str], source: str) -> list[str]:
    """The names of options A and B: ``labels`` when given (two non-empty texts), else ``default``."""
    if labels is None:
        labels = default
    elif not isinstance(labels, (list, tuple)) or len(labels) != 2 or not all(
            isinstance(x, str) and 0 < len(x) <= MAX_NAME_CHARS and not any(c in x for c in LINE_BREAKS)
            for x in labels):
        raise UserError(source, "labels", f"got {elide(repr(labels))}",
                        f"two names, one per option, each of 1 to {MAX_NAME_CHARS} characters on one line")
    return _labels([Force(name=str(x), data={}) for x in labels])


def _scenario_options(option_a, option_b, labels, side: str, engine: str, method: str | None, source: str):
    """Two whole scenarios compared as they stand (``compare`` without opponents): (system, the pair,
    the row label, the option labels, engine, method, notes).

    Turn scenarios run on the kernel unless it lacks a feature they use (then on the reference engine, with
    a note); the method is :func:`default_method`'s unless one is given."""
    system = _referenced(source, "option_a", lambda: system_of(option_a))
    if _referenced(source, "option_b", lambda: system_of(option_b)) is not system or system.name != "epic":
        raise UserError(source, "option_b", "both scenarios of a scenario comparison must be Epic scenarios",
                        "two Epic scenario files or models (e.g. a turn scenario and its variant)")
    (ma, src_a), (mb, src_b) = (_referenced(source, key, lambda o=o: system.load(o))
                                for key, o in (("option_a", option_a), ("option_b", option_b)))
    label_a, label_b = _option_labels(labels, [Path(s).stem if isinstance(o, (str, Path)) else m.title
                                               for o, m, s in ((option_a, ma, src_a), (option_b, mb, src_b))], source)
    opponent = " and ".join(f.name for f in ma.formations if f.side != side)
    notes = []
    if ma.turn or mb.turn:
        if engine == "kernel":
            from ..epic import engine_for

            reasons = [reason for m in (ma, mb) for _, reason in [engine_for(m, engine)] if reason]
            if reasons:
                notes.append(f"turn scenarios run on the pure-Python reference engine: {reasons[0]}")
                engine = "reference"
    return system, [(ma, mb)], opponent, (label_a, label_b), engine, method, notes


def _fights_an_assault(model) -> bool:
    """Whether a scenario fights an assault: an assault scenario (any system's), or an Epic turn with an engage
    activation."""
    turn = getattr(model, "turn", None)
    return not turn or any(a.action == "engage" for a in turn)


@dataclass(frozen=True)
class Outcome:
    """What a comparison weighs: the count at ``path`` (one result path, or several of disjoint events, summed:
    :func:`paths_of`), named in the player's words, "{option} {verb}" ("shoot first wins", "shoot twice breaks or
    destroys Warband"); ``why``: the note saying why it is not the chance to win; ``quantity``: the result paths in
    the result's meta, where they are not ``path``'s own (forces' plans: each opponent's formation)."""

    path: tuple
    verb: str = "wins"
    why: str | None = None
    quantity: str | None = None


def _scenario_outcome(system: System, ma, mb, labels: tuple[str, str], side: str, source: str) -> Outcome:
    """The chance to win the assault when both options fight one; otherwise what both have (a turn without an
    engage activation has casualties, blast markers, broken and destroyed, but no assault to win): the chance that
    an enemy formation both options face is broken or destroyed after the end phase (the target of option A's last
    activation against it, else the first), with casualties and blast markers per option beside it.  One
    :class:`UserError` when the options share no enemy formation."""
    if _fights_an_assault(ma) and _fights_an_assault(mb):
        return Outcome(system.win_path(side))
    shared = [f.name for f in ma.formations
              if f.side != side and any(g.name == f.name and g.side == f.side for g in mb.formations)]
    if not shared:
        raise UserError(source, "option_b", f"{labels[0]!r} and {labels[1]!r} share no formation of the other side, "
                        "and a turn without an assault can only be compared on what happens to the same enemy",
                        "two scenarios with the same enemy formation (by name)")
    targets = [a.target for a in (ma.turn or ()) if a.target in shared]
    enemy = targets[-1] if targets else shared[0]
    without = " and ".join(repr(label) for label, m in zip(labels, (ma, mb)) if not _fights_an_assault(m))
    return Outcome((("formations", enemy, "destroyed"), ("formations", enemy, "broken_after_end_phase")),
                   f"breaks or destroys {enemy}",
                   f"{without} {'is a turn' if ' and ' not in without else 'are turns'} without an assault (no "
                   f"engage activation), so the chance to win an assault is not compared: the options are compared "
                   f"on what both have, {enemy} broken or destroyed after the end phase (paired), with casualties "
                   "and blast markers per option")


def _blast_markers(model, result, side: str) -> dict[str, tuple[float, float, float]]:
    """The enemy formations' blast markers after the end phase (mean, lo, hi; summed as :func:`battle_trade`), the
    side's own too; empty for a result without them."""
    sums: dict[str, list[float]] = {}
    for f in getattr(model, "formations", ()):
        try:
            mean = result["formations", f.name, "blast_markers_after_end_phase_mean"]
        except (KeyError, TypeError):
            return {}
        total = sums.setdefault("blast_markers" if f.side == side else "enemy_blast_markers", [0.0, 0.0, 0.0])
        for i, x in enumerate((mean.value, *mean.ci95)):
            total[i] += x
    return {name: tuple(values) for name, values in sums.items()}


def default_method(engine: str) -> tuple[str, str]:
    """The paired method that gives the narrowest interval per second on ``engine``, and why, in words.

    Both methods pair trial ``t`` of option A with trial ``t`` of option B on the same dice, so at equal trials their
    intervals have the same width (the pairing gain, measured by every run, is the same; batch means' t-quantile
    with 29 or more degrees of freedom is at most 4 % wider than the normal one).  What differs is the cost of a
    trial: on the kernel batch means runs whole 4,096-trial blocks at full engine speed, exact pairs one engine call
    per trial (the shipped turn comparison: about 7× the CPU time); on the reference engine a trial costs the same
    either way, and batch means would need at least 122,880 of them.  The choice depends on the engine only, never
    on a timing, so that the same seed gives the same numbers."""
    if engine == "kernel":
        return "batch-means", ("batch means, because on the kernel it runs whole blocks of trials at full speed "
                               "while exact pairs makes one engine call per trial, for the same pairing")
    return "exact-pairs", ("exact pairs, because on the reference engine a trial costs the same either way and "
                           f"batch means would need at least {MIN_BATCHES * BLOCK_TRIALS:,} trials")


def compare(option_a, option_b, opponents=None, *, weights=None, base=None, plans=None, side: str = "attacker",
            trials: int = DEFAULT_TRIALS, seed: int = 0, paired: bool = True, method: str | None = None,
            engine: str = "kernel", threads: int | None = None, chunk_trials: int | None = None,
            progress: bool | None = None, cell: tuple = (), labels: tuple[str, str] | None = None,
            source: str = "compare") -> CompareResult:
    """P(A wins) − P(B wins) against each opponent and over the weighted meta.

    Forces: ``option_a`` and ``option_b`` are forces of ``side``, each set against every force of
    ``opponents`` (on ``base``'s rules), each playing its turn plan (``plans``, as for :func:`rank`: None for each
    option's job, one plan for both, or a list of two, ``[plan_a, plan_b]``; Epic options that play the attacker).
    When both plans fight an assault the options are compared on the chance to win it; otherwise on the chance that
    the opponent's first formation is broken or destroyed after the end phase, with casualties and blast markers per
    option beside it.  Two options of one name are told apart by their plans ("Devastator (Sustained Fire)").
    Scenarios: without ``opponents``, they are two whole Epic
    scenarios (paths or loaded models), compared as they stand in one row against the formations of
    the other side, e.g. a turn scenario and its variant ("shoot first" against "engage now");
    ``labels`` names options A and B (default: the forces' names; for scenarios their file names, or
    the titles of loaded models).  Turn scenarios run on ``engine`` (on the reference engine, with a
    note, when the kernel lacks a feature they use).
    ``method=None``: the one with the narrowest interval per second on ``engine`` (:func:`default_method`: batch
    means on the kernel, exact pairs on the reference engine); the result's ``meta["method_reason"]`` says which
    and why in one line, with the pairing gain the run measured.

    Common random numbers (``paired=True``): against opponent ``j`` both options run trial ``t``
    on the same random stream, so they stay in step however differently their trials unfold.

    * ``method="batch-means"`` (default): each option runs at full engine speed on trial streams
      (trial ``t`` of batch ``b`` keyed ``(seed, *cell, j, b)`` and ``t`` only), at least ``trials``
      trials in B >= 30 equal batches (:func:`batch_plan`).  The difference has the t-interval
      (B − 1 df) of the per-batch differences of P̂A − P̂B; the meta row the same over the
      weighted per-batch differences.  Numbers do not depend on ``threads`` or ``chunk_trials``.
    * ``method="exact-pairs"``: exactly ``trials`` trials, one engine call each (trial ``t`` keyed
      ``(seed, *cell, j)`` with block ``t``), and Newcombe's paired interval from the 2×2 table of
      (A won, B won) (method 10); the meta row combines opponents with MOVER.  For small runs.

    ``variance_ratio`` = per-trial variance of A − B for independent runs (pA(1−pA) + pB(1−pB)) /
    paired variance: independent runs would need that many times the trials for the same precision;
    ``trials_saved`` = (ratio − 1) × trials, per option and opponent.  ``independent_ci95_*`` is the
    interval independent runs of the same trials would have (Newcombe's hybrid score interval).

    ``paired=False`` runs the options on independent streams ``(*cell, j, 0)`` and ``(*cell, j, 1)``
    (Newcombe's hybrid score interval; MOVER over the meta).
    """
    _check_run(trials=trials, seed=seed, paired=paired, method=method, engine=engine, threads=threads,
               chunk_trials=chunk_trials, progress=progress, cell=cell)
    _check_choice(source, "side", side, ("attacker", "defender"))
    if opponents is None:
        for field, value in (("base", base), ("weights", weights), ("plans", plans)):
            if value is not None:
                raise UserError(source, field, "a comparison of two whole scenarios takes no base, weights or plans",
                                "opponents (forces) with them, or two scenarios without them (a turn scenario "
                                "holds its plan as its activations)")
        system, pairs, opponent, (label_a, label_b), engine, method, notes = _scenario_options(
            option_a, option_b, labels, side, engine, method, source)
        names, w = [opponent], np.ones(1)
        outcome = _scenario_outcome(system, *pairs[0], (label_a, label_b), side, source)
        notes += [outcome.why] if outcome.why else []
        paths, plan_words, said = [(outcome.path, outcome.path)], {}, []
    else:
        specs, w = meta_weights(opponents, weights, source)
        system, base_model = _matchup_system(base, source)
        a, b = _force(system, option_a, side, source, "option_a"), _force(system, option_b, side, source, "option_b")
        opps = _opponents(system, specs, side, source)
        a, b = _with_plans(system, [a, b], plans, side, source, "options", ("option_a", "option_b"))
        names = _labels(opps)
        pairs = [(_pair(system, side, a, o, base_model), _pair(system, side, b, o, base_model)) for o in opps]
        words = [_plan_words(system, m, side) for m in pairs[0]]
        label_a, label_b = _option_labels(labels, _planned_names([a.name, b.name], words), source)
        planned = plans is not None or bool(set(words) - {None, "assault"})
        plan_words = dict(zip((label_a, label_b), words)) if planned else {}
        said = list(zip((a.name, b.name) if labels is None else (label_a, label_b), words)) if planned else []
        fights = _fights_every_assault(m for pair in pairs for m in pair)
        paths = [(_score_path(system, ma, side, fights), _score_path(system, mb, side, fights)) for ma, mb in pairs]
        outcome = Outcome(system.win_path(side)) if fights else Outcome(
            paths[0][0], "breaks or destroys the enemy", "a plan without an assault has no assault to win, so the "
            "options are compared on what both have: the opponent's formation broken or destroyed after the end "
            "phase (paired), with casualties and blast markers per option",
            "formations/ENEMY/destroyed + formations/ENEMY/broken_after_end_phase")
        notes = [outcome.why] if outcome.why else []
    if method is None:
        method, why = default_method(engine)
    else:
        why = "as asked"
    _check_choice(source, "method", method, ("batch-means", "exact-pairs"))
    batched = paired and method == "batch-means"
    batches, size = batch_plan(trials) if batched else (None, None)
    n = batches * size if batched else trials
    rows, option_results, option_notes = [], {}, []
    with _bar(2 * len(pairs) * n, progress, "compare") as bar, compile_notice():
        for j, ((ma, mb), (path_a, path_b)) in enumerate(zip(pairs, paths)):
            var_pair = diffs = None
            if batched:
                wins, (ra, rb) = _batched_run(system, (ma, mb), (path_a, path_b), batches, size, seed, (*cell, j),
                                              engine, threads, chunk_trials, bar)
                diffs = (wins[0] - wins[1]) / size
                d, lo, hi = intervals.batch_means(diffs)
                var_pair = float(np.var(diffs, ddof=1)) * size
            elif paired:
                table, (ra, rb) = _paired_run(system, (ma, mb), (path_a, path_b), trials, seed, (*cell, j), engine,
                                              bar)
                n11, n10, n01, n00 = int(table[1, 1]), int(table[1, 0]), int(table[0, 1]), int(table[0, 0])
                d, lo, hi = intervals.paired_difference(n11, n10, n01, n00)
                var_pair = intervals.paired_variance(n11, n10, n01, n00)
            else:
                kwargs = _sim_kwargs(trials, seed, None, engine, threads)
                ra = system.simulate(ma, cell=(*cell, j, 0), chunk_trials=chunk_trials, **kwargs)
                rb = system.simulate(mb, cell=(*cell, j, 1), chunk_trials=chunk_trials, **kwargs)
                bar.update(2 * trials)
            pa, pb = counted(ra, path_a), counted(rb, path_b)
            _, ilo, ihi = intervals.linear([1, -1], [pa.k, pb.k], [pa.n, pb.n])
            if not paired:
                d, lo, hi = pa.p - pb.p, ilo, ihi
            var_ind = pa.p * (1 - pa.p) + pb.p * (1 - pb.p)
            option_results[(label_a, j)], option_results[(label_b, j)] = ra, rb
            trades = tuple((points_trade(m, r, side) or {}) | battle_trade(m, r, side, system.points(m, side))
                           | (_blast_markers(m, r, side) if outcome.why else {})
                           for m, r in ((ma, ra), (mb, rb)))
            rows.append(_row(names[j], w[j], (pa.p, *pa.ci95), (pb.p, *pb.ci95), (d, lo, hi), (ilo, ihi), var_pair,
                             var_ind, n)
                        | _points_columns([trades[0]], [1.0], "_a") | _points_columns([trades[1]], [1.0], "_b")
                        | {"_k": (pa.k, pb.k, pa.n, pb.n), "_var": (var_pair, var_ind), "_diffs": diffs,
                           "_trades": trades})
            option_notes += [(f"{label_a} vs {names[j]}", ra.notes), (f"{label_b} vs {names[j]}", rb.notes)]
    notes += cell_notes(option_notes)
    if len(rows) > 1:
        rows.append(_meta_row(rows, w, n, size)
                    | _points_columns([r["_trades"][0] for r in rows], w, "_a")
                    | _points_columns([r["_trades"][1] for r in rows], w, "_b"))
    if batched and n != trials:
        notes.append(f"trials raised from {trials:,} to {n:,} per option and opponent: batch means runs at least "
                     f"{MIN_BATCHES} equal batches of whole {BLOCK_TRIALS:,}-trial blocks")
    points = [system.points(m, side) for m in pairs[0]]
    for r in rows:  # the chance to win per 100 points each option costs
        for (column, suffix), cost in zip((("p_a", "_a"), ("p_b", "_b")), points):
            if cost:
                r |= {f"per_100_points{suffix}{end}": r[f"{column}{end}"] * 100 / cost for end in ("", "_lo", "_hi")}
    frame = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    per_batch = pd.DataFrame([{"opponent": r["opponent"], "batch": i, "difference": x}
                              for r in rows[:len(pairs)] if r["_diffs"] is not None for i, x in enumerate(r["_diffs"])],
                             columns=["opponent", "batch", "difference"])
    return CompareResult(option_results=option_results, batches=per_batch, system=system.name, trials=n, seed=seed,
                         frame=frame,
                         title=f"{label_a} vs {label_b} as {side}", notes=notes,
                         meta={"option_a": label_a, "option_b": label_b, "side": side, "paired": paired,
                               "method": (method if paired else "independent"), "batches": batches,
                               "method_reason": _method_reason(paired, method, why, frame, batches),
                               "quantity": outcome.quantity or " + ".join("/".join(p) for p in paths_of(outcome.path)),
                               "outcome": outcome.verb, "cell": list(cell), "engine": engine,
                               "plans": plan_words, "plan_sentence": plan_sentence(said, outcome.why is None),
                               "enemies": None if outcome.why is None else [
                                   [path[0][1] for path in pair] for pair in paths]})


def _method_reason(paired: bool, method: str, why: str, frame: pd.DataFrame, batches: int | None) -> str:
    """One line: the method used, why, and the pairing gain the run measured (over the meta when there is one), with
    its 95 % interval when it comes from batch means (the per-batch variance has B − 1 degrees of freedom)."""
    if not paired:
        return "Independent runs (no pairing), as asked."
    if why == "as asked":
        why = f"{method.replace('-', ' ')}, as asked"
    ratio = frame.variance_ratio.iloc[-1]
    if ratio is None or ratio != ratio or not math.isfinite(ratio):
        return f"Paired by {why}."
    interval = ""
    if batches:
        from scipy.stats import chi2

        df = batches - 1
        lo, hi = ratio * chi2.ppf(0.025, df) / df, ratio * chi2.ppf(0.975, df) / df
        interval = f"; 95 % interval {lo:.2f} to {hi:.2f}, 1 meaning pairing buys nothing"
    if ratio <= 1:  # the options' results were not positively related: say so in words, not as a negative saving
        return (f"Paired by {why}; pairing did not help here (the options' results are unrelated: measured gain "
                f"{ratio:.2f} ×{interval}).")
    return (f"Paired by {why}; pairing gain measured here: {ratio:.2f} × (independent runs would need that many "
            f"times the trials{interval}).")


POINT_COLUMNS = ("points_destroyed", "points_lost", "points_swing")


def points_trade(model, result, side: str) -> dict[str, tuple[float, float, float]] | None:
    """Points destroyed (the enemy formations destroyed, at their points), points lost (one's own) and
    the swing (destroyed − lost), each as (mean, lo, hi) for the formations of ``side``; None unless
    every formation of the scenario has points.

    Mean = Σ points_f × P(f destroyed).  Formations fall together within a trial, so the interval
    adds up the formations' Wilson limits (Σ points_f × lo_f, Σ points_f × hi_f): the interval of
    perfectly correlated destructions, the widest their correlation allows (conservative)."""
    formations = getattr(model, "formations", None)
    if not formations or any(getattr(f, "points", None) is None for f in formations):
        return None
    sums = {"points_destroyed": [0.0, 0.0, 0.0], "points_lost": [0.0, 0.0, 0.0]}
    for f in formations:
        p = result["formations", f.name, "destroyed"]
        key = "points_lost" if f.side == side else "points_destroyed"
        for i, x in enumerate((p.p, *p.ci95)):
            sums[key][i] += f.points * x
    (d, d_lo, d_hi), (lost, l_lo, l_hi) = sums["points_destroyed"], sums["points_lost"]
    return {"points_destroyed": (d, d_lo, d_hi), "points_lost": (lost, l_lo, l_hi),
            "points_swing": (d - lost, d_lo - l_hi, d_hi - l_lo)}


def battle_trade(model, result, side: str, points: int | None = None) -> dict[str, tuple[float, float, float]]:
    """What is left and what was taken, for the formations of ``side`` against the others (means after the end phase,
    each as (mean, lo, hi)): ``units_left`` and ``enemy_units_left`` (surviving units), ``kills`` (enemy units lost)
    and, where war engines report damage, ``damage_dealt`` and ``damage_taken`` (war-engine damage points); with
    ``points`` (what the side costs) also ``kills_per_100_points`` and ``damage_per_100_points``.  Formations' means
    are summed with their interval limits (conservative, as :func:`points_trade`); empty for a result without these
    quantities."""
    sums: dict[str, list[float]] = {}

    def add(name, mean):
        total = sums.setdefault(name, [0.0, 0.0, 0.0])
        for i, x in enumerate((mean.value, *mean.ci95)):
            total[i] += x

    for f in getattr(model, "formations", ()):
        mine = f.side == side
        try:
            add("units_left" if mine else "enemy_units_left", result["formations", f.name, "surviving_units_mean"])
            if not mine:
                add("kills", result["formations", f.name, "casualties_mean"])
        except (KeyError, TypeError):
            return {}
        try:
            add("damage_taken" if mine else "damage_dealt", result["formations", f.name, "damage_taken_mean"])
        except KeyError:
            pass
    out = {name: tuple(values) for name, values in sums.items()}
    if points:
        for name, source in (("kills_per_100_points", "kills"), ("damage_per_100_points", "damage_dealt")):
            if source in out:
                out[name] = tuple(x * 100 / points for x in out[source])
    return out


def _points_columns(trades: list, weights, suffix: str = "") -> dict:
    """Weighted sums (means and interval limits) of :func:`points_trade` or :func:`battle_trade` values as table
    columns, for every quantity all of them have; empty when a scenario lacks them (no points)."""
    if not trades or any(not t for t in trades):
        return {}
    out = {}
    for name in [n for n in trades[0] if all(n in t for t in trades)]:
        values = np.array([t[name] for t in trades])  # (opponents, 3)
        mean, lo, hi = np.asarray(weights) @ values
        out |= {f"{name}{suffix}": mean, f"{name}{suffix}_lo": lo, f"{name}{suffix}_hi": hi}
    return out


def _row(opponent, weight, pa, pb, difference, independent, var_pair, var_ind, trials) -> dict:
    """One table row: both probabilities (estimate, lo, hi), the difference with its paired and
    independent-runs intervals, the variance ratio and the trials saved (None when not paired)."""
    ratio = None if var_pair is None else (var_ind / var_pair if var_pair else (math.inf if var_ind else None))
    (p_a, p_a_lo, p_a_hi), (p_b, p_b_lo, p_b_hi) = pa, pb
    d, lo, hi = difference
    return {"opponent": opponent, "weight": weight, "p_a": p_a, "p_a_lo": p_a_lo, "p_a_hi": p_a_hi, "p_b": p_b,
            "p_b_lo": p_b_lo, "p_b_hi": p_b_hi, "difference": d, "ci95_lo": lo, "ci95_hi": hi,
            "independent_ci95_lo": independent[0], "independent_ci95_hi": independent[1],
            "variance_ratio": ratio, "trials_saved": None if ratio is None else (ratio - 1) * trials}


def _meta_row(rows, w, trials, batch_size) -> dict:
    """The weighted meta (opponents run on independent streams): batch means over the weighted
    per-batch differences, or else MOVER over the opponents' intervals."""
    ka = [r["_k"][0] for r in rows]
    kb = [r["_k"][1] for r in rows]
    n = [r["_k"][2] for r in rows]
    pa = intervals.linear(w, ka, n)
    pb = intervals.linear(w, kb, n)
    _, ilo, ihi = intervals.linear(np.concatenate([w, -w]), ka + kb, n + n)
    var_pair = None
    if rows[0]["_diffs"] is not None:
        diffs = w @ np.array([r["_diffs"] for r in rows])
        difference = intervals.batch_means(diffs)
        var_pair = float(np.var(diffs, ddof=1)) * batch_size
    else:
        difference = intervals.combine(w, [r["difference"] for r in rows], [r["ci95_lo"] for r in rows],
                                       [r["ci95_hi"] for r in rows])
        if rows[0]["_var"][0] is not None:
            var_pair = float(np.sum(w ** 2 * [r["_var"][0] for r in rows]))
    if var_pair is None:  # independent runs: the interval is the independent one
        ilo, ihi = difference[1:]
    var_ind = float(np.sum(w ** 2 * [r["_var"][1] for r in rows]))
    return _row("meta (weighted)", 1.0, pa, pb, difference, (ilo, ihi), var_pair, var_ind, trials)


def rank(options, meta, *, weights=None, base=None, plans=None, side: str = "attacker", by: str = "score",
         trials: int = DEFAULT_TRIALS, seed: int = 0, precision: float | None = None, engine: str = "kernel",
         threads: int | None = None, progress: bool | None = None, cell: tuple = (), executor=None,
         indifference: float = 1.0, source: str = "rank") -> RankResult:
    """Rank options against a weighted meta of opponents.

    Score = Σ w_j P(option wins against opponent j) with weights normalised to 1, and its MOVER-
    Wilson 95 % interval.  Every option meets opponent j on the same dice (stream ``(*cell, j)``, batch b of
    30 or more on ``(*cell, j, b)``), so each option's score behind the best one gets a paired interval by
    batch means (:func:`behind_the_best`), and ``within_delta`` says which options are within ``indifference``
    percentage points of the best by that interval.  With ``precision`` the cells run until precise enough, on
    streams of their own (``(*cell, i, j)``), without the paired columns.  Points efficiency =
    100 × score / the option's points (win probability per 100 points), interval scaled alike.
    ``by`` = ``"score"`` or ``"per_100_points"`` orders the table.  ``executor``: where the cells
    run (as for :func:`matrix`).

    ``plans`` (Epic, options that play the attacker): each option's turn plan, None (default: each option's job,
    :mod:`wargame_odds.analysis.epic.decisions_plans`), one for all or one per option: ``"assault"``, ``"shoot"``,
    ``"shoot_then_assault"``, ``"job"`` or a dict ``{"plan": ..., "action": "sustained_fire" | "advance" |
    "double", "then": FORCE}``.  When every plan fights an assault the score is the chance to win it; otherwise
    every option is scored on the chance that the opponent's (first) formation is broken or destroyed after the
    end phase.  The table's ``plan`` column says which plan scored each option.
    """
    _check_run(trials=trials, seed=seed, precision=precision, engine=engine, threads=threads, progress=progress,
               cell=cell)
    _check_choice(source, "side", side, ("attacker", "defender"))
    _check_choice(source, "by", by, ("score", "per_100_points"))
    if isinstance(indifference, bool) or not isinstance(indifference, (int, float)) or not 0 < indifference <= 50:
        raise UserError(source, "indifference", f"{indifference!r}",
                        "a number of percentage points above 0, at most 50")
    specs, w = meta_weights(meta, weights, source)
    system, base_model = _matchup_system(base, source)
    opts = _forces(system, options, side, "options", source)
    opps = _opponents(system, specs, side, source)
    opts = _with_plans(system, opts, plans, side, source, "options")
    o_names, m_names = _labels(opts), _labels(opps)
    kwargs = _sim_kwargs(trials, seed, precision, engine, threads)
    cells, rows, notes = [], [], []
    models = {(i, j): _pair(system, side, o, m, base_model) for i, o in enumerate(opts) for j, m in enumerate(opps)}
    fights = _fights_every_assault(models.values())
    paths = {key: _score_path(system, model, side, fights) for key, model in models.items()}
    plan_words = {o_names[i]: _plan_words(system, models[(i, 0)], side) for i in range(len(opts))}
    if precision is None:  # paired: the stream of a cell never depends on the option
        batches, size = rank_batches(trials, engine)
        specs = {(i, j): (system.name, models[(i, j)], (*cell, j), batches, size, seed, engine, threads, paths[(i, j)])
                 for (i, j) in models}
        results, wins = _run_batched_cells(specs, executor, progress, "rank")
        trials = batches * size
    else:
        results, wins = _run_cells(system, models, cell, kwargs, executor, progress, "rank"), None
    for i, name in enumerate(o_names):
        probs = [counted(results[(i, j)], paths[(i, j)]) for j in range(len(opps))]
        for j, p in enumerate(probs):
            lo, hi = p.ci95
            cells.append({"option": name, "opponent": m_names[j], "weight": w[j], "estimate": p.p,
                          "ci95_lo": lo, "ci95_hi": hi, "trials": p.n})
            notes.append((f"{name} vs {m_names[j]}", results[(i, j)].notes))
        score, lo, hi = intervals.linear(w, [p.k for p in probs], [p.n for p in probs])
        points = system.points(models[(i, 0)], side)
        scale = 100.0 / points if points else math.nan
        trades = [(points_trade(models[(i, j)], results[(i, j)], side) or {})
                  | battle_trade(models[(i, j)], results[(i, j)], side, points) for j in range(len(opps))]
        rows.append({"option": name, "plan": plan_words[name], "points": points, "score": score, "ci95_lo": lo,
                     "ci95_hi": hi,
                     "per_100_points": score * scale, "per_100_points_lo": lo * scale,
                     "per_100_points_hi": hi * scale} | _points_columns(trades, w))
    if wins is not None:
        per_batch = np.array([[sum(w[j] * wins[(i, j)][b] for j in range(len(opps))) / size for b in range(batches)]
                              for i in range(len(opts))])
        best = int(np.argmax([row["score"] for row in rows]))
        for row, behind in zip(rows, behind_the_best(per_batch, best, indifference / 100)):
            row.update(behind)
    frame = pd.DataFrame(rows)
    if frame.plan.isna().all():  # no plans (the options play the defender, or a system without turns)
        frame = frame.drop(columns="plan")
    if frame[by].isna().any():
        missing = ", ".join(frame.option[frame[by].isna()])
        raise UserError(source, "by", f"options without points cannot be ranked per 100 points: {missing}",
                        "score, or give every formation its points")
    frame = frame.sort_values(by, ascending=False, kind="stable").reset_index(drop=True)
    frame.insert(0, "rank", np.arange(1, len(frame) + 1))
    option_results = {(name, j): results[(i, j)] for i, name in enumerate(o_names) for j in range(len(opps))}
    return RankResult(cells=pd.DataFrame(cells), option_results=option_results, opponents=m_names,
                      system=system.name, trials=trials, seed=seed, frame=frame,
                      title=f"{len(opts)} options against a meta of {len(opps)}", notes=cell_notes(notes),
                      meta={"side": side, "by": by, "cell": list(cell),
                            "quantity": ("/".join(system.win_path(side)) if fights else
                                         "formations/ENEMY/destroyed + formations/ENEMY/broken_after_end_phase"),
                            "outcome": "wins" if fights else "breaks or destroys the enemy",
                            "plans": plan_words, "plan_sentence": plan_sentence(plan_words, fights),
                            "engine": engine, "indifference": indifference,
                            "paired": f"batch means, {batches} batches, same dice per opponent" if wins is not None
                            else None})


def cumulative(result) -> CumulativeResult:
    """"At least N" and "at most N" tables (with intervals) of every distribution of a result.

    ``result``: a simulation :class:`~wargame_odds.analysis.output.result.Result`, or a sweep / matrix result (then
    one block per cell, labelled in the ``cell`` column).
    """
    if isinstance(result, Result):
        return CumulativeResult(system=result.system, trials=result.trials, seed=result.seed,
                                frame=result.cumulative_frame(), title=result.title)
    if isinstance(result, SweepResult):
        labelled = [(f"{result.field} = {v}", r) for v, r in zip(result.values, result.cells)]
    elif isinstance(result, MatrixResult):
        labelled = [(f"{result.attackers[i]} vs {result.defenders[j]}", r) for (i, j), r in result.cells.items()]
    else:
        raise ArgumentError("result", result, "a simulation, sweep or matrix result")
    frames = []
    for label, res in labelled:
        frame = res.cumulative_frame()
        frame.insert(0, "cell", label)
        frames.append(frame)
    return CumulativeResult(system=result.system, trials=result.trials, seed=result.seed,
                            frame=pd.concat(frames, ignore_index=True), title=result.title)
