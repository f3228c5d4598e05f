"""Computing one point of a report cell, anywhere: this is the function executors ship to workers.

The answer is plain JSON data (the result's tables column by column and its ``to_dict()``), so
it travels between processes and is stored as one file per point.
"""
from __future__ import annotations

import json

import pandas as pd

from ..intake import systems
from .definition import spec_hash


def frame_to_json(frame: pd.DataFrame) -> dict:
    """A table as JSON, column by column, with Python numbers (floats round-trip exactly)."""
    return {"columns": [str(c) for c in frame.columns], "values": [frame[c].tolist() for c in frame.columns]}


def frame_from_json(data: dict) -> pd.DataFrame:
    return pd.DataFrame(dict(zip(data["columns"], data["values"])), columns=data["columns"])


def _plain(value):
    """numpy scalars as Python numbers (NaN stays NaN here; report.json writes it as null)."""
    return value.item()


def run_point(spec: dict, progress: bool = False) -> dict:
    """Compute one point spec (see :mod:`wargame_odds.analysis.reports.definition`) and return its data.

    ``trials`` is every trial the point simulated (a comparison: 2 options × opponents × trials).
    """
    if "list_search" in spec:
        return _list_search_point(spec)
    common = {"trials": spec["trials"], "seed": spec["seed"], "cell": tuple(spec["stream"]), "progress": progress,
              **spec["options"]}
    if "compare" in spec:
        from ..decisions import compare

        result = compare(**spec["compare"], **common)
        tables = {"table": result.table()}
        trials = 2 * len(spec["compare"]["opponents"]) * result.trials
    else:
        module = systems.get(spec["system"])
        if "matchup" in spec:
            from ..decisions import matchup

            scenario = matchup(**spec["matchup"])
        else:
            scenario = module.loads(spec["scenario_text"])
        result = module.simulate(scenario, **common)
        tables = {"table": result.table(), "distributions": result.distributions(), "at_least": result.at_least_frame()}
        trials = result.trials
    return {
        "spec_hash": spec_hash(spec),
        "cell": spec["cell"],
        "point": spec["point"],
        "overrides": spec["overrides"],
        "trials": trials,
        **{name: frame_to_json(frame) for name, frame in tables.items()},
        "result": json.loads(json.dumps(result.to_dict(), default=_plain)),
    }


def _list_search_point(spec: dict) -> dict:
    """A list search run with the report's seed: its ranking, its result without the wall-clock timings (so
    the same seed stores the same bytes) and the race's history (the plot's second panel)."""
    from ..decisions.list_search_core import list_search

    result = list_search(dict(spec["list_search"]), seed=spec["seed"], top=spec["top"],
                         max_trials=spec["max_trials"], source=spec["cell"])
    data = json.loads(result.to_json())
    del data["run"]
    return {
        "spec_hash": spec_hash(spec),
        "cell": spec["cell"],
        "point": spec["point"],
        "overrides": spec["overrides"],
        "trials": int(result.race["trials"]),
        "table": frame_to_json(result.table()),
        "history": [[int(t), int(n)] for t, n in result.history],
        "result": data,
    }
