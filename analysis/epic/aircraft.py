"""Aircraft and spacecraft in the reference turn: the aircraft action test, flak, ground attacks,
orbital bombardments and pin-point attacks (epic-shooting §9, §4.3; docs/epic-turn.md §9).

A ground attack is the aircraft action test (−1 per BM, then every BM removed; a failure is a Stand
Down with no BM), the approach flak (each named enemy ground formation's AA weapons, suppression
applied, armour or a 4+ jink save, BMs on the aircraft), then a normal shooting attack of the
survivors (:func:`wargame_odds.analysis.epic.shooting.shoot`) with no suppression and no crossfire; in the end
phase the disengagement flak.  Spacecraft take no test: an orbital bombardment is their barrage with
12 cm templates, a pin-point attack their macro-weapon shots at one chosen war engine.  AC/WE aircraft
take flak damage through the war-engine steps of :mod:`wargame_odds.analysis.epic.war_engines` (shields, hull,
criticals) via :func:`wargame_odds.analysis.epic.shooting.resolve`.  Aircraft never break, rally or assault.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .reference import Formation, Trial, roll_d6
from .shooting import (AT, JINK_SAVE, MW, TK, AttackReport, AttackState, FireOrders, ShotHit, add_blast_markers,
                       allocate_damage, resolve, suppress, weapon_hits)
from .turn_model import Activation
from .war_engines import titan_killer_damage

# the default room of a 12 cm orbital template, in infantry units (an armoured vehicle takes 1.5, a war engine 3:
# shooting.template_capacity): 7 infantry, 4 armoured vehicles or 2 war engines, against the ordinary
# template's 3 (reading, docs/epic-turn.md §9)
ORBITAL_TEMPLATE_ROOM = 7.0
MOVING_ACTIONS = ("advance", "double", "march", "engage")  # a formation that moved: −1 to its end-phase flak


@dataclass
class FlakReport:
    """What flak did to one aircraft formation in one turn (approach and disengagement)."""

    hits: int = 0  # successful AA to-hit rolls
    aircraft_lost: int = 0  # aircraft destroyed


def aircraft_action_test(trial: Trial, formation: Formation, act: Activation) -> bool:
    """D6 − 1 per BM (− 1 when retaining) ≥ initiative; then every BM is removed, pass or fail; a
    failure is a Stand Down with no BM (TP 1.6.3, 4.2.7; TP-FAQ Blast Markers)."""
    modifier = -formation.blast_markers - int(act.retain)
    roll = roll_d6(trial.rng)
    passed = roll + modifier >= formation.initiative
    trial.say("TP 4.2.7", f"{formation.name} declares {act.action}: aircraft action test {roll} {modifier:+d} vs "
                          f"{formation.initiative}+ → {'pass' if passed else 'fail: Stand Down, no BM'}; "
                          f"its {formation.blast_markers} BM(s) are removed")
    formation.blast_markers = 0
    return passed


def may_jink(scenario, aircraft: Formation) -> bool:
    """Whether every aircraft of the formation may jink: fighters and fighter-bombers, not bombers (TP 4.2.3)."""
    return all(scenario.units[u.slot.name.split(" + ")[0]].aircraft != "bomber" for u in aircraft.living)


def flak(trial: Trial, aircraft: Formation, gunners: list[tuple[Formation, int]], weapons_of, jink: bool,
         report: FlakReport) -> None:
    """One flak step against an aircraft formation (TP 4.2.3, 4.2.4, 4.2.7; TP-FAQ Flak Attacks,
    Anti-Aircraft Attacks): each gunner formation that is not broken fires, at its to-hit modifier, the AA weapons of
    its units left after suppression (every living unit is in range, so units without AA weapons absorb it first
    from the back); one BM for coming under fire however many fire; the hits are allocated front to
    back (macro-weapon and titan-killer AA after the others), saved on armour or, when ``jink``, on 4+;
    +1 BM per aircraft lost or war-engine damage point; no break check: aircraft never break."""
    hits: list[ShotHit] = []
    fired = False
    for gunners_formation, modifier in gunners:
        if gunners_formation.broken or not gunners_formation.living:
            trial.say("TP 4.2.4", f"{gunners_formation.name} is broken or destroyed: no flak")
            continue
        firers = suppress(trial, gunners_formation, gunners_formation.living)
        for unit in firers:
            for weapon in weapons_of(unit):
                if weapon.aa is None:
                    continue
                fired = True
                kind = TK if weapon.titan_killer else MW if weapon.macro else AT
                for _ in range(weapon.count):
                    hits += weapon_hits(trial, unit, weapon, kind, weapon.aa, modifier, "TP 4.2.4", "AA", "flak ")
    if not fired:
        trial.say("TP 4.2.4", f"no AA weapon fires at {aircraft.name}: no flak, no blast marker")
        return
    report.hits += len(hits)
    state = AttackState(aircraft, False, False, AttackReport(), by_side=1 - aircraft.side, jink=jink)
    trial.damage_sink = lambda unit, points, marker: state.book_damage(trial, unit, points, marker)
    try:
        add_blast_markers(trial, state, 1, "aircraft coming under flak")
        if jink:
            trial.say("TP 4.2.3", f"{aircraft.name} jinks: {JINK_SAVE}+ saves instead of armour")

        def damage_of(hit, unit):
            return titan_killer_damage(trial, hit, unit) if hit.kind == TK else 1

        for name, kinds in (("flak hits", (AT,)), ("macro-weapon flak hits", (MW, TK))):
            triples = allocate_damage([h for h in hits if h.kind in kinds], aircraft.living, damage_of)
            if triples:
                trial.say("TP 4.2.4", f"{name}: " + ", ".join(f"{h.kind}→{u.label}" for h, u, _ in triples))
            resolve(trial, state, triples, None, name)
    finally:
        trial.damage_sink = None
    report.aircraft_lost += state.report.kills


def ground_attack_orders(orders: FireOrders) -> FireOrders:
    """An aircraft's attack: a normal shooting attack with no suppression and no crossfire; the cover −1
    only for a target in cover, which is what ``cover`` says (TP 4.1.1, 4.2.2; TP-FAQ Aircraft Attacks)."""
    return replace(orders, crossfire=False, suppressible=False)


def orbital_orders(orders: FireOrders) -> FireOrders:
    """An orbital bombardment: a barrage with 12 cm templates, never with crossfire, by a spacecraft
    that nothing suppresses (TP 4.3.3; TP-FAQ Orbital Bombardments)."""
    return replace(orders, crossfire=False, suppressible=False, template_room=ORBITAL_TEMPLATE_ROOM)


def pin_point_orders(orders: FireOrders, war_engine: int | None) -> FireOrders:
    """A pin-point attack: its macro-weapon shots at the enemy war engine the attacker picks (TP 4.3.4;
    TP-FAQ Pin-Point Attacks)."""
    return replace(orders, crossfire=False, suppressible=False, aim_war_engine=(war_engine or 1) - 1)


def barrage_lines(weapons_of):
    """Only the barrage (orbital bombardment) lines of each unit."""
    return lambda unit: tuple(w for w in weapons_of(unit) if w.bp is not None)


def direct_lines(weapons_of):
    """Only the direct-fire (pin-point) lines of each unit."""
    return lambda unit: tuple(w for w in weapons_of(unit) if w.bp is None)
