"""The end phase (mirrors ``kernels/epic/end_phase.py``; TP 1.13.2, 1.14.1, 2.1 Re-rolls, 2.1.8, 2.1.15, TP-SR
TSKNF / Mob Rule; spec §7, §9.9, §10.7): the Supreme Commander re-rolls of each army, a formation broken by
end-phase damage, the rally test and what follows it.  The war engines' end-phase effects (fires, reactor
breaches, regeneration, void shields, Necrons, shadowfields): ``analysis/epic/war_engines.py``.
"""
from __future__ import annotations

import random
from typing import Callable

from ..compile import ATTACKER, DEFENDER
from ..war_engines import end_phase_effects, shadowfields_return
from .breaks import fails_break_test, withdraw
from .dice import roll_d6
from .state import Formation, Log, Trial, note


def count_supreme_commander_rerolls(trial: Trial) -> None:
    """One re-roll per living Supreme Commander of the side's army, all formations (TP 2.1.15)."""
    on = trial.rules.supreme_commander_rerolls
    trial.sc_rerolls = [sum(u.alive and u.slot.supreme_commander for u in trial.side_units[side])
                        if on else 0 for side in (ATTACKER, DEFENDER)]


def break_in_end_phase(trial: Trial, formation: Formation) -> None:
    """End-phase damage placed BMs on it: the break test; broken, its BMs are removed and it withdraws as after a
    failed rally (TP 1.13.2; §10.7)."""
    if not fails_break_test(formation):
        return
    formation.broken = True
    formation.blast_markers = 0
    trial.say("TP 1.13.2", f"{formation.name} breaks from end-phase damage: BMs removed, it withdraws")
    withdraw(trial, formation, speed_zero_die=False)


def rally_modifier(formation: Formation) -> list[tuple[int, str]]:
    """−2 broken, −1 enemy within 30 cm, Mob Rule +1 (> 5 units) / +2 (> 10) (TP 1.14.1, TP-SR Mob Rule)."""
    parts = []
    if formation.broken:
        parts.append((-2, "broken"))
    if formation.enemy_within_30cm:
        parts.append((-1, "enemy within 30 cm"))
    if formation.mob_rule:
        living = len(formation.living)
        if living > 10:
            parts.append((2, f"Mob Rule, {living} units"))
        elif living > 5:
            parts.append((1, f"Mob Rule, {living} units"))
    return parts


def rally_test(rng: random.Random, initiative: int, modifier: int, reroll: bool = False,
               natural_one_fails: bool = False, log: Log = None) -> bool:
    """D6 + modifier ≥ initiative; a natural 1 passes unless the switch says otherwise; with
    ``reroll`` (a Supreme Commander's) a failed test is repeated once, and only once: no die is
    re-rolled twice (TP 1.14.1, 2.1 Re-rolls, 2.1.15; §9.9)."""
    for attempt in range(1 + bool(reroll)):
        roll = roll_d6(rng)
        passed = roll + modifier >= initiative and not (natural_one_fails and roll == 1)
        if log is not None:
            what = "Supreme Commander re-roll" if attempt else "rally"
            note(log, "TP 2.1.15" if attempt else "TP 1.14.1",
                  f"  {what}: {roll} {modifier:+d} = {roll + modifier} vs {initiative}+ → "
                  f"{'pass' if passed else 'fail'}"
                  f"{' (natural 1 fails: switch)' if natural_one_fails and roll == 1 else ''}")
        if passed:
            return True
    return False


def rally(trial: Trial, formation: Formation) -> bool:
    """The end-phase rally of one formation, with what follows a pass or a fail; a failed test
    spends one of its army's Supreme Commander re-rolls if any is left (TP 1.14.1, 2.1 Re-rolls,
    2.1.8, 2.1.15, TP-SR TSKNF / Mob Rule; §5; spec §7).  Returns True on a pass."""
    rules = trial.rules
    parts = rally_modifier(formation)
    living = formation.living
    leaders = sum(u.slot.leader for u in living) if rules.leaders else 0
    state = "broken" if formation.broken else f"{formation.blast_markers} BMs"
    trial.say("TP 1.14.1", f"{formation.name} rallies ({state}): "
                           f"D6 {''.join(f'{v:+d} {why} ' for v, why in parts)}≥ {formation.initiative}")
    formation.rally_tested = True
    modifier = sum(v for v, _ in parts)
    passed = rally_test(trial.rng, formation.initiative, modifier, False, rules.rally_natural_one_fails, trial.log)
    if not passed and trial.sc_rerolls[formation.side] > 0:
        trial.sc_rerolls[formation.side] -= 1
        trial.say("TP 2.1.15", f"  a Supreme Commander re-roll of the army is spent "
                               f"({trial.sc_rerolls[formation.side]} left this turn)")
        passed = rally_test(trial.rng, formation.initiative, modifier, False, rules.rally_natural_one_fails,
                            trial.log)
    formation.rally_passed = passed
    per_leader = 2 if formation.tsknf else 1
    if passed and formation.broken:
        n = formation.size  # a war engine counts its starting DC (TP 3.0)
        kept = n if formation.tsknf else n // 2
        formation.broken = False
        formation.blast_markers = max(kept - per_leader * leaders, 0)
        trial.say("TP 1.14.1", f"{formation.name} rallies from broken: {n} units → {kept} BMs"
                               f"{f' − {per_leader * leaders} (Leaders)' if leaders else ''}"
                               f" = {formation.blast_markers}")
    elif passed:
        before = formation.blast_markers
        formation.blast_markers = max(before - (before + 1) // 2 - per_leader * leaders, 0)
        trial.say("TP 1.14.1", f"{formation.name} removes half its BMs rounded up"
                               f"{f' and {per_leader * leaders} for Leaders' if leaders else ''}: "
                               f"{before} → {formation.blast_markers}")
    elif formation.broken:
        trial.say("TP 1.14.1", f"{formation.name} fails while broken: withdraws again")
        withdraw(trial, formation, speed_zero_die=False)
    else:
        trial.say("TP 1.14.1", f"{formation.name} fails: keeps its {formation.blast_markers} BMs")
    return passed


def end_phase(trial: Trial, after_rally: Callable[[], None] | None = None) -> None:
    """End-phase effects of war engines (§10.7), then every formation with a living unit and BMs or
    broken takes the rally test (TP 1.14.1; spec §7), then ``after_rally`` (a turn's withdrawal fire,
    docs/epic-turn.md §2a), then shadowfields come back (§10.2)."""
    trial.in_end_phase = True
    if any((u.alive and (u.fires or u.breaches or u.slot.regeneration or u.slot.void_shields))
           or (u.slot.necron and not u.alive) for u in trial.units):
        trial.say("TP-FAQ End Phase", "--- end phase: critical-hit and end-of-turn effects ---")
        end_phase_effects(trial)
    trial.say("TP 1.14.1", "--- end phase: rally ---")
    count_supreme_commander_rerolls(trial)
    for formation in trial.formations:
        if formation.living and (formation.blast_markers > 0 or formation.broken):
            rally(trial, formation)
    if after_rally is not None:
        after_rally()
    shadowfields_return(trial)
