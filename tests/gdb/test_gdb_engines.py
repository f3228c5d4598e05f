"""Kernel against reference engine (statistically independent RNGs), 5σ, and reproducibility."""
import numba
import numpy as np
import pytest
from gdb_helpers import assert_counts_agree, counts_of, make

import wargame_odds.analysis.gdb as gdb

SCENARIOS = {
    "column_vs_line": lambda: gdb.load("analysis/scenarios/gdb/column_vs_line.toml"),
    "cavalry_vs_square": lambda: gdb.load("analysis/scenarios/gdb/cavalry_vs_square.toml"),
    "forming_square": lambda: gdb.load("analysis/scenarios/gdb/cavalry_vs_forming_square.toml"),
    "flank_with_support": lambda: gdb.load("analysis/scenarios/gdb/flank_charge_with_support.toml"),
    "close_start_half_distance": lambda: make(
        charger={"distance": 3, "formed": False, "formed_support_behind": True},
        target={"reaction": "fire", "in_cover": True, "general_attached": True},
        supports=[{"arm": "infantry", "quality": "militia", "formation": "line", "strength": 30, "range": 9},
                  {"arm": "artillery", "quality": "line", "formation": "line", "strength": 6, "range": 30}],
        rules={"half_move": "half_distance"}),
    "eliminated_by_fire": lambda: make(
        charger={"strength": 2, "quality": "militia", "friends_behind": [1.0]},
        target={"reaction": "fire", "strength": 40, "quality": "guard"},
        supports=[{"arm": "artillery", "quality": "guard", "formation": "line", "strength": 12, "range": 5}]),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kernel_matches_reference(name):
    """§2.1–§2.4 (all steps): every count slot of kernel and reference agrees within 5σ."""
    model = SCENARIOS[name]()
    nk, nr = 400_000, 40_000
    k = gdb.simulate(model, trials=nk, seed=21)
    r = gdb.simulate(model, trials=nr, seed=22, engine="reference")
    assert r.meta["engine"] == "reference" and k.meta["engine"] == "kernel"
    assert_counts_agree(model, counts_of(k, model), nk, counts_of(r, model), nr)


def test_eliminated_scenario_really_eliminates():
    """§2.2: casualties are capped at the charger's strength; a destroyed charger takes no test."""
    model = SCENARIOS["eliminated_by_fire"]()
    res = gdb.simulate(model, trials=50_000, seed=1)
    assert 0 < res["charger", "ELIMINATED"].p < 1
    assert res["outcomes", "charger_eliminated_by_fire"].k == res["charger", "ELIMINATED"].k
    assert res["casualties", "charger", "distribution"].values.max() == 2


def test_same_seed_same_numbers_any_threads_and_chunks():
    """Reproducibility: same seed gives identical counts for 1 or 2 threads and any chunk size."""
    model = SCENARIOS["flank_with_support"]()
    runs = []
    for threads, chunk in ((1, None), (2, 4096), (2, 3 * 4096), (1, 5 * 4096)):
        res = gdb.simulate(model, trials=50_000, seed=7, threads=threads, chunk_trials=chunk)
        runs.append(counts_of(res, model))
    for other in runs[1:]:
        assert np.array_equal(runs[0], other)
    assert numba.get_num_threads() >= 1
    different = counts_of(gdb.simulate(model, trials=50_000, seed=8), model)
    assert not np.array_equal(runs[0], different)


def test_reference_reproducible_and_chunk_independent():
    """Reproducibility of the reference engine: keyed per block, so chunking does not matter."""
    model = SCENARIOS["column_vs_line"]()
    a = gdb.simulate(model, trials=9000, seed=3, engine="reference", chunk_trials=4096)
    b = gdb.simulate(model, trials=9000, seed=3, engine="reference")
    assert np.array_equal(counts_of(a, model), counts_of(b, model))


def test_precision_mode_reaches_half_width():
    """Runner precision mode: stops once every headline 95 % half-width is within the target."""
    res = gdb.simulate(SCENARIOS["column_vs_line"](), precision=0.01, seed=0, chunk_trials=4096)
    assert res.info.precision_reached
    lo, hi = res["charger", "PASS"].ci95
    assert (hi - lo) / 2 <= 0.01
    assert res.trials < 1_000_000
