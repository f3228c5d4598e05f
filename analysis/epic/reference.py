"""The pure-Python reference engine: one Epic Armageddon assault, clause by clause.

It implements ``docs/epic-engine.md`` (the "spec", cited as spec §n) step by step, one small
function per rule step; clause tags: TP = NetEA Tournament Pack, §9.n = the readings of section 9 of
``docs/epic-engine.md``.
The Numba kernel implements the same spec; the tests compare the two statistically.

Per-trial state lives in :class:`Unit`, :class:`Formation` and :class:`Trial`, copied from the
compiled scenario (which is never mutated).  Dice: ``rng.randint(1, 6)``, D3 = ``rng.randint(1, 3)``,
trapped draws ``rng.random()``.  With ``log=`` every roll, allocation, save, modifier and
decision is reported as ``"[clause] text"``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Callable

from .compile import (ATTACKER, BC, DEFENDER, ENGAGED, NEARBY, NO_ABILITIES, NO_ROLL, ONE_DAMAGE, OUT,
                      SPLASH_MACRO_WEAPON, SPLASH_NO_SAVE, SPLASH_TITAN_KILLER, SUPPORT, Abilities, CompiledEpic,
                      UnitSlot)
from .dice import Dice
from .outcome import FormationOutcome, TrialOutcome
from .war_engines import (damage_hull, end_phase_effects, shadowfields_return,
                          shields_stop, titan_killer_damage)

Log = Callable[[str], None] | None
SIDES = ("attacker", "defender")
STATE_NAMES = ("bc", "ff", "out")
ORDINARY, MACRO_WEAPON, TITAN_KILLER = "ordinary", "macro-weapon", "titan-killer"


def _note(log: Log, clause: str, text: str) -> None:
    if log is not None:
        log(f"[{clause}] {text}")


# -- per-trial state ---------------------------------------------------------------------------

@dataclass(eq=False)
class Unit:
    slot: UnitSlot
    label: str  # "Warband: boyz 3", for the trace
    damage_left: int  # remaining damage capacity (1 for a unit that is not a war engine)
    alive: bool = True
    void_shields: int = 0  # up now (docs/epic-engine.md §10.2)
    power_fields: int = 0
    shadowfields: int = 0
    criticals: int = 0  # critical hits rolled on it (§10.4)
    breaches: int = 0  # reactor breaches and fires burning (§10.4, §10.7)
    fires: int = 0
    degraded: bool = False  # a degrade_then_escalate critical has struck (§10.4)
    lost_characters: list = field(default_factory=list)  # (DC, void shields) removed by a critical (§10.4)

    @property
    def shields_up(self) -> int:
        """Void shields, power fields and shadowfields up (0 once destroyed)."""
        return self.void_shields + self.power_fields + self.shadowfields if self.alive else 0

    @property
    def damage_taken(self) -> int:
        """DC lost (a character's removed with it, §10.4); a destroyed unit its whole starting DC."""
        return self.starting_capacity - (self.damage_left if self.alive else 0)

    @property
    def starting_capacity(self) -> int:
        return self.slot.damage_capacity + sum(dc for dc, _ in self.lost_characters)


@dataclass(eq=False)
class Formation:
    index: int
    name: str
    side: int
    role: int
    initiative: int
    tsknf: bool
    mob_rule: bool
    trapped: float
    withdrawal_enemies: int  # enemy units within 15 cm of a war engine at the end of its withdrawal
    enemy_within_30cm: bool
    units: list[Unit]  # in allocation order
    blast_markers: int
    broken: bool
    broken_at_start: bool
    within_splash_of: tuple[int, ...] = ()  # its units within reach of formation j's critical splash (§10.6)
    losses: int = 0  # kills suffered in the assault (a war-engine damage point counts 1)
    # BMs its losses place if it wins (TP 1.12.9, 2.1.22, 2.2.2): one per loss, one per disrupt hit
    # instead of per loss of that hit (§10.6); kept apart for Expendable units
    loss_markers: int = 0
    expendable_loss_markers: int = 0
    rally_tested: bool = False
    rally_passed: bool = False

    @property
    def living(self) -> list[Unit]:
        return [u for u in self.units if u.alive]

    @property
    def size(self) -> int:
        """Units alive, a war engine counting its starting DC (TP 3.3.3; spec §0)."""
        return sum(u.slot.damage_capacity for u in self.units if u.alive)

    def fails_break_test(self) -> bool:
        """BMs ≥ size, TSKNF: BMs ≥ 2 × size (TP 1.13.2, TP-SR TSKNF)."""
        return self.blast_markers >= (2 if self.tsknf else 1) * self.size


@dataclass
class Trial:
    """Everything one trial changes: units, formations, kills per side, the dice and the log."""

    rng: random.Random
    log: Log
    rules: object
    units: list[Unit]  # every unit, in allocation order
    formations: list[Formation]
    kills: list[int] = field(default_factory=lambda: [0, 0])
    sc_rerolls: list[int] = field(default_factory=lambda: [0, 0])  # per side, left this turn (TP 2.1.15)
    fighting: bool = True  # kills count for the result (spec §2, §5); False from the consequences on
    kills_count: bool = True  # False while supporting fire whose kills do not count (§9.2)
    in_end_phase: bool = False
    compiled: CompiledEpic | None = None  # the scenario it runs (never mutated)
    # a shooting attack's own booking of damage (docs/epic-turn.md §3.13): set while it resolves
    damage_sink: Callable[[Unit, int, bool], None] | None = None
    withdrawn: list[str] = field(default_factory=list)  # formations, in the order their withdrawals ended

    def count_damage(self, unit: Unit, points: int, by_side: int | None, kill: bool, marker: bool) -> None:
        """Book ``points`` of damage (or units) lost by ``unit``: kills for ``by_side`` while the fight goes
        on; losses and the BMs they place if its formation wins (``marker``), until the end phase (a
        splash from a war engine destroyed by extra hits may still reach the winner); in the end phase,
        BMs on its unbroken formation at once (TP 1.12.5, 1.12.9, 2.1.22, 3.2.2, 3.3.3; TP-FAQ Blast
        Markers; §10.4, §10.7)."""
        if self.damage_sink is not None:  # a shooting attack books its own kills and BMs
            self.damage_sink(unit, points, marker)
            return
        formation = self.formations[unit.slot.formation]
        if self.in_end_phase:
            if not formation.broken:
                formation.blast_markers += points
            return
        formation.losses += points
        if marker and not unit.slot.automaton:  # TP-SR Automaton: no BM for its deaths
            self.book_markers(formation, unit, points)
        if kill and self.fighting and self.kills_count and by_side is not None:
            self.kills[by_side] += points

    @staticmethod
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

    def splash_hit(self, victim: Unit, splash_kind: int) -> None:
        """One critical-splash (or self) hit on ``victim``, resolved as a firefight hit of the enemy side:
        ordinary, macro-weapon, titan-killer (1) or no save (§10.4, §10.6)."""
        kind = {SPLASH_MACRO_WEAPON: MACRO_WEAPON, SPLASH_TITAN_KILLER: TITAN_KILLER}.get(splash_kind, ORDINARY)
        abilities = Abilities(macro_weapon=True, titan_killer=True) if kind == TITAN_KILLER else NO_ABILITIES
        hit = Hit(kind, False, abilities=abilities, no_save=splash_kind == SPLASH_NO_SAVE)
        take_hit(self, 1 - victim.slot.side, hit, victim, 1)

    def break_in_end_phase(self, formation: Formation) -> None:
        """End-phase damage broke it: BMs removed, it withdraws as after a failed rally (§10.7)."""
        formation.broken = True
        formation.blast_markers = 0
        self.say("TP 1.13.2", f"{formation.name} breaks from end-phase damage: BMs removed, it withdraws")
        withdraw(self, formation, speed_zero_die=False)

    def count_supreme_commander_rerolls(self) -> None:
        """One re-roll per living Supreme Commander of the side's army, all formations (TP 2.1.15)."""
        on = self.rules.supreme_commander_rerolls
        self.sc_rerolls = [sum(u.alive and u.slot.supreme_commander for u in self.units if u.slot.side == side)
                           if on else 0 for side in (ATTACKER, DEFENDER)]

    def say(self, clause: str, text: str) -> None:
        _note(self.log, clause, text)

    def assault_formations(self, side: int) -> list[Formation]:
        return [f for f in self.formations if f.side == side and f.role == ENGAGED]

    def formation_of(self, unit: Unit) -> Formation:
        return self.formations[unit.slot.formation]

    def assault_units(self, side: int) -> list[Unit]:
        """Living units of the side's assault formations, in allocation order."""
        return [u for u in self.units if u.alive and u.slot.side == side
                and self.formations[u.slot.formation].role == ENGAGED]

    def directly_engaged(self, side: int) -> list[Unit]:
        """Living ``bc``/``ff`` units of the side's assault formations (TP 1.12.5; spec §2)."""
        return [u for u in self.assault_units(side) if u.slot.engaged != OUT]


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
    trial.count_supreme_commander_rerolls()
    for unit in units:  # power-field dice, once per trial (TP-SR Power Fields; §10.8.5)
        if unit.slot.power_fields:
            unit.power_fields = sum(d.roll(rng) for d in unit.slot.power_fields)
            trial.say("TP-SR Power Fields", f"{unit.label}: power fields "
                                            f"{' + '.join(map(str, unit.slot.power_fields))} → {unit.power_fields}")
    return trial


# -- dice ----------------------------------------------------------------------------------------

def roll_d6(rng: random.Random) -> int:
    return rng.randint(1, 6)


def roll_d3(rng: random.Random) -> int:
    return rng.randint(1, 3)


# -- attacks (spec §1, §4) -----------------------------------------------------------------------

# Which enemy units a hit may reach (spec §1, §2): any directly engaged one, or for a war engine in
# base contact (TP 3.1.2) only those in base contact (its CC hits) or only the others (its FF hits).
ANY_TARGET, CONTACT_ONLY, NON_CONTACT_ONLY = "any", "in base contact", "not in base contact"


@dataclass(frozen=True)
class AttackDice:
    """Dice a unit rolls in one step: ``count`` dice (or D3 dice) hitting on D6 ≥ ``target``."""

    count: int
    d3: bool
    target: int
    weapon: str  # for the trace: "CC", "FF", "CC assault-weapon line", ...
    kind: str  # ORDINARY, MACRO_WEAPON or TITAN_KILLER
    sniper: bool
    first_strike: bool
    reach: str = ANY_TARGET  # ANY_TARGET, CONTACT_ONLY or NON_CONTACT_ONLY
    close_combat: bool = False  # rolled at the CC value: shields and fields do not stop its hits (§10.2)
    abilities: Abilities = NO_ABILITIES  # lance, ignore cover, disrupt, titan-killer damage (§10.5, §10.6)


@dataclass(frozen=True)
class Hit:
    """One hit: its kind, how it was rolled and the abilities of its weapon (spec §2, §10)."""

    kind: str
    sniper: bool
    reach: str = ANY_TARGET
    close_combat: bool = False
    supporting: bool = False  # supporting fire: no knight shield against it (§10.3)
    abilities: Abilities = NO_ABILITIES
    no_save: bool = False  # a critical splash that no save stops (§10.6)

    @property
    def lance(self) -> bool:
        return self.abilities.lance

    @property
    def ignore_cover(self) -> bool:
        return self.abilities.ignore_cover

    @property
    def disrupt(self) -> bool:
        return self.abilities.disrupt

    @property
    def titan_killer_damage(self) -> Dice:
        return self.abilities.titan_killer_damage if self.kind == TITAN_KILLER else ONE_DAMAGE


def _hit_kind(abilities: Abilities) -> str:
    return TITAN_KILLER if abilities.titan_killer else MACRO_WEAPON if abilities.macro_weapon else ORDINARY


def assault_dice(slot: UnitSlot, in_contact: bool) -> list[AttackDice]:
    """A unit's assault dice (TP 1.12.5, 2.1.13, 2.2.3, 2.2.4, 2.2.6, 3.1.2; spec §1).

    Main dice: 1 (a WE: its starting DC) at CC in contact, else at FF (a firefighting Skimmer or
    Support Craft is never in contact, see :func:`in_contact`).  A WE in contact rolls ``cc_dice`` of
    them at CC and the rest at FF; its CC hits reach only enemy units in base contact, its FF hits
    (small-arms lines included) only the others; sniper hits pick their target as any sniper's
    (TP 3.1.2, 2.1.14).  A ``bc`` line only in contact, at CC; a ``15cm`` line at FF when not in
    contact, and in contact only for a WE.  A value of "-" rolls nothing.
    """
    split = in_contact and slot.type == "WE"

    def reach(contact_dice: bool, sniper: bool) -> str:
        if not split or sniper:
            return ANY_TARGET
        return CONTACT_ONLY if contact_dice else NON_CONTACT_ONLY

    dice = []
    if split:
        main = [(slot.cc_dice, slot.cc, "CC", True), (slot.damage_capacity - slot.cc_dice, slot.ff, "FF", False)]
    else:
        main = [(slot.damage_capacity, *((slot.cc, "CC") if in_contact else (slot.ff, "FF")), in_contact)]
    for count, target, weapon, contact_dice in main:
        if count and target != NO_ROLL:
            abilities = slot.cc_abilities if weapon == "CC" else slot.ff_abilities
            dice.append(AttackDice(count, False, target, weapon, _hit_kind(abilities), slot.sniper, slot.first_strike,
                                   reach(contact_dice, slot.sniper), weapon == "CC", abilities))
    for line in slot.extra:
        if line.engage_only and slot.side != ATTACKER:  # TP-SR Knight Technology: only when it assaults
            continue
        if line.contact_only:
            if not in_contact:
                continue
            target, weapon = slot.cc, "CC assault-weapon line"
        else:
            if in_contact and slot.type != "WE":
                continue
            target, weapon = slot.ff, "FF small-arms line"
        if target != NO_ROLL:
            sniper = line.sniper or slot.sniper
            dice.append(AttackDice(line.count, line.d3, target, weapon, _hit_kind(line),
                                   sniper, line.first_strike or slot.first_strike,
                                   reach(line.contact_only, sniper), line.contact_only, line))
    return dice


def supporting_dice(slot: UnitSlot) -> list[AttackDice]:
    """A supporting unit's dice (TP 1.12.6, 2.2.4; spec §4): FF main dice and ``15cm`` lines only;
    first strike gives nothing."""
    dice = []
    if slot.ff != NO_ROLL:
        dice.append(AttackDice(slot.damage_capacity, False, slot.ff, "FF", _hit_kind(slot.ff_abilities), slot.sniper,
                               False, abilities=slot.ff_abilities))
        for line in slot.extra:
            if not line.contact_only and not line.engage_only:
                dice.append(AttackDice(line.count, line.d3, slot.ff, "FF small-arms line", _hit_kind(line),
                                       line.sniper or slot.sniper, False, abilities=line))
    return dice


def roll_attack(trial: Trial, unit: Unit, dice: AttackDice, situation: str) -> list[Hit]:
    """Roll one set of attack dice: hit on D6 ≥ target, no modifiers ever (TP 1.12.5, 2.2.3)."""
    rng = trial.rng
    count = roll_d3(rng) if dice.d3 else dice.count
    rolls = [roll_d6(rng) for _ in range(count)]
    hits = sum(r >= dice.target for r in rolls)
    if trial.log is not None:
        how_many = f"D3 = {count}" if dice.d3 else str(count)
        a = dice.abilities
        extras = [k for k, on in ((dice.kind, dice.kind != ORDINARY),
                                  (f"{a.titan_killer_damage} damage", dice.kind == TITAN_KILLER
                                   and not a.titan_killer_damage.fixed),
                                  ("lance", a.lance), ("ignore cover", a.ignore_cover), ("disrupt", a.disrupt),
                                  ("sniper", dice.sniper), ("first strike", dice.first_strike),
                                  (f"hits only units {dice.reach}", dice.reach != ANY_TARGET)) if on]
        tags = f" [{', '.join(extras)}]" if extras else ""
        clause = "TP 1.12.6" if situation == "supporting fire" else "TP 1.12.5"
        trial.say(clause, f"{unit.label} ({situation}) rolls {how_many} {'die' if count == 1 else 'dice'} "
                          f"at {dice.weapon} {dice.target}+{tags}: {rolls} → {hits} hit(s)")
    return [Hit(dice.kind, dice.sniper, dice.reach, dice.close_combat, situation == "supporting fire",
                dice.abilities)] * hits


def fights_in_contact(slot: UnitSlot) -> bool:
    """A ``bc`` unit fights in base contact unless it is a Support Craft or a Skimmer choosing FF
    (TP 2.1.13, 2.1.20; spec §1)."""
    return slot.engaged == BC and not slot.firefights


def in_contact(trial: Trial, unit: Unit) -> bool:
    """A ``bc`` unit is in contact while it fights in contact and the enemy's assault formations
    have a living unit that does; otherwise it attacks as ``ff`` (TP-FAQ First Strike; TP 2.1.13:
    the enemy in contact with a firefighting skimmer uses FF too; §9.13; spec §1)."""
    return fights_in_contact(unit.slot) and any(fights_in_contact(u.slot)
                                                for u in trial.assault_units(1 - unit.slot.side))


def roll_assault_attacks(trial: Trial, side: int, first_strike: bool) -> list[Hit]:
    """Every attack of one side in one step (TP 1.12.5, 2.2.4; spec §1)."""
    hits = []
    for unit in trial.directly_engaged(side):
        contact = in_contact(trial, unit)
        situation = "in base contact" if contact else (
            "ff" if unit.slot.engaged != BC else "bc, firefight (skimmer / support craft): attacks as ff"
            if unit.slot.firefights else "bc, no enemy fighting in contact: attacks as ff")
        for dice in assault_dice(unit.slot, contact):
            if dice.first_strike == first_strike:
                hits += roll_attack(trial, unit, dice, situation)
    return hits


# -- allocation and saves (spec §2) --------------------------------------------------------------

def allocate(hits: list[Hit], eligible: list[Unit], damage_of=None) -> list[tuple[Hit, Unit, int]]:
    """One allocation of one kind's hits to the enemy's living directly engaged units, decided before its
    saves: ``(hit, unit, damage)`` in allocation order (TP 1.9.6, 1.12.5, 2.1.14, 3.1.2, 3.2.1, 3.2.5; spec §2).

    Sniper hits go to the first Inspiring/Leader/Supreme Commander unit, else the first unit.  The others
    go round-robin in allocation order from the nearest unit, with one count per unit shared by every hit of
    the kind: pass after pass, the first unit with the fewest passes that can take a hit left takes 1 hit, a
    war engine a block of its starting DC (epic-shooting §3.7, epic-armageddon §2.3, 2.10).  A war engine's
    hits that may reach only units in base contact, or only the others (TP 3.1.2), follow the same counts
    over the units they may reach; a unit takes those it alone of the two may take before the hits any
    unit may take, so that no hit is lost while it could land.  ``damage_of(hit, unit)``: the damage a hit
    does (a titan-killer hit on a war engine, rolled when allocated: it counts as that many hits of the
    block, TP 3.2.5); 1 by default.  Hits no unit may take are lost."""
    damage_of = damage_of or (lambda hit, unit: 1)
    if not eligible:
        return []
    sniper_target = next((u for u in eligible if u.slot.inspiring or u.slot.leader), eligible[0])
    triples = [(hit, sniper_target, damage_of(hit, sniper_target)) for hit in hits if hit.sniper]
    pools = {reach: [h for h in hits if not h.sniper and h.reach == reach]
             for reach in (ANY_TARGET, CONTACT_ONLY, NON_CONTACT_ONLY)}
    passes = {id(u): 0 for u in eligible}

    def pool_of(unit: Unit) -> list[Hit]:
        """The first non-empty pool ``unit`` may take from, or an empty one."""
        own = pools[CONTACT_ONLY if fights_in_contact(unit.slot) else NON_CONTACT_ONLY]
        return own or pools[ANY_TARGET]

    while True:
        takers = [u for u in eligible if pool_of(u)]
        if not takers:
            return triples
        least = min(passes[id(u)] for u in takers)
        unit = next(u for u in takers if passes[id(u)] == least)
        taken = 0
        while taken < unit.slot.damage_capacity and pool_of(unit):
            hit = pool_of(unit).pop(0)
            damage = damage_of(hit, unit)
            triples.append((hit, unit, damage))
            taken += damage
        passes[id(unit)] += 1


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
        _note(log, "TP 3.2.3", "  splash hit: no save")
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
            _note(log, clause, f"  {what} {target}+ vs {hit.kind}{' sniper' if hit.sniper else ''} hit: "
                               f"{roll} → {'saved' if roll >= target else 'failed'}")
        if roll >= target:
            return True
    if not targets and main:
        _note(log, "TP 2.2.6", f"  no armour save vs {hit.kind}{' sniper' if hit.sniper else ''} hit")
    if slot.invulnerable_on < NO_ROLL:
        target = slot.invulnerable_on
        roll = roll_d6(rng)
        clause = {6: "TP 2.1.6", 5: "TP-SR Tau Technology", 4: "TP-SR Necron Technology"}[target]
        _note(log, clause, f"  invulnerable save {target}+: {roll} → {'saved' if roll >= target else 'failed'}")
        return roll >= target
    return False


def resolve_hits(trial: Trial, side: int, hits: list[Hit], kills_count: bool = True) -> None:
    """Resolve one side's hits on the enemy's directly engaged units in separate allocations, each
    saved and its casualties removed before the next: the sniper and ordinary hits, then the
    macro-weapon hits to the survivors from the nearest, then the titan-killer hits the same way
    (TP 1.9.6, 1.12.5, 2.2.6, 2.2.9).  Each is one round-robin, a war engine's hits that reach only
    some units included (:func:`allocate`; TP 3.1.2; spec §2)."""
    kinds = (("snipers and ordinary", lambda h: h.sniper or h.kind == ORDINARY),
             (MACRO_WEAPON, lambda h: not h.sniper and h.kind == MACRO_WEAPON),
             (TITAN_KILLER, lambda h: not h.sniper and h.kind == TITAN_KILLER))
    trial.kills_count = kills_count
    for name, of_kind in kinds:
        kind_hits = [h for h in hits if of_kind(h)]
        if kind_hits:
            _resolve_allocation(trial, side, name, kind_hits)
    trial.kills_count = True


def _resolve_allocation(trial: Trial, side: int, name: str, hits: list[Hit]) -> None:
    """One allocation: hits to the enemy's living directly engaged units, saves, casualties removed
    (TP 1.12.5, 3.1.2, 3.2.5, 3.3.3; spec §2, §10.5); a titan-killer hit's damage is rolled when allocated."""
    eligible = trial.directly_engaged(1 - side)
    triples = allocate(hits, eligible, lambda hit, unit: titan_killer_damage(trial, hit, unit))
    if trial.log is not None:
        taken: dict[str, int] = {}
        for _, unit, _ in triples:
            taken[unit.label] = taken.get(unit.label, 0) + 1
        lost = len(hits) - len(triples)
        trial.say("TP 1.12.5", f"{SIDES[side]}'s {len(hits)} {name} hit(s) allocated nearest first, round-robin"
                               + (": " if taken else "") + ", ".join(f"{label} ×{n}" for label, n in taken.items())
                               + (f"; {lost} lost: no directly engaged enemy unit they may reach" if lost else ""))
    for hit, unit, damage in triples:
        take_hit(trial, side, hit, unit, damage)


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
        trial.book_markers(formation, unit, 1)
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


def attack_step(trial: Trial, first_strike: bool) -> None:
    """One step of a round: both sides roll, then hits are allocated, saved and removed
    (first strike TP 2.2.4 before the simultaneous normal attacks TP 1.12.5; spec §1)."""
    name = "first-strike step" if first_strike else "normal step (simultaneous)"
    trial.say("TP 2.2.4" if first_strike else "TP 1.12.5", f"{name}")
    hits = [roll_assault_attacks(trial, side, first_strike) for side in (ATTACKER, DEFENDER)]
    if first_strike and not hits[0] and not hits[1]:
        trial.say("TP 2.2.4", "no first-strike hits")
    for side in (ATTACKER, DEFENDER):
        resolve_hits(trial, side, hits[side])


def supporting_fire(trial: Trial) -> None:
    """Unbroken support formations' living bc/ff units fire at FF, both sides at once; hits only on
    directly engaged units (TP 1.12.6; §2.5, §9.2; spec §4)."""
    hits: list[list[Hit]] = [[], []]
    for formation in trial.formations:
        if formation.role != SUPPORT:
            continue
        if formation.broken:
            trial.say("TP 1.12.6", f"{formation.name} is broken: no supporting fire")
            continue
        for unit in formation.living:
            if unit.slot.engaged != OUT:
                for dice in supporting_dice(unit.slot):
                    hits[formation.side] += roll_attack(trial, unit, dice, "supporting fire")
    for side in (ATTACKER, DEFENDER):
        resolve_hits(trial, side, hits[side], kills_count=trial.rules.supporting_fire_kills_count)


# -- early ends and the result roll (spec §3, §5) ----------------------------------------------------

@dataclass(frozen=True)
class Decision:
    winner: str  # "attacker", "defender", "none" or "unresolved"
    margin: int | None
    rounds: int
    decided_without_roll: bool  # a side won without a result roll (wipe-out or stall); never for "none"


def early_end(trial: Trial, rounds: int) -> Decision | None:
    """Wipe-out or stall after the normal step (TP 1.12.5; §9.7; spec §3)."""
    if not trial.assault_units(DEFENDER):
        if trial.assault_units(ATTACKER):
            trial.say("TP 1.12.5", "defender wiped out: attacker wins without a result roll, no extra hits")
            return Decision("attacker", None, rounds, True)
        trial.say("§9.7", "both sides wiped out: no winner")
        return Decision("none", None, rounds, False)
    if not trial.directly_engaged(ATTACKER):
        trial.say("TP 1.12.5", "stall: no directly engaged attacker left, defender wins without a result roll")
        return Decision("defender", None, rounds, True)
    return None


def wiped_out_after_support(trial: Trial, rounds: int) -> Decision | None:
    """A side wiped out by supporting fire loses without a roll (§2.6; spec §4)."""
    attacker_alive, defender_alive = bool(trial.assault_units(ATTACKER)), bool(trial.assault_units(DEFENDER))
    if attacker_alive and defender_alive:
        return None
    winner = "attacker" if attacker_alive else "defender" if defender_alive else "none"
    trial.say("TP 1.12.7", f"wiped out by supporting fire: {'no winner' if winner == 'none' else winner + ' wins'}"
                           " without a result roll")
    return Decision(winner, None, rounds, winner != "none")


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


# -- consequences (spec §6) ---------------------------------------------------------------------------

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


def automaton_saves(trial: Trial, victim: Unit) -> bool:
    """An Automaton may save a broken formation's no-save hit with its own save, no invulnerable save
    (TP-SR Automaton; epic-shooting §3.11): whether ``victim`` is one and saves it."""
    if not victim.slot.automaton or not save_throw(trial.rng, replace(victim.slot, invulnerable_on=NO_ROLL),
                                                   Hit(ORDINARY, False), trial.log):
        return False
    trial.say("TP-SR Automaton", f"  {victim.label} saves it (an Automaton may)")
    return True


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
    if formation.fails_break_test():
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
    if formation.fails_break_test():
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


# -- end phase and regroup (spec §7, §8) ---------------------------------------------------------------

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
            _note(log, "TP 2.1.15" if attempt else "TP 1.14.1",
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
    trial.count_supreme_commander_rerolls()
    for formation in trial.formations:
        if formation.living and (formation.blast_markers > 0 or formation.broken):
            rally(trial, formation)
    if after_rally is not None:
        after_rally()
    shadowfields_return(trial)


def regroup_roll(rng: random.Random, blast_markers: int, leaders: int = 0) -> int:
    """BMs removed by a regroup: highest of 2D6 + Leaders, at most those held (TP 1.13.1, 2.1.8; spec §8)."""
    return min(max(roll_d6(rng), roll_d6(rng)) + leaders, blast_markers)


# -- one trial ----------------------------------------------------------------------------------------

def _describe(trial: Trial) -> None:
    for f in trial.formations:
        role = ("engaged", "support", "nearby")[f.role]
        units = ", ".join(f"{u.label.split(': ', 1)[1]} ({STATE_NAMES[u.slot.engaged]})" for u in f.units)
        trial.say("setup", f"{f.name}: {SIDES[f.side]}, {role}, "
                           f"{'broken' if f.broken else f'{f.blast_markers} BMs'}, initiative {f.initiative}+"
                           f"{', TSKNF' if f.tsknf else ''}{', Mob Rule' if f.mob_rule else ''}: {units}")


def run_trial(compiled: CompiledEpic, rng: random.Random, log: Log = None) -> TrialOutcome:
    """One assault from the first attacks to the end-phase rally (spec §0–§7)."""
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


def trial_outcome(trial: Trial, decision: Decision | None, after_assault: list[tuple[bool, int, int, int, int]]
                  ) -> TrialOutcome:
    """The outcome of a trial from its final state, ``after_assault`` the :func:`assault_snapshot`
    once the assault was over; ``decision`` None when no assault was fought (a turn)."""
    war_engines = [[trial.units[i] for i in f.war_engines] for f in trial.compiled.formations]
    return TrialOutcome(
        winner=decision.winner if decision else None,
        decided_without_roll=decision.decided_without_roll if decision else False,
        rounds=decision.rounds if decision else 0, margin=decision.margin if decision else None,
        formations=[FormationOutcome(
            destroyed=not f.living, broken_after_assault=broken, broken_after_end_phase=bool(f.living) and f.broken,
            rally_tested=f.rally_tested, rally_passed=f.rally_passed,
            casualties=sum(not u.alive for u in f.units), casualties_assault=casualties,
            blast_markers_after_assault=bms, blast_markers_after_end_phase=f.blast_markers if f.living else 0,
            critical=any(u.criticals for u in wes), damage_taken_assault=damage, shields_after_assault=shields,
            damage_taken=sum(u.damage_taken for u in wes), shields_after_end_phase=sum(u.shields_up for u in wes),
        ) for f, (broken, bms, casualties, damage, shields), wes in zip(trial.formations, after_assault, war_engines)],
    )
