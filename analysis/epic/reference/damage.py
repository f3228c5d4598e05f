"""Damage (mirrors ``kernels/epic/damage.py``; TP 1.12.5, 2.1.22, 2.2.2, 3.2.2, 3.2.5, 3.3.3; spec §2, §10.4–§10.6):
one allocated hit resolved (shields, the disrupt BM, saves, damage to the hull), a critical's splash hit, and the
booking of the damage as kills, losses and the BMs they place.  The war-engine steps (shields, hull damage,
criticals, the end-phase effects) are ``analysis/epic/war_engines.py``, which calls :func:`count_damage` and
:func:`splash_hit` back through the trial (``trial.count_damage``, ``trial.splash_hit``: bound by
:func:`wargame_odds.analysis.epic.reference.block.new_trial`).
"""
from __future__ import annotations

from ..compile import NO_ABILITIES, SPLASH_MACRO_WEAPON, SPLASH_NO_SAVE, SPLASH_TITAN_KILLER, Abilities
from ..war_engines import damage_hull, shields_stop
from .saves import save_throw
from .state import MACRO_WEAPON, ORDINARY, TITAN_KILLER, Formation, Hit, Trial, Unit


def count_damage(trial: Trial, unit: Unit, points: int, by_side: int | None, kill: bool, marker: bool) -> None:
    """Book ``points`` of damage (or units) lost by ``unit``: kills for ``by_side`` while the fight goes
    on; losses and the BMs they place if its formation wins (``marker``), until the end phase (a
    splash from a war engine destroyed by extra hits may still reach the winner); in the end phase,
    BMs on its unbroken formation at once (TP 1.12.5, 1.12.9, 2.1.22, 3.2.2, 3.3.3; TP-FAQ Blast
    Markers; §10.4, §10.7)."""
    if trial.damage_sink is not None:  # a shooting attack books its own kills and BMs
        trial.damage_sink(unit, points, marker)
        return
    formation = trial.formations[unit.slot.formation]
    if trial.in_end_phase:
        if not formation.broken:
            formation.blast_markers += points
        return
    formation.losses += points
    if marker and not unit.slot.automaton:  # TP-SR Automaton: no BM for its deaths
        book_markers(formation, unit, points)
    if kill and trial.fighting and trial.kills_count and by_side is not None:
        trial.kills[by_side] += points


def book_markers(formation: Formation, unit: Unit, markers: int) -> None:
    """BMs its formation takes if it wins, kept apart for Expendable units, which place none unless every
    unit of the formation is Expendable (TP 2.1.22); an Automata unit places none at all, for its deaths
    or for a disrupt hit on it (TP-SR Automata; docs/epic-engine.md §10.6)."""
    if unit.slot.automata:
        return
    if unit.slot.expendable:
        formation.expendable_loss_markers += markers
    else:
        formation.loss_markers += markers


def take_hit(trial: Trial, side: int, hit: Hit, unit: Unit, damage: int = 1) -> None:
    """One allocated hit of ``side`` on ``unit``: shields and fields, the disrupt BM, saves, damage to
    the hull (TP 1.12.5, 2.2.2, 3.2.2, 3.2.5, 3.3.3; TP-SR shields; spec §2, §10.2–§10.6).

    ``damage`` > 1 only for a titan-killer hit on a war engine: each point takes a shield, then is
    saved on its own (a holofield saves the whole hit at once)."""
    if not unit.alive:
        trial.say("TP 1.12.5", f"  {unit.label}: already destroyed, hit wasted")
        return
    if trial.log is not None:
        trial.say("TP 1.12.5", f"  {unit.label} takes a hit ({hit.kind}{', sniper' if hit.sniper else ''}"
                               f"{', close combat' if hit.close_combat else ''}"
                               f"{f', {damage} damage' if damage > 1 else ''})")
    points = shields_stop(trial, unit, damage, hit.close_combat)
    if not points:
        return
    formation = trial.formation_of(unit)
    if hit.disrupt and trial.fighting:  # a BM for the hit itself, none for its damage (TP 2.2.2; §10.6)
        book_markers(formation, unit, 1)
        trial.say("TP 2.2.2", f"  disrupt hit on {unit.label}: 1 BM if {formation.name} wins")
    whole_hit_save = damage > 1 and unit.slot.holofield
    if whole_hit_save and save_throw(trial.rng, unit.slot, hit, trial.log):
        return
    unsaved = sum(not save_throw(trial.rng, unit.slot, hit, trial.log, main=not whole_hit_save)
                  for _ in range(points))
    if unsaved:
        damage_hull(trial, unit, unsaved, "TP 3.3.3", side, books=not hit.disrupt)
        if not trial.kills_count:
            trial.say("§9.2", "  (not counted as kills: switch supporting_fire_kills_count)")


def splash_hit(trial: Trial, victim: Unit, splash_kind: int) -> None:
    """One critical-splash (or self) hit on ``victim``, resolved as a firefight hit of the enemy side:
    ordinary, macro-weapon, titan-killer (1) or no save (TP 3.2.3; §10.4, §10.6)."""
    kind = {SPLASH_MACRO_WEAPON: MACRO_WEAPON, SPLASH_TITAN_KILLER: TITAN_KILLER}.get(splash_kind, ORDINARY)
    abilities = Abilities(macro_weapon=True, titan_killer=True) if kind == TITAN_KILLER else NO_ABILITIES
    hit = Hit(kind, False, abilities=abilities, no_save=splash_kind == SPLASH_NO_SAVE)
    take_hit(trial, 1 - victim.slot.side, hit, victim, 1)
