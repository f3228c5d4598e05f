"""A validated scenario expanded into one record per unit, and the count layout both engines fill.

Units are ordered for hit allocation (§9.6 of ``docs/epic-engine.md``): attackers first, then defenders;
within a side by engagement state (``bc`` before ``ff`` before ``out``), then formation order in
the file, then unit-group order (nearest to the enemy first), then unit order.  A unit's index in
:attr:`CompiledEpic.units` is its place in that order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..run.counts import CountLayout
from .dice import Dice, parse_dice
from .model import EpicScenario
from .profiles import CriticalEffect, UnitProfile, WeaponAbilities

ATTACKER, DEFENDER = 0, 1
BC, FF, OUT = 0, 1, 2
ENGAGED, SUPPORT, NEARBY = 0, 1, 2
OUTSIDE = 3  # a turn scenario's formation that takes no part in the assault (docs/epic-turn.md §2)
NO_ROLL = 7  # an attack value or save of "-": no D6 can reach 7
ENGAGEMENT_CODE = {"bc": BC, "ff": FF, "out": OUT}
ROLE_CODE = {"engaged": ENGAGED, "support": SUPPORT, "nearby": NEARBY}
ONE_DAMAGE = Dice(0, 6, 1)  # a titan killer without dice: 1 damage per hit (TP 3.2.5)
# critical kinds (docs/epic-engine.md §10.4); CriticalSlot.code is the index
CRITICAL_KINDS = ("destroyed", "destroyed_plus_effect", "destroyed_with_passengers", "extra_damage",
                  "end_phase_breach", "end_phase_fire", "random_move", "degrade_then_escalate", "self_hit",
                  "lose_character")
SPLASH_ORDINARY, SPLASH_MACRO_WEAPON, SPLASH_NO_SAVE, SPLASH_TITAN_KILLER = 0, 1, 2, 3


@dataclass(frozen=True)
class Abilities:
    """Weapon abilities of an attack (TP 2.2.2, 2.2.5, 2.2.6, 2.2.9, 3.2.5; TP-SR Eldar Technology).

    ``macro_weapon`` is already true for a titan killer (TP 2.2.9); ``titan_killer_damage`` is the
    damage a titan-killer hit does to a war engine (1, D3, D6, D6+1), ``ONE_DAMAGE`` otherwise.
    """

    macro_weapon: bool = False
    titan_killer: bool = False
    titan_killer_damage: Dice = ONE_DAMAGE
    lance: bool = False
    ignore_cover: bool = False
    disrupt: bool = False


NO_ABILITIES = Abilities()


@dataclass(frozen=True)
class ExtraLine(Abilities):
    """An extra-attack line (TP 2.2.3): ``count`` dice, or D3 dice when ``d3``."""

    count: int = 1
    d3: bool = False
    contact_only: bool = True  # a (bc) assault-weapon line; False = (15cm) small arms
    first_strike: bool = False
    sniper: bool = False
    engage_only: bool = False  # only when its formation is the attacker (TP-SR Knight Technology)


@dataclass(frozen=True)
class CriticalSlot:
    """A war engine's critical effect (TP 3.2.3; docs/epic-engine.md §10.4), coded for both engines.

    ``code`` indexes CRITICAL_KINDS; ``then_code`` the later kind of degrade_then_escalate (-1: none).
    ``splash_hit_on`` 0 = no splash; ``splash_kind`` SPLASH_ORDINARY / _MACRO_WEAPON / _NO_SAVE /
    _TITAN_KILLER (the hit type of the self hits too); ``further_damage_on`` 0 = none; ``self_hits``
    D6 on ``self_hit_on`` (0 = none) hit the war engine itself.
    """

    kind: str
    code: int
    extra_damage: int
    splash_hit_on: int
    splash_kind: int
    then: str | None
    then_code: int
    loses_holofield: bool
    loses_deflector_shield: bool
    loses_cc: bool
    loses_ff: bool
    loses_extra_attacks: bool
    ff_becomes: int  # NO_ROLL: unchanged
    further_damage_on: int = 0
    self_hits: int = 0
    self_hit_on: int = 0


@dataclass(frozen=True)
class UnitSlot:
    index: int
    name: str  # unit id, with " + character" for a host
    formation: int
    side: int
    engaged: int  # BC, FF or OUT
    type: str
    armour: int  # NO_ROLL for no save
    cc: int  # NO_ROLL for "-"
    ff: int
    cover: int  # cover save of defending infantry (not Mounted), NO_ROLL if none
    damage_capacity: int  # 1 unless a war engine
    cc_dice: int  # main dice at CC while in base contact, the rest at FF (a WE's split, TP 3.1.2)
    speed_zero: bool
    fearless: bool
    inspiring: bool
    leader: bool  # Leader or Supreme Commander (TP 2.1.15)
    supreme_commander: bool
    expendable: bool
    reinforced_armour: bool
    invulnerable: bool
    firefights: bool  # Support Craft, or a Skimmer whose FF beats its CC: fights at FF in contact (TP 2.1.13, 2.1.20)
    first_strike: bool
    sniper: bool
    extra: tuple[ExtraLine, ...]
    # war engines and weapon abilities (docs/epic-engine.md §10)
    cc_abilities: Abilities = NO_ABILITIES  # of the main CC dice
    ff_abilities: Abilities = NO_ABILITIES  # of the main FF dice
    void_shields: int = 0  # TP-SR Imperial Void Shields (a character's added)
    power_fields: tuple[Dice, ...] = ()  # TP-SR Power Fields: summed, rolled once per trial
    shadowfields: int = 0  # TP-SR Dark Eldar Technology
    invulnerable_on: int = NO_ROLL  # 6 invulnerable, 5 deflector shield, 4 living metal: the best
    holofield: bool = False
    knight_shield: bool = False
    regeneration: bool = False
    automaton: bool = False  # TP-SR Automaton: its deaths place no BM
    automata: bool = False  # TP-SR Automata: no BM for its deaths or a disrupt hit on it, in any formation
    necron: bool = False  # TP-SR Necron Technology: one destroyed unit returns per end phase
    # (damage capacity, void shields) each attached character added (battlecars, §10.1)
    characters_capacity: tuple[tuple[int, int], ...] = ()
    critical: CriticalSlot | None = None

    @property
    def shielded(self) -> bool:
        return bool(self.void_shields or self.power_fields or self.shadowfields)

    @property
    def max_shields(self) -> int:
        """Most shields and fields it can have up at once."""
        return self.void_shields + sum(d.maximum for d in self.power_fields) + self.shadowfields


@dataclass(frozen=True)
class FormationSlot:
    index: int
    name: str
    side: int
    role: int
    initiative: int
    blast_markers: int
    broken: bool
    tsknf: bool
    mob_rule: bool
    trapped: float
    withdrawal_enemies: int  # enemy units within 15 cm of a withdrawn war engine (TP 3.2.4)
    enemy_within_30cm: bool
    units: tuple[int, ...]  # indices into CompiledEpic.units
    size: int  # units for break and BM counting: a war engine counts its starting DC (TP 3.3.3)
    max_blast_markers: int  # histogram bound
    # units of this formation within reach of the critical splash of formation j's war engines
    within_splash_of: tuple[int, ...] = ()  # indexed by formation
    war_engines: tuple[int, ...] = ()  # its war engines and shielded units: they get the WE result slots
    war_engine_damage_capacity: int = 0  # their starting DC summed (damage_taken histogram bound)
    max_shields: int = 0  # their shields and fields, at most (histogram bound)


@dataclass
class CompiledEpic:
    scenario: EpicScenario
    units: list[UnitSlot]
    formations: list[FormationSlot]
    layout: CountLayout = field(default_factory=CountLayout)
    max_margin: int = 0

    @property
    def rules(self):
        return self.scenario.rules


def _abilities(a: WeaponAbilities | None) -> dict:
    """Ability fields of a line; a titan killer is a macro-weapon (TP 2.2.9)."""
    if a is None:
        return {}
    tk = a.titan_killer
    damage = ONE_DAMAGE if tk is True or tk is False else parse_dice(tk)
    return dict(macro_weapon=a.macro_weapon or tk is not False, titan_killer=tk is not False,
                titan_killer_damage=damage, lance=a.lance, ignore_cover=a.ignore_cover, disrupt=a.disrupt)


def _line(extra) -> ExtraLine:
    return ExtraLine(count=1 if extra.count == "D3" else extra.count, d3=extra.count == "D3",
                     contact_only=extra.range == "bc", first_strike=extra.first_strike, sniper=extra.sniper,
                     engage_only=extra.engage_only, **_abilities(extra))


def _critical(effect: CriticalEffect | None) -> CriticalSlot | None:
    if effect is None:
        return None
    splash = SPLASH_MACRO_WEAPON if effect.splash_macro_weapon else SPLASH_NO_SAVE if effect.splash_no_save \
        else SPLASH_TITAN_KILLER if effect.splash_titan_killer else SPLASH_ORDINARY
    return CriticalSlot(
        kind=effect.kind, code=CRITICAL_KINDS.index(effect.kind), extra_damage=effect.extra_damage,
        splash_hit_on=effect.splash_hit_on or 0, splash_kind=splash,
        then=effect.then if effect.kind != "degrade_then_escalate" else (effect.then or "extra_damage"),
        then_code=CRITICAL_KINDS.index(effect.then or "extra_damage") if effect.kind == "degrade_then_escalate"
        else -1,
        loses_holofield="holofield" in effect.loses, loses_deflector_shield="deflector-shield" in effect.loses,
        loses_cc="cc" in effect.loses, loses_ff="ff" in effect.loses,
        loses_extra_attacks="extra_attacks" in effect.loses, ff_becomes=effect.ff_becomes or NO_ROLL,
        further_damage_on=effect.further_damage_on or 0,
        self_hits=(effect.self_hits or 1) if effect.kind == "self_hit" else 0, self_hit_on=effect.self_hit_on or 0)


def _power_fields(profile: UnitProfile) -> tuple[Dice, ...]:
    return () if profile.power_fields is None else (parse_dice(profile.power_fields),)


def _unit_slot(index, name, profile: UnitProfile, characters: list[UnitProfile], formation, fslot_side,
               engaged, cover, cc_dice: int | None) -> UnitSlot:
    rules = set(profile.special)
    extra = [_line(e) for e in profile.extra_attacks]
    damage_capacity = profile.damage_capacity or 1
    void_shields, power_fields, shadowfields = profile.void_shields, _power_fields(profile), profile.shadowfields
    characters_capacity = tuple((ch.damage_capacity, ch.void_shields) for ch in characters if ch.damage_capacity)
    for ch in characters:  # a character adds its weapons and abilities to its host (TP 2.1.1), a battlecar
        rules |= set(ch.special)  # also its DC and shields (docs/epic-engine.md §10.1)
        extra += [_line(e) for e in ch.extra_attacks]
        damage_capacity += ch.damage_capacity or 0
        void_shields += ch.void_shields
        power_fields += _power_fields(ch)
        shadowfields += ch.shadowfields
    infantry_cover = profile.type == "INF" and "mounted" not in rules and fslot_side == DEFENDER
    invulnerable_on = min([NO_ROLL] + [on for rule, on in (("invulnerable-save", 6), ("deflector-shield", 5),
                                                           ("living-metal", 4)) if rule in rules])
    return UnitSlot(
        index=index, name=name, formation=formation, side=fslot_side, engaged=engaged, type=profile.type,
        armour=profile.armour or NO_ROLL, cc=profile.cc or NO_ROLL, ff=profile.ff or NO_ROLL,
        cover=(cover or NO_ROLL) if infantry_cover else NO_ROLL,
        damage_capacity=damage_capacity,
        cc_dice=damage_capacity if cc_dice is None else cc_dice,
        speed_zero=profile.speed == 0,
        fearless="fearless" in rules, inspiring="inspiring" in rules,
        leader=bool(rules & {"leader", "supreme-commander"}),
        supreme_commander="supreme-commander" in rules,
        expendable="expendable" in rules, reinforced_armour="reinforced-armour" in rules,
        invulnerable="invulnerable-save" in rules,
        firefights=("support-craft" in rules
                    or ("skimmer" in rules and (profile.ff or NO_ROLL) < (profile.cc or NO_ROLL))),
        first_strike="first-strike" in rules, sniper="sniper" in rules, extra=tuple(extra),
        cc_abilities=Abilities(**_abilities(profile.cc_abilities)),
        ff_abilities=Abilities(**_abilities(profile.ff_abilities)),
        void_shields=void_shields, power_fields=power_fields, shadowfields=shadowfields,
        invulnerable_on=invulnerable_on, holofield="holofield" in rules, knight_shield="knight-shield" in rules,
        regeneration="regeneration" in rules, automaton="automaton" in rules, automata="automata" in rules,
        necron="necron" in rules, characters_capacity=characters_capacity, critical=_critical(profile.critical),
    )


def compile_scenario(scenario: EpicScenario) -> CompiledEpic:
    """Expand unit groups into units in allocation order and lay out the counts."""
    entries = []  # (sort key, formation index, group, unit within group)
    for fi, formation in enumerate(scenario.formations):
        side = ATTACKER if formation.side == "attacker" else DEFENDER
        for gi, group in enumerate(formation.units):
            for ui in range(group.count):
                key = (side, ENGAGEMENT_CODE[group.engaged], fi, gi, ui)
                entries.append((key, fi, group, ui))
    entries.sort(key=lambda e: e[0])
    units: list[UnitSlot] = []
    for index, (key, fi, group, ui) in enumerate(entries):
        formation = scenario.formations[fi]
        profile = scenario.units[group.unit]
        characters = [scenario.units[c] for c in group.characters] if ui == 0 else []
        name = group.unit + "".join(f" + {c}" for c in group.characters) if ui == 0 else group.unit
        units.append(_unit_slot(index, name, profile, characters, fi, key[0], key[1], formation.cover,
                                group.cc_dice))
    formations = []
    for fi, formation in enumerate(scenario.formations):
        members = tuple(u.index for u in units if u.formation == fi)
        size = sum(units[i].damage_capacity for i in members)
        war_engines = tuple(i for i in members if units[i].type == "WE" or units[i].shielded)
        names = [f.name for f in scenario.formations]
        army = scenario.rules.army_rules
        enemy30 = scenario.end_phase.enemy_within_30cm if formation.enemy_within_30cm is None \
            else formation.enemy_within_30cm
        formations.append(FormationSlot(
            index=fi, name=formation.name, side=ATTACKER if formation.side == "attacker" else DEFENDER,
            role=ROLE_CODE[formation.role or "engaged"], initiative=formation.initiative,
            blast_markers=formation.blast_markers, broken=formation.broken,
            tsknf=army and "they-shall-know-no-fear" in formation.army_rules,
            mob_rule=army and "mob-rule" in formation.army_rules, trapped=formation.trapped,
            withdrawal_enemies=formation.withdrawal_enemies_within_15cm,
            enemy_within_30cm=enemy30, units=members, size=size,
            max_blast_markers=formation.blast_markers + size + 1,
            within_splash_of=tuple(formation.within_splash_of.get(name, 0) for name in names),
            war_engines=war_engines, war_engine_damage_capacity=sum(units[i].damage_capacity for i in war_engines),
            max_shields=sum(units[i].max_shields for i in war_engines),
        ))
    compiled = CompiledEpic(scenario=scenario, units=units, formations=formations)
    compiled.max_margin = _margin_bound(compiled)
    _lay_out(compiled)
    return compiled


def _margin_bound(c: CompiledEpic) -> int:
    """No result margin can exceed this: best die, every kill, every bonus (TP 1.12.7)."""
    dice = 12 if c.rules.result_dice == "sum" else 6
    kills = sum(u.damage_capacity for u in c.units)
    inspiring = sum(u.inspiring for u in c.units)
    return dice + kills + inspiring + 4


def _lay_out(c: CompiledEpic) -> None:
    """The count vector: side-level outcomes, then per-formation outcomes (see SIDE_* names)."""
    lay = c.layout
    for name in ("attacker_wins", "defender_wins", "no_winner", "unresolved",
                 "decided_without_roll"):
        lay.add(name)
    lay.add("rounds", c.rules.max_rounds)  # rounds[r - 1]: trials that fought r rounds
    lay.add("margin", 2 * c.max_margin + 1)  # margin[m + max_margin]: attacker score - defender score
    for f in c.formations:
        p = f"f{f.index}."
        for name in ("destroyed", "broken_after_assault", "broken_after_end_phase", "rally_tested",
                     "rally_passed"):
            lay.add(p + name)
        lay.add(p + "casualties", len(f.units) + 1)  # units destroyed by the end of the end phase
        lay.add(p + "casualties_assault", len(f.units) + 1)  # units destroyed by the end of the assault
        lay.add(p + "blast_markers_after_assault", f.max_blast_markers + 1)
        lay.add(p + "blast_markers_after_end_phase", f.max_blast_markers + 1)
        if f.war_engines:  # war engines and shielded units (docs/epic-engine.md §10.9)
            lay.add(p + "critical")  # trials with at least one critical hit on them
            lay.add(p + "damage_taken_assault", f.war_engine_damage_capacity + 1)  # DC lost by the end of the assault
            lay.add(p + "damage_taken", f.war_engine_damage_capacity + 1)  # by the end of the end phase
            lay.add(p + "shields_after_assault", f.max_shields + 1)  # shields and fields up
            lay.add(p + "shields_after_end_phase", f.max_shields + 1)


def war_engine_keys(c: CompiledEpic) -> tuple[str, str] | None:
    """(field, feature) of the first war-engine or weapon-ability key of docs/epic-engine.md §10 the
    scenario uses, or None.  Only such scenarios take the kernel's war-engine path and report the
    war-engine results of §10.9 (on either engine, so that the two engines report the same
    quantities)."""
    for name, profile in c.scenario.units.items():
        where = f"units.{name}"
        for key, feature in (("void_shields", "void shields"), ("power_fields", "power fields"),
                             ("shadowfields", "shadowfields"), ("critical", "critical hits"),
                             ("cc_abilities", "abilities of the CC attack"),
                             ("ff_abilities", "abilities of the FF attack")):
            if getattr(profile, key):
                return f"{where}.{key}", feature
        for rule in ("holofield", "knight-shield", "living-metal", "deflector-shield", "regeneration",
                     "automaton", "automata", "necron"):
            if rule in profile.special:
                return f"{where}.special", rule
        if profile.type == "CH" and profile.damage_capacity:
            return f"{where}.damage_capacity", "a character adding damage capacity"
        for k, line in enumerate(profile.extra_attacks):
            tk = line.titan_killer
            if line.lance or line.ignore_cover or line.disrupt or line.engage_only or tk not in (False, True):
                return (f"{where}.extra_attacks[{k}]",
                        "lance, ignore cover, disrupt, engage_only or titan-killer damage dice")
    for i, formation in enumerate(c.scenario.formations):
        if any(formation.within_splash_of.values()):
            return f"formations[{i}].within_splash_of", "critical-hit splash"
    return None
