"""The default shooting policies at mixed targets on the Numba kernel (kernels/epic/shooting.py) against the reference.

docs/epic-turn.md §3.5 (TP 1.9.5, 3.2.1): at a formation of war engines and other units every weapon is declared,
before any dice, "at the war engines" or "at the others" (``declare_at``: "auto", the default policy, or forced),
its hits going only to that group and lost when none of the group can take them; the AP/AT choice takes the type
with the larger expected kills (damage on war engines), ties to AT against a formation with a war engine.  Each
scenario runs on the kernel (8,000 trials) and the reference engine (1,500 trials) under both policy values, and
every reported quantity is compared at 5 standard errors (``epic_helpers.compare_results``), with fixed seeds.
"""
from __future__ import annotations

from fractions import Fraction as F
from math import sqrt

import pytest

from wargame_odds.analysis import epic
from epic_helpers import SIGMAS, compare_results
from scenario_data import BOYZ, EXACT_CASES, FORTRESS, INFANTRY_4, VEHICLE_6, other, scenarios
from scenario_data import one_shot as _one_shot

KERNEL_TRIALS = 8_000
REFERENCE_TRIALS = 1_500

SCENARIOS = scenarios("turn_kernel_declarations")


def _text(name: str, declaration: str) -> str:
    """The scenario as written ("auto"), or with its declarations forced."""
    return SCENARIOS[name] if declaration == "auto" else other("turn_kernel_declarations", f"{name}[forced]")


@pytest.mark.parametrize("declaration", ["auto", "forced"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_we_declaration_tp_3_2_1_and_10_3_kernel_matches_reference(name, declaration):
    """Kernel v reference at 5σ on every quantity, the ``turn`` section included, under the default policies
    and forced declarations (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5), once the kernel's results show the
    attacks doing something."""
    scenario = epic.loads(_text(name, declaration), name)
    seed = 47_000 + 2 * sorted(SCENARIOS).index(name) + (declaration == "forced")
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    assert kernel.to_dict()["turn"]["1"]["kills_mean"] > 0.2, "the first attack hardly kills"
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


# -- the kernel against exact values: one shot at a small target (the cases of test_shooting_exact) ------------


def _close(measured: float, p: F, trials: int) -> bool:
    """A Bernoulli mean within 5 binomial standard errors of ``p`` (exactly ``p`` when it is 0 or 1)."""
    if p in (0, 1):
        return measured == p
    return abs(measured - float(p)) <= SIGMAS * sqrt(float(p * (1 - p)) / trials)


@pytest.mark.parametrize("case", sorted(EXACT_CASES))
def test_we_declaration_tp_3_2_1_and_10_3_kernel_matches_exact_values(case):
    """The kernel's policies on one shot (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5) against the exact values of
    tests/epic/test_shooting_exact.py: P(a target unit is destroyed), and the BMs placed, 1 for coming under
    fire (also when the hits are lost, TP-FAQ Place Blast Marker) plus 1 for a kill or a damage point (TP 1.9.4,
    3.2.2), each within 5 binomial standard errors (exact where the value is 0)."""
    weapon, target, keys, p_kill, p_harm = EXACT_CASES[case]
    trials = 20_000
    turn = epic.simulate(_one_shot(weapon, target, keys), trials=trials, seed=5).to_dict()["turn"]["1"]
    assert _close(turn["kills_mean"], p_kill, trials), (case, turn["kills_mean"])
    assert _close(turn["blast_markers_placed_mean"] - 1, p_harm, trials), (case, turn["blast_markers_placed_mean"])


def test_we_declaration_tp_3_2_1_and_10_3_trace_names_each_choice():
    """--trace (reference engine) prints each weapon's AP/AT choice and declaration with the expectations compared,
    and the hits a forced declaration loses (TP 1.9.5, 3.2.1; docs/epic-turn.md §3.5)."""
    text = epic.trace(_one_shot({"ap": 4, "at": 4}, [(INFANTRY_4, 2), (VEHICLE_6, 1)], {}), seed=0)
    assert "[TP 1.9.5] Shooter: gun 1 gun: AT (default policy: expected kills AP 0.250, AT 0.417)" in text
    text = epic.trace(_one_shot({"at": 4}, [(FORTRESS, 1), (VEHICLE_6, 1)], {}), seed=0)
    assert ("[TP 3.2.1] Shooter: gun 1 gun (AT) declared at the others (default policy: expected damage 0.250 < "
            "expected kills 0.417 on the others)") in text
    lost = _one_shot({"ap": 2}, [(FORTRESS, 1), (BOYZ, 2)], {"declare_at": "war_engines"})
    traces = "\n".join(epic.trace(lost, seed=s) for s in range(4))
    assert "declared at the war engines (forced by declare_at)" in traces
    assert "[TP 3.2.1] 1 hit(s) declared at the war engines lost: no unit of that group can take them" in traces
