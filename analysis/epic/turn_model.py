"""The ``[[turn]]`` list of an Epic scenario: ordered formation activations (docs/epic-turn.md §1).

A scenario with a ``[[turn]]`` list is a turn scenario.  :func:`check_turn` is the model-level
check: every bad activation gives one ``ValueError`` naming its field ("turn[1].target: ...").
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..intake.bounds import Name, distinct
from ..intake.scenario import StrictModel

Action = Literal["advance", "double", "sustained_fire", "marshal", "hold", "overwatch", "march", "engage",
                 "ground_attack", "orbital_bombardment", "pin_point"]
# the actions of ground formations
ACTIONS = ("advance", "double", "sustained_fire", "marshal", "hold", "overwatch", "march", "engage")
AIRCRAFT_ACTIONS = ("ground_attack",)  # TP 4.2 (interception and CAP need enemy aircraft: not modelled)
SPACECRAFT_ACTIONS = ("orbital_bombardment", "pin_point")  # TP 4.3.3, 4.3.4
FIRING_ACTIONS = ("advance", "double", "sustained_fire")  # always fire at their target (TP 1.6.1)
DEFAULT_ON_FAIL = {"engage": "move", "marshal": "regroup", "march": "move", "overwatch": "move"}  # else "shoot"


# The map inputs and choices of a shooting attack (docs/epic-turn.md §1), on an activation and on a withdrawal fire
InRange = Annotated[int | None, Field(ge=0, le=1000)]  # shooting units in range with a line of fire, front first
Exposed = Annotated[int | None, Field(ge=1, le=1000)]  # target units any shooter can reach, front first
CoverSave = Annotated[int | None, Field(ge=2, le=6)]  # default: the target formation's `cover`
ApAt = Literal["auto", "ap", "at"]  # the AP/AT choice per weapon; "auto": the default policy
DeclareAt = Literal["auto", "war_engines", "others"]  # at war engines and other units: each weapon's group (TP 3.2.1)
TemplatesCover = Annotated[int | None, Field(ge=1, le=100)]  # target units under each barrage template


class WithdrawalFire(StrictModel):
    """A formation on overwatch that fires at ``at`` when ``at`` withdraws (TP 1.13.3; docs/epic-turn.md §2a),
    with the map inputs of its attack as on a shooting activation (no crossfire)."""

    formation: Name
    at: Name
    in_range: InRange = None
    exposed: Exposed = None
    cover: bool = False
    cover_save: CoverSave = None
    ap_at: ApAt = "auto"
    declare_at: DeclareAt = "auto"
    templates_cover: TemplatesCover = None

    @property
    def target(self) -> str:
        """The formation its attack is at, named as on an activation."""
        return self.at

    @property
    def crossfire(self) -> bool:
        """A withdrawal fire is never a crossfire (docs/epic-turn.md §2a)."""
        return False


class Activation(StrictModel):
    """One activation: the formation, its action and target, the map inputs of its shooting."""

    formation: Name
    action: Action
    target: Name | None = None
    retain: bool = False  # retaining the initiative: −1 to the action test (TP 1.6.3)
    on_fail: Literal["shoot", "move", "regroup"] | None = None  # the Hold after a failed test (TP 1.6.1)
    crossfire: bool = False  # TP 1.11
    # engage only: overwatching enemies firing at the charger
    overwatch_fire: Annotated[list[Name], Field(max_length=16), distinct] = []
    in_range: InRange = None
    exposed: Exposed = None
    cover: bool = False  # the target is in cover: −1 to hit, infantry may use cover_save
    cover_save: CoverSave = None
    ap_at: ApAt = "auto"
    declare_at: DeclareAt = "auto"
    templates_cover: TemplatesCover = None
    # ground_attack only (TP 4.2.4; docs/epic-turn.md §9): enemy formations whose AA units were in range
    # of the aircraft during the approach, and others (their AA units not yet fired) during the disengagement
    flak: Annotated[list[Name], Field(max_length=16), distinct] = []
    disengagement_flak: Annotated[list[Name], Field(max_length=16), distinct] = []
    jink: bool = False  # the aircraft jink against the approach flak, forfeiting the attack (TP 4.2.3)
    war_engine: int | None = Field(None, ge=1, le=100)  # pin_point: the target's Nth war engine, front first
    # overwatching formations that fire at a formation withdrawing as a result of this activation (TP 1.13.3)
    withdrawal_fire: list[WithdrawalFire] = Field([], max_length=16)

    @property
    def hold(self) -> str:
        """What the Hold after a failed action test does (``on_fail`` or the action's default)."""
        return self.on_fail or DEFAULT_ON_FAIL.get(self.action, "shoot")

    @property
    def fires(self) -> bool:
        """Whether the action, when its test passes, shoots at ``target`` (Marshal only with a target)."""
        return (self.action in FIRING_ACTIONS + AIRCRAFT_ACTIONS + SPACECRAFT_ACTIONS
                or (self.action == "marshal" and self.target is not None))

    @property
    def flies(self) -> bool:
        """An aircraft or spacecraft action (docs/epic-turn.md §9)."""
        return self.action in AIRCRAFT_ACTIONS + SPACECRAFT_ACTIONS

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


def flier(scenario, formation) -> str | None:
    """"aircraft", "spacecraft" or None (a ground formation), by the formation's first unit."""
    return _unit_flier(scenario.units[formation.units[0].unit])


FLIER_KEYS = {"aircraft": 'aircraft = "fighter", "bomber" or "fighter-bomber"', "spacecraft": "spacecraft = true"}


def _unit_flier(profile) -> str | None:
    return "aircraft" if profile.aircraft else "spacecraft" if profile.spacecraft else None


def check_fliers(scenario) -> None:
    """Aircraft in flight and spacecraft are never in an assault, never break and never take a role
    in one (TP 4.1.1, 4.2.7, 4.3): their formations hold only such units, every group ``out``."""
    for i, formation in enumerate(scenario.formations):
        kinds = [_unit_flier(scenario.units[g.unit]) for g in formation.units]
        for j, (group, kind) in enumerate(zip(formation.units, kinds)):
            where = f"formations[{i}].units[{j}]"
            if kind != kinds[0]:
                raise ValueError(f"{where}.unit: {group.unit!r} is {kind or 'a ground unit'} but the formation's first "
                                 f"unit is {kinds[0] or 'a ground unit'}; allowed: a formation of aircraft only, "
                                 "spacecraft only or ground units only")
            if kind is not None and group.engaged != "out":
                raise ValueError(f"{where}.engaged: {group.unit!r} is {kind} in flight, never in an assault "
                                 "(TP 4.1.1); allowed: \"out\"")
        if kinds[0] is not None and not scenario.turn:
            raise ValueError(f"formations[{i}]: {formation.name!r} is an {kinds[0]} formation, which acts only in a "
                             "turn scenario ([[turn]], docs/epic-turn.md §9); allowed: ground formations in an "
                             "assault scenario")
        if kinds[0] is not None and formation.role is not None:
            raise ValueError(f"formations[{i}].role: {formation.name!r} is an {kinds[0]} formation, never part of "
                             "an assault (TP 4.1.1); allowed: no role")
        if kinds[0] is not None and formation.broken:
            raise ValueError(f"formations[{i}].broken: {formation.name!r} is an {kinds[0]} formation, which never "
                             "breaks (TP 4.2.7); allowed: false")


def _has_line(scenario, formation, key: str) -> bool:
    return any(getattr(w, key) is not None for g in formation.units for w in scenario.units[g.unit].weapons)


def _check_flying(scenario, i: int, act: Activation, formation, by_name: dict) -> None:
    """The aircraft and spacecraft keys of one activation (TP 4.2, 4.3; docs/epic-turn.md §9)."""
    at = f"turn[{i}]"
    kind = flier(scenario, formation)
    if kind == "aircraft" and act.action not in AIRCRAFT_ACTIONS:
        raise ValueError(f"{at}.action: {act.formation!r} is an aircraft formation; allowed: "
                         + ", ".join(AIRCRAFT_ACTIONS))
    if kind == "spacecraft" and act.action not in SPACECRAFT_ACTIONS:
        raise ValueError(f"{at}.action: {act.formation!r} is a spacecraft formation; allowed: "
                         + ", ".join(SPACECRAFT_ACTIONS))
    needed = ("aircraft" if act.action in AIRCRAFT_ACTIONS
              else "spacecraft" if act.action in SPACECRAFT_ACTIONS else None)
    if needed is not None and kind != needed:
        raise ValueError(f"{at}.action: {act.action!r} needs a formation of {needed} (units with "
                         f"{FLIER_KEYS[needed]}); {act.formation!r} is a {kind or 'ground'} formation; allowed: "
                         + ", ".join(ACTIONS if kind is None
                                     else AIRCRAFT_ACTIONS if kind == "aircraft" else SPACECRAFT_ACTIONS))
    if act.target is not None and act.target in by_name and flier(scenario, by_name[act.target]) is not None:
        raise ValueError(f"{at}.target: {act.target!r} is an {flier(scenario, by_name[act.target])} formation: only "
                         "flak attacks aircraft and they are never assaulted (TP 4.1.1, 4.2.4); "
                         "allowed: ground formations")
    if act.flies:
        if act.on_fail is not None:
            raise ValueError(f"{at}.on_fail: a failed aircraft action test is a Stand Down (TP 4.2.7), spacecraft "
                             "take no test; allowed: leave on_fail out")
        if act.crossfire:
            raise ValueError(f"{at}.crossfire: aircraft attacks and orbital attacks never claim crossfire "
                             "(TP 4.2.2; TP-FAQ Orbital Bombardments); allowed: false")
        if act.retain and kind == "spacecraft":
            raise ValueError(f"{at}.retain: spacecraft take no action test (reading, docs/epic-turn.md §9); "
                             "allowed: false")
    if act.action != "ground_attack":
        for key in ("flak", "disengagement_flak"):
            if getattr(act, key):
                raise ValueError(f"{at}.{key}: only a ground_attack draws flak; allowed: []")
        if act.jink:
            raise ValueError(f"{at}.jink: only aircraft on a ground_attack jink (TP 4.2.3); allowed: false")
    else:
        for key in ("flak", "disengagement_flak"):
            for k, name in enumerate(getattr(act, key)):
                gunner = by_name.get(name)
                if (gunner is None or gunner.side == formation.side or flier(scenario, gunner) is not None
                        or not _has_line(scenario, gunner, "aa")):
                    allowed = [f.name for f in scenario.formations if f.side != formation.side
                               and flier(scenario, f) is None and _has_line(scenario, f, "aa")]
                    raise ValueError(f"{at}.{key}[{k}]: {name!r} is not an enemy ground formation with an AA weapon; "
                                     f"allowed: {', '.join(allowed) or 'none'}")
                if key == "disengagement_flak" and name in act.flak:
                    raise ValueError(f"{at}.disengagement_flak[{k}]: {name!r} already fired flak at the approach; "
                                     "each unit flaks an aircraft formation once per turn (TP 4.2.4); allowed: "
                                     "formations not in flak")
        bombers = [g.unit for g in formation.units if scenario.units[g.unit].aircraft == "bomber"]
        if act.jink and bombers:
            raise ValueError(f"{at}.jink: {bombers[0]!r} is a bomber, and all of a formation's aircraft jink or none "
                             "(TP 4.2.3); allowed: false")
    if act.action == "orbital_bombardment" and not _has_line(scenario, formation, "bp"):
        raise ValueError(f"{at}.action: {act.formation!r} has no orbital bombardment (a bp line); allowed: pin_point")
    if act.action == "pin_point" and not _has_line(scenario, formation, "mw"):
        raise ValueError(f"{at}.action: {act.formation!r} has no pin-point attack (an mw line); "
                         "allowed: orbital_bombardment")
    if act.war_engine is not None and act.action != "pin_point":
        raise ValueError(f"{at}.war_engine: only a pin_point attack picks a war engine (TP 4.3.4); "
                         "allowed: leave it out")
    if act.action == "pin_point" and act.target in by_name:
        engines = sum(g.count for g in by_name[act.target].units if scenario.units[g.unit].type == "WE")
        if not engines:
            raise ValueError(f"{at}.target: a pin_point attack picks an enemy war engine (TP 4.3.4); {act.target!r} "
                             "has none; allowed: formations with a war engine")
        if act.war_engine is not None and act.war_engine > engines:
            raise ValueError(f"{at}.war_engine: {act.target!r} has {engines} war engine(s); allowed: 1 to {engines}")


def _check_declaration(scenario, at: str, act: Activation, by_name: dict) -> None:
    """A forced ``declare_at`` needs an activation that shoots at a formation of war engines and other units
    (TP 3.2.1; docs/epic-turn.md §3.5); a pin-point attack aims at its war engine (TP 4.3.4), an orbital
    bombardment is a barrage, whose hits land under its templates (TP 4.3.3)."""
    if not act.may_shoot or act.action in ("pin_point", "orbital_bombardment"):
        raise ValueError(f"{at}.declare_at: only an activation that shoots at its target declares its weapons "
                         f"(TP 3.2.1); allowed: \"auto\"")
    _check_mixed_target(scenario, f"{at}.declare_at", by_name[act.target])


def _check_mixed_target(scenario, where: str, target) -> None:
    """A forced declaration is for a target formation of war engines and other units (TP 3.2.1)."""
    types = {scenario.units[g.unit].type == "WE" for g in target.units}
    if types != {True, False}:
        raise ValueError(f"{where}: {target.name!r} has {'only' if True in types else 'no'} war engines; the "
                         "declaration is for formations of war engines and other units (TP 3.2.1); allowed: \"auto\"")


def _engaged(formation) -> bool:
    return any(g.engaged in ("bc", "ff") for g in formation.units)


def _may_withdraw(scenario, act: Activation, by_name: dict) -> set[str]:
    """The formations that can withdraw as a result of ``act``: the acting ground formation (a failed action
    test; a charger broken by overwatch fire), its target (broken by the attack; the loser of its assault),
    the formations in its assault (an engage: those with a role) and the formations within a critical's splash
    of any of these (docs/epic-turn.md §2a)."""
    names = {act.target} - {None}
    if flier(scenario, by_name[act.formation]) is None:
        names.add(act.formation)
    if act.action == "engage":
        names |= {f.name for f in scenario.formations if f.role is not None}
    return names | {f.name for f in scenario.formations if names & set(f.within_splash_of)}


def _check_withdrawal_fire(scenario, at: str, entries: list[WithdrawalFire], on_overwatch: set[str],
                          may_withdraw: set[str] | None) -> list[str]:
    """One ``ValueError`` for the first bad ``withdrawal_fire`` entry of ``at`` (``turn[2]``, ``end_phase``): an
    unknown formation, a flying one, a firer that is not an enemy of its ``at`` or not on overwatch at that point,
    a target whose saves shooting does not model, a forced declaration at a target that is not mixed.  Returns
    the notes for entries that can never fire (``at`` not in ``may_withdraw``, when given)."""
    by_name = {f.name: f for f in scenario.formations}
    notes = []
    for j, entry in enumerate(entries):
        where = f"{at}.withdrawal_fire[{j}]"
        for key in ("formation", "at"):
            name = getattr(entry, key)
            if name not in by_name:
                raise ValueError(f"{where}.{key}: unknown formation {name!r}; allowed: {', '.join(by_name)}")
            kind = flier(scenario, by_name[name])
            if kind is not None:
                raise ValueError(f"{where}.{key}: {name!r} is an {kind} formation: only ground formations fire on "
                                 "overwatch and withdraw (TP 1.10, 4.1.1); allowed: ground formations")
        firer, target = by_name[entry.formation], by_name[entry.at]
        if firer.side == target.side:
            enemies = [f.name for f in scenario.formations if f.side != target.side]
            raise ValueError(f"{where}.formation: {entry.formation!r} is on the {firer.side} side, as {entry.at!r}; "
                             f"allowed: {', '.join(enemies) or 'no enemy formation'}")
        if entry.formation not in on_overwatch:
            allowed = sorted(n for n in on_overwatch if by_name[n].side != target.side)
            raise ValueError(f"{where}.formation: {entry.formation!r} is not on overwatch at this point of the turn "
                             "(overwatch = true at the start, or an overwatch action earlier, and no action of its own "
                             f"since); allowed: {', '.join(allowed) or 'none'}")
        rule = _unmodelled_save(scenario, target)
        if rule is not None:
            raise ValueError(f"{where}.at: {entry.at!r} has {rule}, whose save shooting does not model yet; "
                             "allowed: formations without holofield or knight-shield units")
        if entry.declare_at != "auto":
            _check_mixed_target(scenario, f"{where}.declare_at", target)
        if may_withdraw is not None and entry.at not in may_withdraw:
            notes.append(f"{where}: {entry.at!r} cannot withdraw as a result of this activation (it is not the acting "
                         "formation, its target, in its assault or within a splash of theirs): this entry never fires")
    return notes


def check_turn(scenario) -> list[str]:
    """One ``ValueError`` for the first bad activation (TP 1.6, 1.9.1, 1.10, 1.13; docs/epic-turn.md §1); returns
    the notes on withdrawal fire that can never happen (docs/epic-turn.md §2a)."""
    by_name = {f.name: f for f in scenario.formations}
    names = ", ".join(by_name)
    acted: set[str] = set()
    on_overwatch = {f.name for f in scenario.formations if f.overwatch}
    engage_seen = False
    notes = []
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
        _check_flying(scenario, i, act, formation, by_name)
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
        if act.declare_at != "auto":
            _check_declaration(scenario, at, act, by_name)
        shoots = act.fires or act.hold == "shoot" or act.action == "overwatch"
        if shoots and act.action != "engage" and not _weapons_fire(scenario, formation):
            raise ValueError(f"{at}.action: {act.formation!r} has no weapon that can fire at ground units, so it "
                             f"cannot take {act.action!r}"
                             + (" (or Hold and shoot: set on_fail)" if act.hold == "shoot" else "")
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
                                 "allowed: " + (", ".join(allowed)
                                                or "none (set overwatch = true or an overwatch action first)"))
            rule = _unmodelled_save(scenario, formation)
            if rule is not None:
                raise ValueError(f"{at}.overwatch_fire[{k}]: {act.formation!r} has {rule}, whose save shooting "
                                 "does not model yet; allowed: chargers without holofield or knight-shield units")
        if act.action == "overwatch":
            on_overwatch.add(act.formation)
        else:
            on_overwatch.discard(act.formation)  # acting ends an overwatch kept from before (TP 1.10)
        if act.action != "engage":  # an engage's withdrawal fire comes after its assault: checked below
            notes += _check_withdrawal_fire(scenario, at, act.withdrawal_fire, on_overwatch,
                                           _may_withdraw(scenario, act, by_name))
        if act.retain:
            previous = scenario.turn[i - 1] if i else None
            if previous is None or by_name[previous.formation].side != formation.side or previous.retain:
                raise ValueError(f"{at}.retain: retaining the initiative needs the previous activation to be of the "
                                 "same side and not itself retained (TP 1.6.3)")
    # the assault of the engage activation, and its withdrawal fire, come after the last activation (§2)
    for i, act in enumerate(scenario.turn):
        if act.action == "engage":
            notes += _check_withdrawal_fire(scenario, f"turn[{i}]", act.withdrawal_fire, on_overwatch,
                                           _may_withdraw(scenario, act, by_name))
    notes += _check_withdrawal_fire(scenario, "end_phase", scenario.end_phase.withdrawal_fire, on_overwatch, None)
    if scenario.end_phase.withdrawal_fire and not scenario.end_phase.rally:
        notes.append("end_phase.withdrawal_fire: the end-phase rally is off (rally = false), so no formation "
                     "withdraws in the end phase: these entries never fire")
    return notes
