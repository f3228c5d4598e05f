"""What one trial produced, how it is counted, and how counts become a :class:`Result`.

The reference engine returns a :class:`TrialOutcome` per trial and :func:`record` adds it to the
count vector; the Numba kernel writes the same slots directly.  Both go through
:func:`build_result`, so the two engines are compared quantity by quantity.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..output.estimates import Distribution, Probability
from ..output.result import Result
from ..run.runner import RunInfo
from .compile import BC, FF, OUT, OUTSIDE, ROLE_CODE, CompiledEpic, war_engine_keys

Winner = Literal["attacker", "defender", "none", "unresolved"]
WINNER_SLOT = {"attacker": "attacker_wins", "defender": "defender_wins", "none": "no_winner",
               "unresolved": "unresolved"}


@dataclass
class FormationOutcome:
    """Each formation ends each point (after the assault, after the end phase) in exactly one of three
    states: destroyed (no living unit), broken (and alive), unbroken.  A destroyed one holds 0 BMs."""

    destroyed: bool  # no unit left at the end of the end phase
    broken_after_assault: bool  # broken with a living unit
    broken_after_end_phase: bool
    rally_tested: bool
    rally_passed: bool
    casualties: int  # units destroyed by the end of the end phase (a war engine counts once)
    casualties_assault: int  # units destroyed by the end of the assault
    blast_markers_after_assault: int  # markers held (a broken or destroyed formation holds none)
    blast_markers_after_end_phase: int
    # its war engines and shielded units (FormationSlot.war_engines; docs/epic-engine.md §10.9)
    critical: bool = False  # at least one critical hit rolled on them
    damage_taken_assault: int = 0  # DC lost by the end of the assault (destroyed: its starting DC)
    damage_taken: int = 0  # by the end of the end phase
    shields_after_assault: int = 0  # void shields, power fields and shadowfields up on the living ones
    shields_after_end_phase: int = 0


@dataclass
class TrialOutcome:
    winner: Winner | None  # None: no assault was fought (a turn whose engage did not lead to one)
    decided_without_roll: bool  # a side won by wipe-out or stall (TP 1.12.5): no result roll, no extra hits;
    # never for "none" (both wiped out) or "unresolved"
    rounds: int  # rounds fought (max_rounds when unresolved)
    margin: int | None  # attacker score - defender score of the deciding roll; None without a roll
    formations: list[FormationOutcome]


def record(c: CompiledEpic, outcome: TrialOutcome, counts: np.ndarray) -> None:
    """Add one trial to ``counts`` (the layout of ``c.layout``)."""
    lay = c.layout
    # None: a turn without an assault (counted by wargame_odds.analysis.epic.turn_result)
    if outcome.winner is not None:
        counts[lay.offset(WINNER_SLOT[outcome.winner])] += 1
        counts[lay.offset("decided_without_roll")] += outcome.decided_without_roll
        counts[lay.offset("rounds") + outcome.rounds - 1] += 1
        if outcome.margin is not None:
            counts[lay.offset("margin") + outcome.margin + c.max_margin] += 1
    for f, fo in zip(c.formations, outcome.formations):
        p = f"f{f.index}."
        for name in ("destroyed", "broken_after_assault", "broken_after_end_phase", "rally_tested",
                     "rally_passed"):
            counts[lay.offset(p + name)] += bool(getattr(fo, name))
        counts[lay.offset(p + "casualties") + fo.casualties] += 1
        counts[lay.offset(p + "casualties_assault") + fo.casualties_assault] += 1
        cap = f.max_blast_markers
        counts[lay.offset(p + "blast_markers_after_assault") + min(fo.blast_markers_after_assault, cap)] += 1
        counts[lay.offset(p + "blast_markers_after_end_phase") + min(fo.blast_markers_after_end_phase, cap)] += 1
        if f.war_engines:
            counts[lay.offset(p + "critical")] += fo.critical
            for name in ("damage_taken_assault", "damage_taken", "shields_after_assault", "shields_after_end_phase"):
                counts[lay.offset(p + name) + getattr(fo, name)] += 1


def precision_successes(c: CompiledEpic, counts: np.ndarray) -> np.ndarray:
    """The side-level probabilities that ``precision=`` pins down."""
    return np.array([c.layout.scalar(counts, WINNER_SLOT[w]) for w in WINNER_SLOT], dtype=np.int64)


def build_result(c: CompiledEpic, counts: np.ndarray, info: RunInfo, engine: str = "kernel") -> Result:
    lay = c.layout
    n = info.trials

    def prob(name):
        return Probability(lay.scalar(counts, name), n)

    sides = {
        "attacker_wins": prob("attacker_wins"),
        "defender_wins": prob("defender_wins"),
        "no_winner": prob("no_winner"),
        "unresolved": prob("unresolved"),
        "decided_without_roll": prob("decided_without_roll"),
        "rounds_mean": Distribution(lay.get(counts, "rounds"), offset=1).mean(),
        "rounds": Distribution(lay.get(counts, "rounds"), offset=1),
        "margin": Distribution(lay.get(counts, "margin"), offset=-c.max_margin),
    }
    sides["margin"] = _trim(sides["margin"])
    formations = {}
    war_engine_results = war_engine_keys(c) is not None
    for f in c.formations:
        p = f"f{f.index}."
        casualties = Distribution(lay.get(counts, p + "casualties"))
        destroyed_after_assault = int(lay.get(counts, p + "casualties_assault")[len(f.units)])
        destroyed = lay.scalar(counts, p + "destroyed")
        broken_a = lay.scalar(counts, p + "broken_after_assault")
        broken_e = lay.scalar(counts, p + "broken_after_end_phase")
        survivors = Distribution(lay.get(counts, p + "casualties")[::-1][:len(f.units) + 1])
        bm_assault = Distribution(lay.get(counts, p + "blast_markers_after_assault"))
        bm_end = Distribution(lay.get(counts, p + "blast_markers_after_end_phase"))
        formations[f.name] = {
            "side": _Label("attacker" if f.side == 0 else "defender"),
            "role": _Label(ROLE_NAMES[f.role]),  # engaged / support / nearby (a turn: or outside), for the headline
            # three states at each point, adding up to 1: destroyed / broken (alive) / unbroken
            "destroyed_after_assault": Probability(destroyed_after_assault, n),
            "broken_after_assault": prob(p + "broken_after_assault"),
            "unbroken_after_assault": Probability(n - destroyed_after_assault - broken_a, n),
            "destroyed": prob(p + "destroyed"),
            "broken_after_end_phase": prob(p + "broken_after_end_phase"),
            "unbroken_after_end_phase": Probability(n - destroyed - broken_e, n),
            "rally_tested": prob(p + "rally_tested"),
            "rally_passed": prob(p + "rally_passed"),
            "casualties_mean": casualties.mean(),
            "casualties_assault_mean": Distribution(lay.get(counts, p + "casualties_assault")).mean(),
            "surviving_units_mean": survivors.mean(),
            "blast_markers_after_assault_mean": bm_assault.mean(),
            "blast_markers_after_end_phase_mean": bm_end.mean(),
            "casualties": casualties,
            "surviving_units": survivors,
            "blast_markers_after_assault": bm_assault,
            "blast_markers_after_end_phase": bm_end,
        }
        if f.war_engines and war_engine_results:
            formations[f.name].update(_war_engine_results(lay, counts, p, n))
    notes = c.scenario.notes
    unresolved = lay.scalar(counts, "unresolved")
    if unresolved:
        notes.append(f"{unresolved} trial(s) still tied after {c.rules.max_rounds} rounds: counted as unresolved")
    if lay.scalar(counts, "no_winner"):
        notes.append("both sides were wiped out in some trials: no winner (reading §9.7 of docs/epic-engine.md)")
    if c.rules.result_dice == "sum":
        notes.append("result_dice = \"sum\": NOT the Tournament Pack rule (TP 1.12.7 keeps the highest die)")
    meta = {"engine": engine, "rules": c.rules.model_dump(), "engagement": _engagement(c)}
    if war_engine_results:  # what the damage and shields above are out of (the headline's "2.3 of 8")
        meta["war_engines"] = {f.name: {"damage_capacity": f.war_engine_damage_capacity, "shields": f.max_shields,
                                        "every_unit": len(f.war_engines) == len(f.units)}
                               for f in c.formations if f.war_engines}
    tree = {"sides": sides, "formations": formations}
    return EpicResult(system="epic", title=c.scenario.title, info=info, tree=tree, notes=notes, meta=meta)


def _engagement(c) -> dict:
    """Who the scenario puts where at the start (the assumptions a headline states, TP 1.12.3-1.12.6): per
    formation its units in base contact, within 15 cm (firefight), out of the fight, and its blast markers."""
    out = {}
    for f in c.formations:
        states = [c.units[u].engaged for u in f.units]
        out[f.name] = {"units": len(states), "base_contact": states.count(BC), "firefight": states.count(FF),
                       "out": states.count(OUT), "blast_markers": f.blast_markers, "broken": f.broken}
    return out


def _war_engine_results(lay, counts: np.ndarray, p: str, n: int) -> dict:
    """P(a critical), damage taken and shields left of a formation's war engines (docs/epic-engine.md §10.9)."""
    dists = {name: Distribution(lay.get(counts, p + name)) for name in
             ("damage_taken_assault", "damage_taken", "shields_after_assault", "shields_after_end_phase")}
    return {"critical": Probability(lay.scalar(counts, p + "critical"), n),
            **{f"{name}_mean": d.mean() for name, d in dists.items()}, **dists}


def _trim(d: Distribution) -> Distribution:
    """Drop the empty low end of a signed histogram."""
    nz = np.flatnonzero(d.counts)
    start = int(nz[0]) if nz.size else 0
    return Distribution(d.counts[start:], offset=d.offset + start, n=d.n)


ROLE_NAMES = {code: name for name, code in ROLE_CODE.items()} | {OUTSIDE: "outside"}


class _Label(str):
    """A plain string leaf (kept out of tables)."""

    def to_json(self):
        return str(self)


class EpicResult(Result):
    """Epic assault result: side-level outcomes and per-formation consequences."""

    def leaves(self):
        return [(p, v) for p, v in super().leaves() if not isinstance(v, _Label)]
