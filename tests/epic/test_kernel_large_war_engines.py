"""War engines of large damage capacity on the Numba kernel against the reference engine (issue 14).

docs/epic-engine.md §10.4: every point of damage on a war engine with a critical effect rolls for a critical
hit, applied at once (TP 3.2.3), so one hit can start a chain of criticals, each with its own damage; the
kernel resolves such chains on a stack sized from the scenario's damage capacity (kernels/epic/damage.py
``_stack_frames``: 1 + 2 × the starting DC of all units), whatever its units average.  Two titans of 20 DC
(the most a profile takes), one with battlecars adding 20 more, fight here: the kernel (100,000 trials) and
the reference engine (3,000 trials) are compared on every reported quantity at 5 standard errors, with a
fixed seed, and a changed scenario fails the comparison.
"""
from __future__ import annotations

from wargame_odds.analysis import epic
from epic_helpers import compare_results
from scenario_data import other

KERNEL_TRIALS = 100_000
REFERENCE_TRIALS = 3_000

TITANS = other("kernel_large_war_engines", "TITANS")


def test_titans_of_large_damage_capacity_match_reference():
    """§10.4 chains of criticals on war engines averaging 30 DC (more than the 20 a unit the kernel's stack used
    to hold): kernel v reference at 5σ; the kernel run with the Gargant's armour 5+ fails the comparison."""
    scenario = epic.loads(TITANS)
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=45_000)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=45_000, engine="reference")
    assert kernel.meta["engine"] == "kernel"
    assert kernel["formations", "Gargant", "critical"].p > 0.5
    failures = compare_results(kernel, reference)
    assert not failures, f"kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)
    weaker = TITANS.replace("armour = 4\ncc = 3\nff = 4", "armour = 5\ncc = 3\nff = 4")
    assert weaker != TITANS
    assert compare_results(epic.simulate(epic.loads(weaker), trials=KERNEL_TRIALS, seed=45_000), reference)
