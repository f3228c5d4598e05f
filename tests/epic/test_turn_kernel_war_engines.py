"""War engines in a turn on the Numba kernel (kernels/epic/shooting.py) against the reference engine.

docs/epic-turn.md §3.13 (TP 3.2, TP-SR Imperial Void Shields, Power Fields): each scenario below is run on
the kernel (8,000 trials) and the reference engine (1,500 trials) and every reported quantity is compared at
5 standard errors (``epic_helpers.compare_results``), the ``turn`` section, ``sides.no_assault`` and the
war-engine results of docs/epic-engine.md §10.9 included, with fixed seeds.  The clauses each scenario
covers are noted with it.
"""
from __future__ import annotations

import pytest

from wargame_odds.analysis import epic
from epic_helpers import compare_results
from scenario_data import scenarios

KERNEL_TRIALS = 8_000
REFERENCE_TRIALS = 1_500

SCENARIOS = scenarios("turn_kernel_war_engines")


def _key_events(name: str, r: dict) -> dict[str, bool]:
    """The events each scenario is for, which must happen often enough for the comparison to test them."""
    turn = r["turn"]
    if name == "void_shielded_titan":
        return {"the titan destroyed by the shooting": 0.05 < turn["1"]["kills_mean"] < 0.95,
                "critical hits on it": r["formations"]["Reaver"]["critical"]["p"] > 0.05,
                "it shoots back": turn["2"]["hits_mean"] > 0.1,
                "an assault or none": 0.05 < r["sides"]["no_assault"]["p"] < 0.95}
    if name in ("mixed_war_engine_and_infantry", "automata_mixed_target", "automaton_mixed_target"):
        return {"the mob broken by the first attack": 0.1 < turn["1"]["target_broken"]["p"] < 0.95,
                "no-save hits on the broken mob": turn["2"]["kills_mean"] > 0.1,
                "critical hits on the gargant": r["formations"]["Mob"]["critical"]["p"] > 0.05,
                "its splash on the Vindicators": r["formations"]["Vindicators"]["casualties_mean"] > 0.05}
    warhounds = r["formations"]["Warhounds"]
    return {"the charger stopped by overwatch, or not": 0.02 < r["sides"]["no_assault"]["p"] < 0.98,
            "damage on the Warhounds": warhounds["damage_taken_assault_mean"] > 0.1 if name.startswith("overwatch")
            else warhounds["casualties_mean"] > 0.1}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_turn_kernel_with_war_engines_matches_reference(name):
    """Kernel v reference at 5σ on every quantity (docs/epic-turn.md §3.13; the clauses each scenario covers
    are noted above), once the kernel's results show the scenario's key events."""
    scenario = epic.loads(SCENARIOS[name], name)
    seed = 43_000 + sorted(SCENARIOS).index(name)
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    missing = [event for event, seen in _key_events(name, kernel.to_dict()).items() if not seen]
    assert not missing, f"{name}: too rare on the kernel: {missing}"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


def test_war_engine_turn_same_numbers_whatever_the_chunk_size():
    """Reproducible (the war-engine state, power-field dice and titan-killer damage are the lane's own dice):
    the same seed gives the same counts for any chunk size and thread count."""
    model = epic.loads(SCENARIOS["mixed_war_engine_and_infantry"])
    a = epic.simulate(model, trials=3 * 4096 + 5, seed=3)
    b = epic.simulate(model, trials=3 * 4096 + 5, seed=3, chunk_trials=4096, threads=1)
    assert a.to_json() == b.to_json()
