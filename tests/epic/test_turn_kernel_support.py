"""Support formations in a turn on the Numba kernel (kernels/epic/assault.py::_cut_row_dice) against the reference
engine.

docs/epic-turn.md §2, TP 1.12.6: a formation with ``role = "support"`` gives supporting fire in the turn's
assault only if it is unbroken then; the turn may break it before the assault (shot at, or a failed action
test of its own activation).  Each scenario is run on the kernel (20,000 trials) and the reference engine
(3,000 trials) and every reported quantity is compared at 5 standard errors (``epic_helpers.compare_results``),
with fixed seeds; a changed scenario shows that the comparison can fail.
"""
from __future__ import annotations

import pytest

from analysis import epic
from epic_helpers import compare_results
from test_turn_kernel import UNITS

KERNEL_TRIALS = 20_000
REFERENCE_TRIALS = 3_000


def _scenario(title: str, gunner_markers: int, turn: str) -> str:
    """Tactical Marines engage an Ork mob that a formation of heavy gunners supports with their FF 3 (TP 1.12.6)."""
    return f'system = "epic"\ntitle = "{title}"\n' + UNITS + """
[[formations]]
name = "Devastators"
side = "attacker"
initiative = 1
units = [{ unit = "devastator", count = 4 }]
[[formations]]
name = "Tactical"
side = "attacker"
initiative = 1
units = [{ unit = "marine", count = 5, engaged = "bc" }, { unit = "marine", count = 1, engaged = "ff" }]
[[formations]]
name = "Mob"
side = "defender"
initiative = 2
units = [{ unit = "boyz", count = 5, engaged = "bc" }]
[[formations]]
name = "Gunners"
side = "defender"
initiative = 2
role = "support"
blast_markers = """ + str(gunner_markers) + """
units = [{ unit = "devastator", count = 5, engaged = "ff" }]
""" + turn + """
[[turn]]
formation = "Tactical"
action = "engage"
target = "Mob"
[end_phase]
enemy_within_30cm = true
"""


SCENARIOS = {
    # the Devastators shoot the supporting gunners first: kills and BMs may break them (TP 1.9.7), and broken
    # they give no supporting fire in the assault (TP 1.12.6)
    "support_shot_at": _scenario("Devastators break the supporting gunners, then the Tactical Marines engage", 0, """
[[turn]]
formation = "Devastators"
action = "sustained_fire"
target = "Gunners"
"""),
    # the supporting gunners act first: a failed action test places a BM and may break them (TP 1.6.2), their
    # shots at the Devastators; broken, no supporting fire (TP 1.12.6)
    "support_acts": _scenario("The supporting gunners shoot first, then the Tactical Marines engage", 4, """
[[turn]]
formation = "Gunners"
action = "advance"
target = "Devastators"
"""),
}


def _run(text: str, name: str, seed: int, engine: str = "kernel"):
    trials = KERNEL_TRIALS if engine == "kernel" else REFERENCE_TRIALS
    return epic.simulate(epic.loads(text, name), trials=trials, seed=seed, engine=engine)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_turn_kernel_with_support_formations_matches_reference(name):
    """TP 1.12.6 in a turn: kernel v reference at 5σ on every quantity, the turn's included."""
    seed = 43_000 + sorted(SCENARIOS).index(name)
    kernel, reference = _run(SCENARIOS[name], name, seed), _run(SCENARIOS[name], name, seed, "reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


def test_support_scenarios_break_the_support_formation_and_the_comparison_has_power():
    """The scenarios reach the rule: the gunners are broken before the assault in some trials, not in all (shot
    at: TP 1.9.7; their own failed action test with 4 BMs: TP 1.6.2).  And the comparison can fail: the kernel
    run with two more BMs on the gunners that are shot at (broken more often) differs from the reference run of
    the scenario itself.  (Measured when the kernel learnt this: the kernel with broken support formations still
    firing fails the comparison on 48 quantities shot at, 44 acting.)"""
    shot = _run(SCENARIOS["support_shot_at"], "shot", 5).to_dict()
    assert 0.1 < shot["turn"]["1"]["target_broken"]["p"] < 0.9
    acts = _run(SCENARIOS["support_acts"], "acts", 5).to_dict()
    assert 0.1 < acts["turn"]["1"]["action_test_passed"]["p"] < 0.9
    marked = SCENARIOS["support_shot_at"].replace('role = "support"\nblast_markers = 0',
                                                  'role = "support"\nblast_markers = 2')
    assert marked != SCENARIOS["support_shot_at"]
    seed = 43_000 + sorted(SCENARIOS).index("support_shot_at")
    assert compare_results(_run(marked, "marked", seed), _run(SCENARIOS["support_shot_at"], "shot", seed, "reference"))
