"""T9A close combat after the charge (docs/t9a.md, "Close combat"): the ``[combat]`` schema, the rule
tables (``combat_rules.toml``) and the resolved fight that every combat engine reads.

A scenario with a ``[combat]`` table fights its charge out: the charger (side ``a``) against the target
(side ``b``), each described by a ``unit`` table, one ``attacks`` table per model part and an optional
``support`` table.  Clause tags (``§C5.1``, ``Q-C4``) are the numbered readings of docs/t9a.md.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Literal, Optional, Union

from pydantic import Field

from ...intake.errors import UserError
from ...intake.scenario import StrictModel

MAX_PARTS = 8          # model parts (attacks tables) per unit
MAX_DICE = 4           # dice in one expression ("4D6+2")
SPECIAL_SAVES = Literal[0, 2, 3, 4, 5, 6]   # X of an Aegis / Fortitude (X+) save; 0: none
DICE_PATTERN = re.compile(r"^\s*(?:(\d+)|(\d*)\s*[dD]\s*(3|6)\s*(?:\+\s*(\d+))?)\s*$")


class Attacks(StrictModel):
    """One model part's attacks (§C3.1, §C4, §C5)."""

    name: str = Field(min_length=1, max_length=80)
    attacks: int = Field(default=1, ge=0, le=10)
    offensive_skill: int = Field(ge=0, le=10)
    strength: int = Field(ge=0, le=10)
    armour_penetration: int = Field(default=0, ge=0, le=10)
    agility: int = Field(default=3, ge=0, le=10)
    strike_step: Optional[int] = Field(default=None, ge=0, le=10)
    supports: bool = True
    extra_ranks: int = Field(default=0, ge=0, le=3)
    extra_support: Optional[int] = Field(default=None, ge=1, le=10)
    to_hit_mod: int = Field(default=0, ge=-5, le=5)
    hatred: bool = False
    charge_strength: int = Field(default=0, ge=0, le=5)
    charge_ap: int = Field(default=0, ge=0, le=5)
    charge_agility: int = Field(default=0, ge=0, le=10)
    multiple_wounds: Union[int, str] = 1
    impact_hits: Union[int, str] = ""
    stomp_attacks: Union[int, str] = ""


class Unit(StrictModel):
    """A rank-and-file unit (§C3): its ranks, defences, Discipline and special rules."""

    models: int = Field(ge=1, le=1000)
    width: int = Field(ge=1, le=1000)
    in_contact: Optional[int] = Field(default=None, ge=1, le=1000)
    hp: int = Field(default=1, ge=1, le=20)
    height: Literal["standard", "large", "gigantic"] = "standard"
    full_rank: Optional[int] = Field(default=None, ge=1, le=100)
    light_troops: bool = False
    defensive_skill: int = Field(ge=0, le=10)
    resilience: int = Field(ge=0, le=10)
    armour: int = Field(default=0, ge=0, le=6)
    aegis: SPECIAL_SAVES = 0
    fortitude: SPECIAL_SAVES = 0
    discipline: int = Field(ge=0, le=10)
    standard: bool = False
    battle_standard: bool = False
    stubborn: bool = False
    unbreakable: bool = False
    swiftstride: bool = False
    attacks: list[Attacks] = Field(default_factory=list, max_length=MAX_PARTS)


class Support(StrictModel):
    """Characters outside the unit whose rules reach it (§C7.5)."""

    general_discipline: int = Field(default=0, ge=0, le=10)
    rally_around_the_flag: bool = False


class Combat(StrictModel):
    """The ``[combat]`` table: fight after the charge, and the readings and version switches (§C13, §C15).
    Keys left out take the defaults of ``rules.version`` (:data:`COMBAT_VERSIONS`)."""

    rounds: int = Field(default=3, ge=1, le=20)
    pursue: bool = True
    double_one_passes: Optional[bool] = None
    decimated_rally: Optional[Literal["halve", "none", "double_one_only"]] = None
    decimated_flee: Optional[Literal["flee", "removed"]] = None
    to_hit_table: Optional[Literal["2.0", "beta"]] = None
    rank_bonus: Optional[Literal["2.0", "beta"]] = None
    flank_bonus: int = Field(default=0, ge=0, le=2)


#: Combat defaults of each ``rules.version`` (Q-C1, §C15): the 2.x readings for 2.0 and 2022, the beta pages'
#: rules for beta; every key can be set in ``[combat]``.
COMBAT_VERSIONS: dict[str, dict] = {
    "2.0": {"double_one_passes": False, "decimated_rally": "halve", "decimated_flee": "flee",
            "to_hit_table": "2.0", "rank_bonus": "2.0"},
    "2022": {"double_one_passes": False, "decimated_rally": "halve", "decimated_flee": "flee",
             "to_hit_table": "2.0", "rank_bonus": "2.0"},
    "beta": {"double_one_passes": False, "decimated_rally": "halve", "decimated_flee": "removed",
             "to_hit_table": "beta", "rank_bonus": "beta"},
}


@lru_cache(maxsize=None)
def rule_tables() -> dict:
    """``combat_rules.toml``: to-hit and to-wound tables, Height values, Rank Bonus rules."""
    return tomllib.loads(files(__package__).joinpath("combat_rules.toml").read_text(encoding="utf-8"))


def _need(table: dict, difference: int) -> int:
    for least, need in table["rows"]:
        if difference >= least:
            return need
    return table["otherwise"]


def to_hit_need(offensive: int, defensive: int, table: str = "2.0", modifier: int = 0) -> int:
    """§C5.1: the D6 score to hit in close combat, modifiers applied, clamped to 2..6 (a natural 1 misses,
    a natural 6 hits)."""
    return min(6, max(2, _need(rule_tables()["to_hit"][table], offensive - defensive) - modifier))


def to_wound_need(strength: int, resilience: int) -> int:
    """§C5.2: the D6 score to wound."""
    return _need(rule_tables()["to_wound"], strength - resilience)


def armour_need(armour: int, penetration: int) -> int:
    """§C5.3: the D6 score of the armour save, 7 when Armour − AP leaves no save (Armour 5 or 6 save on 2+)."""
    left = min(armour, 6) - penetration
    return 7 if left <= 0 else max(2, 7 - left)


@dataclass(frozen=True)
class DiceExpr:
    """A number of the profile: fixed (``dice == 0``: the value is ``add``) or ``dice`` × D``sides`` + ``add``
    (D3 = a D6 halved, rounding up)."""

    dice: int
    sides: int
    add: int

    def __str__(self) -> str:
        if not self.dice:
            return str(self.add)
        return f"{self.dice if self.dice > 1 else ''}D{self.sides}" + (f"+{self.add}" if self.add else "")

    @property
    def highest(self) -> int:
        return self.dice * self.sides + self.add


def parse_dice(value, source: str, field: str, least: int) -> DiceExpr | None:
    """``3``, ``"3"``, ``"D3"``, ``"2D6+1"`` → :class:`DiceExpr`; ``""`` or 0 → None (when ``least`` is 0)."""
    allowed = (f"a whole number from {least} to 20, or dice like D3, D6, 2D6+1 (at most {MAX_DICE} dice, "
               "+0 to +10)" + (', or "" for none' if least == 0 else ""))
    if isinstance(value, bool):
        raise UserError(source, field, f"got {value!r}", allowed)
    text = str(value)
    if least == 0 and text.strip() in ("", "0"):
        return None
    match = DICE_PATTERN.match(text)
    if not match:
        raise UserError(source, field, f"cannot read {text[:40]!r}", allowed)
    fixed, count, sides, add = match.groups()
    if fixed is not None:
        if not max(least, 1) <= int(fixed) <= 20:
            raise UserError(source, field, f"got {fixed}", allowed)
        return DiceExpr(0, 0, int(fixed))
    n = int(count) if count else 1
    if not 1 <= n <= MAX_DICE or (add and int(add) > 10):
        raise UserError(source, field, f"got {text.strip()!r}", allowed)
    return DiceExpr(n, int(sides), int(add or 0))


@dataclass(frozen=True)
class PartSpec:
    """A model part as the engines read it (§C3.1)."""

    name: str
    attacks: int
    offensive_skill: int
    strength: int
    armour_penetration: int
    agility: int
    strike_step: Optional[int]
    supports: bool
    extra_ranks: int
    support_cap: int                 # §C4.2: the Height cap, or Extra Support (X)
    to_hit_mod: int
    hatred: bool
    charge_strength: int
    charge_ap: int
    charge_agility: int
    multiple_wounds: DiceExpr
    impact_hits: Optional[DiceExpr]
    stomp_attacks: Optional[DiceExpr]

    def step(self, charging: bool) -> int:
        """§C4.4: the Initiative Step it strikes at: a fixed step, else its Agility (+ charge_agility while
        Charging, Q-C3), at most 10."""
        if self.strike_step is not None:
            return self.strike_step
        return min(10, self.agility + (self.charge_agility if charging else 0))


@dataclass(frozen=True)
class UnitSpec:
    """A unit as the engines read it (§C3)."""

    name: str
    models: int
    width: int
    in_contact: int
    hp: int
    height: str
    full_rank: int                   # models a rank needs to be a Full Rank (Q-C6)
    light_troops: bool
    defensive_skill: int
    resilience: int
    armour: int
    special_save: int                # §C5.4: the better of Aegis and Fortitude (X+), 0 = none
    discipline: int
    standard: bool
    battle_standard: bool
    stubborn: bool
    unbreakable: bool
    swiftstride: bool
    general_discipline: int          # §C7.5 Commanding Presence in range (0: none)
    rally_around_the_flag: bool      # §C7.5 a Battle Standard Bearer in range: re-roll failed Discipline Tests
    parts: tuple[PartSpec, ...]

    @property
    def start_hp(self) -> int:
        return self.models * self.hp

    def models_left(self, hp_left: int) -> int:
        """§C9: models standing = ⌈HP left / HP⌉ (pooled HP, Q-C5)."""
        return -(-hp_left // self.hp)


@dataclass(frozen=True)
class CombatSpec:
    """The fight after the charge: ``a`` the charger, ``b`` the target, and the readings in force."""

    a: UnitSpec
    b: UnitSpec
    rounds: int
    pursue: bool
    double_one_passes: bool
    decimated_rally: str
    decimated_flee: str
    to_hit_table: str
    rank_bonus: str

    @property
    def rank_bonus_cap(self) -> int:
        return rule_tables()["rank_bonus"][self.rank_bonus]["cap"]

    @property
    def static_rank_bonus(self) -> bool:
        return rule_tables()["rank_bonus"][self.rank_bonus]["static"]

    def units(self) -> tuple[UnitSpec, UnitSpec]:
        return self.a, self.b


def _part(p: Attacks, height: str, source: str, where: str) -> PartSpec:
    cap = p.extra_support if p.extra_support is not None else rule_tables()["height"][height]["support_cap"]
    return PartSpec(
        name=p.name, attacks=p.attacks, offensive_skill=p.offensive_skill, strength=p.strength,
        armour_penetration=p.armour_penetration, agility=p.agility, strike_step=p.strike_step,
        supports=p.supports, extra_ranks=p.extra_ranks, support_cap=cap, to_hit_mod=p.to_hit_mod,
        hatred=p.hatred, charge_strength=p.charge_strength, charge_ap=p.charge_ap,
        charge_agility=p.charge_agility,
        multiple_wounds=parse_dice(p.multiple_wounds, source, f"{where}.multiple_wounds", 1),
        impact_hits=parse_dice(p.impact_hits, source, f"{where}.impact_hits", 0),
        stomp_attacks=parse_dice(p.stomp_attacks, source, f"{where}.stomp_attacks", 0))


def unit_spec(name: str, u: Unit, support: Optional[Support], source: str, where: str) -> UnitSpec:
    """Check a unit's cross-field ranges (§C10) and resolve its defaults."""
    if u.width > u.models:
        raise UserError(source, f"{where}.width", f"{u.width} is wider than the unit's {u.models} models",
                        f"1 to models ({u.models})")
    contact = u.width if u.in_contact is None else u.in_contact
    if contact > u.width:
        raise UserError(source, f"{where}.in_contact", f"{contact} is more than the unit's width {u.width}",
                        f"1 to width ({u.width})")
    names = [p.name for p in u.attacks]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise UserError(source, f"{where}.attacks[{i}].name", f"duplicate part name {n!r}",
                            "a name used by no other part of the unit")
    support = support or Support()
    saves = [x for x in (u.aegis, u.fortitude) if x]
    return UnitSpec(
        name=name, models=u.models, width=u.width, in_contact=contact, hp=u.hp, height=u.height,
        full_rank=u.full_rank if u.full_rank is not None else rule_tables()["height"][u.height]["full_rank"],
        light_troops=u.light_troops, defensive_skill=u.defensive_skill, resilience=u.resilience,
        armour=u.armour, special_save=min(saves) if saves else 0, discipline=u.discipline,
        standard=u.standard, battle_standard=u.battle_standard, stubborn=u.stubborn,
        unbreakable=u.unbreakable, swiftstride=u.swiftstride,
        general_discipline=support.general_discipline, rally_around_the_flag=support.rally_around_the_flag,
        parts=tuple(_part(p, u.height, source, f"{where}.attacks[{i}]") for i, p in enumerate(u.attacks)))


def combat_spec(combat: Combat, version: str, charger: UnitSpec, target: UnitSpec) -> CombatSpec:
    preset = COMBAT_VERSIONS[version]

    def pick(key):
        value = getattr(combat, key)
        return preset[key] if value is None else value

    return CombatSpec(a=charger, b=target, rounds=combat.rounds, pursue=combat.pursue,
                      double_one_passes=pick("double_one_passes"), decimated_rally=pick("decimated_rally"),
                      decimated_flee=pick("decimated_flee"), to_hit_table=pick("to_hit_table"),
                      rank_bonus=pick("rank_bonus"))


def max_attacks(unit: UnitSpec, part: PartSpec) -> int:
    """The most attacks ``part`` can make in one step (front rank in contact plus supporting ranks, §C4)."""
    contact = min(unit.in_contact, unit.models)
    ranks = 1 + part.extra_ranks if part.supports else 0
    return contact * (part.attacks + ranks * min(part.attacks, part.support_cap))


def decimated(unit: UnitSpec, hp_left: int) -> bool:
    """Q-C11: Decimated = at most 25 % of the unit's starting HP left."""
    return 4 * hp_left <= unit.start_hp


def halved_up(value: int) -> int:
    """§C3.1: divisions round up."""
    return math.ceil(value / 2)
