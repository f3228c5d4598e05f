"""One trial from start to end (mirrors ``kernels/epic/block.py``: the trials' starting state, the round loop, the
driver): a fresh trial's state (power-field dice included), the rounds of the assault until a side wins, and
:func:`run_trial`, the assault, its consequences and the end phase (spec §0–§7).
"""
from __future__ import annotations

import random
from functools import partial

from ..compile import CompiledEpic
from ..outcome import TrialOutcome
from .assault import attack_step, early_end, supporting_fire, wiped_out_after_support
from .consequences import assault_snapshot, consequences
from .damage import count_damage, splash_hit
from .end_phase import break_in_end_phase, count_supreme_commander_rerolls, end_phase
from .record import trial_outcome
from .result import result_roll
from .state import SIDES, STATE_NAMES, Decision, Formation, Log, Trial, Unit


def new_trial(compiled: CompiledEpic, rng: random.Random, log: Log = None) -> Trial:
    """Copy the compiled scenario into fresh per-trial state (spec §0)."""
    units, seen = [], {}
    for slot in compiled.units:
        formation = compiled.formations[slot.formation]
        seen[(slot.formation, slot.name)] = number = seen.get((slot.formation, slot.name), 0) + 1
        units.append(Unit(slot, f"{formation.name}: {slot.name} {number}", slot.damage_capacity,
                          void_shields=slot.void_shields, shadowfields=slot.shadowfields))
    formations = [Formation(
        index=f.index, name=f.name, side=f.side, role=f.role, initiative=f.initiative, tsknf=f.tsknf,
        mob_rule=f.mob_rule, trapped=f.trapped, withdrawal_enemies=f.withdrawal_enemies,
        enemy_within_30cm=f.enemy_within_30cm, within_splash_of=f.within_splash_of,
        units=[units[i] for i in f.units], blast_markers=0 if f.broken else f.blast_markers,
        broken=f.broken, broken_at_start=f.broken,
    ) for f in compiled.formations]
    trial = Trial(rng=rng, log=log, rules=compiled.rules, units=units, formations=formations, compiled=compiled)
    trial.count_damage, trial.splash_hit = partial(count_damage, trial), partial(splash_hit, trial)
    trial.break_in_end_phase = partial(break_in_end_phase, trial)
    count_supreme_commander_rerolls(trial)
    for unit in units:  # power-field dice, once per trial (TP-SR Power Fields; §10.8.5)
        if unit.slot.power_fields:
            unit.power_fields = sum(d.roll(rng) for d in unit.slot.power_fields)
            trial.say("TP-SR Power Fields", f"{unit.label}: power fields "
                                            f"{' + '.join(map(str, unit.slot.power_fields))} → {unit.power_fields}")
    return trial


def fight(trial: Trial) -> Decision:
    """Rounds until a side wins or ``max_rounds`` ties (TP 1.12.5–1.12.7; §9.4; spec §1–§5)."""
    max_rounds = trial.rules.max_rounds
    for rounds in range(1, max_rounds + 1):
        trial.say("TP 1.12.5", f"--- round {rounds} ---")
        attack_step(trial, first_strike=True)
        attack_step(trial, first_strike=False)
        decision = early_end(trial, rounds)
        if decision is None:
            supporting_fire(trial)
            decision = wiped_out_after_support(trial, rounds)
        if decision is not None:
            return decision
        margin = result_roll(trial)
        if margin:
            winner = "attacker" if margin > 0 else "defender"
            trial.say("TP 1.12.7", f"{winner} wins by {abs(margin)}")
            return Decision(winner, margin, rounds, False)
        trial.say("TP 1.12.7", "tie: another round, kills carried over")
    trial.say("§9.4", f"still tied after {max_rounds} rounds: unresolved, no consequences")
    return Decision("unresolved", None, max_rounds, False)


def _describe(trial: Trial) -> None:
    """The trace's setup lines: each formation's side, role, BMs, initiative and units."""
    for f in trial.formations:
        role = ("engaged", "support", "nearby")[f.role]
        units = ", ".join(f"{u.label.split(': ', 1)[1]} ({STATE_NAMES[u.slot.engaged]})" for u in f.units)
        trial.say("setup", f"{f.name}: {SIDES[f.side]}, {role}, "
                           f"{'broken' if f.broken else f'{f.blast_markers} BMs'}, initiative {f.initiative}+"
                           f"{', TSKNF' if f.tsknf else ''}{', Mob Rule' if f.mob_rule else ''}: {units}")


def run_trial(compiled: CompiledEpic, rng: random.Random, log: Log = None) -> TrialOutcome:
    """One assault from the first attacks to the end-phase rally (TP 1.12, 1.13, 1.14.1; spec §0–§7)."""
    trial = new_trial(compiled, rng, log)
    if log is not None:
        _describe(trial)
    decision = fight(trial)
    trial.fighting = False
    consequences(trial, decision)
    after_assault = assault_snapshot(trial)
    if compiled.scenario.end_phase.rally:
        end_phase(trial)
    return trial_outcome(trial, decision, after_assault)
