"""T9A charge scenarios: the TOML schema, the rule tables (data) and the compiled scenario.

Every distance is read in inches and quantised to whole thousandths of an inch (``MILLI``) once,
here; both engines then work in exact integer milli-inches, so sums and means are exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Optional

from pydantic import Field

from ...intake.bounds import Name, Title
from ...intake.errors import UserError
from ...intake.scenario import StrictModel, parse_toml, read_toml, validate
from ....kernels.t9a import BIN_MILLI, MILLI  # noqa: F401  1/1000" fixed point; 0.5" histogram bins

from ..combat.model import Combat, CombatSpec, Support, Unit, armour_need, combat_spec, unit_spec


@dataclass(frozen=True)
class DiceRule:
    """A charge-roll variant (§3.2, §3.8): roll ``n`` D6, keep the best ``keep``, count the kept
    total as at least ``floor``, add ``add``.  ``fixed_fail_move`` replaces the highest-die failed
    move (beta: fixed 4")."""

    n: int
    keep: int
    floor: int = 0
    add: int = 0
    fixed_fail_move: Optional[int] = None

    @property
    def max_total(self) -> int:
        return max(6 * self.keep, self.floor) + self.add


#: Charge-roll variants (§3.2, §3.8, §5.1).  The failed move is always the highest real die
#: (with Swiftstride the highest of all three, Q-B4; with the champion floor the real dice).
DICE: dict[str, DiceRule] = {
    "2d6": DiceRule(2, 2),
    "swiftstride": DiceRule(3, 2),                           # WHFB 8th: 3D6 keep best 2
    "champion_floor": DiceRule(2, 2, floor=4),               # 2022 "Ordering the Charge"
    "beta_d6_plus_4": DiceRule(1, 1, add=4, fixed_fail_move=4),          # 3rd-ed. beta
    "beta_d6_plus_4_maximised": DiceRule(2, 1, add=4, fixed_fail_move=4),  # beta, best of 2D6
}
#: The charge dice of a Swiftstride unit (Q-C18: Maximised, one more D6 and the lowest dropped) for each
#: default charge dice it changes.
SWIFTSTRIDE_DICE = {"2d6": "swiftstride", "beta_d6_plus_4": "beta_d6_plus_4_maximised"}
#: Flee-roll variants (§3.3): 2D6, or Swiftstride 3D6 keep the best two.
FLEE_DICE: dict[str, DiceRule] = {"2d6": DiceRule(2, 2), "swiftstride": DiceRule(3, 2)}

#: Flags a failed charge puts on the charger, by rules version (§3.4.4, §3.8 "After failing").
AFTER_FAIL: dict[str, tuple[str, ...]] = {
    "2.0": ("no_move_next_movement", "no_shoot_next_shooting"),
    "2022": ("shaken_until_end_of_turn",),
    "beta": ("no_manoeuvres_this_turn", "no_shoot_next_shooting"),
}

#: Defaults of each rules version (§3.8, Q-B1); every item can be overridden in [rules].
VERSIONS: dict[str, dict] = {
    "2.0": {"dice": "2d6", "placement_order": "2.0", "after_fail": "2.0",
            "failed_move_spacing": 1.0},
    "2022": {"dice": "2d6", "placement_order": "2022", "after_fail": "2022",
             "failed_move_spacing": 0.0},
    "beta": {"dice": "beta_d6_plus_4", "placement_order": "2022", "after_fail": "beta",
             "failed_move_spacing": 0.0},
}

DiceName = Literal[tuple(DICE)]  # type: ignore[valid-type]
FleeDiceName = Literal[tuple(FLEE_DICE)]  # type: ignore[valid-type]
MAX_INCHES = 100.0  # distances and moves
MAX_ADVANCE_RATE = 30.0
Inches = Field(ge=0, le=MAX_INCHES)


class Rules(StrictModel):
    version: Literal[tuple(VERSIONS)] = "2.0"  # type: ignore[valid-type]
    dice: Optional[DiceName] = None
    placement_order: Optional[Literal["2.0", "2022"]] = None
    after_fail: Optional[Literal[tuple(AFTER_FAIL)]] = None  # type: ignore[valid-type]
    failed_move_spacing: Optional[float] = Field(default=None, ge=0, le=6)
    flee_redirect: bool = False
    stand_and_shoot_penalty: int = Field(default=1, ge=0, le=5)
    long_range_penalty: int = Field(default=1, ge=0, le=5)
    to_hit_above_6: Literal["six_then", "impossible"] = "six_then"


class Shooting(StrictModel):
    shots: int = Field(ge=0, le=200)
    to_hit: int = Field(ge=2, le=6)
    to_wound: int = Field(ge=2, le=6)
    weapon_range: float = Field(gt=0, le=100)


class Target(StrictModel):
    name: Name
    reaction: Literal["hold", "stand_and_shoot", "flee"] = "hold"
    shooting: Optional[Shooting] = None
    shoot_at: Optional[Name] = None
    flee_dice: Optional[FleeDiceName] = None    # default 2d6 (swiftstride for a Swiftstride unit)
    unit: Optional[Unit] = None                  # close combat (with [combat])
    support: Optional[Support] = None


class Charger(StrictModel):
    name: Name
    advance_rate: float = Field(ge=0, le=MAX_ADVANCE_RATE)
    distance: float = Inches
    free_distance: Optional[float] = Field(default=None, ge=0, le=100)
    dice: Optional[DiceName] = None
    room: bool = True
    in_front_arc: bool = True
    models: Optional[int] = Field(default=None, ge=1, le=1000)
    wounds_per_model: Optional[int] = Field(default=None, ge=1, le=20)   # default 1 (the unit's hp)
    armour_save: Optional[int] = Field(default=None, ge=2, le=7)         # default 7: none (the unit's)
    flee_factor: float = Field(default=1.0, ge=0, le=1)
    redirect_distance: Optional[float] = Field(default=None, ge=0, le=100)
    unit: Optional[Unit] = None                  # close combat (with [combat])
    support: Optional[Support] = None


class Placement(StrictModel):
    name: Name
    chargers: list[Name] = Field(min_length=1, max_length=16)
    rotates_target: bool = False
    models_in_contact: int = Field(ge=0, le=200)
    impassable: bool = False
    extra_enemy_units: int = Field(default=0, ge=0, le=20)


class Scenario(StrictModel):
    system: Literal["t9a"]
    title: Title = "T9A charge"
    rules: Rules = Rules()
    target: Target
    chargers: list[Charger] = Field(min_length=1, max_length=16)
    placements: list[Placement] = Field(default_factory=list, max_length=64)
    combat: Optional[Combat] = None


def to_milli(inches: float) -> int:
    """Inches to integer thousandths (round half up), the engines' exact unit."""
    return int(math.floor(inches * MILLI + 0.5))


@dataclass(frozen=True)
class ChargerSpec:
    name: str
    dice: DiceRule
    dice_name: str
    advance_milli: int
    distance_milli: int
    free_milli: Optional[int]          # None: nothing but the target stops the failed move
    room: bool
    shootable: bool                    # front arc and farther than its Advance Rate (§3.3)
    models: Optional[int]
    wounds_per_model: int
    armour_save: int
    flee_factor: float
    redirect_milli: Optional[int]      # only set when the Q-B8 redirect switch is on


@dataclass(frozen=True)
class PlacementSpec:
    name: str
    mask: int                          # bit i: charger i takes part
    rotates_target: bool
    models_in_contact: int
    impassable: bool
    extra_enemy_units: int

    @property
    def units(self) -> int:
        return bin(self.mask).count("1")


@dataclass(frozen=True)
class Model:
    """A validated, resolved scenario: what both engines read."""

    source: str
    title: str
    version: str
    placement_order: str
    after_fail: str
    spacing_milli: int
    flee_redirect: bool
    reaction: str
    target_name: str
    flee_dice: DiceRule
    flee_dice_name: str
    shooting: Optional[Shooting]
    shoot_at: int                      # index of the charger shot at, -1 if none
    sas_penalty: int
    long_range_penalty: int
    to_hit_above_6: str
    chargers: tuple[ChargerSpec, ...]
    placements: tuple[PlacementSpec, ...]
    notes: tuple[str, ...]
    combat: Optional[CombatSpec] = None    # the fight after the charge (docs/t9a.md, "Close combat")

    @property
    def n(self) -> int:
        return len(self.chargers)


def priority_key(p: PlacementSpec, order: str) -> tuple:
    """§3.7 / Q-B6 lexicographic key, larger is better.  2.0: no rotation > units > models;
    2022: fewest extra enemy units > units > no rotation > models."""
    if order == "2022":
        return (-p.extra_enemy_units, p.units, not p.rotates_target, p.models_in_contact)
    return (not p.rotates_target, p.units, p.models_in_contact)


def load(path) -> Model:
    """Read and check a T9A scenario file (a string is always a path); bad input raises one
    :class:`UserError`."""
    data, source = read_toml(path)
    return resolve(validate(Scenario, data, source), source)


def loads(text: str, source: str = "<string>") -> Model:
    """A T9A scenario given as TOML text (``source`` names it in error messages)."""
    return resolve(validate(Scenario, parse_toml(text, source), source), source)


def resolve(sc: Scenario, source: str = "<scenario>") -> Model:
    """Apply version defaults and cross-field checks; returns the engines' :class:`Model`."""
    preset = VERSIONS[sc.rules.version]
    r = sc.rules
    default_dice = r.dice or preset["dice"]
    names = [c.name for c in sc.chargers]
    allowed_names = ", ".join(names)
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise UserError(source, f"chargers[{i}].name", f"duplicate charger name {name!r}",
                            "a name used by no other charger")
    tg = sc.target
    notes = []
    if tg.reaction == "stand_and_shoot" and tg.shooting is None:
        raise UserError(source, "target.shooting", "stand_and_shoot needs a [target.shooting] table",
                        "shots, to_hit, to_wound, weapon_range")
    if tg.reaction != "stand_and_shoot" and (tg.shooting is not None or tg.shoot_at is not None):
        field = "target.shooting" if tg.shooting is not None else "target.shoot_at"
        raise UserError(source, field, f"only used when reaction = 'stand_and_shoot' (reaction is "
                        f"{tg.reaction!r})", "remove it, or set reaction = 'stand_and_shoot'")
    combat = _combat(sc, source)
    if combat is not None and tg.reaction == "flee":
        notes.append(f"{tg.name} flees from the charge: it never fights, so the combat results are empty (§3.3)")
    chargers = []
    for c in sc.chargers:
        dname = c.dice or default_dice
        models = c.models
        wounds = 1 if c.wounds_per_model is None else c.wounds_per_model
        save = 7 if c.armour_save is None else c.armour_save
        if combat is not None:          # the charging unit's own numbers for Stand and Shoot
            dname = c.dice or (SWIFTSTRIDE_DICE.get(default_dice, default_dice) if c.unit.swiftstride
                               else default_dice)
            models = _same(source, "chargers[0].models", models, c.unit.models, "unit.models")
            wounds = _same(source, "chargers[0].wounds_per_model", c.wounds_per_model, c.unit.hp, "unit.hp")
            save = armour_need(c.unit.armour, 0) if c.armour_save is None else c.armour_save
        redirect = c.redirect_distance if (r.flee_redirect and tg.reaction == "flee") else None
        chargers.append(ChargerSpec(
            name=c.name, dice=DICE[dname], dice_name=dname, advance_milli=to_milli(c.advance_rate),
            distance_milli=to_milli(c.distance),
            free_milli=None if c.free_distance is None else to_milli(c.free_distance), room=c.room,
            shootable=c.in_front_arc and c.distance > c.advance_rate, models=models,
            wounds_per_model=wounds, armour_save=save,
            flee_factor=c.flee_factor,
            redirect_milli=None if redirect is None else to_milli(redirect)))
    shoot_at = -1
    if tg.reaction == "stand_and_shoot":
        if tg.shoot_at is not None:
            if tg.shoot_at not in names:
                raise UserError(source, "target.shoot_at", f"unknown charger {tg.shoot_at!r}",
                                allowed_names)
            shoot_at = names.index(tg.shoot_at)
            if not chargers[shoot_at].shootable:
                raise UserError(source, "target.shoot_at", f"{tg.shoot_at!r} cannot be stood and "
                                "shot at (§3.3: it must be in the front arc and farther away than "
                                "its Advance Rate)", "an eligible charger")
        else:
            eligible = [i for i, c in enumerate(chargers) if c.shootable]
            if not eligible:
                raise UserError(source, "target.reaction", "no charger can be stood and shot at "
                                "(§3.3: front arc and farther away than its Advance Rate)",
                                "hold or flee")
            shoot_at = eligible[0]
    placements = []
    pnames = set()
    for j, p in enumerate(sc.placements):
        if p.name in pnames:
            raise UserError(source, f"placements[{j}].name", f"duplicate placement name {p.name!r}",
                            "a name used by no other placement")
        pnames.add(p.name)
        mask = 0
        for k, who in enumerate(p.chargers):
            if who not in names:
                raise UserError(source, f"placements[{j}].chargers[{k}]", f"unknown charger {who!r}",
                                allowed_names)
            bit = 1 << names.index(who)
            if mask & bit:
                raise UserError(source, f"placements[{j}].chargers[{k}]",
                                f"charger {who!r} listed twice", "each charger once per placement")
            mask |= bit
        placements.append(PlacementSpec(p.name, mask, p.rotates_target, p.models_in_contact,
                                        p.impassable, p.extra_enemy_units))
    if placements:
        used = 0
        for p in placements:
            used |= p.mask
        for i, c in enumerate(chargers):
            if not used >> i & 1:
                notes.append(f"{c.name} is in no placement: it can never end in the combat (§3.7)")
    if r.flee_redirect and tg.reaction == "flee" and not any(c.redirect_milli is not None
                                                              for c in chargers):
        notes.append("flee_redirect is on but no charger has a redirect_distance")
    flee_dice = tg.flee_dice or ("swiftstride" if tg.unit is not None and tg.unit.swiftstride else "2d6")
    spacing = r.failed_move_spacing if r.failed_move_spacing is not None else preset["failed_move_spacing"]
    return Model(
        source=source, title=sc.title, version=r.version,
        placement_order=r.placement_order or preset["placement_order"],
        after_fail=r.after_fail or preset["after_fail"], spacing_milli=to_milli(spacing),
        flee_redirect=r.flee_redirect, reaction=tg.reaction, target_name=tg.name,
        flee_dice=FLEE_DICE[flee_dice], flee_dice_name=flee_dice, shooting=tg.shooting,
        shoot_at=shoot_at, sas_penalty=r.stand_and_shoot_penalty,
        long_range_penalty=r.long_range_penalty, to_hit_above_6=r.to_hit_above_6,
        chargers=tuple(chargers), placements=tuple(placements), notes=tuple(notes), combat=combat)


def _same(source: str, field: str, given, value, name: str):
    """A charger key that repeats its unit's number: ``value`` unless ``given`` contradicts it."""
    if given is not None and given != value:
        raise UserError(source, field, f"{given} contradicts the unit's {name} = {value}",
                        f"{value}, or leave it out")
    return value


def _combat(sc: Scenario, source: str) -> CombatSpec | None:
    """The fight after the charge (docs/t9a.md, "Close combat"), or None without a ``[combat]`` table; a
    scenario that asks for what is not modelled (several chargers, a flank or rear charge) gets one line."""
    sides = [("target", sc.target)] + [(f"chargers[{i}]", c) for i, c in enumerate(sc.chargers)]
    if sc.combat is None:
        for where, side in sides:
            for key in ("unit", "support"):
                if getattr(side, key) is not None:
                    raise UserError(source, f"{where}.{key}", "only used with a [combat] table",
                                    "add [combat], or remove it")
        return None
    if len(sc.chargers) > 1:
        raise UserError(source, "chargers", f"{len(sc.chargers)} chargers: close combat of several charging "
                        "units against one target is not modelled", "one [[chargers]] table with [combat]")
    charger = sc.chargers[0]
    if not charger.in_front_arc:
        raise UserError(source, "chargers[0].in_front_arc", "a charge into the flank or rear: flank and rear "
                        "combats are not modelled (frontal fights only)", "true with [combat]")
    if sc.combat.flank_bonus:
        raise UserError(source, "combat.flank_bonus", "flank and rear combats are not modelled (frontal "
                        "fights only), so a flank bonus is never used (Q-C14)", "0")
    for where, side in sides:
        if side.unit is None:
            raise UserError(source, f"{where}.unit", "required with [combat]",
                            "a unit table: models, width, defensive_skill, resilience, discipline, …")
    a = unit_spec(charger.name, charger.unit, charger.support, source, "chargers[0].unit")
    b = unit_spec(sc.target.name, sc.target.unit, sc.target.support, source, "target.unit")
    return combat_spec(sc.combat, sc.rules.version, a, b)
