"""Break tests and withdrawal (mirrors ``kernels/epic/breaks.py``; TP 1.12.8, 1.13.2, 1.13.3, 2.1.3, 3.2.4, TP-SR
TSKNF; spec §6.2, §9.5): whether a formation fails its break test, what a withdrawal costs it (trapped units,
speed-0 units, war-engine damage), a formation breaking.
"""
from __future__ import annotations

from ..compile import OUT
from ..war_engines import damage_hull
from .state import Formation, Trial


def fails_break_test(formation: Formation) -> bool:
    """BMs ≥ size, TSKNF: BMs ≥ 2 × size (TP 1.13.2, TP-SR TSKNF)."""
    return formation.blast_markers >= (2 if formation.tsknf else 1) * formation.size


def withdraw(trial: Trial, formation: Formation, speed_zero_die: bool) -> None:
    """Withdrawal deaths without a map: speed-0 bc/ff units die (first withdrawal only); a war engine
    takes 1 damage, no save, per enemy unit within 15 cm (``withdrawal_enemies``); each other living
    non-Fearless unit is trapped with probability ``trapped`` (TP 1.13.3, 2.1.3, 3.2.4; §9.5; spec §6.2)."""
    for unit in formation.living:
        if unit.slot.fearless or not unit.alive:  # (a critical splash may have killed it meanwhile)
            continue
        if speed_zero_die and unit.slot.speed_zero and unit.slot.engaged != OUT:
            unit.alive = False
            trial.say("TP 1.13.3", f"  {unit.label}: speed 0, cannot withdraw → destroyed")
        elif unit.slot.type == "WE":
            trial.say("TP 3.2.4", f"  {unit.label}: {formation.withdrawal_enemies} enemy unit(s) within 15 cm")
            damage_hull(trial, unit, min(formation.withdrawal_enemies, unit.damage_left), "TP 3.2.4", None)
        elif formation.trapped > 0:
            draw = trial.rng.random()
            trapped = draw < formation.trapped
            if trapped:
                unit.alive = False
            trial.say("§9.5", f"  {unit.label}: trapped draw {draw:.3f} vs {formation.trapped} → "
                              f"{'destroyed' if trapped else 'escapes'}")
    trial.withdrawn.append(formation.name)  # its withdrawal deaths are over (overwatch fire at it: turn.py)


def break_formation(trial: Trial, formation: Formation, clause: str, withdraws: bool) -> None:
    """Mark broken and remove its BMs (TP 1.13.2); withdraw unless it won (TP 1.12.9, 1.13.3)."""
    formation.broken = True
    formation.blast_markers = 0
    trial.say(clause, f"{formation.name} breaks: BMs removed" + (", it withdraws" if withdraws else ", no withdrawal"))
    if withdraws:
        withdraw(trial, formation, speed_zero_die=True)
