"""Epic Armageddon unit profiles: datasheets, weapon lines, critical-hit effects, special-rule ids (TOML → pydantic).

The unit-level part of a scenario (:mod:`wargame_odds.analysis.epic.model` builds scenarios on it); the NetEA library
(:mod:`wargame_odds.analysis.epic.library.netea`) converts its datasheets into these profiles.  Clause numbers refer to
the NetEA Tournament Pack; §9.n are the readings of ``docs/epic-engine.md``.
"""
from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .bounds import ExtraAttackCount, Speed
from ..intake.scenario import StrictModel
from .dice import parse_dice

UnitType = Literal["INF", "LV", "AV", "WE", "CH"]
AircraftClass = Literal["fighter", "bomber", "fighter-bomber"]  # the move class of an aircraft (TP 4.1)


@cache
def special_rule_catalogue() -> dict[str, dict[str, str]]:
    """The special-rule ids the engine models, and those with no assault effect."""
    return tomllib.loads(files(__package__).joinpath("special_rules.toml").read_text("utf-8"))


def known_special_rules() -> list[str]:
    cat = special_rule_catalogue()
    return sorted(cat["modelled"]) + sorted(cat["no_assault_effect"])


def _check_dice(value):
    """A dice key (``"D3+3"``, ``3``) must parse; its ValueError names the grammar."""
    if value is None or value is True or value is False:
        return value
    parse_dice(value)
    return value


def _check_titan_killer(value):
    """Titan-killer damage: true (1), a damage from 1 to 6, or dice such as ``"D3"``, ``"D6+1"`` (TP 3.2.5)."""
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= 6:
        raise ValueError(f"expected true, a damage from 1 to 6 or a dice expression (\"D3\", \"D6\", "
                         f"\"D6+1\"), got {value}")
    return _check_dice(value)


class WeaponAbilities(StrictModel):
    """Weapon abilities of a line (TP 2.2.2, 2.2.5, 2.2.6, 2.2.9; TP-SR Eldar Technology).

    ``titan_killer``: true (1 damage per hit on a war engine), or the damage dice ``"D3"``,
    ``"D6"``, ``"D6+1"`` (TP 3.2.5); a titan killer is always a macro-weapon (TP 2.2.9).
    """

    macro_weapon: bool = False
    titan_killer: bool | int | str = False
    lance: bool = False  # no reinforced-armour re-roll (TP-SR Eldar Technology)
    ignore_cover: bool = False  # no cover save (TP 2.2.5)
    disrupt: bool = False  # a BM per hit instead of per kill (TP 2.2.2)

    @field_validator("titan_killer")
    @classmethod
    def _titan_killer_dice(cls, value):
        return _check_titan_killer(value)


class ExtraAttack(WeaponAbilities):
    """An assault-weapon (``bc``) or small-arms (``15cm``) line adding extra attacks (TP 2.2.3)."""

    count: ExtraAttackCount | Literal["D3"] = 1
    range: Literal["bc", "15cm"] = "bc"
    first_strike: bool = False
    sniper: bool = False
    engage_only: bool = False  # only when its formation assaults (TP-SR Knight Technology: knight lances)


CriticalKind = Literal["destroyed", "destroyed_plus_effect", "destroyed_with_passengers", "extra_damage",
                       "end_phase_breach", "end_phase_fire", "random_move", "degrade_then_escalate", "self_hit",
                       "lose_character"]
DegradeLoss = Literal["holofield", "deflector-shield", "cc", "ff", "extra_attacks"]


class CriticalEffect(StrictModel):
    """A war engine's critical-hit effect (TP 3.2.3; the kinds of docs/epic-engine.md §10.4).

    ``damage``: points it does at once (``extra_damage``: default 1; ``random_move`` /
    ``degrade_then_escalate``: the damage part, default 0).  Splash (``destroyed_plus_effect``, a
    breach that destroys, a ``then`` that destroys): every unit the scenario places within reach
    (formation key ``within_splash_of``) is hit on D6 ≥ ``splash_hit_on`` (1 = always), as an
    ordinary hit, a macro-weapon hit (``splash_macro_weapon``) or a hit with no save
    (``splash_no_save``) or a titan-killer (1) hit (``splash_titan_killer``).
    ``extra_damage`` with ``further_damage_on``: one more D6, and on that roll or more one more point,
    on a 1 its splash, if it has one (the Hierodule's text).
    ``self_hit``: ``self_hits`` D6 on ``self_hit_on`` or more each hit the war engine itself (the splash
    hit type), then the splash, if any; it is not destroyed by the critical itself.  ``lose_character``:
    a random character that added damage capacity is removed with its DC and void shields; with none
    left, destroyed.
    ``degrade_then_escalate``: the first critical takes away ``loses`` (``ff_becomes`` sets a new FF
    value); every later one applies the kind ``then``.
    """

    kind: CriticalKind
    damage: int | None = Field(None, ge=0, le=6)
    splash_hit_on: int | None = Field(None, ge=1, le=6)
    splash_macro_weapon: bool = False
    splash_no_save: bool = False
    splash_titan_killer: bool = False
    further_damage_on: int | None = Field(None, ge=2, le=6)
    self_hits: int | None = Field(None, ge=1, le=6)
    self_hit_on: int | None = Field(None, ge=1, le=6)
    then: Literal["extra_damage", "destroyed", "destroyed_plus_effect"] | None = None
    loses: list[DegradeLoss] = Field([], max_length=5)
    ff_becomes: int | None = Field(None, ge=2, le=6)

    @model_validator(mode="after")
    def _parameters(self):
        kind = self.kind
        if kind == "destroyed_plus_effect" and self.splash_hit_on is None:
            raise ValueError("splash_hit_on: a destroyed_plus_effect critical needs the D6 roll that hits each "
                             "unit within reach (1 to 6; 1 = every unit is hit)")
        if self.damage is not None and kind not in ("extra_damage", "random_move", "degrade_then_escalate"):
            raise ValueError(f"damage: only extra_damage, random_move and degrade_then_escalate criticals do "
                             f"damage; {kind} does not take it")
        if self.then is not None and kind != "degrade_then_escalate":
            raise ValueError(f"then: only a degrade_then_escalate critical has a later effect; not {kind}")
        if (self.loses or self.ff_becomes is not None) and kind != "degrade_then_escalate":
            raise ValueError(f"loses / ff_becomes: only a degrade_then_escalate critical takes abilities away; "
                             f"not {kind}")
        splashes = kind in ("destroyed_plus_effect", "destroyed_with_passengers", "end_phase_breach", "self_hit") \
            or self.then == "destroyed_plus_effect" or self.further_damage_on is not None
        if (self.splash_hit_on is not None or self.splash_macro_weapon or self.splash_no_save
                or self.splash_titan_killer) and not splashes:
            raise ValueError(f"splash_*: a {kind} critical has no splash")
        if self.further_damage_on is not None and kind != "extra_damage":
            raise ValueError(f"further_damage_on: only an extra_damage critical rolls for a further point; not {kind}")
        if kind == "self_hit" and self.self_hit_on is None:
            raise ValueError("self_hit_on: a self_hit critical needs the D6 roll that hits the war engine itself "
                             "(1 to 6)")
        if (self.self_hit_on is not None or self.self_hits is not None) and kind != "self_hit":
            raise ValueError(f"self_hit_on / self_hits: only a self_hit critical hits the war engine itself; "
                             f"not {kind}")
        if self.splash_macro_weapon + self.splash_no_save + self.splash_titan_killer > 1:
            raise ValueError("splash_*: a splash hit is a macro-weapon, a titan-killer or a no-save hit, only one")
        if self.then == "destroyed_plus_effect" and self.splash_hit_on is None:
            raise ValueError("splash_hit_on: then = \"destroyed_plus_effect\" needs the D6 roll that hits each unit "
                             "within reach (1 to 6)")
        return self

    @property
    def extra_damage(self) -> int:
        """Damage points done at once by this critical."""
        return self.damage if self.damage is not None else 1 if self.kind == "extra_damage" else 0


class WeaponLine(StrictModel):
    """A ranged weapon line of a datasheet, for turns (TP 1.9, 2.2; docs/epic-turn.md §1): to-hit
    values ``ap`` / ``at`` / ``aa`` / ``mw`` (4 = 4+), or barrage points ``bp``; ``count`` weapons
    of this kind on the unit, ``shots`` each.  ``shots`` and ``bp`` may be dice (``"D3+1"``), rolled
    per weapon each time it fires (TP 1.9.8: BP dice per weapon); ``titan_killer`` true (1 damage on
    a war engine) or its damage dice (TP 2.2.9, 3.2.5); ``macro_weapon`` makes a barrage (``bp``) or
    an AA line a macro-weapon without a direct ``mw`` value (TP 2.2.6)."""

    name: str = Field("weapon", min_length=1, max_length=80)
    count: int = Field(1, ge=1, le=20)
    shots: int | str = 1
    range: Annotated[int, Field(ge=0, le=1000)] | Literal["unlimited"]  # cm (documentation: reach is an input)
    ap: int | None = Field(None, ge=2, le=6)
    at: int | None = Field(None, ge=2, le=6)
    aa: int | None = Field(None, ge=2, le=6)
    mw: int | None = Field(None, ge=2, le=6)
    bp: int | str | None = None
    macro_weapon: bool = False
    titan_killer: bool | int | str = False
    disrupt: bool = False
    lance: bool = False
    ignore_cover: bool = False
    indirect: bool = False
    single_shot: bool = False
    slow_firing: bool = False
    sniper: bool = False

    @field_validator("shots", "bp")
    @classmethod
    def _dice_count(cls, value):
        if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= 30:
            raise ValueError(f"expected a whole number from 1 to 30 or a dice expression (\"D3+1\"), got {value}")
        return _check_dice(value)

    @field_validator("titan_killer")
    @classmethod
    def _titan_killer_dice(cls, value):
        return _check_titan_killer(value)

    @model_validator(mode="after")
    def _fire_values(self):
        if all(v is None for v in (self.ap, self.at, self.aa, self.mw, self.bp)):
            raise ValueError("a weapon line needs at least one of ap, at, aa, mw or bp")
        if self.mw is not None and (self.ap is not None or self.at is not None):
            raise ValueError("a weapon line has either mw or ap/at (a weapon with both is two lines)")
        if self.macro_weapon and self.bp is None and self.aa is None and self.mw is None:
            raise ValueError("macro_weapon = true needs bp or aa on the line "
                             "(a direct macro-weapon gives its mw value)")
        return self

    @property
    def macro(self) -> bool:
        """Its hits are macro-weapon hits: an ``mw`` value, the flag, or titan killer (TP 2.2.6, 2.2.9)."""
        return self.mw is not None or self.macro_weapon or bool(self.titan_killer)


class UnitProfile(StrictModel):
    """A datasheet (TP 1.1.3): saves and attack values are the D6 roll needed (4 = 4+)."""

    type: UnitType
    armour: int | None = Field(None, ge=2, le=6)
    cc: int | None = Field(None, ge=2, le=6)
    ff: int | None = Field(None, ge=2, le=6)
    speed: Speed | None = None
    damage_capacity: int | None = Field(None, ge=1, le=20)
    special: list[str] = Field([], max_length=32)
    extra_attacks: list[ExtraAttack] = Field([], max_length=8)
    weapons: list[WeaponLine] = Field([], max_length=16)  # ranged weapons, used by turns
    void_shields: int = Field(0, ge=0, le=12)  # TP-SR Imperial Void Shields
    power_fields: int | str | None = None  # TP-SR Power Fields: a number or dice rolled once per trial
    shadowfields: int = Field(0, ge=0, le=8)  # TP-SR Dark Eldar Technology
    critical: CriticalEffect | None = None  # TP 3.2.3: a kind name or a table; none = no critical effect
    cc_abilities: WeaponAbilities | None = None  # abilities of the unit's own CC attack (main dice)
    ff_abilities: WeaponAbilities | None = None  # abilities of the unit's own FF attack (main dice)
    aircraft: AircraftClass | None = None  # an aircraft in flight (TP 4.1; docs/epic-turn.md §9)
    spacecraft: bool = False  # a spacecraft: orbital bombardments and pin-point attacks (TP 4.3)

    @field_validator("power_fields")
    @classmethod
    def _power_field_dice(cls, value):
        return _check_dice(value)

    @field_validator("critical", mode="before")
    @classmethod
    def _critical_name(cls, value):
        """A kind name alone is the table ``{kind = NAME}``; a kind that needs parameters says so."""
        if isinstance(value, str):
            return {"kind": value}
        return value

    @field_validator("special")
    @classmethod
    def _known_rules(cls, rules):
        known = set(known_special_rules())
        for rule in rules:
            if rule not in known:
                raise ValueError(f"unknown special rule {rule!r}; allowed: {', '.join(known_special_rules())}")
        return rules

    @model_validator(mode="after")
    def _war_engine(self):
        if self.type == "WE" and self.damage_capacity is None:
            raise ValueError("a war engine (type WE) needs damage_capacity")
        if self.type not in ("WE", "CH") and self.damage_capacity is not None:
            raise ValueError("only a war engine (type WE), or a character that adds damage capacity to its host "
                             "war engine, has damage_capacity")
        if self.void_shields and self.type not in ("WE", "CH"):
            raise ValueError(f"void_shields: only a war engine (type WE), or a character adding shields to its "
                             f"host war engine, has void shields; this unit is {self.type}")
        if self.critical is not None and self.type != "WE":
            raise ValueError(f"critical: only a war engine (type WE) takes critical hits; this unit is {self.type}")
        if self.aircraft is not None and (self.type not in ("AV", "WE") or self.spacecraft):
            raise ValueError(f"aircraft: an aircraft is type AV (its armour saves against flak) or WE (an aircraft "
                             f"war engine), never a spacecraft; this unit is {self.type}")
        return self
