"""What the decision tools need from a rule system, behind one small interface.

A :class:`System` loads scenarios, sets a field given as a field path (:mod:`.fieldpath`:
``rules.result_dice``, ``formations[Warband].blast_markers``, ``charger.distance``), simulates, and exposes its runner
job and result builder (for trial-by-trial pairing).  Matchups (``matrix``, ``compare``, ``rank``) need
:meth:`System.matchup`, which combines an attacking and a defending :class:`Force`.
"""
from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from ..intake.bounds import MAX_NAME_CHARS, Name
from ..intake.errors import ArgumentError, UserError
from ..intake.scenario import StrictModel, read_toml, shown_path, validate
from ..intake.fieldpath import with_value


class ForceFile(StrictModel):
    """The shape of a force (file or dict); the formations and units are checked in the matchup."""

    system: Literal["epic"] = "epic"
    name: Name | None = None
    units: dict[str, dict] = {}
    formations: list[dict] = Field(min_length=1)

    @field_validator("formations")
    @classmethod
    def _formation_names(cls, formations):
        """A formation's name is a name (the matchup compares them before the scenario is validated)."""
        for f in formations:
            try:
                _NAME.validate_python(f.get("name", "x"), strict=True)
            except ValidationError:
                raise ValueError(f"a formation's name is {shown_path(repr(f['name']))}; "
                                 f"allowed: a text of one line, 1 to {MAX_NAME_CHARS} characters") from None
        return formations


_NAME = TypeAdapter(Name)


@dataclass
class Force:
    """One side's contribution to a matchup: its formations and the profiles they use."""

    name: str
    data: dict  # system-specific scenario fragment (Epic: "units" and "formations")
    source: str = "<force>"


class System:
    """Generic adapter over ``analysis.<name>``: ``load``/``simulate`` and the runner job."""

    name = ""
    model_type: type | None = None

    @property
    def module(self):
        return importlib.import_module(f"wargame_odds.analysis.{self.name}")

    def load(self, scenario, source: str | None = None):
        """(model, source name) from a path or an already loaded model."""
        if isinstance(scenario, (str, Path)):
            return self.module.load(scenario), shown_path(scenario)
        return scenario, source or "<scenario>"

    def data(self, model) -> dict:
        return model.model_dump()

    def validate(self, data: dict, source: str):
        return validate(self.model_type, data, source)

    def with_value(self, model, source: str, path: str, value):
        return self.validate(with_value(self.data(model), path, value, source), source)

    def simulate(self, model, **kwargs):
        return self.module.simulate(model, **kwargs)

    # -- matchups -------------------------------------------------------------------------------
    def force(self, spec, role: str) -> Force:
        raise UserError(str(spec), None, f"{self.name} has no matchups (matrix, compare and rank)",
                        "epic")

    def matchup(self, attacker: Force, defender: Force, base):
        raise NotImplementedError

    def win_path(self, role: str) -> tuple:
        return ("sides", f"{role}_wins")

    def points(self, model, force_role: str) -> int | None:
        return None

    # -- runner access (trial-by-trial pairing) --------------------------------------------------
    def job(self, model, engine: str, trial_streams: bool = False):
        """The runner job; ``trial_streams``: trial ``t``'s dice depend only on (seed, cell, t)."""
        raise NotImplementedError

    def build(self, model, job, counts, info, engine: str):
        raise NotImplementedError


class Epic(System):
    name = "epic"

    @property
    def model_type(self):
        from ..epic.model import EpicScenario

        return EpicScenario

    def job(self, model, engine, trial_streams=False):
        """The runner job; a turn scenario's compiled turn on either engine (docs/epic-turn.md)."""
        from ..epic import ReferenceJob
        from ..epic.compile import compile_scenario
        from ..epic.engine import KernelJob

        if model.turn:
            from ..epic.turn_result import TurnJob, compile_turn

            c = compile_turn(model)
            if engine == "kernel":
                return KernelJob(c, trial_streams=trial_streams)
            if engine == "reference":
                return TurnJob(c, trial_streams=trial_streams)
            raise ValueError("engine must be 'kernel' or 'reference'")
        compiled = compile_scenario(model)
        if engine == "kernel":
            return KernelJob(compiled, trial_streams=trial_streams)
        if engine == "reference":
            return ReferenceJob(compiled, trial_streams=trial_streams)
        raise ValueError("engine must be 'kernel' or 'reference'")

    def build(self, model, job, counts, info, engine):
        from ..epic.outcome import build_result

        if model.turn:
            from ..epic.turn_result import build_turn_result

            return build_turn_result(job.c, counts, info, engine=engine)

        return build_result(job.compiled, counts, info, engine=engine)

    def force(self, spec, role: str) -> Force:
        """A force from a library formation (``"netea:LIST/FORMATION"``), a TOML file or a dict.

        A force file holds ``name`` (optional), ``[units.*]`` and ``[[formations]]`` as in a
        scenario; ``side`` may be left out (the matchup sets it).
        """
        from ..library.upgrades import expand_with_upgrades as expand_formation  # with a formation's upgrades

        if isinstance(spec, Force):
            return spec
        if isinstance(spec, str) and spec.startswith("netea:") and "/" in spec:
            data, source, name = {"formations": [{"library": spec}]}, spec, None
        elif isinstance(spec, dict):
            data, source, name = dict(spec), "<force>", spec.get("name")
        else:
            data, source = read_toml(spec)
            name = data.get("name") or Path(str(spec)).stem
        data = validate(ForceFile, data, source).model_dump(exclude_unset=True)
        formations = data["formations"]
        expanded = []
        for i, f in enumerate(formations):
            try:
                expanded.append(expand_formation(f, f"formations[{i}]") if isinstance(f, dict) and "library" in f
                                else f)
            except ValueError as exc:
                head, _, rest = str(exc).partition(": ")
                problem, _, allowed = rest.partition("; allowed: ")
                raise UserError(source, head, problem, allowed or None) from None
        name = name or expanded[0].get("name", source)
        return Force(name=str(name), data={"units": dict(data.get("units", {})), "formations": expanded},
                     source=source)

    def matchup(self, attacker: Force, defender: Force, base):
        """An Epic scenario: ``base``'s rules and end phase, attacker's formations then defender's.

        Formation sides are set by role; a unit name or formation name used differently by both
        forces gets the suffix ``@attacker`` / ``@defender``.
        """
        base_data = self.data(base) if base is not None else {}
        units: dict = {}
        formations: list = []
        taken = {f.get("name") for f in attacker.data["formations"]} & \
                {f.get("name") for f in defender.data["formations"]}
        for role, force in (("attacker", attacker), ("defender", defender)):
            rename = {}
            for uname, profile in force.data["units"].items():
                if uname in units and units[uname] != profile:
                    rename[uname] = f"{uname}@{role}"
                units[rename.get(uname, uname)] = profile
            for f in force.data["formations"]:
                f = dict(f, side=role)
                if f.get("name") in taken:
                    f["name"] = f"{f['name']}@{role}"
                if isinstance(f.get("units"), list):
                    f["units"] = [dict(g, unit=rename.get(g.get("unit"), g.get("unit")),
                                       **({"characters": [rename.get(c, c) for c in g["characters"]]}
                                          if "characters" in g else {}))
                                  for g in f["units"]]
                formations.append(f)
        data = {"system": "epic", "title": f"{attacker.name} vs {defender.name}", "units": units,
                "formations": formations}
        for key in ("rules", "end_phase"):
            if key in base_data:
                data[key] = base_data[key]
        return self.validate(data, f"{attacker.source} vs {defender.source}")

    def points(self, model, force_role: str) -> int | None:
        pts = [f.points for f in model.formations if f.side == force_role]
        return None if any(p is None for p in pts) else sum(pts)


class GdB(System):
    """General de Brigade: sweeps over scenario fields and ``tables.*`` values."""

    name = "gdb"

    def with_value(self, model, source, path, value):
        return model.replace(path, value)


class T9AForceFile(StrictModel):
    """A 9th Age unit for matchups: its ``unit`` table (with ``attacks``), optional ``support`` and, for the
    charging side, ``charge`` keys of a charger (``advance_rate``, ``dice`` …); checked in the matchup."""

    system: Literal["t9a"] = "t9a"
    name: str | None = Field(default=None, min_length=1, max_length=80)
    unit: dict
    support: dict | None = None
    charge: dict | None = None


class T9A(System):
    """The 9th Age: sweeps over the scenario file's fields (the loaded model is resolved); with close combat
    also matchups (a unit file charges a unit file on a base scenario's ``[combat]``) and paired comparisons."""

    name = "t9a"

    def load(self, scenario, source=None):
        if not isinstance(scenario, (str, Path)):
            raise UserError(source or "<scenario>", None, "a 9th Age sweep needs the scenario file",
                            "a path")
        from ..t9a.model import Scenario

        data, source = read_toml(scenario)
        model = self.module.load(scenario)
        return _WithRaw(model, validate(Scenario, data, source).model_dump()), source

    def with_value(self, model, source, path, value):
        from ..t9a.model import Scenario, resolve

        data = with_value(model.raw, path, value, source)
        return _WithRaw(resolve(validate(Scenario, data, source), source), data)

    def simulate(self, model, **kwargs):
        return self.module.simulate(model.model, **kwargs)

    def job(self, model, engine, trial_streams=False):
        """The runner job of a scenario with ``[combat]`` (``trial_streams``: one stream per trial); a charge
        alone has none (NotImplementedError: the decision simulates it whole)."""
        from ..t9a import KernelJob, ReferenceJob

        if model.model.combat is None:
            raise NotImplementedError("a 9th Age charge without [combat] has no trial streams")
        jobs = {"kernel": KernelJob, "reference": ReferenceJob}
        if engine not in jobs:
            raise ValueError("engine must be 'kernel' or 'reference'")
        return jobs[engine](model.model, trial_streams=trial_streams)

    def build(self, model, job, counts, info, engine):
        from ..t9a.results import build_result

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
        from ..t9a.model import Scenario, resolve

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


SYSTEMS = {"epic": Epic(), "gdb": GdB(), "t9a": T9A()}


def system_of(scenario) -> System:
    """The adapter for a loaded model or a scenario path (by its ``system`` key)."""
    if isinstance(scenario, (str, Path)):
        data, source = read_toml(scenario)
        name = data.get("system")
    elif type(scenario).__module__.startswith("wargame_odds.analysis."):
        name = getattr(scenario, "system", None) or type(scenario).__module__.split(".")[2]
        source = "<scenario>"
    else:
        raise ArgumentError("scenario", scenario, "a scenario file path (str or pathlib.Path) or a loaded scenario")
    if name in SYSTEMS:
        return SYSTEMS[name]
    raise UserError(source, "system", f"unknown system {name!r}", ", ".join(["epic", "gdb", "t9a"]))
