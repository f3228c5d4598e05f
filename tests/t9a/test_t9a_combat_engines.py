"""T9A close combat end to end: the kernel and the reference engine against the exact fight (every outcome,
mean and distribution bin at 5 sigma, fixed seeds), against each other, and the charge-only output unchanged
(docs/t9a.md, "Close combat")."""
import hashlib
import json
import math

import numba
import pytest

import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.output.estimates import Probability
from wargame_odds.analysis.t9a.combat.exact import OUTCOMES, fight
from wargame_odds.analysis.t9a.combat.results import KEYS
from combat_cases import CASES, HALBERDS, KNIGHTS, combat_model
from t9a_helpers import SCENARIOS, SIGMA, assert_p_near, assert_results_agree

KERNEL_TRIALS = 200_000
REFERENCE_TRIALS = 8192


def assert_fight_matches_exact(melee: dict, exact: dict):
    """Every ``melee.given_contact`` probability, both means and every bin of the distributions (HP lost,
    round-one margin, round the fight ends in) within 5 sigma of the exact fight."""
    given = melee["given_contact"]
    n = given["a_wins"].n
    for key in OUTCOMES:
        assert_p_near(given[key], exact[key], key)
    for key in ("hp_lost_a", "hp_lost_b", "hp_lost_a_r1", "hp_lost_b_r1"):
        dist = exact[key]
        mean = sum(v * p for v, p in dist.items())
        sd = math.sqrt(max(sum(v * v * p for v, p in dist.items()) - mean * mean, 0))
        assert abs(given[f"e_{key}"].value - mean) <= SIGMA * sd / math.sqrt(n) + 1e-12, key
        got = melee["distributions"][key]
        for v, p in dist.items():
            k = int(got.counts[v - got.offset]) if 0 <= v - got.offset < len(got.counts) else 0
            assert_p_near(Probability(k, n), p, f"{key}={v}")
    got = melee["distributions"]["r1_margin"]
    for v, p in exact["r1_margin"].items():
        k = int(got.counts[v - got.offset]) if 0 <= v - got.offset < len(got.counts) else 0
        assert_p_near(Probability(k, n), p, f"margin {v}")
    ends = given["ends_in_round"]
    for r, p in exact["ends_in_round"].items():
        assert_p_near(Probability(int(ends.counts[(r or len(ends.counts)) - 1]), n), p, f"ends in {r}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_the_exact_fight(case):
    """§C9 (all clauses of §C4–§C8 the case uses; the cases cover Impact Hits, Stomp, Multiple Wounds (D3),
    Hatred, Swiftstride, Aegis, fixed steps, Battle Standard and General, Stubborn, Unbreakable, Light
    Troops, Q-C9, Q-C11 and Q-C12 switches, the §C15 beta to-hit table, static Rank Bonus up to +4 and
    Decimated removal): the kernel against the exact whole fight, round one included."""
    model = combat_model(**CASES[case])
    result = t9a.simulate(model, trials=KERNEL_TRIALS, seed=21)
    assert result.tree["melee"]["given_contact"]["a_wins"].n == KERNEL_TRIALS     # the charge always arrives
    assert_fight_matches_exact(result.tree["melee"], fight(model.combat))


@pytest.mark.parametrize("case", ["knights_vs_spears", "beasts_vs_halberds"])
def test_reference_matches_the_exact_fight(case):
    """§C9: the reference engine (dice by dice) against the exact fight."""
    model = combat_model(**CASES[case])
    result = t9a.simulate(model, trials=REFERENCE_TRIALS, seed=22, engine="reference")
    assert_fight_matches_exact(result.tree["melee"], fight(model.combat))


def test_kernel_and_reference_agree_after_stand_and_shoot():
    """§3.3 then §C9: the target stands and shoots, the charger's casualties come off before contact (HP lost
    to the volley are not combat HP); a charge that may fail (needed 7 on 2D6): both engines, every
    estimate within 5 sigma of each other."""
    model = combat_model(target={"reaction": "stand_and_shoot",
                                 "shooting": {"shots": 10, "to_hit": 3, "to_wound": 3, "weapon_range": 24}},
                         distance=15.0)
    assert model.chargers[0].models == 5 and model.chargers[0].armour_save == 2   # from the unit (Armour 5)
    kernel = t9a.simulate(model, trials=KERNEL_TRIALS, seed=23)
    reference = t9a.simulate(model, trials=REFERENCE_TRIALS, seed=23, engine="reference")
    assert assert_results_agree(kernel, reference) > 60


def test_unconditional_counts_every_trial():
    """§C11: ``unconditional`` counts the same fights over all trials (a charge that fails fights no combat:
    no win, no HP lost); ``given_contact`` over the trials where the charger arrived (2D6 ≥ 7: 21/36)."""
    result = t9a.simulate(combat_model(distance=15.0), trials=KERNEL_TRIALS, seed=24)
    melee, arrives = result.tree["melee"], result["chargers", "Charger", "arrives"]
    assert_p_near(arrives, 21 / 36, "arrives")
    for key in KEYS:
        given, every = melee["given_contact"][key], melee["unconditional"][key]
        if isinstance(given, Probability):
            assert (given.k, given.n, every.n) == (every.k, arrives.k, KERNEL_TRIALS), key
        elif key.startswith("e_"):
            assert math.isclose(every.value, given.value * arrives.k / KERNEL_TRIALS, rel_tol=1e-12), key
    ends = melee["unconditional"]["ends_in_round"]
    assert ends.total == arrives.k and ends.n == KERNEL_TRIALS


def test_same_seed_same_combat_numbers_any_threads_or_chunks():
    """Runner contract: the seed alone fixes the combat's numbers (threads, chunk sizes); trial streams too."""
    assert numba.config.NUMBA_NUM_THREADS >= 2
    model = combat_model(**CASES["beasts_vs_halberds"])
    base = t9a.simulate(model, trials=20_000, seed=4, threads=1, chunk_trials=4096).to_json()
    for threads, chunk in ((2, 4096), (2, None), (1, 12_288)):
        assert t9a.simulate(model, trials=20_000, seed=4, threads=threads, chunk_trials=chunk).to_json() == base
    job = t9a.KernelJob(model, trial_streams=True)
    whole = job.run_chunk(1, 2, 0, 3 * 4096)
    parts = sum(job.run_chunk(1, 2, b, 4096) for b in range(3))
    assert (whole == parts).all()


#: SHA-256 (16 hex) of the JSON, the text with distributions and the trace of each shipped charge-only scenario
#: (50,000 trials, seed 3) on main at 66cb548, before close combat existed.
CHARGE_ONLY = {"flee_reaction": "d9dd93da705181dd", "flee_redirect_2022": "ebaa1e5c66770c5d",
               "single_charge_9in": "408cd2ab4d734e40", "stand_and_shoot": "44e263b98e65fcfb",
               "swiftstride_cavalry": "7cb0634d0459fbf8", "three_chargers": "56d0d6416eed77da"}


@pytest.mark.parametrize("name", sorted(CHARGE_ONLY))
def test_a_file_without_combat_gives_todays_output(name):
    """Issue 31 §C3: a charge file without ``[combat]`` gives byte for byte what it gave before close combat
    (JSON, text and trace)."""
    model = t9a.load(SCENARIOS / f"{name}.toml")
    result = t9a.simulate(model, trials=50_000, seed=3, progress=False)
    text = result.to_json() + "\n" + result.text(distributions=True) + "\n" + t9a.trace(model, seed=3)
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == CHARGE_ONLY[name]


def test_melee_json_has_exactly_the_issue_keys():
    """Issue 31 §C2: ``melee.given_contact`` and ``melee.unconditional`` hold exactly the listed keys:
    probabilities {p, ci95, count}, means {mean, mean_ci95}, ``ends_in_round`` a distribution ending in
    "unresolved"; the distributions and the start facts beside them."""
    model = combat_model(dict(KNIGHTS, models=10), HALBERDS, combat={"rounds": 2})
    data = json.loads(t9a.simulate(model, trials=8192, seed=1).to_json())
    melee = data["melee"]
    assert set(melee) == {"given_contact", "unconditional", "distributions"}
    for node in ("given_contact", "unconditional"):
        assert list(melee[node]) == list(KEYS)
        for key, value in melee[node].items():
            if key.startswith("e_"):
                assert set(value) == {"mean", "mean_ci95"} and value["mean_ci95"][0] <= value["mean"]
            elif key == "ends_in_round":
                assert value["values"] == [1, 2, "unresolved"] and math.isclose(sum(value["p"]), 1.0)
            else:
                assert set(value) == {"p", "ci95", "count"}
    assert set(melee["distributions"]) == {"hp_lost_a_r1", "hp_lost_b_r1", "hp_lost_a", "hp_lost_b", "r1_margin"}
    units = data["melee_setup"]["units"]
    assert units["charger"]["full_ranks"] == 2 and units["target"]["full_ranks"] == 4
    assert units["target"]["steadfast"] and units["target"]["rank_bonus"] == 3
    assert math.isclose(units["target"]["p_caught_if_breaks"], 721 / 1296)
