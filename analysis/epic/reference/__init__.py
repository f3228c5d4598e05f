"""The pure-Python reference engine: one Epic Armageddon assault, clause by clause.

It implements ``docs/epic-engine.md`` (the "spec", cited as spec §n) step by step, one small
function per rule step; clause tags: TP = NetEA Tournament Pack, §9.n = the readings of section 9 of
``docs/epic-engine.md``.  The Numba kernel (``kernels/epic``) implements the same spec; the tests compare
the two step by step (``tests/epic/test_steps_*.py``) and statistically end to end.  The reference never
imports the kernel.

Each module is named like the kernel module it mirrors, so a kernel step and the reference step it is tested
against sit side by side:

========================  ==============================  =========================================================
reference module          kernel module                   steps
========================  ==============================  =========================================================
:mod:`.state`             ``layout.py``                   per-trial state (``Unit``, ``Formation``, ``Trial``),
                                                          ``Hit``, ``Decision``
:mod:`.dice`              ``dice.py``                     D6, D3 (TP 1.0.1)
:mod:`.allocation`        ``allocation.py``               contact, round-robin allocation (TP 1.9.6, 1.12.5,
                                                          2.1.14, 3.1.2, 3.2.1, 3.2.5)
:mod:`.saves`             ``saves.py``                    saves, Automaton's save (TP 1.9.6, 2.1.6, 2.1.11,
                                                          2.2.6, 2.2.9; TP-SR)
:mod:`.damage`            ``damage.py``                   one hit resolved, splash hits, booking of kills,
                                                          losses and BMs (TP 1.12.5, 2.1.22, 2.2.2, 3.2.2–3.3.3)
:mod:`.assault`           ``assault.py``                  attack dice, to-hit rolls, hits kind by kind,
                                                          supporting fire, early ends (TP 1.12.5, 1.12.6, 2.2.4)
:mod:`.result`            ``result.py``                   result modifiers and roll (TP 1.12.7)
:mod:`.breaks`            ``breaks.py``                   break test, withdrawal, breaking (TP 1.13.2, 1.13.3)
:mod:`.consequences`      ``consequences.py``             extra hits, loser, nearby losers, winner's BMs
                                                          (TP 1.12.7–1.12.9, 1.13.4)
:mod:`.end_phase`         ``end_phase.py``                Supreme Commander re-rolls, rally (TP 1.14.1, 2.1.15)
:mod:`.turn`              ``turn.py``                     the regroup roll (TP 1.13.1); the rest of the turn's
                                                          reference is :mod:`wargame_odds.analysis.epic.turn`
:mod:`.record`            ``record.py``                   a finished trial's outcome
:mod:`.block`             ``block.py``                    a fresh trial, the round loop, :func:`run_trial`
========================  ==============================  =========================================================

The war-engine steps (shields, hull damage, criticals, end-phase effects; kernel ``damage.py``, ``saves.py``,
``end_phase.py``) are :mod:`wargame_odds.analysis.epic.war_engines`; a turn's shooting (kernel ``shooting.py``) is
:mod:`wargame_odds.analysis.epic.shooting`, its activations (kernel ``turn.py``) :mod:`wargame_odds.analysis.epic.turn`,
aircraft :mod:`wargame_odds.analysis.epic.aircraft`.

Per-trial state is copied from the compiled scenario (which is never mutated).  Dice: ``rng.randint(1, 6)``,
D3 = ``rng.randint(1, 3)``, trapped draws ``rng.random()``.  With ``log=`` every roll, allocation, save,
modifier and decision is reported as ``"[clause] text"``.

The names below are those the rest of the project imports from ``wargame_odds.analysis.epic.reference``; the functions
``consequences`` and ``end_phase`` shadow the modules of the same name here (import from the modules with
``from wargame_odds.analysis.epic.reference.end_phase import rally``).
"""
from __future__ import annotations

from .allocation import allocate, fights_in_contact
from .assault import (AttackDice, assault_dice, attack_step, early_end, in_contact, resolve_hits, roll_assault_attacks,
                      roll_attack, supporting_dice, supporting_fire, wiped_out_after_support)
from .block import fight, new_trial, run_trial
from .breaks import break_formation, fails_break_test, withdraw
from .consequences import (assault_snapshot, consequences, extra_hits, loser_breaks, nearby_loser,
                           winner_blast_markers)
from .damage import book_markers, count_damage, splash_hit, take_hit
from .dice import roll_d3, roll_d6
from .end_phase import break_in_end_phase, count_supreme_commander_rerolls, end_phase, rally, rally_modifier, rally_test
from .record import trial_outcome
from .result import assault_size, blast_marker_counts, result_modifiers, result_roll, result_score
from .saves import automaton_saves, save_throw
from .state import (ANY_TARGET, CONTACT_ONLY, MACRO_WEAPON, NON_CONTACT_ONLY, ORDINARY, SIDES, STATE_NAMES,
                    TITAN_KILLER, Decision, Formation, Hit, Log, Trial, Unit)
from .turn import regroup_roll

__all__ = [
    "ANY_TARGET", "CONTACT_ONLY", "MACRO_WEAPON", "NON_CONTACT_ONLY", "ORDINARY", "SIDES", "STATE_NAMES",
    "TITAN_KILLER", "AttackDice", "Decision", "Formation", "Hit", "Log", "Trial", "Unit",
    "allocate", "assault_dice", "assault_size", "assault_snapshot", "attack_step", "automaton_saves",
    "blast_marker_counts", "book_markers", "break_formation", "break_in_end_phase", "consequences",
    "count_damage", "count_supreme_commander_rerolls", "early_end", "end_phase", "extra_hits",
    "fails_break_test", "fight", "fights_in_contact", "in_contact", "loser_breaks", "nearby_loser", "new_trial",
    "rally", "rally_modifier", "rally_test", "regroup_roll", "resolve_hits", "result_modifiers", "result_roll",
    "result_score", "roll_assault_attacks", "roll_attack", "roll_d3", "roll_d6", "run_trial", "save_throw",
    "splash_hit", "supporting_dice", "supporting_fire", "take_hit", "trial_outcome", "wiped_out_after_support",
    "winner_blast_markers", "withdraw",
]
