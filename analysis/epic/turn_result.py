"""A turn scenario compiled for the reference engine, its count slots, and its result (docs/epic-turn.md §4).

The assault part of the counts is the assault engine's (:func:`wargame_odds.analysis.epic.outcome.record`); on top
come ``no_assault`` and, per activation, its action test and its shooting: hits, kills, blast markers
placed, the target broken and the target's blast markers once the attack is resolved; per ``withdrawal_fire``
entry (of an activation, or of ``[end_phase]``), whether it fired and, over the trials in which it fired, the
hits and kills of its attack (the slots are listed in docs/epic-turn.md §7).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..intake.errors import UserError
from ..output.estimates import Distribution, Probability
from ..run.runner import RunInfo, block_rng
from .compile import ENGAGED, OUTSIDE, CompiledEpic, compile_scenario
from .outcome import ROLE_NAMES, EpicResult, _Label, build_result, precision_successes, record

if TYPE_CHECKING:
    from .turn import TurnTrialOutcome


@dataclass
class CompiledTurn:
    compiled: CompiledEpic
    weapons: list[tuple]  # weapon lines by unit index

    @property
    def scenario(self):
        return self.compiled.scenario

    @property
    def has_engage(self) -> bool:
        return any(a.action == "engage" for a in self.scenario.turn)


def _most_hits(shooter, target, weapons) -> int:
    """The most to-hit rolls that can succeed in one attack of ``shooter`` at ``target`` (compiled formations):
    every direct shot, and a barrage roll per unit, ⌈DC/2⌉ for a war engine (TP 3.2.1)."""
    from .shooting import dice_of

    return sum(w.count * dice_of(w.shots).maximum for i in shooter.units for w in weapons[i] if w.bp is None) \
        + target.size


def _add_withdrawal_fire_slots(lay, prefix: str, entries, slots: dict, weapons) -> None:
    """Per entry ``j``: ``{prefix}wf{j}.fired``, and the histograms of its attack's ``hits`` and ``kills`` over the
    trials in which it fired (docs/epic-turn.md §7)."""
    for j, entry in enumerate(entries):
        p = f"{prefix}wf{j}."
        lay.add(p + "fired")
        lay.add(p + "hits", _most_hits(slots[entry.formation], slots[entry.at], weapons) + 1)
        lay.add(p + "kills", len(slots[entry.at].units) + 1)


def compile_turn(scenario) -> CompiledTurn:
    """Compile the formations as for an assault and add the turn's count slots."""
    from .shooting import dice_of
    from .turn import unit_weapons  # the turn engine: not imported by assault runs, which only call refuse_turn

    compiled = compile_scenario(scenario)
    weapons = unit_weapons(compiled)
    lay = compiled.layout
    lay.add("no_assault")
    slots = {f.name: f for f in compiled.formations}
    for k, act in enumerate(scenario.turn):
        p = f"t{k}."
        lay.add(p + "acted")
        lay.add(p + "test_passed")
        if act.may_shoot:
            shooter, target = slots[act.formation], slots[act.target]
            hits = _most_hits(shooter, target, weapons)
            lay.add(p + "target_broken")
            lay.add(p + "hits", hits + 1)
            lay.add(p + "kills", len(target.units) + 1)
            # under fire, a kill or damage point each (crossfire: +1), disrupt hits, barrage extras
            lay.add(p + "blast_markers_placed", 1 + 2 * target.size + hits + 5)
            lay.add(p + "target_blast_markers_after", target.blast_markers + 2 * target.size + 2)
        if act.action == "ground_attack":
            gunners = [slots[name] for name in act.flak + act.disengagement_flak]
            lay.add(p + "flak_hits", 1 + sum(w.count * dice_of(w.shots).maximum for g in gunners for i in g.units
                                             for w in weapons[i] if w.aa is not None))
            lay.add(p + "aircraft_lost", len(slots[act.formation].units) + 1)
        _add_withdrawal_fire_slots(lay, p, act.withdrawal_fire, slots, weapons)
    _add_withdrawal_fire_slots(lay, "end.", scenario.end_phase.withdrawal_fire, slots, weapons)
    return CompiledTurn(compiled, weapons)


def assault_roles(ct) -> CompiledEpic:
    """The compiled scenario with the roles its assault gives (wargame_odds.analysis.epic.turn.Turn.assault): the
    charger and its target engaged, formations with an explicit role as it says, the others outside."""
    from dataclasses import replace

    c = ct.compiled
    engage = next((a for a in c.scenario.turn if a.action == "engage"), None)
    fighters = {engage.formation, engage.target} if engage else set()
    roles = {f.name: (ENGAGED if f.name in fighters else OUTSIDE if f.role is None else None)
             for f in c.scenario.formations}
    return replace(c, formations=[replace(f, role=f.role if roles[f.name] is None else roles[f.name])
                                  for f in c.formations])


def refuse_turn(compiled: CompiledEpic, job: str) -> None:
    """Assault-only jobs must never run a turn scenario as if it were an assault (wrong numbers)."""
    if compiled.scenario.turn:
        raise UserError(job, None, "a turn scenario ([[turn]]) runs through simulate or compare (its compiled "
                                   "turn: compile_turn); this assault job would ignore the turn",
                        "scenarios without [[turn]]")


def _bump(lay, counts, name, value):
    if not 0 <= value < lay.length(name):
        raise AssertionError(f"turn count {name}={value} beyond its bound {lay.length(name)}: a bug")
    counts[lay.offset(name) + value] += 1


def _record_withdrawal_fire(lay, counts, prefix: str, outcomes) -> None:
    for j, fire in enumerate(outcomes):
        if fire.fired:
            p = f"{prefix}wf{j}."
            counts[lay.offset(p + "fired")] += 1
            _bump(lay, counts, p + "hits", fire.attack.hits)
            _bump(lay, counts, p + "kills", fire.attack.kills)


def record_turn(c: CompiledTurn, outcome: TurnTrialOutcome, counts: np.ndarray) -> None:
    lay = c.compiled.layout
    record(c.compiled, outcome.assault, counts)
    if c.has_engage and not outcome.engaged:
        counts[lay.offset("no_assault")] += 1
    for k, (act, a) in enumerate(zip(c.scenario.turn, outcome.activations)):
        p = f"t{k}."
        counts[lay.offset(p + "acted")] += a.acted
        counts[lay.offset(p + "test_passed")] += a.test_passed
        if act.may_shoot:
            attack = a.attack
            counts[lay.offset(p + "target_broken")] += a.target_broken
            _bump(lay, counts, p + "hits", attack.hits if attack else 0)
            _bump(lay, counts, p + "kills", attack.kills if attack else 0)
            _bump(lay, counts, p + "blast_markers_placed", attack.blast_markers_placed if attack else 0)
            _bump(lay, counts, p + "target_blast_markers_after", a.target_blast_markers_after)
        if act.action == "ground_attack":
            _bump(lay, counts, p + "flak_hits", a.flak.hits if a.flak else 0)
            _bump(lay, counts, p + "aircraft_lost", a.flak.aircraft_lost if a.flak else 0)
        _record_withdrawal_fire(lay, counts, p, a.withdrawal_fire)
    _record_withdrawal_fire(lay, counts, "end.", outcome.end_phase_withdrawal_fire)


#: A formation's results "after the assault": a turn without an ``engage`` activation has no assault, so they are
#: left out of its result (what the formations hold after the end phase is all there is).
ASSAULT_KEYS = ("destroyed_after_assault", "broken_after_assault", "unbroken_after_assault", "casualties_assault_mean",
                "blast_markers_after_assault_mean", "blast_markers_after_assault", "damage_taken_assault",
                "damage_taken_assault_mean", "shields_after_assault", "shields_after_assault_mean")


class TurnResult(EpicResult):
    """An Epic turn result: ``sides`` (null without an engage activation), ``formations``, ``turn``."""

    def to_dict(self) -> dict:
        out = super().to_dict()
        if "sides" not in self.tree:
            out = {k: v for k, v in out.items() if k not in ("formations", "turn", "run", "notes")} | {
                "sides": None, **{k: out[k] for k in ("formations", "turn", "run", "notes")}}
        return out

    def headline(self, data: dict | None = None) -> list[str]:
        """The turn step by step, then its assault (``wargame_odds.analysis.output.headline.epic``), means with
        intervals (``data``: :meth:`to_dict`, when the caller has it already)."""
        from ..output.headline import sentences
        from ..output.result import _check_data

        _check_data(self, data)
        return sentences(self.to_dict() if data is None else data, self.rows())  # rows, not table(): no pandas


class TurnJob:
    """Runs turns on the reference engine through the shared runner (as ``ReferenceJob``).

    ``trial_streams``: trial ``t`` (global index) gets a generator of its own, keyed
    ``(key0, key1 ^ TRIAL_STREAM_KEY, t)`` as in ``ReferenceJob``, so that two scenarios run on the
    same trial streams stay in step trial by trial (common random numbers in ``compare``).
    """

    def __init__(self, c: CompiledTurn, trial_streams: bool = False):
        from .turn import run_turn_trial

        self.c = c
        self.trial_streams = bool(trial_streams)
        self._run = run_turn_trial

    def run_chunk(self, key0, key1, first_block, n_trials):
        from ...kernels.epic.layout import TRIAL_STREAM_KEY
        from ...kernels.rng import BLOCK_TRIALS


        counts = self.c.compiled.layout.zeros()
        if self.trial_streams:
            first = first_block * BLOCK_TRIALS
            for t in range(first, first + n_trials):
                rng = block_rng(key0, key1 ^ int(TRIAL_STREAM_KEY), t)
                record_turn(self.c, self._run(self.c.compiled, self.c.weapons, rng), counts)
            return counts
        for b in range(-(-n_trials // BLOCK_TRIALS)):
            rng = block_rng(key0, key1, first_block + b)
            for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
                record_turn(self.c, self._run(self.c.compiled, self.c.weapons, rng), counts)
        return counts

    def precision_successes(self, counts):
        base = precision_successes(self.c.compiled, counts)
        return np.append(base, self.c.compiled.layout.scalar(counts, "no_assault"))


def _withdrawal_fire_tree(lay, counts, prefix: str, entries, n: int) -> dict:
    """Per entry (keyed "1", "2", ...): its formation and ``at``, P(it fired), the mean hits and kills of its attack
    over all trials (0 when it did not fire) and over the trials in which it fired (docs/epic-turn.md §4)."""
    tree = {}
    for j, entry in enumerate(entries):
        p = f"{prefix}wf{j}."
        fired = lay.scalar(counts, p + "fired")
        node = {"formation": _Label(entry.formation), "at": _Label(entry.at), "fired": Probability(fired, n)}
        for name in ("hits", "kills"):
            when_fired = lay.get(counts, p + name)
            all_trials = when_fired.copy()
            all_trials[0] += n - fired  # a trial in which it did not fire counts 0
            node[f"{name}_mean"] = Distribution(all_trials).mean()
            node[f"{name}_mean_when_fired"] = Distribution(when_fired).mean()
        tree[f"{j + 1}"] = node
    return tree


def build_turn_result(c: CompiledTurn, counts: np.ndarray, info: RunInfo, engine: str = "reference",
                      reason: str | None = None) -> TurnResult:
    """The assault result plus ``no_assault`` and the ``turn`` section (docs/epic-turn.md §4)."""
    base = build_result(c.compiled, counts, info, engine=engine)
    lay, n = c.compiled.layout, info.trials
    tree = dict(base.tree)
    if c.has_engage:
        tree["sides"] = dict(tree["sides"], no_assault=Probability(lay.scalar(counts, "no_assault"), n))
    else:
        del tree["sides"]
    turn = {}
    for k, act in enumerate(c.scenario.turn):
        p = f"t{k}."
        entry = {"formation": _Label(act.formation), "action": _Label(act.action),
                 "acted": Probability(lay.scalar(counts, p + "acted"), n),
                 "action_test_passed": Probability(lay.scalar(counts, p + "test_passed"), n)}
        if act.target is not None:  # the formation it shoots at or charges
            entry["target"] = _Label(act.target)
        if act.may_shoot:
            for name in ("hits", "kills", "blast_markers_placed", "target_blast_markers_after"):
                entry[f"{name}_mean"] = Distribution(lay.get(counts, p + name)).mean()
            entry["target_broken"] = Probability(lay.scalar(counts, p + "target_broken"), n)
            entry["target_blast_markers_after"] = Distribution(lay.get(counts, p + "target_blast_markers_after"))
        if act.action == "ground_attack":  # what flak did to the aircraft, approach and disengagement
            entry["flak_hits_mean"] = Distribution(lay.get(counts, p + "flak_hits")).mean()
            entry["aircraft_lost_mean"] = Distribution(lay.get(counts, p + "aircraft_lost")).mean()
            entry["aircraft_lost"] = Distribution(lay.get(counts, p + "aircraft_lost"))
        if act.withdrawal_fire:
            entry["withdrawal_fire"] = _withdrawal_fire_tree(lay, counts, p, act.withdrawal_fire, n)
        turn[f"{k + 1}"] = entry
    tree["turn"] = turn
    if c.scenario.end_phase.withdrawal_fire:
        tree["end_phase"] = {"withdrawal_fire": _withdrawal_fire_tree(lay, counts, "end.",
                                                                      c.scenario.end_phase.withdrawal_fire, n)}
    roles = {f.name: ROLE_NAMES[f.role] for f in assault_roles(c).formations}
    tree["formations"] = {name: {k: v for k, v in f.items() if c.has_engage or k not in ASSAULT_KEYS}
                          | {"role": _Label(roles[name] if c.has_engage else "outside")}
                          for name, f in tree["formations"].items()}
    notes = list(base.notes) + ([] if engine == "kernel" else
                                ["turn: pure-Python reference engine" + (f": {reason}" if reason else "")])
    return TurnResult(system="epic", title=base.title, info=info, tree=tree, notes=notes, meta=base.meta)
