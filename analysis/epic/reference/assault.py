"""The assault round's rule steps (mirrors ``kernels/epic/assault.py``; TP 1.12.5, 1.12.6, 2.2.3, 2.2.4, 3.1.2; spec
§1–§4): a unit's attack dice in and out of base contact, the to-hit rolls of a side in a step, the allocation,
saves and damage of its hits kind by kind, supporting fire, the early ends after the normal step and after
supporting fire.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compile import ATTACKER, BC, DEFENDER, NO_ABILITIES, NO_ROLL, OUT, SUPPORT, Abilities, UnitSlot
from ..war_engines import titan_killer_damage
from .allocation import allocate, fights_in_contact
from .damage import take_hit
from .dice import roll_d3, roll_d6
from .state import (ANY_TARGET, CONTACT_ONLY, MACRO_WEAPON, NON_CONTACT_ONLY, ORDINARY, SIDES, TITAN_KILLER,
                    Decision, Hit, Trial, Unit)


@dataclass(frozen=True)
class AttackDice:
    """Dice a unit rolls in one step: ``count`` dice (or D3 dice) hitting on D6 ≥ ``target``."""

    count: int
    d3: bool
    target: int
    weapon: str  # for the trace: "CC", "FF", "CC assault-weapon line", ...
    kind: str  # ORDINARY, MACRO_WEAPON or TITAN_KILLER
    sniper: bool
    first_strike: bool
    reach: str = ANY_TARGET  # ANY_TARGET, CONTACT_ONLY or NON_CONTACT_ONLY
    close_combat: bool = False  # rolled at the CC value: shields and fields do not stop its hits (§10.2)
    abilities: Abilities = NO_ABILITIES  # lance, ignore cover, disrupt, titan-killer damage (§10.5, §10.6)


def _hit_kind(abilities: Abilities) -> str:
    """The kind of the hits of a weapon with these abilities (TP 2.2.6, 2.2.9)."""
    return TITAN_KILLER if abilities.titan_killer else MACRO_WEAPON if abilities.macro_weapon else ORDINARY


def assault_dice(slot: UnitSlot, in_contact: bool) -> list[AttackDice]:
    """A unit's assault dice (TP 1.12.5, 2.1.13, 2.2.3, 2.2.4, 2.2.6, 3.1.2; spec §1).

    Main dice: 1 (a WE: its starting DC) at CC in contact, else at FF (a firefighting Skimmer or
    Support Craft is never in contact, see :func:`in_contact`).  A WE in contact rolls ``cc_dice`` of
    them at CC and the rest at FF; its CC hits reach only enemy units in base contact, its FF hits
    (small-arms lines included) only the others; sniper hits pick their target as any sniper's
    (TP 3.1.2, 2.1.14).  A ``bc`` line only in contact, at CC; a ``15cm`` line at FF when not in
    contact, and in contact only for a WE.  A value of "-" rolls nothing.
    """
    split = in_contact and slot.type == "WE"

    def reach(contact_dice: bool, sniper: bool) -> str:
        if not split or sniper:
            return ANY_TARGET
        return CONTACT_ONLY if contact_dice else NON_CONTACT_ONLY

    dice = []
    if split:
        main = [(slot.cc_dice, slot.cc, "CC", True), (slot.damage_capacity - slot.cc_dice, slot.ff, "FF", False)]
    else:
        main = [(slot.damage_capacity, *((slot.cc, "CC") if in_contact else (slot.ff, "FF")), in_contact)]
    for count, target, weapon, contact_dice in main:
        if count and target != NO_ROLL:
            abilities = slot.cc_abilities if weapon == "CC" else slot.ff_abilities
            dice.append(AttackDice(count, False, target, weapon, _hit_kind(abilities), slot.sniper, slot.first_strike,
                                   reach(contact_dice, slot.sniper), weapon == "CC", abilities))
    for line in slot.extra:
        if line.engage_only and slot.side != ATTACKER:  # TP-SR Knight Technology: only when it assaults
            continue
        if line.contact_only:
            if not in_contact:
                continue
            target, weapon = slot.cc, "CC assault-weapon line"
        else:
            if in_contact and slot.type != "WE":
                continue
            target, weapon = slot.ff, "FF small-arms line"
        if target != NO_ROLL:
            sniper = line.sniper or slot.sniper
            dice.append(AttackDice(line.count, line.d3, target, weapon, _hit_kind(line),
                                   sniper, line.first_strike or slot.first_strike,
                                   reach(line.contact_only, sniper), line.contact_only, line))
    return dice


#: The assault dice last worked out for a slot index and contact, beside the slot they are for: a unit rolls the same
#: dice in each step of each round of each trial, until a critical replaces its slot (then they are worked out again).
_LAST_DICE: dict[tuple[int, bool], tuple[UnitSlot, list[AttackDice]]] = {}


def unit_assault_dice(slot: UnitSlot, in_contact: bool) -> list[AttackDice]:
    """:func:`assault_dice`, worked out again only for a slot other than the one they were last worked out for."""
    key = (slot.index, in_contact)
    known = _LAST_DICE.get(key)
    if known is None or known[0] is not slot:
        known = _LAST_DICE[key] = (slot, assault_dice(slot, in_contact))
    return known[1]


def supporting_dice(slot: UnitSlot) -> list[AttackDice]:
    """A supporting unit's dice (TP 1.12.6, 2.2.4; spec §4): FF main dice and ``15cm`` lines only;
    first strike gives nothing."""
    dice = []
    if slot.ff != NO_ROLL:
        dice.append(AttackDice(slot.damage_capacity, False, slot.ff, "FF", _hit_kind(slot.ff_abilities), slot.sniper,
                               False, abilities=slot.ff_abilities))
        for line in slot.extra:
            if not line.contact_only and not line.engage_only:
                dice.append(AttackDice(line.count, line.d3, slot.ff, "FF small-arms line", _hit_kind(line),
                                       line.sniper or slot.sniper, False, abilities=line))
    return dice


def roll_attack(trial: Trial, unit: Unit, dice: AttackDice, situation: str) -> list[Hit]:
    """Roll one set of attack dice: hit on D6 ≥ target, no modifiers ever (TP 1.12.5, 2.2.3)."""
    rng = trial.rng
    count = roll_d3(rng) if dice.d3 else dice.count
    rolls = [roll_d6(rng) for _ in range(count)]
    hits = sum(r >= dice.target for r in rolls)
    if trial.log is not None:
        how_many = f"D3 = {count}" if dice.d3 else str(count)
        a = dice.abilities
        extras = [k for k, on in ((dice.kind, dice.kind != ORDINARY),
                                  (f"{a.titan_killer_damage} damage", dice.kind == TITAN_KILLER
                                   and not a.titan_killer_damage.fixed),
                                  ("lance", a.lance), ("ignore cover", a.ignore_cover), ("disrupt", a.disrupt),
                                  ("sniper", dice.sniper), ("first strike", dice.first_strike),
                                  (f"hits only units {dice.reach}", dice.reach != ANY_TARGET)) if on]
        tags = f" [{', '.join(extras)}]" if extras else ""
        clause = "TP 1.12.6" if situation == "supporting fire" else "TP 1.12.5"
        trial.say(clause, f"{unit.label} ({situation}) rolls {how_many} {'die' if count == 1 else 'dice'} "
                          f"at {dice.weapon} {dice.target}+{tags}: {rolls} → {hits} hit(s)")
    return [Hit(dice.kind, dice.sniper, dice.reach, dice.close_combat, situation == "supporting fire",
                dice.abilities)] * hits


def in_contact(unit: Unit, enemy_fights_in_contact: bool) -> bool:
    """A ``bc`` unit is in contact while it fights in contact and the enemy's assault formations
    have a living unit that does (``enemy_fights_in_contact``: :func:`fights_in_contact_on`); otherwise it
    attacks as ``ff`` (TP-FAQ First Strike; TP 2.1.13: the enemy in contact with a firefighting skimmer uses FF
    too; §9.13; spec §1)."""
    return enemy_fights_in_contact and fights_in_contact(unit.slot)


def fights_in_contact_on(trial: Trial, side: int) -> bool:
    """Whether the side's assault formations have a living unit that fights in contact (:func:`in_contact`)."""
    return any(fights_in_contact(u.slot) for u in trial.assault_units(side))


def roll_assault_attacks(trial: Trial, side: int, first_strike: bool) -> list[Hit]:
    """Every attack of one side in one step (TP 1.12.5, 2.2.4; spec §1).  Rolling changes no unit, so
    whether the enemy fights in contact is asked once for the whole side."""
    hits = []
    enemy_in_contact = fights_in_contact_on(trial, 1 - side)
    for unit in trial.directly_engaged(side):
        contact = in_contact(unit, enemy_in_contact)
        situation = "in base contact" if contact else (
            "ff" if unit.slot.engaged != BC else "bc, firefight (skimmer / support craft): attacks as ff"
            if unit.slot.firefights else "bc, no enemy fighting in contact: attacks as ff")
        for dice in unit_assault_dice(unit.slot, contact):
            if dice.first_strike == first_strike:
                hits += roll_attack(trial, unit, dice, situation)
    return hits


def resolve_hits(trial: Trial, side: int, hits: list[Hit], kills_count: bool = True) -> None:
    """Resolve one side's hits on the enemy's directly engaged units in separate allocations, each
    saved and its casualties removed before the next: the sniper and ordinary hits, then the
    macro-weapon hits to the survivors from the nearest, then the titan-killer hits the same way
    (TP 1.9.6, 1.12.5, 2.2.6, 2.2.9).  Each is one round-robin, a war engine's hits that reach only
    some units included (:func:`allocate`; TP 3.1.2; spec §2)."""
    kinds = (("snipers and ordinary", lambda h: h.sniper or h.kind == ORDINARY),
             (MACRO_WEAPON, lambda h: not h.sniper and h.kind == MACRO_WEAPON),
             (TITAN_KILLER, lambda h: not h.sniper and h.kind == TITAN_KILLER))
    trial.kills_count = kills_count
    for name, of_kind in kinds:
        kind_hits = [h for h in hits if of_kind(h)]
        if kind_hits:
            _resolve_allocation(trial, side, name, kind_hits)
    trial.kills_count = True


def _resolve_allocation(trial: Trial, side: int, name: str, hits: list[Hit]) -> None:
    """One allocation: hits to the enemy's living directly engaged units, saves, casualties removed
    (TP 1.12.5, 3.1.2, 3.2.5, 3.3.3; spec §2, §10.5); a titan-killer hit's damage is rolled when allocated."""
    eligible = trial.directly_engaged(1 - side)
    triples = allocate(hits, eligible, lambda hit, unit: titan_killer_damage(trial, hit, unit))
    if trial.log is not None:
        taken: dict[str, int] = {}
        for _, unit, _ in triples:
            taken[unit.label] = taken.get(unit.label, 0) + 1
        lost = len(hits) - len(triples)
        trial.say("TP 1.12.5", f"{SIDES[side]}'s {len(hits)} {name} hit(s) allocated nearest first, round-robin"
                               + (": " if taken else "") + ", ".join(f"{label} ×{n}" for label, n in taken.items())
                               + (f"; {lost} lost: no directly engaged enemy unit they may reach" if lost else ""))
    for hit, unit, damage in triples:
        take_hit(trial, side, hit, unit, damage)


def attack_step(trial: Trial, first_strike: bool) -> None:
    """One step of a round: both sides roll, then hits are allocated, saved and removed
    (first strike TP 2.2.4 before the simultaneous normal attacks TP 1.12.5; spec §1)."""
    name = "first-strike step" if first_strike else "normal step (simultaneous)"
    trial.say("TP 2.2.4" if first_strike else "TP 1.12.5", f"{name}")
    hits = [roll_assault_attacks(trial, side, first_strike) for side in (ATTACKER, DEFENDER)]
    if first_strike and not hits[0] and not hits[1]:
        trial.say("TP 2.2.4", "no first-strike hits")
    for side in (ATTACKER, DEFENDER):
        resolve_hits(trial, side, hits[side])


def supporting_fire(trial: Trial) -> None:
    """Unbroken support formations' living bc/ff units fire at FF, both sides at once; hits only on
    directly engaged units (TP 1.12.6; §2.5, §9.2; spec §4)."""
    hits: list[list[Hit]] = [[], []]
    for formation in trial.formations:
        if formation.role != SUPPORT:
            continue
        if formation.broken:
            trial.say("TP 1.12.6", f"{formation.name} is broken: no supporting fire")
            continue
        for unit in formation.living:
            if unit.slot.engaged != OUT:
                for dice in supporting_dice(unit.slot):
                    hits[formation.side] += roll_attack(trial, unit, dice, "supporting fire")
    for side in (ATTACKER, DEFENDER):
        resolve_hits(trial, side, hits[side], kills_count=trial.rules.supporting_fire_kills_count)


def early_end(trial: Trial, rounds: int) -> Decision | None:
    """Wipe-out or stall after the normal step (TP 1.12.5; §9.7; spec §3)."""
    if not trial.assault_units(DEFENDER):
        if trial.assault_units(ATTACKER):
            trial.say("TP 1.12.5", "defender wiped out: attacker wins without a result roll, no extra hits")
            return Decision("attacker", None, rounds, True)
        trial.say("§9.7", "both sides wiped out: no winner")
        return Decision("none", None, rounds, False)
    if not trial.directly_engaged(ATTACKER):
        trial.say("TP 1.12.5", "stall: no directly engaged attacker left, defender wins without a result roll")
        return Decision("defender", None, rounds, True)
    return None


def wiped_out_after_support(trial: Trial, rounds: int) -> Decision | None:
    """A side wiped out by supporting fire loses without a roll (§2.6; spec §4)."""
    attacker_alive, defender_alive = bool(trial.assault_units(ATTACKER)), bool(trial.assault_units(DEFENDER))
    if attacker_alive and defender_alive:
        return None
    winner = "attacker" if attacker_alive else "defender" if defender_alive else "none"
    trial.say("TP 1.12.7", f"wiped out by supporting fire: {'no winner' if winner == 'none' else winner + ' wins'}"
                           " without a result roll")
    return Decision(winner, None, rounds, winner != "none")
