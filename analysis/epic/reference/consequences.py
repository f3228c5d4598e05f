"""The consequences of a decided assault (mirrors ``kernels/epic/consequences.py``; TP 1.12.7–1.12.9, 1.13,
TP-SR TSKNF; spec §6, §9.10): the loser's extra hits (no saves, front to back), its assault formations breaking
and withdrawing (broken at the start: destroyed), its other formations' BM and break test (broken: a no-save
hit), the winner's BMs and break test, the state after the assault.
"""
from __future__ import annotations

from ..compile import ENGAGED, NEARBY, SUPPORT
from ..war_engines import damage_hull
from .breaks import break_formation, fails_break_test
from .saves import automaton_saves
from .state import SIDES, Decision, Formation, Trial


def extra_hits(trial: Trial, side: int, margin: int) -> None:
    """The loser takes hits = the margin, no saves, Fearless immune, front to back, a war engine a
    block of up to its starting DC of which hits beyond its remaining DC are lost; TSKNF halves them
    when every losing assault formation is TSKNF (TP 1.12.7, 2.1.3, 3.3.3, TP-SR TSKNF; spec §6.1)."""
    formations = trial.assault_formations(side)
    hits = margin
    if all(f.tsknf for f in formations):
        hits = margin // 2
        trial.say("TP-SR TSKNF", f"extra hits halved, rounded down: {margin} → {hits}")
    trial.say("TP 1.12.7", f"{SIDES[side]} takes {hits} extra hit(s), no saves, Fearless units immune")
    for unit in trial.assault_units(side):
        if hits == 0:
            return
        if unit.slot.fearless or not unit.alive:  # (a critical splash may have killed it meanwhile)
            continue
        block = min(hits, unit.slot.damage_capacity)  # a WE takes up to its starting DC; the excess is lost
        hits -= block
        taken = min(block, unit.damage_left)
        trial.say("TP 1.12.7", f"  {unit.label}: {block} extra hit(s)"
                               f"{f', {block - taken} beyond its remaining DC lost' if block > taken else ''}")
        damage_hull(trial, unit, taken, "TP 1.12.7", 1 - side)
    if hits:
        trial.say("TP 1.12.7", f"  {hits} extra hit(s) lost: no eligible unit left")


def loser_breaks(trial: Trial, formation: Formation) -> None:
    """A losing assault formation broken at the start is destroyed (Fearless excepted); otherwise
    it breaks and withdraws (TP 1.12.8, 1.13.2, 1.13.3, 2.1.3; spec §6.2)."""
    if formation.broken_at_start:
        trial.say("TP 1.12.8", f"{formation.name} was broken when assaulted: destroyed (Fearless excepted)")
        for unit in formation.living:
            if not unit.slot.fearless:
                unit.alive = False
        return
    break_formation(trial, formation, "TP 1.12.8", withdraws=True)


def nearby_loser(trial: Trial, formation: Formation) -> None:
    """A losing-side support or nearby formation gets +1 BM; broken, it takes a no-save hit
    instead (TSKNF: ignored), front to back, Fearless immune (TP 1.12.8, 1.13.4, TP-SR TSKNF; spec §6.3)."""
    if formation.broken:
        if formation.tsknf:
            trial.say("TP-SR TSKNF", f"{formation.name} is broken: the BM would be a hit, TSKNF needs 2: ignored")
            return
        victim = next((u for u in formation.living if not u.slot.fearless), None)
        if victim is None:
            trial.say("TP 1.13.4", f"{formation.name} is broken: no unit can take the no-save hit")
            return
        trial.say("TP 1.13.4", f"{formation.name} is broken: the BM becomes a no-save hit on {victim.label}")
        if automaton_saves(trial, victim):
            return
        damage_hull(trial, victim, 1, "TP 1.13.4", None)
        return
    formation.blast_markers += 1
    role = "support" if formation.role == SUPPORT else "nearby"
    trial.say("TP 1.12.8", f"{formation.name} (losing side, {role}): +1 BM → {formation.blast_markers}")
    if fails_break_test(formation):
        break_formation(trial, formation, "TP 1.13.2", withdraws=True)


def winner_blast_markers(trial: Trial, formation: Formation) -> None:
    """A winning assault formation not broken at the start takes BMs = its losses (Expendable
    losses excluded unless all its units are Expendable; a disrupt hit: 1 BM for the hit instead of
    its damage), then the break test, no withdrawal (TP 1.12.9, 1.13.4, 2.1.22, 2.2.2; spec §6.4, §10.6)."""
    if formation.broken_at_start:
        trial.say("TP 1.12.9", f"{formation.name} was broken at the start: no BMs for its losses")
        return
    all_expendable = all(u.slot.expendable for u in formation.units)
    gained = formation.loss_markers + (formation.expendable_loss_markers if all_expendable else 0)
    formation.blast_markers += gained
    trial.say("TP 1.12.9", f"{formation.name} (winner) takes {gained} BM(s) for its losses → "
                           f"{formation.blast_markers} BMs, size {formation.size}")
    if fails_break_test(formation):
        break_formation(trial, formation, "TP 1.12.9", withdraws=False)


def consequences(trial: Trial, decision: Decision) -> None:
    """Extra hits, the loser breaks, nearby losers, the winner's BMs, in that order
    (TP 1.12.7–1.12.9, 1.13; §9.10; spec §6)."""
    if decision.winner not in SIDES:
        trial.say("§9.7", "no winner: no consequences beyond the casualties")
        return
    winner = SIDES.index(decision.winner)
    loser = 1 - winner
    if decision.margin is not None:
        extra_hits(trial, loser, abs(decision.margin))
    for formation in trial.formations:
        if formation.side == loser and formation.role == ENGAGED:
            loser_breaks(trial, formation)
    for formation in trial.formations:
        if formation.side == loser and formation.role in (SUPPORT, NEARBY):  # not a formation outside the assault
            nearby_loser(trial, formation)
    for formation in trial.formations:
        if formation.side == winner and formation.role == ENGAGED:
            winner_blast_markers(trial, formation)


def assault_snapshot(trial: Trial) -> list[tuple[bool, int, int, int, int]]:
    """Per formation once the assault is over: (broken and alive, BMs, casualties, war-engine damage
    taken, shields and fields up)."""
    snapshot = []
    for f, slot in zip(trial.formations, trial.compiled.formations):
        wes = [trial.units[i] for i in slot.war_engines]
        snapshot.append((bool(f.living) and f.broken, f.blast_markers if f.living else 0,
                         sum(not u.alive for u in f.units), sum(u.damage_taken for u in wes),
                         sum(u.shields_up for u in wes)))
    return snapshot
