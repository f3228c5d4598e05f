"""A validated scenario expanded into one record per unit, and the count layout both engines fill.

Units are ordered for hit allocation (§9.6 of ``docs/epic-engine.md``): attackers first, then defenders;
within a side by engagement state (``bc`` before ``ff`` before ``out``), then formation order in
the file, then unit-group order (nearest to the enemy first), then unit order.  A unit's index in
:attr:`CompiledEpic.units` is its place in that order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..counts import CountLayout
from .model import EpicScenario, ExtraAttack, UnitProfile

ATTACKER, DEFENDER = 0, 1
BC, FF, OUT = 0, 1, 2
ENGAGED, SUPPORT, NEARBY = 0, 1, 2
NO_ROLL = 7  # an attack value or save of "-": no D6 can reach 7
ENGAGEMENT_CODE = {"bc": BC, "ff": FF, "out": OUT}
ROLE_CODE = {"engaged": ENGAGED, "support": SUPPORT, "nearby": NEARBY}


@dataclass(frozen=True)
class ExtraLine:
    """An extra-attack line (TP 2.2.3): ``count`` dice, or D3 dice when ``d3``."""

    count: int
    d3: bool
    contact_only: bool  # a (bc) assault-weapon line; False = (15cm) small arms
    macro_weapon: bool
    first_strike: bool
    titan_killer: bool
    sniper: bool


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


def _line(extra: ExtraAttack) -> ExtraLine:
    return ExtraLine(count=1 if extra.count == "D3" else extra.count, d3=extra.count == "D3",
                     contact_only=extra.range == "bc", macro_weapon=extra.macro_weapon,
                     first_strike=extra.first_strike, titan_killer=extra.titan_killer, sniper=extra.sniper)


def _unit_slot(index, name, profile: UnitProfile, characters: list[UnitProfile], formation, fslot_side,
               engaged, cover, cc_dice: int | None) -> UnitSlot:
    rules = set(profile.special)
    extra = [_line(e) for e in profile.extra_attacks]
    for ch in characters:  # a character adds its weapons and abilities to its host (TP 2.1.1)
        rules |= set(ch.special)
        extra += [_line(e) for e in ch.extra_attacks]
    infantry_cover = profile.type == "INF" and "mounted" not in rules and fslot_side == DEFENDER
    return UnitSlot(
        index=index, name=name, formation=formation, side=fslot_side, engaged=engaged, type=profile.type,
        armour=profile.armour or NO_ROLL, cc=profile.cc or NO_ROLL, ff=profile.ff or NO_ROLL,
        cover=(cover or NO_ROLL) if infantry_cover else NO_ROLL,
        damage_capacity=profile.damage_capacity or 1,
        cc_dice=(profile.damage_capacity or 1) if cc_dice is None else cc_dice,
        speed_zero=profile.speed == 0,
        fearless="fearless" in rules, inspiring="inspiring" in rules,
        leader=bool(rules & {"leader", "supreme-commander"}),
        supreme_commander="supreme-commander" in rules,
        expendable="expendable" in rules, reinforced_armour="reinforced-armour" in rules,
        invulnerable="invulnerable-save" in rules, firefights="support-craft" in rules or ("skimmer" in rules and (profile.ff or NO_ROLL) < (profile.cc or NO_ROLL)),
        first_strike="first-strike" in rules, sniper="sniper" in rules, extra=tuple(extra),
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
