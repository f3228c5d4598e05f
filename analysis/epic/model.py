"""Epic Armageddon scenario files: typed, validated models (TOML → pydantic).

Clause numbers refer to the NetEA Tournament Pack; §9.n are the readings of ``docs/epic-engine.md``.
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from ..intake.bounds import Name, ProbabilityKey, Title
from .bounds import BlastMarkers, Points
from ..intake.scenario import StrictModel
from .profiles import UnitProfile
from .turn_model import Activation, WithdrawalFire, check_fliers, check_turn, fill_turn_defaults

Engagement = Literal["bc", "ff", "out"]
ArmyRule = Literal["they-shall-know-no-fear", "mob-rule"]


class Rules(StrictModel):
    """Rule switches; the defaults are the Tournament Pack readings (§9 of docs/epic-engine.md)."""

    result_dice: Literal["highest", "sum"] = "highest"  # TP 1.12.7 / §9.1
    rally_natural_one_fails: bool = False  # §9.9
    max_rounds: int = Field(10, ge=1, le=100)  # §9.4
    supporting_fire_kills_count: bool = True  # §9.2
    inspiring: Literal["involved", "engaged_only"] = "involved"  # §9.3
    army_rules: bool = True  # TSKNF and Mob Rule as the formations declare them (TP-SR)
    leaders: bool = True  # Leader bonus on rally and regroup (TP 2.1.8)
    supreme_commander_rerolls: bool = True  # TP 2.1.15


class UnitGroup(StrictModel):
    """Identical units of a formation in one engagement state (§9.6)."""

    unit: str
    count: int = Field(ge=1, le=100)
    engaged: Engagement
    characters: list[str] = Field([], max_length=4)  # CH units attached to the group's first unit (TP 2.1.1)
    # a war engine's main dice at CC while in base contact, the rest at FF (TP 3.1.2); default: all at CC
    cc_dice: int | None = Field(None, ge=0, le=1000)


class Formation(StrictModel):
    name: Name
    side: Literal["attacker", "defender"]
    # None (not given): "engaged" in an assault scenario; in a turn, out of the assault unless charger or target
    role: Literal["engaged", "support", "nearby"] | None = None
    initiative: int = Field(ge=1, le=6)  # may be left out with ``army`` (taken from the army list)
    blast_markers: BlastMarkers = 0
    broken: bool = False
    army: str | None = None  # "netea:LIST": army rules and initiative from that list (analysis/epic/library/armies.py)
    army_rules: list[ArmyRule] = []
    cover: int | None = Field(None, ge=2, le=6)  # cover save of its infantry when it defends (TP 1.12.5)
    trapped: ProbabilityKey = 0.0  # P(a withdrawing non-Fearless unit dies), §9.5; 0.25 or 25 (%)
    # enemy units within 15 cm of each of its war engines when a withdrawal ends: 1 damage each (TP 3.2.4)
    withdrawal_enemies_within_15cm: int = Field(0, ge=0, le=100)
    enemy_within_30cm: bool | None = None  # end-phase override of [end_phase]
    # units of this formation (nearest first) within reach of the critical-hit splash of each named
    # formation's war engines (TP 3.2.3; docs/epic-engine.md §10.4); default: none
    within_splash_of: dict[str, int] = Field({}, max_length=32)
    points: Points | None = None
    overwatch: bool = False  # on overwatch at the start of a turn (TP 1.10; turn scenarios)
    units: list[UnitGroup] = Field(min_length=1, max_length=32)


class EndPhase(StrictModel):
    rally: bool = True  # run the end-phase rally (TP 1.14.1)
    enemy_within_30cm: bool = True
    # turn scenarios: overwatching formations that fire at a formation withdrawing again after a failed rally
    withdrawal_fire: list[WithdrawalFire] = Field([], max_length=16)


class EpicScenario(StrictModel):
    system: Literal["epic"]
    title: Title = "Epic Armageddon assault"
    rules: Rules = Rules()
    units: dict[str, UnitProfile] = Field(max_length=256)
    formations: list[Formation] = Field(min_length=2, max_length=32)
    end_phase: EndPhase = EndPhase()
    turn: list[Activation] = Field([], max_length=64)  # activations in order: a turn scenario (docs/epic-turn.md)
    _notes: list[str] = PrivateAttr(default_factory=list)
    _source: str = PrivateAttr("<scenario>")  # the file it was loaded from, for error messages

    @model_validator(mode="before")
    @classmethod
    def _turn_defaults(cls, data):
        return fill_turn_defaults(data)

    @model_validator(mode="wrap")
    @classmethod
    def _library(cls, data, handler):
        """Define the NetEA library units (``unit = "netea:boyz"``) and formations a scenario names,
        and fill in army rules and initiative from army lists (``army = "netea:LIST"``)."""
        from .library.resolve import resolve_epic

        if not isinstance(data, dict):
            return handler(data)
        data, notes = resolve_epic(data)
        scenario = handler(data)
        scenario._notes = notes + scenario._notes  # the library's, then the turn's (check_turn)
        return scenario

    @property
    def source(self) -> str:
        """The file (or text source) it was loaded from, as error messages name it."""
        return self._source

    @property
    def notes(self) -> list[str]:
        """What the user should know: what the library filled in (inferred army rules, initiative), withdrawal
        fire that can never happen (check_turn) and the keys that change nothing in this scenario
        (:func:`idle_keys`)."""
        return list(dict.fromkeys(self._notes + idle_keys(self)))

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo):
        names = [f.name for f in self.formations]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ValueError(f"formations[{i}].name: duplicate formation name {name!r}")
        known = sorted(self.units)
        for i, formation in enumerate(self.formations):
            for j, group in enumerate(formation.units):
                where = f"formations[{i}].units[{j}]"
                if group.unit not in self.units:
                    raise ValueError(f"{where}.unit: unknown unit {group.unit!r}; allowed: {', '.join(known)}")
                if self.units[group.unit].type == "CH":
                    raise ValueError(f"{where}.unit: {group.unit!r} is a character; attach it with 'characters'")
                if group.cc_dice is not None:
                    profile = self.units[group.unit]
                    if profile.type != "WE":
                        raise ValueError(f"{where}.cc_dice: only a war engine (type WE) splits its dice "
                                         f"between CC and FF; {group.unit!r} is {profile.type}")
                    if group.cc_dice > profile.damage_capacity:
                        raise ValueError(f"{where}.cc_dice: allowed 0 to {profile.damage_capacity} "
                                         f"(the starting damage capacity of {group.unit!r}), got {group.cc_dice}")
                for k, ch in enumerate(group.characters):
                    if ch not in self.units or self.units[ch].type != "CH":
                        chars = sorted(n for n, u in self.units.items() if u.type == "CH") or ["none defined"]
                        raise ValueError(f"{where}.characters[{k}]: unknown character {ch!r}; "
                                         f"allowed: {', '.join(chars)}")
                    if self.units[ch].damage_capacity is not None and self.units[group.unit].type != "WE":
                        raise ValueError(f"{where}.characters[{k}]: {ch!r} adds damage capacity and shields, so "
                                         f"its host must be a war engine (type WE); {group.unit!r} is "
                                         f"{self.units[group.unit].type}")
            for source, count in formation.within_splash_of.items():
                if source not in names:
                    raise ValueError(f"formations[{i}].within_splash_of: unknown formation {source!r}; "
                                     f"allowed: {', '.join(names)}")
                if not 0 <= count <= 100:
                    raise ValueError(f"formations[{i}].within_splash_of.{source}: allowed 0 to 100 units, got {count}")
        check_fliers(self)
        if self.turn:
            self._notes = check_turn(self)  # who fights an assault is decided by the turn's engage activation
            return self
        if self.end_phase.withdrawal_fire:
            raise ValueError("end_phase.withdrawal_fire: only a turn scenario ([[turn]]) has formations on overwatch "
                             "(docs/epic-turn.md §2a); allowed: []")
        for side in ("attacker", "defender"):
            engaged = [f for f in self.formations if f.side == side and (f.role or "engaged") == "engaged"]
            if not engaged:
                raise ValueError(f"formations: no formation with side = \"{side}\" and role = \"engaged\"")
            if not any(g.engaged != "out" for f in engaged for g in f.units):
                raise ValueError(f"formations: the {side} side has no engaged unit "
                                 "(at least one unit group needs engaged = \"bc\" or \"ff\")")
        return self


def idle_keys(scenario: EpicScenario) -> list[str]:
    """Notes on keys given a value that changes nothing in this scenario, each naming the key and the reason."""
    notes = []
    for i, f in enumerate(scenario.formations):
        where = f"formations[{i}] ({f.name})"
        if f.cover is not None:
            profiles = [scenario.units[g.unit] for g in f.units]
            takers = [p for p in profiles if p.type == "INF" and "mounted" not in p.special]
            if not scenario.turn and f.side == "attacker":
                notes.append(f"{where}: cover = {f.cover} changes nothing: only a defender's infantry takes cover "
                             "saves in an assault (TP 1.12.5)")
            elif not takers:
                notes.append(f"{where}: cover = {f.cover} changes nothing: it has no infantry that takes cover saves "
                             "(non-Mounted INF, TP 1.12.5)")
            elif all(p.armour is not None and p.armour <= f.cover for p in takers):
                notes.append(f"{where}: cover = {f.cover} changes nothing: its infantry's armour save "
                             f"({', '.join(sorted({f'{p.armour}+' for p in takers}))}) is already as good, and a unit "
                             "saves on the better of the two")
        if f.broken and f.blast_markers:
            notes.append(f"{where}: blast_markers = {f.blast_markers} changes nothing: a broken formation holds no "
                         "blast markers (TP 1.13.2)")
        if f.withdrawal_enemies_within_15cm and not any(scenario.units[g.unit].type == "WE" for g in f.units):
            notes.append(f"{where}: withdrawal_enemies_within_15cm = {f.withdrawal_enemies_within_15cm} changes "
                         "nothing: it counts only against withdrawing war engines (TP 3.2.4), and it has none")
    return notes
