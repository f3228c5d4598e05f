"""A Land Train with battlecars on the Numba kernel against the reference engine (issue 14).

docs/epic-engine.md §10.4 (DATA land-train): a ``lose_character`` critical removes a random battlecar, and
with it part of the war engine's starting damage capacity and void shields; from then on the train rolls main
dice for its new starting DC (the FF rest of its dice first: TP 3.1.2), takes blocks of it in each allocation
pass (TP 3.3.3, the block fixed when the allocation begins), counts it for its formation's size (break tests,
the result roll, the rally: TP 3.0, 1.12.7, 1.13.2), regains void shields and DC (regeneration) up to the new
numbers in the end phase (§10.7), and the DC it loses with the battlecar counts as kills and losses.  Each
scenario is run on the kernel (200,000 trials) and the reference engine (8,000 trials) and every reported
quantity is compared at 5 standard errors (``epic_helpers.compare_results``), with fixed seeds; the kernel run
of the same scenario with a ``destroyed`` critical fails the comparison (the comparison has power).  The
NetEA Land Train formation (its Berserker Battlecar attached) is compared too.
"""
from __future__ import annotations

import pytest

from wargame_odds.analysis import epic
from epic_helpers import compare_results
from scenario_data import other, scenarios

KERNEL_TRIALS = 200_000
REFERENCE_TRIALS = 8_000

SCENARIOS = scenarios("kernel_land_train")


def _run(text: str, seed: int, engine: str = "kernel"):
    trials = KERNEL_TRIALS if engine == "kernel" else REFERENCE_TRIALS
    return epic.simulate(epic.loads(text), trials=trials, seed=seed, engine=engine)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_land_train_losing_battlecars_matches_reference(name):
    """§10.4 lose_character with battlecars: kernel v reference at 5σ on every quantity; the same kernel run
    with a destroyed critical instead fails the comparison."""
    seed = 44_000 + sorted(SCENARIOS).index(name)
    text = SCENARIOS[name]
    kernel, reference = _run(text, seed), _run(text, seed, "reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    assert 0.2 < kernel["formations", "Train", "critical"].p < 0.9  # the critical fires often
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)
    destroyed = text.replace('critical = "lose_character"', 'critical = "destroyed"')
    assert destroyed != text and compare_results(_run(destroyed, seed), reference)


LIBRARY_LAND_TRAIN = other("kernel_land_train", "LIBRARY_LAND_TRAIN")


def test_library_land_train_formation_matches_reference():
    """DATA land-train (§10.4; docs/library.md): the NetEA formation's train carries a Berserker Battlecar that
    adds DC and a void shield and that its critical removes; kernel (100,000 trials) v reference (4,000) at 5σ."""
    from wargame_odds.analysis.epic.compile import compile_scenario

    scenario = epic.loads(LIBRARY_LAND_TRAIN)
    trains = [u for u in compile_scenario(scenario).units if u.critical is not None]
    assert [u.critical.kind for u in trains] == ["lose_character"] and trains[0].characters_capacity
    kernel = epic.simulate(scenario, trials=100_000, seed=44_100)
    reference = epic.simulate(scenario, trials=4_000, seed=44_100, engine="reference")
    assert kernel.meta["engine"] == "kernel"
    failures = compare_results(kernel, reference)
    assert not failures, f"kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)
