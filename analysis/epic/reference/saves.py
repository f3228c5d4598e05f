"""Saves (mirrors ``kernels/epic/saves.py``; TP 1.9.6, 1.12.5, 2.1.6, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; TP-SR
Automaton, Eldar, Knight, Necron, Tau Technology; spec §2, §10.3): one save against one hit, and an Automaton's
save of a broken formation's no-save hit.  Shields and fields before the saves: ``analysis/epic/war_engines.py``.
"""
from __future__ import annotations

import random
from dataclasses import replace

from ..compile import NO_ROLL, UnitSlot
from .dice import roll_d6
from .state import MACRO_WEAPON, ORDINARY, Hit, Log, Trial, Unit, note


def save_throw(rng: random.Random, slot: UnitSlot, hit: Hit, log: Log = None, main: bool = True) -> bool:
    """One save against one hit (or one titan-killer point); True when saved (TP 1.9.6, 1.12.5, 2.1.6,
    2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; TP-SR Eldar, Knight, Necron, Tau Technology; spec §2, §10.3).

    Main save: ordinary: D6 ≥ min(armour, cover) (no cover against ignore cover); Reinforced Armour
    re-rolls a failure on its armour value, even when the failed save was a cover save (TP-FAQ
    Reinforced Armour), but not against lance.  Macro-weapon: an armour save only with Reinforced
    Armour.  Titan killer: none.  Holofield: 3+ against every hit; knight shield: unmodified 4+
    against every hit but supporting fire; both re-roll on armour only against ordinary non-lance
    hits.  Sniper: +1 to every modifiable target.  ``main=False`` skips the main save (a holofield
    already rolled for the whole titan-killer hit).  Then, after a failed or disallowed save, the
    invulnerable save, unmodified: 6+, deflector shield 5+, living metal 4+.
    """
    if hit.no_save:
        note(log, "TP 3.2.3", "  splash hit: no save")
        return False
    worse = 1 if hit.sniper else 0
    armour = min(slot.armour + worse, NO_ROLL)
    rerolls = slot.reinforced_armour and hit.kind == ORDINARY and not hit.lance
    if not main:
        targets = []
    elif slot.holofield:
        targets = [(min(3 + worse, NO_ROLL), "TP-SR Eldar Technology", "holofield save")]
    elif slot.knight_shield and not hit.supporting:
        targets = [(4, "TP-SR Knight Technology", "knight-shield save")]
    elif hit.kind == ORDINARY:
        cover = NO_ROLL if hit.ignore_cover else min(slot.cover + worse, NO_ROLL)
        targets = [(min(armour, cover), "TP 1.9.6", "save")]
    elif hit.kind == MACRO_WEAPON and slot.reinforced_armour:
        targets = [(armour, "TP 1.9.6", "save")]
        rerolls = False
    else:
        targets = []
    if targets and rerolls:
        targets.append((armour, "TP 2.1.11", "re-roll on armour (reinforced armour)"))
    targets = [t for t in targets if t[0] < NO_ROLL]
    for target, clause, what in targets:
        roll = roll_d6(rng)
        if log is not None:
            note(log, clause, f"  {what} {target}+ vs {hit.kind}{' sniper' if hit.sniper else ''} hit: "
                               f"{roll} → {'saved' if roll >= target else 'failed'}")
        if roll >= target:
            return True
    if not targets and main:
        note(log, "TP 2.2.6", f"  no armour save vs {hit.kind}{' sniper' if hit.sniper else ''} hit")
    if slot.invulnerable_on < NO_ROLL:
        target = slot.invulnerable_on
        roll = roll_d6(rng)
        clause = {6: "TP 2.1.6", 5: "TP-SR Tau Technology", 4: "TP-SR Necron Technology"}[target]
        note(log, clause, f"  invulnerable save {target}+: {roll} → {'saved' if roll >= target else 'failed'}")
        return roll >= target
    return False


def automaton_saves(trial: Trial, victim: Unit) -> bool:
    """An Automaton may save a broken formation's no-save hit with its own save, no invulnerable save
    (TP-SR Automaton; epic-shooting §3.11): whether ``victim`` is one and saves it."""
    if not victim.slot.automaton or not save_throw(trial.rng, replace(victim.slot, invulnerable_on=NO_ROLL),
                                                   Hit(ORDINARY, False), trial.log):
        return False
    trial.say("TP-SR Automaton", f"  {victim.label} saves it (an Automaton may)")
    return True
