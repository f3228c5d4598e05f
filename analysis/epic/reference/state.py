"""The reference engine's per-trial state (mirrors ``kernels/epic/layout.py``, the kernel's state rows, and the
starting state ``kernels/epic/block.py::_start_trials`` sets): :class:`Unit`, :class:`Formation` and :class:`Trial`,
copied from the compiled scenario (which is never mutated) by
:func:`wargame_odds.analysis.epic.reference.block.new_trial`; a :class:`Hit` and its kinds and reaches; the
:class:`Decision` of an assault.  These hold state and answer questions about it (a formation's size, a side's directly
engaged units); the rule steps that change it are functions in the modules named like the kernel's.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from ..compile import ENGAGED, NO_ABILITIES, ONE_DAMAGE, OUT, Abilities, CompiledEpic, UnitSlot
from ..dice import Dice

Log = Callable[[str], None] | None
SIDES = ("attacker", "defender")
STATE_NAMES = ("bc", "ff", "out")
ORDINARY, MACRO_WEAPON, TITAN_KILLER = "ordinary", "macro-weapon", "titan-killer"
# Which enemy units a hit may reach (spec §1, §2): any directly engaged one, or for a war engine in
# base contact (TP 3.1.2) only those in base contact (its CC hits) or only the others (its FF hits).
ANY_TARGET, CONTACT_ONLY, NON_CONTACT_ONLY = "any", "in base contact", "not in base contact"


def note(log: Log, clause: str, text: str) -> None:
    """Report ``text`` as ``"[clause] text"`` when there is a log."""
    if log is not None:
        log(f"[{clause}] {text}")


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
    # the reference steps the war-engine rules (analysis/epic/war_engines.py, which the reference imports) call back,
    # bound to this trial by block.new_trial: damage.count_damage, damage.splash_hit, end_phase.break_in_end_phase
    count_damage: Callable[[Unit, int, int | None, bool, bool], None] | None = None
    splash_hit: Callable[[Unit, int], None] | None = None
    break_in_end_phase: Callable[[Formation], None] | None = None
    side_units: tuple[list[Unit], list[Unit]] = field(init=False)  # each side's units, in allocation order

    def __post_init__(self) -> None:
        self.side_units = tuple([u for u in self.units if u.slot.side == side] for side in range(len(SIDES)))

    def say(self, clause: str, text: str) -> None:
        note(self.log, clause, text)

    def assault_formations(self, side: int) -> list[Formation]:
        return [f for f in self.formations if f.side == side and f.role == ENGAGED]

    def formation_of(self, unit: Unit) -> Formation:
        return self.formations[unit.slot.formation]

    def assault_units(self, side: int) -> list[Unit]:
        """Living units of the side's assault formations, in allocation order."""
        assaulting = [f.side == side and f.role == ENGAGED for f in self.formations]  # by formation index
        return [u for u in self.side_units[side] if u.alive and assaulting[u.slot.formation]]

    def directly_engaged(self, side: int) -> list[Unit]:
        """Living ``bc``/``ff`` units of the side's assault formations (TP 1.12.5; spec §2)."""
        return [u for u in self.assault_units(side) if u.slot.engaged != OUT]


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


@dataclass(frozen=True)
class Decision:
    winner: str  # "attacker", "defender", "none" or "unresolved"
    margin: int | None
    rounds: int
    decided_without_roll: bool  # a side won without a result roll (wipe-out or stall); never for "none"
