"""Epic Armageddon for the decision tools (matrix, sweep, threshold, compare, rank, list search): its runner jobs
and result builders for paired runs, and its forces and matchups (a NetEA library formation, a force file or a dict
against another; docs/decisions.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, TypeAdapter, ValidationError, field_validator

from ..intake.bounds import MAX_NAME_CHARS, Name
from ..intake.errors import UserError
from ..intake.scenario import StrictModel, read_toml, shown_path, validate
from ..intake.systems import Decisions, Force
from . import decisions_plans as plans
from .decisions_plans import PLAN_KEY


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


class EpicDecisions(Decisions):
    """Epic's adapter: turn and assault jobs, forces from the NetEA library, matchups of two forces
    (``reference_job``: the reference engine's assault job, :class:`wargame_odds.analysis.epic.ReferenceJob`)."""

    def __init__(self, system, reference_job):
        super().__init__(system)
        self.reference_job = reference_job

    def job(self, model, engine, trial_streams=False):
        """The runner job; a turn scenario's compiled turn on either engine (docs/epic-turn.md)."""
        from .compile import compile_scenario
        from .engine import KernelJob

        if model.turn:
            from .turn_result import TurnJob, compile_turn

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
            return self.reference_job(compiled, trial_streams=trial_streams)
        raise ValueError("engine must be 'kernel' or 'reference'")

    def build(self, model, job, counts, info, engine):
        from .outcome import build_result

        if model.turn:
            from .turn_result import build_turn_result

            return build_turn_result(job.c, counts, info, engine=engine)

        return build_result(job.compiled, counts, info, engine=engine)

    def force(self, spec, role: str) -> Force:
        """A force from a library formation (``"netea:LIST/FORMATION"``), a TOML file or a dict.

        A force file holds ``name`` (optional), ``[units.*]`` and ``[[formations]]`` as in a
        scenario; ``side`` may be left out (the matchup sets it).
        """
        from .library.upgrades import expand_with_upgrades as expand_formation  # with a formation's upgrades

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
        source = f"{attacker.source} vs {defender.source}"
        model = self.validate(data, source)
        plan = attacker.data.get(PLAN_KEY)
        if plan is None:
            return model
        own = [f["name"] for f in formations if f["side"] == "attacker"]
        mine = [f for f in model.formations if f.side == "attacker"]
        kind, action = plans.resolved(plan, model, mine)
        if kind == "assault":
            return model
        plans.check_shooters(kind, model, mine, attacker.source)
        enemy = next(f.name for f in model.formations if f.side == "defender")
        data["turn"] = plans.activations(kind, action, own, enemy)
        data["title"] = f"{attacker.name} ({plans.words(kind, action)}) vs {defender.name}"
        return self.validate(data, f"{source} ({plans.words(kind, action)})")

    def with_plan(self, force: Force, plan, then: Force | None = None) -> Force:
        """``force`` playing ``plan`` (a :class:`.decisions_plans.Plan`) as the attacker; ``then``: the force whose
        first formation engages after the shooting (``shoot_then_assault``), joined to it."""
        data = dict(force.data, **{PLAN_KEY: plan.model_dump()})
        if then is not None:
            taken = {f.get("name") for f in data["formations"]}
            joined = [dict(f, name=f"{f.get('name')} (then)") if f.get("name") in taken else f
                      for f in then.data["formations"][:1]]
            clash = next((u for u, profile in then.data["units"].items()
                          if u in data["units"] and data["units"][u] != profile), None)
            if clash is not None:
                raise UserError(then.source, f"units.{clash}", f"{force.source} defines a unit {clash!r} otherwise",
                                "one profile per unit name in an option and the formation it brings with then")
            data["formations"] = [*data["formations"], *joined]
            data["units"] = {**then.data["units"], **data["units"]}
        return Force(name=force.name if then is None else f"{force.name} + {then.name}", data=data,
                     source=force.source)

    def plan_words(self, model, side: str) -> str | None:
        """The plan a matchup's option plays, in the rules' words ("Sustained Fire", "assault"); None for the
        defender (it receives the assault)."""
        if side != "attacker":
            return None
        if not model.turn:
            return "assault"
        shots = [a for a in model.turn if a.action != "engage"]
        return plans.words("shoot_then_assault" if len(shots) < len(model.turn) else "shoot", shots[0].action)

    def points(self, model, force_role: str) -> int | None:
        pts = [f.points for f in model.formations if f.side == force_role]
        return None if any(p is None for p in pts) else sum(pts)
