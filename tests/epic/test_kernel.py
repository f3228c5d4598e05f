"""The Numba kernel against the reference engine (every reported quantity, 5σ), exact small cases,
reproducibility (threads, chunk sizes, precision runs) and flat memory.

The scenarios below together exercise every rule of ``docs/epic-engine.md``; the tag list above each
says which.  Seeds are fixed, so these statistical tests cannot flake; tolerances are 5 standard
errors of the two-sample difference and never widened.
"""
import ast
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from wargame_odds.analysis.epic import simulate
from wargame_odds.analysis.epic.compile import compile_scenario
from wargame_odds.analysis.epic.engine import KernelJob
from wargame_odds.analysis.epic import loads
from wargame_odds.kernels.epic import layout as K
from epic_helpers import SIGMAS, compare_results
from scenario_data import other, scenarios

KERNEL_TRIALS = 1_000_000
REFERENCE_TRIALS = 24_000

HEADER = 'system = "epic"\n'


SCENARIOS = scenarios("kernel")


# A scenario's seed is 20000 + its place here, so that adding a scenario does not redraw the others (new
# names go at the end): with new seeds every rare single value of every distribution is drawn again.
SEED_ORDER = [
    "broken_nearby_withdrawal", "fearless_inspiring_expendable", "first_strike_sniper_d3",
    "intermingled_combined_support", "issue_example", "rule_corrections", "skimmer_macro_invulnerable",
    "skimmers_support_craft", "switches_sum_no_rally", "ties_unresolved", "war_engine_split", "war_engines",
    "we_breach_holofield", "we_degrade_regeneration", "we_knight_shield_living_metal", "we_power_fields_fire",
    "we_shadowfields_disrupt_cover", "we_void_shields_titan_killers", "wipeouts_tsknf",
    "we_knights_automata_necrons", "we_further_self_hit_chained_splash",
]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kernel_matches_reference(name):
    assert sorted(SEED_ORDER) == sorted(SCENARIOS)
    seed = 20_000 + SEED_ORDER.index(name)
    scenario = loads(SCENARIOS[name])
    kernel = simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


TWO_WORDS = other("kernel", "TWO_WORDS")  # more than 64 units a side


def test_two_mask_words_match_reference():
    """Every reported quantity within 5σ of the reference (as the scenarios above), with engaged units in
    both alive-mask words of each side (§9.6 allocation order) and units of word 1 killed: a formation
    losing more units than it has targets in word 0 lost one in word 1."""
    scenario = loads(TWO_WORDS)
    arrays = KernelJob(compile_scenario(scenario)).arrays
    assert arrays.masks.shape[2] == 2
    units = arrays.units
    targets_in_word_0 = {}
    for side, formation in ((0, "Horde"), (1, "Regiment")):  # the side's one assault formation
        targets = units[(units[:, K.U_SIDE] == side) & (units[:, K.U_TARGET] == 1)]
        targets_in_word_0[formation] = int((targets[:, K.U_WORD] == 0).sum())
        assert 0 < targets_in_word_0[formation] < len(targets), (formation, "engaged units in both words")
    kernel = simulate(scenario, trials=KERNEL_TRIALS, seed=20_100)
    reference = simulate(scenario, trials=REFERENCE_TRIALS, seed=20_100, engine="reference")
    for formation, in_word_0 in targets_in_word_0.items():
        casualties = kernel["formations", formation, "casualties"]
        assert casualties.counts[casualties.values > in_word_0].sum() > 0.1 * KERNEL_TRIALS, formation
    failures = compare_results(kernel, reference)
    assert not failures, "two mask words: kernel v reference:\n" + "\n".join(failures)

def test_scenarios_reach_the_rules_they_are_for():
    """The comparison above means something only if the rare branches actually happen."""
    r = {name: simulate(loads(text), trials=200_000, seed=7) for name, text in SCENARIOS.items()}

    def p(name, *path):
        return r[name][path].p

    assert p("ties_unresolved", "sides", "unresolved") > 0.01
    assert r["ties_unresolved"]["sides", "rounds"].counts[1] > 0
    assert p("switches_sum_no_rally", "sides", "unresolved") > 0.01
    assert p("wipeouts_tsknf", "sides", "no_winner") > 0.005
    assert p("wipeouts_tsknf", "sides", "decided_without_roll") > 0.1
    assert p("broken_nearby_withdrawal", "formations", "Gun Line", "destroyed") > 0.05
    assert p("broken_nearby_withdrawal", "formations", "Reserve", "broken_after_assault") > 0.05
    assert r["broken_nearby_withdrawal"]["formations", "Broken Guns", "casualties_mean"].value > 0.05
    assert r["intermingled_combined_support"]["formations", "Militia B", "casualties_mean"].value > 1
    assert p("intermingled_combined_support", "sides", "defender_wins") > 0.05
    assert p("war_engines", "formations", "Stompa Mob", "broken_after_assault") > 0.1

    def mean(name, formation, quantity):
        return r[name]["formations", formation, quantity].value

    # war engines and weapon abilities (docs/epic-engine.md §10): criticals, shields and fields that come back
    # (§10.2, §10.7), end-phase fires and breaches (§10.7), regeneration (§10.8.3)
    for name, formation in (("we_void_shields_titan_killers", "Warhound Pack"),
                            ("we_void_shields_titan_killers", "Stompa Mob"),
                            ("we_knight_shield_living_metal", "Knights")):
        assert p(name, "formations", formation, "critical") > 0.1
    assert p("we_breach_holofield", "formations", "Host", "critical") > 0.05
    assert p("we_degrade_regeneration", "formations", "Battle Titan", "critical") > 0.05
    for name, formation in (("we_void_shields_titan_killers", "Warhound Pack"),
                            ("we_shadowfields_disrupt_cover", "Raiders"), ("we_breach_holofield", "Reaver")):
        assert mean(name, formation, "shields_after_end_phase_mean") > mean(name, formation,
                                                                             "shields_after_assault_mean") + 0.05
    for name, formation in (("we_power_fields_fire", "Gargant Mob"), ("we_breach_holofield", "Reaver")):
        assert mean(name, formation, "damage_taken_mean") > mean(name, formation, "damage_taken_assault_mean") + 0.05
    assert mean("we_degrade_regeneration", "Monoliths", "damage_taken_mean") < \
        mean("we_degrade_regeneration", "Monoliths", "damage_taken_assault_mean") - 0.1
    # an Automaton saving a broken formation's no-save hit (§6.3), Necrons returning (§10.7), criticals
    # with further damage, self hits and splashes (§10.4)
    assert mean("we_knights_automata_necrons", "Sentries", "casualties_mean") > 0.05
    assert mean("we_knights_automata_necrons", "Phalanx", "casualties_mean") < \
        mean("we_knights_automata_necrons", "Phalanx", "casualties_assault_mean") - 0.3
    for formation in ("Brood", "Cult"):
        assert p("we_further_self_hit_chained_splash", "formations", formation, "critical") > 0.2
    assert p("fearless_inspiring_expendable", "formations", "Warband", "rally_passed") > 0.05
    assert p("rule_corrections", "formations", "Rabble", "destroyed") > 0.2
    assert p("rule_corrections", "formations", "Gargants", "broken_after_assault") > 0.1
    assert p("rule_corrections", "formations", "Gargants", "rally_passed") > 0.1


def test_one_against_one_exact():
    """1 v 1 in contact, 4+ to hit, 4+ save, one round: P(kill) = 1/4 each, simultaneous; no kill
    → result roll at equal modifiers (both +1 for no BMs): 505/1296 each, 286/1296 unresolved; both
    killed (1/16) is "no winner" and not "decided without roll" (issue 11 §2)."""
    text = HEADER + """
[rules]
max_rounds = 1
[units.a]
type = "INF"
armour = 4
cc = 4
ff = 4
[[formations]]
name = "A"
side = "attacker"
initiative = 1
units = [{ unit = "a", count = 1, engaged = "bc" }]
[[formations]]
name = "D"
side = "defender"
initiative = 1
units = [{ unit = "a", count = 1, engaged = "bc" }]
"""
    n = 2_000_000
    r = simulate(loads(text), trials=n, seed=3)
    quiet = Fraction(9, 16)
    exact = {
        "attacker_wins": Fraction(3, 16) + quiet * Fraction(505, 1296),
        "defender_wins": Fraction(3, 16) + quiet * Fraction(505, 1296),
        "no_winner": Fraction(1, 16),
        "unresolved": quiet * Fraction(286, 1296),
        "decided_without_roll": Fraction(6, 16),  # a side won by wiping the other out; no winner excluded
    }
    for name, value in exact.items():
        p = float(value)
        got = r["sides", name]
        assert abs(got.p - p) <= SIGMAS * math.sqrt(p * (1 - p) / n), (name, got.p, p)


def test_same_json_for_any_thread_count_chunk_size_and_precision_run():
    scenario = loads(SCENARIOS["issue_example"])
    base = simulate(scenario, trials=3 * 4096 + 100, seed=11, threads=1).to_json()
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, threads=2).to_json() == base
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, chunk_trials=4096).to_json() == base
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, chunk_trials=5000, threads=2).to_json() == base
    first = simulate(scenario, precision=0.004, seed=5, chunk_trials=4096)
    again = simulate(scenario, precision=0.004, seed=5, chunk_trials=4096, threads=1)
    assert first.to_json() == again.to_json()
    assert first.info.precision_reached
    plain = simulate(scenario, trials=first.trials, seed=5)
    assert plain.to_dict()["sides"] == first.to_dict()["sides"]


def test_counts_do_not_grow_with_trials():
    job = KernelJob(compile_scenario(loads(SCENARIOS["issue_example"])))
    small = job.run_chunk(1, 2, 0, 10)
    large = job.run_chunk(1, 2, 0, 300_000)
    assert small.shape == large.shape == (job.compiled.layout.size,)
    assert small.dtype == large.dtype == np.int64
    assert large[job.compiled.layout.offset("attacker_wins"):][:4].sum() == 300_000


def _run_job(job, trials, seed, **kwargs):
    from wargame_odds.analysis.run import runner
    from wargame_odds.analysis.epic.outcome import build_result

    counts, info = runner.run(job, trials=trials, seed=seed, **kwargs)
    return counts, build_result(job.compiled, counts, info)


@pytest.mark.parametrize("name", ["issue_example", "war_engines", "first_strike_sniper_d3"])
def test_trial_streams_do_not_depend_on_chunks_and_change_nothing_statistically(name):
    """With ``trial_streams`` trial t's dice depend only on (seed, cell, t): any chunk size or thread
    count gives the same counts (and 2 blocks = block 0 + block 1), the option does change the dice,
    and the results match block streams on every leaf within 5 sigma."""
    compiled = compile_scenario(loads(SCENARIOS[name]))
    job = KernelJob(compiled, trial_streams=True)
    n = 5 * 4096 + 123
    base, _ = _run_job(job, n, 13, threads=1)
    for chunk, threads in ((4096, 1), (2 * 4096, 2), (10 ** 6, 2)):
        counts, _ = _run_job(job, n, 13, chunk_trials=chunk, threads=threads)
        assert np.array_equal(counts, base), (chunk, threads)
    k0, k1 = 5, 6
    both = job.run_chunk(k0, k1, 0, 2 * 4096)
    assert np.array_equal(both, job.run_chunk(k0, k1, 0, 4096) + job.run_chunk(k0, k1, 1, 4096))
    assert not np.array_equal(both, KernelJob(compiled).run_chunk(k0, k1, 0, 2 * 4096))  # the option is used

    _, per_trial = _run_job(job, KERNEL_TRIALS, 31)
    _, per_block = _run_job(KernelJob(compiled), KERNEL_TRIALS, 31)
    failures = compare_results(per_trial, per_block)
    assert not failures, f"{name}: trial v block streams, {len(failures)} difference(s):\n" + "\n".join(failures)


def test_kernel_helpers_compile_once_whatever_the_call_sites_pass():
    """Issue 12 §1 'no kernel compiled twice for one signature': a helper made by wargame_odds.kernels.jit.njit is
    compiled once for calls that pass constants (typed as literals by Numba) and int32 or int64
    scalars, and computes what Python computes for each call.  It has no wrapper for calls from Python
    (kernels/jit.py): such a call raises TypeError instead of running."""
    from numba import njit as numba_njit

    from wargame_odds.kernels.jit import njit

    @njit()
    def helper(a, flag, row):
        return a + row[0] if flag else a - row[1]

    @numba_njit
    def caller(x, flag, row):
        return (helper(1, True, row), helper(np.int32(2), False, row), helper(x, flag, row),
                helper(row[2], flag, row))

    row = np.array([10, 20, 30], np.int32)
    assert caller(5, False, row) == (11, -18, -15, 10)
    assert len(helper.signatures) == 1, helper.signatures
    with pytest.raises(TypeError, match="called from jitted code only"):
        helper(1, True, row)


def test_the_fingerprint_reads_these_scenarios_without_pytest_or_a_test_module():
    """Issue 38 §6: benchmarks/fingerprint.py reads the kernel tests' scenarios from tests/epic/scenarios through
    tests/epic/scenario_data.py, which is no test module: in a fresh interpreter where importing pytest fails, its
    cases hold every scenario of this module (the ``SCENARIOS`` and ``TWO_WORDS``), and no test module is loaded."""
    code = ("import sys\nsys.modules['pytest'] = None\n"
            "from benchmarks.fingerprint import epic_scenarios\n"
            "cases = epic_scenarios()\n"
            "assert not [m for m in sys.modules if m.startswith('test_')]\n"
            "print(sorted(k.split('::')[1] for k in cases if k.startswith('tests/epic/test_kernel.py::')))\n")
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert ast.literal_eval(run.stdout) == sorted([*SCENARIOS, "TWO_WORDS"])
