"""Step tests of ``kernels/epic/allocation.py`` against ``analysis/epic/reference/allocation.py``.

A step runs through a small jitted wrapper here (the kernel's helpers are called from jitted code only) on the
state of a block whose lanes all begin a trial (``epic_step_state``).  Exact where the step is deterministic,
else at 5 binomial standard errors of an exact value with fixed seeds; the clause each test covers is in its
name and docstring (issue 27 §2, issue 38 §2: one step-test file per kernel module).
"""
from __future__ import annotations


from numba import njit

from wargame_odds.analysis.epic.reference.allocation import allocate
from wargame_odds.analysis.epic.reference.block import new_trial
from wargame_odds.analysis.epic.reference.state import CONTACT_ONLY, NON_CONTACT_ONLY, ORDINARY, Hit
from wargame_odds.kernels.epic.access import kernel_function
from wargame_odds.kernels.epic.allocation import _round_robin_lane
from wargame_odds.kernels.epic.assault import fight
from wargame_odds.kernels.epic.layout import (
    DEFENDER)
from test_reference import formation

from epic_step_state import ENGINE, TROOPER, _state


@kernel_function
def _round_robin_lane0(tb, st, side, n_any, n_contact, n_other):
    """_round_robin_lane in lane 0, on the assault round's view (without reference counting, as the kernel calls
    it: ``fight`` returns views of ``tb`` and ``st``)."""
    _round_robin_lane(fight(tb, st), 0, side, n_any, n_contact, n_other)


@njit(cache=True)
def _kernel_round_robin(tb, st, side, n_any, n_contact, n_other):
    _round_robin_lane0(tb, st, side, n_any, n_contact, n_other)
    return st.elig.copy()


MIXED = [("titan", 1, "bc"), ("trooper", 2, "bc"), ("titan", 1, "ff"), ("trooper", 2, "ff"), ("knight", 1, "bc")]


def _mixed_target(compile_epic):
    """A defender of war engines (DC 3 and 2) and troopers, in base contact and not, in allocation order."""
    units = {"a": TROOPER, "titan": ENGINE, "knight": {**ENGINE, "damage_capacity": 2}, "trooper": TROOPER}
    return compile_epic(units, [formation("A", "attacker", [("a", 1, "bc")]),
                                formation("D", "defender", MIXED)])


def test_round_robin_matches_the_reference_allocation_epic_shooting_3_7(compile_epic):
    """epic-shooting §3.7, epic-armageddon §2.3, §2.10 (TP 1.9.6, 3.1.2, 3.2.1): the kernel's round-robin
    (_round_robin_lane) gives each unit the hits the reference engine's ``allocate`` gives it, for every mix of 0
    to 7 hits any unit may take, hits only units in base contact may take and hits only the others may take, over
    a target of war engines (blocks of DC 3 and 2) and troopers in contact and not (exact, 512 allocations)."""
    compiled = _mixed_target(compile_epic)
    tb, st = _state(compiled)
    trial = new_trial(compiled, None)
    eligible = trial.directly_engaged(DEFENDER)
    first = int(tb.tgb[DEFENDER])
    for n_any in range(8):
        for n_contact in range(8):
            for n_other in range(8):
                taken = _kernel_round_robin(tb, st, DEFENDER, n_any, n_contact, n_other)
                hits = ([Hit(ORDINARY, False)] * n_any + [Hit(ORDINARY, False, CONTACT_ONLY)]
                        * n_contact + [Hit(ORDINARY, False, NON_CONTACT_ONLY)] * n_other)
                counts = {id(u): 0 for u in eligible}
                for _, unit, _ in allocate(hits, eligible):
                    counts[id(unit)] += 1
                kernel = [int(taken[k - first]) for k in range(first, int(tb.tgb[DEFENDER + 1]))]
                assert kernel == [counts[id(u)] for u in eligible], (n_any, n_contact, n_other)


# -- saves (5 sigma against the reference's exact distribution) -----------------------------------------------
