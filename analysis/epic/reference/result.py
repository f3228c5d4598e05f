"""The result roll (mirrors ``kernels/epic/result.py``; TP 1.12.7, 1.12.10, 2.1.5, TP-SR TSKNF; spec §5, §9.1):
each side's modifiers (kills, more units, no BMs, fewer BMs, Inspiring), the highest of 2D6 (or the sum: switch),
the margin.
"""
from __future__ import annotations

import random

from ..compile import ATTACKER, DEFENDER, OUT
from .dice import roll_d6
from .state import SIDES, Trial


def assault_size(trial: Trial, side: int) -> int:
    """Living units of the side's assault formations, a WE counting its starting DC (TP 1.12.7, 3.3.3)."""
    return sum(u.slot.damage_capacity for u in trial.assault_units(side))


def blast_marker_counts(trial: Trial, side: int) -> tuple[int, int]:
    """(raw, counted) BMs of the side's assault formations with a living unit: a broken formation
    counts its size; the counted value halves TSKNF formations' BMs, rounded down (TP 1.12.7, 1.12.10,
    1.13.4, TP-SR TSKNF)."""
    raw = counted = 0
    for f in trial.assault_formations(side):
        if not f.living:  # a formation with no living unit holds no BMs (TP 1.12.7 "held now", 1.12.10)
            continue
        if f.broken:
            raw += f.size
            counted += f.size
        else:
            raw += f.blast_markers
            counted += f.blast_markers // 2 if f.tsknf else f.blast_markers
    return raw, counted


def result_modifiers(trial: Trial, side: int) -> list[tuple[int, str]]:
    """The side's result modifiers as (value, reason) (TP 1.12.7, 2.1.5, TP-SR TSKNF; spec §5)."""
    enemy = 1 - side
    parts = []
    if trial.kills[side]:
        parts.append((trial.kills[side], "kills"))
    mine, theirs = assault_size(trial, side), assault_size(trial, enemy)
    if mine > theirs:
        parts.append((1, f"more units ({mine} v {theirs})"))
    if mine > 2 * theirs:
        parts.append((1, "more than twice the units"))
    raw, counted = blast_marker_counts(trial, side)
    enemy_counted = blast_marker_counts(trial, enemy)[1]
    if raw == 0:
        parts.append((1, "no BMs"))
    if enemy_counted > counted:
        parts.append((1, f"enemy has more BMs ({enemy_counted} v {counted})"))
    engaged_only = trial.rules.inspiring == "engaged_only"
    inspiring = sum(u.slot.inspiring and (u.slot.engaged != OUT or not engaged_only)
                    for u in trial.assault_units(side))
    if inspiring:
        parts.append((inspiring, "Inspiring"))
    return parts


def result_score(rng: random.Random, modifier: int, result_dice: str = "highest") -> tuple[tuple[int, int], int]:
    """2D6, keep the highest (switch "sum": add them), plus the modifier (TP 1.12.7; §9.1)."""
    dice = (roll_d6(rng), roll_d6(rng))
    return dice, (max(dice) if result_dice == "highest" else sum(dice)) + modifier


def result_roll(trial: Trial) -> int:
    """Both sides roll; returns the margin, attacker score − defender score (TP 1.12.7; spec §5)."""
    scores = []
    for side in (ATTACKER, DEFENDER):
        parts = result_modifiers(trial, side)
        dice, score = result_score(trial.rng, sum(v for v, _ in parts), trial.rules.result_dice)
        scores.append(score)
        if trial.log is not None:
            kept = f"highest of {dice} = {max(dice)}" if trial.rules.result_dice == "highest" \
                else f"sum of {dice} = {sum(dice)}"
            trial.say("TP 1.12.7", f"{SIDES[side]} result: {kept}"
                                   + "".join(f" + {v} {why}" for v, why in parts) + f" = {score}")
    return scores[0] - scores[1]
