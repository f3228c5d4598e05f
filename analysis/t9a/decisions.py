"""The 9th Age for the decision tools: sweeps over the scenario file's fields, and with close combat matchups (a
unit file charges a unit file on a base scenario's ``[combat]``) and paired comparisons (docs/t9a.md)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..intake.fieldpath import with_value
from ..intake.errors import UserError
from ..intake.scenario import StrictModel, read_toml, validate
from ..intake.systems import Decisions, Force


class T9AForceFile(StrictModel):
    """A 9th Age unit for matchups: its ``unit`` table (with ``attacks``), optional ``support`` and, for the
    charging side, ``charge`` keys of a charger (``advance_rate``, ``dice`` …); checked in the matchup."""

    system: Literal["t9a"] = "t9a"
    name: str | None = Field(default=None, min_length=1, max_length=80)
    unit: dict
    support: dict | None = None
    charge: dict | None = None


class T9ADecisions(Decisions):
    """The 9th Age: sweeps over the scenario file's fields (the loaded model is resolved); with close combat
    also matchups (a unit file charges a unit file on a base scenario's ``[combat]``) and paired comparisons
    (``jobs``: the runner jobs by engine, :class:`wargame_odds.analysis.t9a.KernelJob` and ``ReferenceJob``)."""

    def __init__(self, system, jobs: dict):
        super().__init__(system)
        self.jobs = dict(jobs)

    def load(self, scenario, source=None):
        if not isinstance(scenario, (str, Path)):
            raise UserError(source or "<scenario>", None, "a 9th Age sweep needs the scenario file",
                            "a path")
        from .charge.model import Scenario

        data, source = read_toml(scenario)
        model = self.system.load(scenario)
        return _WithRaw(model, validate(Scenario, data, source).model_dump()), source

    def with_value(self, model, source, path, value):
        from .charge.model import Scenario, resolve

        data = with_value(model.raw, path, value, source)
        return _WithRaw(resolve(validate(Scenario, data, source), source), data)

    def simulate(self, model, **kwargs):
        return self.system.simulate(model.model, **kwargs)

    def job(self, model, engine, trial_streams=False):
        """The runner job of a scenario with ``[combat]`` (``trial_streams``: one stream per trial); a charge
        alone has none (NotImplementedError: the decision simulates it whole)."""
        if model.model.combat is None:
            raise NotImplementedError("a 9th Age charge without [combat] has no trial streams")
        if engine not in self.jobs:
            raise ValueError("engine must be 'kernel' or 'reference'")
        return self.jobs[engine](model.model, trial_streams=trial_streams)

    def build(self, model, job, counts, info, engine):
        from .charge.results import build_result

        return build_result(model.model, job.layout, counts, info, engine)

    def win_path(self, role: str) -> tuple:
        """The combat won over all trials (docs/t9a.md, "Close combat"): the charger's or the target's."""
        return ("melee", "unconditional", "a_wins" if role == "attacker" else "b_wins")

    def force(self, spec, role: str) -> Force:
        """A unit from a TOML file or a dict (:class:`T9AForceFile`)."""
        if isinstance(spec, Force):
            return spec
        if isinstance(spec, dict):
            data, source = dict(spec), "<force>"
        else:
            data, source = read_toml(spec)
        checked = validate(T9AForceFile, data, source)
        name = checked.name or (Path(str(spec)).stem if not isinstance(spec, dict) else "unit")
        return Force(name=name, data=checked.model_dump(exclude={"system", "name"}), source=source)

    def matchup(self, attacker: Force, defender: Force, base):
        """``base``'s scenario (its rules, ``[combat]`` and charge) with ``attacker``'s unit as the charger and
        ``defender``'s as the target."""
        source = f"{attacker.source} vs {defender.source}"
        if base is None or base.raw.get("combat") is None or len(base.raw["chargers"]) != 1:
            raise UserError(source, "base", "a 9th Age matchup needs a base scenario with [combat] and one charger",
                            "a T9A scenario file with [combat]")
        from .charge.model import Scenario, resolve

        data = copy.deepcopy(base.raw)
        data["title"] = f"{attacker.name} vs {defender.name}"
        data["chargers"][0].update(attacker.data.get("charge") or {}, name=attacker.name, unit=attacker.data["unit"],
                                   support=attacker.data.get("support"))
        data["target"].update(name=defender.name, unit=defender.data["unit"], support=defender.data.get("support"))
        return _WithRaw(resolve(validate(Scenario, data, source), source), data)


@dataclass(frozen=True)
class _WithRaw:
    """A resolved 9th Age model with its scenario data, defaults filled in (for setting fields)."""

    model: object
    raw: dict
