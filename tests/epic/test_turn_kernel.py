"""The Numba kernel runs Epic turns (kernels/epic/turn.py) with the reference engine's results.

Each scenario below exercises clauses of docs/epic-turn.md (TP = NetEA Tournament Pack); the kernel
(20,000 trials) and the reference engine (3,000 trials) are compared on every reported quantity, the
``turn`` section and ``sides.no_assault`` included, at 5 standard errors (``epic_helpers.compare_results``),
with fixed seeds.  The shipped turn scenarios are compared the same way.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from wargame_odds.analysis import epic
from wargame_odds.analysis.cli import main
from epic_helpers import compare_results
from scenario_data import scenarios

KERNEL_TRIALS = 20_000
REFERENCE_TRIALS = 3_000
TURNS = Path(__file__).resolve().parents[2] / "analysis" / "scenarios" / "epic" / "turns"


SCENARIOS = scenarios("turn_kernel")


def _compare(scenario, seed):
    kernel = epic.simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = epic.simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    assert kernel.meta["engine"] == "kernel" and reference.meta["engine"] == "reference"
    return kernel, reference, compare_results(kernel, reference)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_turn_kernel_matches_reference(name):
    """Kernel v reference at 5σ on every quantity (the clauses each scenario covers are noted above)."""
    kernel, reference, failures = _compare(epic.loads(SCENARIOS[name], name), 40_000 + sorted(SCENARIOS).index(name))
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


#: The shipped turn scenarios the kernel simulates (all of them; one it did not would run on the reference engine:
#: wargame_odds.analysis.epic.engine.turn_kernel_unsupported, docs/epic-turn.md §7).
KERNEL_TURNS = [path for path in sorted(TURNS.glob("*.toml")) if epic.engine_for(str(path))[0] == "kernel"]


@pytest.mark.parametrize("path", KERNEL_TURNS, ids=lambda p: p.stem)
def test_shipped_turn_scenarios_match_on_the_kernel(path):
    kernel, reference, failures = _compare(epic.load(path), 41_000)
    assert not failures, f"{path.name}: kernel v reference:\n" + "\n".join(failures)


def test_scenarios_reach_the_rules_they_are_for():
    """The comparisons above would be empty if the rules never fired: check each scenario's key event."""
    def run(name):
        return epic.simulate(epic.loads(SCENARIOS[name], name), trials=4096, seed=7).to_dict()

    overwatch = run("overwatch")
    assert 0.02 < overwatch["sides"]["no_assault"]["p"] < 0.98  # TP 1.10: overwatch breaks the charger
    failed = run("failed_test")
    assert 0.1 < failed["turn"]["1"]["action_test_passed"]["p"] < 0.9  # TP 1.6.2
    assert failed["sides"]["no_assault"]["p"] > 0.1
    broken = run("broken_target")
    assert broken["turn"]["1"]["blast_markers_placed_mean"] == 0 and broken["turn"]["1"]["kills_mean"] > 0
    assert run("barrage")["turn"]["1"]["hits_mean"] > 0  # TP 1.9.8
    assert run("suppression")["sides"] is None


def test_block_function_has_an_assault_and_a_turn_variant_only():
    """Issue 12 §1 'no kernel compiled twice for one signature': an assault and a turn run the block function
    compiled for two deliberate variants (kernels/epic/block.py, ``assault_kernel``), which differ only in the turn
    tables argument: None for an assault (the turn code is pruned from that variant), the tables for a turn."""
    import inspect

    from numba.core import types

    from wargame_odds.kernels.epic import block as K

    epic.simulate(epic.loads(SCENARIOS["shoot_then_assault"]), trials=256, seed=1)
    epic.simulate(epic.load(TURNS.parent / "assault_marines_vs_warband.toml"), trials=256, seed=1)
    signatures = K._run_block.signatures
    turn = list(inspect.signature(K._run_block.py_func).parameters).index("turn")
    assert len(signatures) == 2, signatures
    assault, turns = sorted(signatures, key=lambda sig: not isinstance(sig[turn], types.NoneType))
    assert isinstance(assault[turn], types.NoneType) and isinstance(turns[turn], types.BaseTuple)
    assert assault[:turn] + assault[turn + 1:] == turns[:turn] + turns[turn + 1:]


def test_same_numbers_whatever_the_chunk_size():
    """Reproducible: the same seed gives the same counts for any chunk size and thread count."""
    model = epic.loads(SCENARIOS["shoot_then_assault"])
    a = epic.simulate(model, trials=3 * 4096 + 5, seed=3)
    b = epic.simulate(model, trials=3 * 4096 + 5, seed=3, chunk_trials=4096, threads=1)
    assert a.to_json() == b.to_json()


# the turn's shooting takes a war engine's starting DC as fixed: a Land Train whose critical removes a battlecar
# (docs/epic-engine.md §10.4) runs on the reference engine in a turn
WITH_LAND_TRAIN = SCENARIOS["shoot_then_assault"] + """
[units.train]
type = "WE"
armour = 4
cc = 5
ff = 4
damage_capacity = 3
critical = "lose_character"
[units.battlecar]
type = "CH"
damage_capacity = 1
[[formations]]
name = "Land Train"
side = "defender"
initiative = 2
units = [{ unit = "train", count = 1, characters = ["battlecar"] }]
"""


def test_a_turn_the_kernel_does_not_simulate_runs_on_the_reference_engine(tmp_path):
    """A Land Train with a battlecar in a turn runs on the reference engine only
    (wargame_odds.analysis.epic.engine.turn_kernel_unsupported): with the default engine too, with a note naming the
    field in the result and one line on stderr on the command line."""
    model = epic.loads(WITH_LAND_TRAIN)
    assert epic.engine_for(model) == ("reference", "the Numba kernel does not simulate lose_character on a war "
                                      "engine with a battlecar attached, in a turn yet (units.train.critical)")
    result = epic.simulate(model, trials=10)
    assert result.meta["engine"] == "reference" and any("units.train.critical" in note for note in result.notes)
    assert epic.simulate(model, trials=10, engine="reference").meta["engine"] == "reference"
    path = tmp_path / "train.toml"
    path.write_text(WITH_LAND_TRAIN)
    result = CliRunner().invoke(main, ["epic", str(path), "-n", "100"])
    assert result.exit_code == 0 and "trials=100" in result.stdout
    assert result.stderr.count("\n") == 1 and "units.train.critical" in result.stderr


def test_cli_runs_a_turn_on_the_kernel_by_default():
    result = CliRunner().invoke(main, ["epic", str(TURNS / "devastators_then_assault_marines.toml"), "-n", "5000",
                                       "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert "no_assault" in data["sides"] and set(data["turn"]) == {"1", "2"}
    assert not any("reference engine" in note for note in data["notes"])


def test_compare_falls_back_to_the_reference_engine_with_a_note():
    """compare on turn scenarios uses the kernel; one it cannot run goes to the reference engine, and
    a note names the missing feature (exact pairs either way)."""
    from wargame_odds.analysis.decisions import compare

    model = epic.loads(WITH_LAND_TRAIN)
    result = compare(model, model, trials=40, seed=1)
    assert result.meta["engine"] == "reference" and result.meta["method"] == "exact-pairs"
    assert any("lose_character on a war engine with a battlecar attached, in a turn" in note for note in result.notes)
