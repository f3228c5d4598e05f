"""Turn plans: what an option's formation does with its turn when ``rank``, ``matrix`` or a list search scores it
against an enemy formation (docs/decisions.md, "Turn plans").

``assault``: the option's first formation assaults the enemy, as an assault scenario (every unit in base contact for a
library formation).  ``shoot``: each of the option's formations takes a shooting action (Sustained Fire, Advance or
Double, TP 1.6.1) at the enemy's first formation, in a turn scenario with its end phase, and no assault.
``shoot_then_assault``: the option's formations but the last shoot, then the last engages (a formation acts once a
turn, TP 1.6, so the one that assaults is another formation: ``then`` adds it).  ``job`` (the default): the first
formation's own job, ``shoot`` for a shooting formation, else ``assault`` (:func:`shooting_job`).
"""
from __future__ import annotations

from typing import Literal

from ..intake.bounds import FilePath
from ..intake.errors import UserError
from ..intake.scenario import StrictModel, validate
from ..output.labels import action_name
from .dice import parse_dice

PLANS = ("job", "assault", "shoot", "shoot_then_assault")
SHOOTING_ACTIONS = ("sustained_fire", "advance", "double")  # the shooting actions of TP 1.6.1
PLAN_KEY = "plan"  # where a force carries its plan (Force.data)


class Plan(StrictModel):
    """An option's plan as a definition file or a program gives it (``plan = "shoot"`` or a table)."""

    plan: Literal["job", "assault", "shoot", "shoot_then_assault"] = "job"
    action: Literal["sustained_fire", "advance", "double"] = "sustained_fire"
    then: FilePath | None = None  # a force whose first formation engages after the shooting (shoot_then_assault)


def plan_of(spec, source: str, field: str) -> Plan:
    """A :class:`Plan` from ``None`` (the job), a plan's name, a dict of its keys or a :class:`Plan`; one
    :class:`UserError` naming ``field`` otherwise."""
    if spec is None:
        return Plan()
    if isinstance(spec, Plan):
        return spec
    if isinstance(spec, str):
        if spec not in PLANS:
            raise UserError(source, field, f"unknown plan {spec!r}", ", ".join(PLANS))
        return Plan(plan=spec)
    if isinstance(spec, dict):
        return validate(Plan, spec, f"{source} {field}")
    raise UserError(source, field, f"got {spec!r}", f"a plan ({', '.join(PLANS)}) or a table with plan, action, then")


def _mean(value) -> float:
    dice = parse_dice(value)
    return dice.count * (dice.sides + 1) / 2 + dice.plus


def _hit(value: int | None) -> float:
    return 0.0 if value is None else (7 - value) / 6


def ranged_hits(scenario, formation) -> float:
    """The hits a formation's ranged weapons score in one volley, expected: every weapon line's count × mean shots ×
    the chance to hit on its better to-hit value (AP, AT or MW; a barrage point counts as one shot hitting on 4+);
    characters' lines included, anti-aircraft lines not (they never fire at ground formations, TP 2.2.1)."""
    total = 0.0
    for group in formation.units:
        for name in (group.unit, *group.characters):
            for w in scenario.units[name].weapons:
                if w.bp is not None:
                    total += group.count * w.count * _mean(w.bp) * 0.5
                else:
                    total += group.count * w.count * _mean(w.shots) * max(_hit(w.ap), _hit(w.at), _hit(w.mw))
    return total


def assault_hits(scenario, formation) -> float:
    """The hits a formation's units score in close combat, expected: each unit's CC attack and its extra attacks
    (a D3 counts as 2) on its CC value."""
    total = 0.0
    for group in formation.units:
        for name in (group.unit, *group.characters):
            profile = scenario.units[name]
            extra = sum(2 if a.count == "D3" else a.count for a in profile.extra_attacks if a.range == "bc")
            total += group.count * (1 + extra) * _hit(profile.cc)
    return total


def shooting_job(scenario, formation) -> bool:
    """A formation's job is shooting when its ranged weapons, in one volley, are expected to hit more often than its
    units in close combat (Devastators: two missile launchers at 5+ against CC 5+; Assault Marines: no ranged
    weapon, CC 3+).  A reading of the data, used only to choose the default plan."""
    return ranged_hits(scenario, formation) > assault_hits(scenario, formation)


def resolved(plan: dict, scenario, formations: list) -> tuple[str, str]:
    """(plan, action) of a force's ``plan`` (its :class:`Plan` as a dict) in ``scenario``, the job decided by the
    force's first formation; ``formations``: the force's formations in the scenario."""
    kind = plan["plan"]
    if kind == "job":
        kind = "shoot" if shooting_job(scenario, formations[0]) else "assault"
    return kind, plan["action"]


def words(kind: str, action: str) -> str:
    """A resolved plan in the rules' words: "assault", "Sustained Fire", "Advance, then assault"."""
    if kind == "assault":
        return "assault"
    return action_name(action) + (", then assault" if kind == "shoot_then_assault" else "")


def check_shooters(kind: str, scenario, formations: list, source: str) -> None:
    """Every formation a shooting plan makes shoot has a ranged weapon that fires at ground units; one
    :class:`UserError` naming it otherwise."""
    shooters = formations[:-1] if kind == "shoot_then_assault" else formations
    for formation in shooters:
        if ranged_hits(scenario, formation) == 0:
            raise UserError(source, "plan", f"{formation.name!r} has no ranged weapon that fires at ground units, "
                            f"so it cannot shoot", 'plan = "assault" or "job" for it')


def activations(kind: str, action: str, own: list[str], enemy: str) -> list[dict]:
    """The ``[[turn]]`` of a plan: the option's formations ``own`` act in order at ``enemy``."""
    shooters = own[:-1] if kind == "shoot_then_assault" else own
    turn = [{"formation": name, "action": action, "target": enemy} for name in shooters]
    if kind == "shoot_then_assault":
        turn.append({"formation": own[-1], "action": "engage", "target": enemy})
    return turn
