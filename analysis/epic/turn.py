"""One Epic turn in the reference engine: the activations in order, then the assault, then the end phase.

It implements ``docs/epic-turn.md`` §2: each activation takes its action test (a failure places a
blast marker, checks the break and leaves only a Hold), shoots (:func:`wargame_odds.analysis.epic.shooting.shoot`),
regroups (Marshal, Hold) or goes on overwatch; an ``engage`` activation draws the overwatch fire it
names, then starts the existing reference assault from the blast markers, losses and broken states
the turn produced; the end-phase rally closes the turn.  A formation that withdraws as a result of an
activation (or of the end-phase rally) draws the withdrawal fire its entries name (§2a: one shooting
attack of :func:`wargame_odds.analysis.epic.shooting.shoot` per firer on overwatch).  Aircraft ground attacks (with
their flak and disengagement), orbital bombardments and pin-point attacks are the steps of
:mod:`wargame_odds.analysis.epic.aircraft` (docs/epic-turn.md §9).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from .compile import ENGAGED, OUTSIDE, CompiledEpic
from .reference import (Decision, Formation, Log, Trial, assault_snapshot, break_formation, consequences, end_phase,
                        fails_break_test, fight, new_trial, regroup_roll, roll_d6, trial_outcome)
from .aircraft import (FlakReport, MOVING_ACTIONS, aircraft_action_test, barrage_lines, direct_lines, flak,
                       ground_attack_orders, may_jink, orbital_orders, pin_point_orders)
from .outcome import TrialOutcome
from .shooting import ACTION_TO_HIT, JINK_SAVE, AttackReport, FireOrders, shoot
from .turn_model import Activation, WithdrawalFire, flier


@dataclass
class WithdrawalFireOutcome:
    """What one ``withdrawal_fire`` entry did in one trial (docs/epic-turn.md §2a, §4)."""

    fired: bool = False  # its formation made the attack
    attack: AttackReport | None = None


@dataclass
class ActivationOutcome:
    """What one activation did in one trial (docs/epic-turn.md §4)."""

    acted: bool = False  # the formation was able to act (not broken, not destroyed)
    test_passed: bool = False
    attack: AttackReport | None = None  # its shooting attack, when it shot
    target_blast_markers_after: int = 0  # the target's BMs once the attack is resolved (0 broken or destroyed)
    target_broken: bool = False  # broken with a living unit after the attack
    flak: FlakReport | None = None  # a ground attack: what flak did to the aircraft (approach and disengagement)
    withdrawal_fire: list[WithdrawalFireOutcome] = field(default_factory=list)  # one per entry, in order


@dataclass
class TurnTrialOutcome:
    activations: list[ActivationOutcome]
    assault: TrialOutcome  # winner None: no assault this trial
    engaged: bool = False  # the engage activation led to an assault
    end_phase_withdrawal_fire: list[WithdrawalFireOutcome] = field(default_factory=list)  # [end_phase] entries


def unit_weapons(compiled: CompiledEpic) -> list[tuple]:
    """Each unit's weapon lines, its characters' included (TP 2.1.1), by unit index."""
    profiles = compiled.scenario.units
    return [tuple(w for name in slot.name.split(" + ") for w in profiles[name].weapons) for slot in compiled.units]


def action_test(trial: Trial, formation: Formation, act: Activation) -> bool:
    """D6 ≥ initiative, −1 with any BM, −1 when retaining the initiative; a 1 is not an automatic
    failure (TP 1.6.2, 1.6.3; TP-FAQ The Action Test)."""
    modifier = -(formation.blast_markers > 0) - int(act.retain)
    roll = roll_d6(trial.rng)
    passed = roll + modifier >= formation.initiative
    trial.say("TP 1.6.2", f"{formation.name} declares {act.action}: action test {roll} {modifier:+d} vs "
                          f"{formation.initiative}+ → {'pass' if passed else 'fail'}")
    return passed


def regroup(trial: Trial, formation: Formation) -> None:
    """Regroup points = the higher of 2D6 + 1 per Leader (Marines: 2) (TP 1.13.1, 2.1.8).  They remove
    BMs first; the points left repair void shields that are down, front war engine first (TP-SR
    Imperial Void Shields: a free split, shared among the formation's war engines; reading, the
    policy of docs/epic-turn.md §2: BMs first).  Power fields never come back (TP-SR Power Fields)."""
    leaders = sum(u.slot.leader for u in formation.living) if trial.rules.leaders else 0
    per_leader = 2 if formation.tsknf else 1
    down = [u for u in formation.living if u.void_shields < u.slot.void_shields]
    missing = sum(u.slot.void_shields - u.void_shields for u in down)
    points = regroup_roll(trial.rng, formation.blast_markers + missing, per_leader * leaders)
    removed = min(points, formation.blast_markers)
    formation.blast_markers -= removed
    trial.say("TP 1.13.1", f"{formation.name} regroups: {removed} BM(s) removed → {formation.blast_markers}")
    repairs = points - removed
    for unit in down:
        repaired = min(repairs, unit.slot.void_shields - unit.void_shields)
        if repaired:
            unit.void_shields += repaired
            repairs -= repaired
            trial.say("TP-SR Imperial Void Shields", f"{unit.label}: {repaired} void shield(s) repaired with the "
                                                     f"points left → {unit.void_shields}")


OVERWATCH_COVER_SAVE = 5  # infantry on overwatch in the open (TP 1.8.4)


def fire_orders(compiled: CompiledEpic, act: Activation | WithdrawalFire, modifier: int,
                target_on_overwatch: bool = False) -> FireOrders:
    """The activation's (or withdrawal fire's) map inputs; the cover save defaults to the target formation's
    ``cover``.

    A target formation of infantry only that is on overwatch counts as in cover with a 5+ cover save
    when the activation does not put it in cover already (TP 1.8.4; reading: only for all-infantry
    formations, since ``cover`` applies to the whole target)."""
    target = next(f for f in compiled.scenario.formations if f.name == act.target)
    cover, cover_save = act.cover, act.cover_save if act.cover_save is not None else target.cover
    if target_on_overwatch and not cover and all(compiled.scenario.units[g.unit].type == "INF" for g in target.units):
        cover, cover_save = True, OVERWATCH_COVER_SAVE
    return FireOrders(modifier=modifier, in_range=act.in_range, exposed=act.exposed, cover=cover,
                      cover_save=cover_save, crossfire=act.crossfire, ap_at=act.ap_at, declare_at=act.declare_at,
                      templates_cover=act.templates_cover)


class Turn:
    """Per-trial turn state around the reference engine's :class:`Trial`."""

    def __init__(self, compiled: CompiledEpic, weapons: list[tuple], rng: random.Random, log: Log = None):
        self.compiled = compiled
        self.trial = new_trial(compiled, rng, log)
        self.weapons = weapons
        self.by_name = {f.name: f for f in self.trial.formations}
        self.overwatch = {f.name for f in compiled.scenario.formations if f.overwatch}
        self.moved: set[str] = set()  # formations that moved this turn (their end-phase flak: −1, TP 4.2.4)
        self.marched: set[str] = set()  # formations that marched this turn: no flak (TP 4.2.4)

    def weapons_of(self, unit):
        return self.weapons[unit.slot.index]

    def attack(self, shooter: Formation, act: Activation, modifier: int, outcome: ActivationOutcome) -> None:
        target = self.by_name[act.target]
        on_overwatch = act.target in self.overwatch
        if on_overwatch:
            self.trial.say("TP 1.8.4", f"{act.target} is on overwatch: its infantry count as in cover (5+ cover save)")
        outcome.attack = shoot(self.trial, shooter, target, self.weapons_of,
                               fire_orders(self.compiled, act, modifier, on_overwatch))

    def hold(self, formation: Formation, act: Activation, outcome: ActivationOutcome) -> None:
        """A Hold: shoot (modifier 0, reading), move, or regroup (TP 1.6.1; reading, docs/epic-turn.md §2)."""
        trial = self.trial
        trial.say("TP 1.6.1", f"{formation.name} holds: {act.hold}")
        if act.hold == "shoot" and act.target is not None:
            self.attack(formation, act, ACTION_TO_HIT["hold"], outcome)
        elif act.hold == "regroup":
            regroup(trial, formation)

    def flak_from(self, names: list[str]) -> list[Formation]:
        """The named formations that may fire flak: not Marching this turn (TP 4.2.4; broken: see flak)."""
        gunners = []
        for name in names:
            if name in self.marched:
                self.trial.say("TP 4.2.4", f"{name} marched this turn: no flak")
            else:
                gunners.append(self.by_name[name])
        return gunners

    def ground_attack(self, formation: Formation, act: Activation, outcome: ActivationOutcome) -> None:
        """Approach flak, then the attack of the surviving aircraft unless they jinked (TP 4.2.2–4.2.4;
        TP-FAQ Aircraft: the sequence; interception, landing and overwatch at landing are not modelled)."""
        trial = self.trial
        outcome.flak = FlakReport()
        flak(trial, formation, [(g, 0) for g in self.flak_from(act.flak)], self.weapons_of, act.jink, outcome.flak)
        if act.jink:
            trial.say("TP 4.2.3", f"{formation.name} jinked: its attack is forfeited")
            return
        if not formation.living:
            trial.say("TP 4.2.4", f"{formation.name}: every aircraft was shot down before the attack")
            return
        orders = ground_attack_orders(fire_orders(self.compiled, act, 0))
        outcome.attack = shoot(trial, formation, self.by_name[act.target], self.weapons_of, orders)

    def space_attack(self, formation: Formation, act: Activation, outcome: ActivationOutcome) -> None:
        """An orbital bombardment (its barrage lines) or a pin-point attack (its direct lines) (TP 4.3.3, 4.3.4)."""
        on_overwatch = act.target in self.overwatch
        orders = fire_orders(self.compiled, act, 0, on_overwatch)
        if act.action == "orbital_bombardment":
            orders, weapons_of = orbital_orders(orders), barrage_lines(self.weapons_of)
        else:
            orders, weapons_of = pin_point_orders(orders, act.war_engine), direct_lines(self.weapons_of)
        outcome.attack = shoot(self.trial, formation, self.by_name[act.target], weapons_of, orders)

    def fly(self, formation: Formation, act: Activation, outcome: ActivationOutcome) -> None:
        """An aircraft or spacecraft activation (docs/epic-turn.md §9): spacecraft take no action test
        (reading); aircraft take theirs, a failure being a Stand Down."""
        if act.action == "ground_attack":
            outcome.test_passed = aircraft_action_test(self.trial, formation, act)
            if outcome.test_passed:
                self.ground_attack(formation, act, outcome)
            return
        outcome.test_passed = True
        self.trial.say("TP 4.3", f"{formation.name}: spacecraft take no action test (reading)")
        self.space_attack(formation, act, outcome)

    def disengage(self, act: Activation, outcome: ActivationOutcome) -> None:
        """End phase, step 1: the aircraft of a ground attack disengage through the flak of
        ``disengagement_flak``, at −1 from a formation that moved this turn; they jink when all may and
        4+ beats the front aircraft's armour (reading: the attack is made, jinking costs nothing)
        (TP 4.2.3, 4.2.4, 4.2.7; TP-FAQ The End Phase)."""
        formation = self.by_name[act.formation]
        if not outcome.test_passed or not formation.living or not act.disengagement_flak:
            return
        self.trial.say("TP-FAQ The End Phase", f"--- end phase: {formation.name} disengages ---")
        jink = may_jink(self.compiled.scenario, formation) and JINK_SAVE < formation.living[0].slot.armour
        gunners = [(g, -int(g.name in self.moved)) for g in self.flak_from(act.disengagement_flak)]
        flak(self.trial, formation, gunners, self.weapons_of, jink, outcome.flak)

    def note_movement(self, act: Activation, outcome: ActivationOutcome) -> None:
        """Who moved (−1 to its end-phase flak) or marched (no flak) this turn (TP 1.6.1, 4.2.4; reading:
        Advance, Double, March, Engage, Marshal without a target and a Hold that moves are moves)."""
        if not outcome.acted or act.flies:
            return
        held = act.action == "hold" or not outcome.test_passed
        if (act.hold == "move") if held else (act.action in MOVING_ACTIONS
                                              or (act.action == "marshal" and act.target is None)):
            self.moved.add(act.formation)
        if not held and act.action == "march":
            self.marched.add(act.formation)

    def activate(self, act: Activation) -> tuple[ActivationOutcome, bool]:
        """One activation (TP 1.6, 1.13.3).  Returns its outcome and whether it led to an assault."""
        trial = self.trial
        formation = self.by_name[act.formation]
        outcome = ActivationOutcome()
        trial.say("TP 1.6", f"--- activation: {formation.name}, {act.action}"
                            f"{f' at {act.target}' if act.target else ''} ---")
        if formation.broken or not formation.living:
            trial.say("TP 1.13", f"{formation.name} is broken or destroyed: it does not act")
            return outcome, False
        outcome.acted = True
        if act.flies:
            self.fly(formation, act, outcome)
            return outcome, False
        self.overwatch.discard(formation.name)  # acting ends a standing overwatch (TP 1.10)
        if act.action == "hold":
            outcome.test_passed = True
            trial.say("TP 1.6.1", "declared Hold (reading: no action test)")
            self.hold(formation, act, outcome)
            return outcome, False
        outcome.test_passed = action_test(trial, formation, act)
        if not outcome.test_passed:
            formation.blast_markers += 1
            trial.say("TP 1.6.2", f"{formation.name}: +1 BM for the failed test → {formation.blast_markers}")
            if fails_break_test(formation):
                break_formation(trial, formation, "TP 1.13.3", withdraws=True)
                trial.say("TP 1.13.3", f"{formation.name} broke in its own action: the rest of it is lost")
                return outcome, False
            self.hold(formation, act, outcome)
            return outcome, False
        if act.action in ("advance", "double", "sustained_fire"):
            self.attack(formation, act, ACTION_TO_HIT[act.action], outcome)
        elif act.action == "marshal":
            if act.target is not None:
                self.attack(formation, act, ACTION_TO_HIT["marshal"], outcome)
            if not formation.broken:
                regroup(trial, formation)
        elif act.action == "overwatch":
            self.overwatch.add(formation.name)
            trial.say("TP 1.10", f"{formation.name} goes on overwatch")
        elif act.action == "march":
            trial.say("TP 1.6.1", f"{formation.name} marches: no fire")
        elif act.action == "engage":
            return outcome, self.charge(formation, act)
        return outcome, False

    def charge(self, formation: Formation, act: Activation) -> bool:
        """The charge move, overwatch fire at the charger, and whether the assault happens
        (TP 1.10, 1.12.2, 1.13.3; TP-FAQ Overwatch, Work Out Result)."""
        trial = self.trial
        trial.say("TP 1.12.2", f"{formation.name} charges {act.target}")
        for name in act.overwatch_fire:
            shooter = self.by_name[name]
            if name not in self.overwatch or shooter.broken or not shooter.living:
                trial.say("TP 1.10", f"{name} is not on overwatch (or broken): no overwatch fire")
                continue
            self.overwatch.discard(name)
            trial.say("TP 1.10", f"{name} fires on overwatch at {formation.name} (kills not counted in the assault)")
            shoot(trial, shooter, formation, self.weapons_of,
                  FireOrders(modifier=ACTION_TO_HIT["overwatch"]))
        if formation.broken or not formation.living:
            trial.say("TP 1.13.3", f"{formation.name} broke or died before contact: no assault")
            return False
        if not self.by_name[act.target].living:
            trial.say("TP 1.12.2", f"{act.target} has no unit left: no assault")
            return False
        return True

    def rally(self, end_phase) -> list[WithdrawalFireOutcome]:
        """The end phase, with the withdrawal fire of ``[end_phase]`` after the whole rally step at the formations
        that failed their rally while broken and withdrew again (docs/epic-turn.md §2a); aircraft and spacecraft
        never rally: their BMs wait for their next action test (TP 4.2.7), set aside while the rally runs."""
        fliers = [self.by_name[f.name] for f in self.compiled.scenario.formations
                  if flier(self.compiled.scenario, f) is not None]
        kept = [f.blast_markers for f in fliers]
        for formation in fliers:
            formation.blast_markers = 0
        mark, fired = len(self.trial.withdrawn), []
        entries = self.compiled.scenario.end_phase.withdrawal_fire

        def withdrawal_fire() -> None:
            if entries:
                self.trial.say("TP 1.13.3", "--- end phase: withdrawal fire ---")
                fired.extend(self.withdrawal_fire(entries, self.withdrawn_since(mark)))

        end_phase(self.trial, after_rally=withdrawal_fire)
        for formation, markers in zip(fliers, kept):
            formation.blast_markers = markers
        return fired

    def withdrawn_since(self, mark: int) -> set[str]:
        """The formations whose withdrawal ended since the trial had ``mark`` of them."""
        return set(self.trial.withdrawn[mark:])

    def withdrawal_fire(self, entries: list[WithdrawalFire], withdrew: set[str]) -> list[WithdrawalFireOutcome]:
        """Each entry in list order: when its ``at`` withdrew (``withdrew``) and still has a living unit, its
        ``formation``, if on overwatch, unbroken and alive, makes one shooting attack at it, modifier 0, and
        leaves overwatch; a firer none of whose units can fire makes no attack and stays on overwatch.  The
        withdrawing formation is broken: every BM the attack would place is a hit with no save (TP 1.10,
        1.13.3, 1.13.4; epic-shooting §3.10, §5 Against a withdrawal; docs/epic-turn.md §2a)."""
        trial, outcomes = self.trial, []
        for entry in entries:
            outcome = WithdrawalFireOutcome()
            outcomes.append(outcome)
            if entry.at not in withdrew:
                trial.say("TP 1.13.3", f"{entry.at} did not withdraw: {entry.formation} holds its withdrawal fire")
                continue
            target, shooter = self.by_name[entry.at], self.by_name[entry.formation]
            if not target.living:
                trial.say("TP 1.13.3", f"{entry.at} withdrew with no unit left: no fire from {entry.formation}")
                continue
            if entry.formation not in self.overwatch or shooter.broken or not shooter.living:
                trial.say("TP 1.10", f"{entry.formation} is not on overwatch (it fired or acted), broken or destroyed: "
                                     f"no fire at the withdrawing {entry.at}")
                continue
            trial.say("TP 1.13.3", f"{entry.at} withdraws: {entry.formation} fires on overwatch at it "
                                   "(epic-shooting §3.10; its BMs become no-save hits, TP 1.13.4)")
            outcome.attack = shoot(trial, shooter, target, self.weapons_of,
                                   fire_orders(self.compiled, entry, ACTION_TO_HIT["overwatch"]))
            outcome.fired = outcome.attack.fired
            if outcome.fired:
                self.overwatch.discard(entry.formation)
                trial.say("TP 1.10", f"{entry.formation} has fired: it leaves overwatch")
        return outcomes

    def assault(self, act: Activation) -> Decision:
        """The existing reference assault, from the state the turn produced: the charger, its target
        and formations with an explicit role fight; broken formations count as broken at the start;
        shooting losses do not count in the result (TP 1.12, TP-FAQ Work Out Result)."""
        trial = self.trial
        fighters = {act.formation, act.target} | {f.name for f in self.compiled.scenario.formations
                                                  if f.role is not None}
        for formation in trial.formations:
            if formation.name in (act.formation, act.target):
                formation.role = ENGAGED
            elif formation.name not in fighters:
                formation.role = OUTSIDE
            formation.broken_at_start = formation.broken
            formation.losses = formation.loss_markers = formation.expendable_loss_markers = 0
        trial.kills = [0, 0]
        fighting = ", ".join(f.name for f in trial.formations if f.role != OUTSIDE)
        trial.say("TP 1.12", "--- assault: " + fighting + " ---")
        decision = fight(trial)
        consequences(trial, decision)
        return decision


def run_turn_trial(compiled: CompiledEpic, weapons: list[tuple], rng: random.Random, log: Log = None
                   ) -> TurnTrialOutcome:
    """One turn: activations, the assault of the engage activation, the end phase (docs/epic-turn.md §2)."""
    turn = Turn(compiled, weapons, rng, log)
    outcomes, decision, engage, engage_withdrew = [], None, None, set()
    for act in compiled.scenario.turn:
        mark = len(turn.trial.withdrawn)
        outcome, assault = turn.activate(act)
        turn.note_movement(act, outcome)
        if act.may_shoot:
            target = turn.by_name[act.target]
            outcome.target_broken = target.broken and bool(target.living)
            outcome.target_blast_markers_after = target.blast_markers if target.living and not target.broken else 0
        outcomes.append(outcome)
        if act.action == "engage":  # its withdrawal fire comes after its assault (docs/epic-turn.md §2a)
            engage_withdrew = turn.withdrawn_since(mark)
        elif act.withdrawal_fire:
            outcome.withdrawal_fire = turn.withdrawal_fire(act.withdrawal_fire, turn.withdrawn_since(mark))
        if assault:
            engage = act
    if engage is not None:
        mark = len(turn.trial.withdrawn)
        decision = turn.assault(engage)
        engage_withdrew |= turn.withdrawn_since(mark)
    for act, outcome in zip(compiled.scenario.turn, outcomes):
        if act.action == "engage" and act.withdrawal_fire:
            outcome.withdrawal_fire = turn.withdrawal_fire(act.withdrawal_fire, engage_withdrew)
    snapshot = assault_snapshot(turn.trial)
    for act, outcome in zip(compiled.scenario.turn, outcomes):
        if act.action == "ground_attack":
            turn.disengage(act, outcome)
    end_fire = turn.rally(end_phase) if compiled.scenario.end_phase.rally else []
    return TurnTrialOutcome(outcomes, trial_outcome(turn.trial, decision, snapshot), engaged=decision is not None,
                            end_phase_withdrawal_fire=end_fire)
