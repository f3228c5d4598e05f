"""One round-robin per hit kind, with shared counts, a war engine's contact-only hits included (issue 27).

Rules reference epic-shooting §3.7 (TP 1.9.6, 3.2.1: no unit takes a second hit, a war engine a second block
of its starting DC, until every eligible unit has had one) and epic-armageddon §2.3, §2.10 (TP 1.12.5, 3.1.2:
in an assault the hits are allocated as for shooting; a war engine's CC hits land only on units in base
contact, its FF hits only on the others): the hits restricted to fewer units follow the same counts over the
units they may reach (docs/epic-engine.md §2, §9.14).  The engines used to allocate a war engine's restricted
hits as allocations of their own after the side's other hits, each starting again from the nearest unit, so
that the front enemy war engine took a second block before the units behind it had one.

Exact tests on the reference engine's allocation step, then the Numba kernel against the reference engine at
5 standard errors on the issue's minimal case (the fast path) and on a variant with war-engine rules (void
shields and a critical: the lane-by-lane path), with fixed seeds.
"""
from __future__ import annotations

from fractions import Fraction as F
from math import comb

import pytest

from wargame_odds.analysis import epic
from wargame_odds.analysis.epic.compile import ATTACKER, DEFENDER, compile_scenario
from wargame_odds.analysis.epic.reference import (
    CONTACT_ONLY, NON_CONTACT_ONLY, ORDINARY, Hit, allocate, new_trial, resolve_hits, roll_assault_attacks)
from epic_helpers import compare_results, exact_by_faces
from scenario_data import scenarios

KERNEL_TRIALS = 400_000
REFERENCE_TRIALS = 16_000

SCENARIOS = scenarios("kernel_round_robin")


def _compiled(name: str):
    return compile_scenario(epic.loads(SCENARIOS[name], name))


def test_restricted_hits_follow_the_shared_counts_epic_shooting_3_7(compile_epic):
    """epic-shooting §3.7, epic-armageddon §2.3 and §2.10 (TP 1.9.6, 3.1.2, 3.2.1): one allocation of 2 hits
    any unit may take, 2 CC hits of a war engine (units in base contact only) and 1 FF hit (the others only)
    on a titan (DC 3, in contact), a serf not in contact and a serf in contact, in that order.  The titan's
    block takes the 2 CC hits and 1 of the others, the serf out of contact the FF hit, the serf in contact the
    last: one hit or block each.  (Allocated apart, the CC hits gave the titan a second block, 4 hits, and the
    serf in contact none.)"""
    compiled = _compiled("split_knight_vs_shielded_titan")
    titan, near, _, far, _ = new_trial(compiled, None).directly_engaged(DEFENDER)
    any1, any2 = Hit(ORDINARY, False), Hit(ORDINARY, False, close_combat=True)
    cc1, cc2 = Hit(ORDINARY, False, CONTACT_ONLY, True), Hit(ORDINARY, False, CONTACT_ONLY, True)
    ff1 = Hit(ORDINARY, False, NON_CONTACT_ONLY)
    allocated = allocate([any1, cc1, any2, ff1, cc2], [titan, far, near])
    assert [(hit, unit) for hit, unit, _ in allocated] == [(cc1, titan), (cc2, titan), (any1, titan), (ff1, far),
                                                            (any2, near)]


def test_contact_hits_with_no_unit_in_contact_are_lost_epic_armageddon_2_10(compile_epic):
    """epic-armageddon §2.10 (TP 3.1.2): CC hits of a war engine with no enemy unit in base contact left to
    take them are lost; the hits any unit may take still go round-robin."""
    compiled = _compiled("split_knight_vs_shielded_titan")
    *_, far, far2 = new_trial(compiled, None).directly_engaged(DEFENDER)
    cc, any_ = Hit(ORDINARY, False, CONTACT_ONLY, True), Hit(ORDINARY, False)
    assert [unit for _, unit, _ in allocate([cc, cc, any_, any_], [far, far2])] == [far, far2]


def _first_round_losses(compiled):
    """fn(rng): the attacker's normal step of the first round, allocated, saved and removed: (defending units
    destroyed, the titan's damage)."""
    def run(rng):
        trial = new_trial(compiled, rng)
        resolve_hits(trial, ATTACKER, roll_assault_attacks(trial, ATTACKER, first_strike=False))
        titan, *serfs = trial.formations[1].units
        return sum(not u.alive for u in (titan, *serfs)), titan.damage_taken
    return run


def _binomial(n: int, p: F) -> dict[int, F]:
    return {k: comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)}


def test_minimal_case_first_round_losses_are_exact_epic_shooting_3_7():
    """The issue's minimal case, the attacker's first normal step (TP 1.12.5; epic-shooting §3.7, epic-armageddon
    §2.3, §2.10): the knight's 3 CC hits (units in contact) and the guards' hits (any unit), each Binomial(3, 2/3),
    are one round-robin over the titan and 3 serfs, all in contact: the titan's block takes the first 3 of the
    n hits, each serf one of the rest (no save), and each hit on the titan is unsaved with 1/2 (4+).  Exact over
    the dice (faces 1-2, 3 and 4-6: the to-hit and save thresholds).  Mean units destroyed 898/729 = 1.23 (with the
    knight's hits allocated apart, starting again at the titan: 287/729 = 0.39)."""
    compiled = _compiled("knight_and_guards_vs_titan_and_serfs")
    faces = {2: F(1, 3), 3: F(1, 6), 4: F(1, 2)}  # 1-2, 3, 4-6: every threshold (3+ to hit, 4+ to save)
    measured = exact_by_faces(_first_round_losses(compiled), faces)
    expected: dict[tuple[int, int], F] = {}
    for n, p_n in _binomial(6, F(2, 3)).items():
        on_titan = min(3, n)
        for damage, p_d in _binomial(on_titan, F(1, 2)).items():
            key = (n - on_titan + (damage == 3), damage)
            expected[key] = expected.get(key, F(0)) + p_n * p_d
    assert measured == expected
    assert sum(lost * p for (lost, _), p in measured.items()) == F(898, 729)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kernel_matches_reference_on_the_shared_round_robin(name):
    """The kernel's allocation (the vectorised and the lane-by-lane path) against the reference engine at 5σ on
    every quantity, with fixed seeds.  On the minimal case the Titan Guard loses about 2.70 units and is
    destroyed in about 46.7 % of assaults by these rules (2.05 and 34.8 % with the allocations apart): the
    comparison has the power to tell them apart by far."""
    seed = 27_000 + sorted(SCENARIOS).index(name)
    scenario = epic.loads(SCENARIOS[name], name)
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)
