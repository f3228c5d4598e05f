"""Computing one point of a report cell, anywhere: this is the function executors ship to workers.

The answer is plain JSON data (the result's tables column by column and its ``to_dict()``), so
it travels between processes and is stored as one file per point.
"""
from __future__ import annotations

import importlib
import json

import pandas as pd

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
    """Compute one point spec (see :mod:`analysis.reports.definition`) and return its data.

    ``trials`` is every trial the point simulated (a comparison: 2 options × opponents × trials).
    """
    common = {"trials": spec["trials"], "seed": spec["seed"], "cell": tuple(spec["stream"]), "progress": progress,
              **spec["options"]}
    if "compare" in spec:
        from ..decisions import compare

        result = compare(**spec["compare"], **common)
        tables = {"table": result.table()}
        trials = 2 * len(spec["compare"]["opponents"]) * result.trials
    else:
        module = importlib.import_module(f"analysis.{spec['system']}")
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
