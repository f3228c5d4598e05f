"""The ``[[turn]]`` list of an Epic scenario: ordered formation activations (docs/epic-turn.md §1).

A scenario with a ``[[turn]]`` list is a turn scenario.  :func:`check_turn` is the model-level
check: every bad activation gives one ``ValueError`` naming its field ("turn[1].target: ...").
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..scenario import StrictModel

Action = Literal["advance", "double", "sustained_fire", "marshal", "hold", "overwatch", "march", "engage"]
ACTIONS = ("advance", "double", "sustained_fire", "marshal", "hold", "overwatch", "march", "engage")
FIRING_ACTIONS = ("advance", "double", "sustained_fire")  # always fire at their target (TP 1.6.1)
DEFAULT_ON_FAIL = {"engage": "move", "marshal": "regroup", "march": "move", "overwatch": "move"}  # else "shoot"


class Activation(StrictModel):
    """One activation: the formation, its action and target, the map inputs of its shooting."""

    formation: str
    action: Action
    target: str | None = None
    retain: bool = False  # retaining the initiative: −1 to the action test (TP 1.6.3)
    on_fail: Literal["shoot", "move", "regroup"] | None = None  # the Hold after a failed test (TP 1.6.1)
    crossfire: bool = False  # TP 1.11
    overwatch_fire: list[str] = Field([], max_length=16)  # engage only: overwatching enemies firing at the charger
    in_range: int | None = Field(None, ge=0, le=1000)  # shooting units in range with a line of fire, front first
    exposed: int | None = Field(None, ge=1, le=1000)  # target units any shooter can reach, front first
    cover: bool = False  # the target is in cover: −1 to hit, infantry may use cover_save
    cover_save: int | None = Field(None, ge=2, le=6)  # default: the target formation's `cover`
    ap_at: Literal["auto", "ap", "at"] = "auto"
    templates_cover: int | None = Field(None, ge=1, le=100)  # target units under each barrage template

    @property
    def hold(self) -> str:
        """What the Hold after a failed action test does (``on_fail`` or the action's default)."""
        return self.on_fail or DEFAULT_ON_FAIL.get(self.action, "shoot")

    @property
    def fires(self) -> bool:
        """Whether the action, when its test passes, shoots at ``target`` (Marshal only with a target)."""
        return self.action in FIRING_ACTIONS or (self.action == "marshal" and self.target is not None)

    @property
    def may_shoot(self) -> bool:
        """Whether the activation may shoot at its target: by its action or by the Hold after a failed test."""
        return self.target is not None and self.action != "engage" and (self.fires or self.hold == "shoot")


def fill_turn_defaults(data):
    """In a turn scenario a unit group without ``engaged`` is out of any assault ("out")."""
    if isinstance(data, dict) and data.get("turn") and isinstance(data.get("formations"), list):
        for formation in data["formations"]:
            if isinstance(formation, dict) and isinstance(formation.get("units"), list):
                formation["units"] = [dict(g, engaged="out") if isinstance(g, dict) and "engaged" not in g else g
                                      for g in formation["units"]]
    return data


def _weapons_fire(scenario, formation) -> bool:
    return any(w.ap is not None or w.at is not None or w.mw is not None or w.bp is not None
               for g in formation.units for name in [g.unit, *g.characters] for w in scenario.units[name].weapons)


SHOOTING_SAVES_NOT_MODELLED = ("holofield", "knight-shield")  # their saves exist only in assaults so far


def _unmodelled_save(scenario, formation) -> str | None:
    """A rule of the formation's units whose save the shooting attack does not model yet."""
    return next((rule for g in formation.units for name in [g.unit, *g.characters]
                 for rule in scenario.units[name].special if rule in SHOOTING_SAVES_NOT_MODELLED), None)


def _engaged(formation) -> bool:
    return any(g.engaged in ("bc", "ff") for g in formation.units)


def check_turn(scenario) -> None:
    """One ``ValueError`` for the first bad activation (TP 1.6, 1.9.1, 1.10, 1.13; docs/epic-turn.md §1)."""
    by_name = {f.name: f for f in scenario.formations}
    names = ", ".join(by_name)
    acted: set[str] = set()
    on_overwatch = {f.name for f in scenario.formations if f.overwatch}
    engage_seen = False
    for i, act in enumerate(scenario.turn):
        at = f"turn[{i}]"
        formation = by_name.get(act.formation)
        if formation is None:
            raise ValueError(f"{at}.formation: unknown formation {act.formation!r}; allowed: {names}")
        if formation.broken:
            raise ValueError(f"{at}.formation: {act.formation!r} is broken at the start of the turn and cannot act "
                             "(TP 1.13); allowed: unbroken formations")
        if act.formation in acted:
            raise ValueError(f"{at}.formation: {act.formation!r} already acted this turn (TP 1.6: once per turn)")
        acted.add(act.formation)
        needs_target = act.fires or act.action == "engage" or (act.action == "hold" and act.hold == "shoot")
        if act.target is None and needs_target:
            raise ValueError(f"{at}.target: the action {act.action!r} needs a target formation; allowed: "
                             + ", ".join(f.name for f in scenario.formations if f.side != formation.side))
        if act.target is not None:
            target = by_name.get(act.target)
            if target is None:
                raise ValueError(f"{at}.target: unknown formation {act.target!r}; allowed: {names}")
            if target.side == formation.side:
                enemies = [f.name for f in scenario.formations if f.side != formation.side]
                raise ValueError(f"{at}.target: {act.target!r} is on the {target.side} side, as {act.formation!r}; "
                                 f"allowed: {', '.join(enemies) or 'no enemy formation'}")
            if act.action in ("march", "overwatch"):
                raise ValueError(f"{at}.target: the action {act.action!r} takes no target (TP 1.6.1)")
            rule = _unmodelled_save(scenario, target) if act.action != "engage" else None
            if rule is not None:
                raise ValueError(f"{at}.target: {act.target!r} has {rule}, whose save shooting does not model yet; "
                                 "allowed: targets without holofield or knight-shield units")
        shoots = act.fires or act.hold == "shoot" or act.action == "overwatch"
        if shoots and act.action != "engage" and not _weapons_fire(scenario, formation):
            raise ValueError(f"{at}.action: {act.formation!r} has no weapon that can fire at ground units, so it "
                             f"cannot take {act.action!r}" + (" (or Hold and shoot: set on_fail)" if act.hold == "shoot" else "")
                             + "; allowed: march, marshal, engage")
        if act.action == "engage":
            if engage_seen:
                raise ValueError(f"{at}.action: only one engage activation per turn (one assault)")
            engage_seen = True
            for who, f in (("formation", formation), ("target", by_name[act.target])):
                if not _engaged(f):
                    raise ValueError(f"{at}.{who}: {f.name!r} has no unit group with engaged = \"bc\" or \"ff\" "
                                     "(its positions after the charge)")
        if act.overwatch_fire and act.action != "engage":
            raise ValueError(f"{at}.overwatch_fire: only an engage activation triggers overwatch fire here")
        for k, name in enumerate(act.overwatch_fire):
            ow = by_name.get(name)
            if ow is None or ow.side == formation.side or name not in on_overwatch:
                allowed = sorted(n for n in on_overwatch if by_name[n].side != formation.side)
                raise ValueError(f"{at}.overwatch_fire[{k}]: {name!r} is not an enemy formation on overwatch; "
                                 f"allowed: {', '.join(allowed) or 'none (set overwatch = true or an overwatch action first)'}")
            rule = _unmodelled_save(scenario, formation)
            if rule is not None:
                raise ValueError(f"{at}.overwatch_fire[{k}]: {act.formation!r} has {rule}, whose save shooting "
                                 "does not model yet; allowed: chargers without holofield or knight-shield units")
        if act.action == "overwatch":
            on_overwatch.add(act.formation)
        else:
            on_overwatch.discard(act.formation)  # acting ends an overwatch kept from before (TP 1.10)
        if act.retain:
            previous = scenario.turn[i - 1] if i else None
            if previous is None or by_name[previous.formation].side != formation.side or previous.retain:
                raise ValueError(f"{at}.retain: retaining the initiative needs the previous activation to be of the "
                                 "same side and not itself retained (TP 1.6.3)")
