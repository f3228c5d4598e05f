"""The race's statistics on a stub system (known Bernoulli chances on common stream keys, no Numba)."""
import numpy as np
import pytest

from wargame_odds.analysis.decisions.race import (
    Race, StubSystem, guarantee, kn_constants, single_stage_trials, statement, status)

WEIGHTS = np.array([3, 2, 2, 1, 1, 1.0])
DELTA = 1.0


def planted(seed: int, k: int = 21, spread: float = 0.12):
    """Best exactly δ (points) ahead of ``k − 1`` near-clones whose chances differ per opponent; shuffled."""
    rng = np.random.default_rng(1000 + seed)
    wn = WEIGHTS / WEIGHTS.sum()
    base = rng.uniform(0.4, 0.6, len(WEIGHTS))
    p = np.empty((k, len(WEIGHTS)))
    p[0] = base
    for i in range(1, k):
        noise = rng.uniform(-spread, spread, len(WEIGHTS))
        p[i] = base + noise - noise @ wn - DELTA / 100
    assert ((p > 0) & (p < 1)).all()
    assert np.allclose(100 * (p[0] - p[1:]) @ wn, DELTA)
    perm = rng.permutation(k)
    return p[perm], int(np.flatnonzero(perm == 0)[0])


def test_kn_constants_match_the_formula():
    eta, h2 = kn_constants(21, 10, 0.025)
    assert eta == pytest.approx(0.5 * ((2 * 0.025 / 20) ** (-2 / 9) - 1))
    assert h2 == pytest.approx(2 * eta * 9)


def test_planted_best_is_named_first_at_least_181_of_200_and_costs_less_than_half_the_single_stage_plan():
    """The dice are shared in 80 % of the trials (the rest fall out of step), so KN has real noise to beat:
    with ``h²`` a hundred times too small this names the best in only 167 of 200."""
    correct, trials, naive = 0, 0, 0
    for seed in range(200):
        p, best = planted(seed)
        result = Race(StubSystem(p, seed=seed, shared=0.8), len(p), WEIGHTS, delta=DELTA).run()
        assert result.resolved
        correct += result.winner == best
        trials += result.selection_trials
        naive += result.naive_trials
    assert correct >= 181
    assert trials < naive / 2


def test_pairing_kn_uses_fewer_observations_than_independent_dice():
    for seed in range(3):
        p, best = planted(seed, k=6)
        paired = Race(StubSystem(p, seed=seed, shared=0.8), len(p), WEIGHTS, delta=DELTA, screen=False).run()
        unpaired = Race(StubSystem(p, seed=seed, shared=0.8), len(p), WEIGHTS, delta=DELTA, screen=False,
                        common_dice=False).run()
        assert paired.trials < unpaired.trials


def test_paired_variance_of_close_candidates_is_smaller():
    p, _ = planted(0, k=2)
    stub = StubSystem(p, seed=0, shared=0.8)
    paired = [np.diff(stub(np.arange(2), (2, b), 256) @ WEIGHTS)[0] for b in range(200)]
    single = [(stub(np.array([1]), (2, b, 1), 256) - stub(np.array([0]), (2, b, 2), 256)) @ WEIGHTS
              for b in range(200)]
    assert np.var(single) / np.var(paired) > 1.5


def test_budget_stop_prints_no_guarantee():
    p, _ = planted(0)
    result = Race(StubSystem(p, seed=0), len(p), WEIGHTS, delta=0.05, max_trials=400_000).run()
    assert not result.resolved and result.winner is None and result.trials <= 400_000
    block = guarantee(result, 0.05, 95)
    assert not block["met"]
    assert block["statement"].startswith(f"not resolved: {len(result.survivors)} candidates within ")
    assert "95 %" not in block["statement"] and not result.confirmed
    assert {status(result, i, 0.05) for i in result.survivors} == {"racing"}


def test_resolved_race_states_the_guarantee_and_confirms_on_fresh_dice():
    p, best = planted(3)
    result = Race(StubSystem(p, seed=3), len(p), WEIGHTS, delta=DELTA).run()
    block = guarantee(result, DELTA, 95)
    assert block["met"] and block["statement"] == statement(DELTA, 95)
    assert block["statement"] == ("If one choice is at least 1 point better than every other, this search names "
                                  "it first at least 95 % of the time; choices within 1 point of it count as "
                                  "equally good.")
    assert result.confirmed[0] == result.winner and 5 <= len(result.confirmed) <= 10
    wn = WEIGHTS / WEIGHTS.sum()
    for i in result.confirmed:  # 5σ rule: the interval's half-width is ~2σ, so 2.5 half-widths
        est, lo, hi = result.score[i]
        assert abs(est - 100 * p[i] @ wn) <= 2.5 * (hi - lo) / 2 + 1e-9
    assert status(result, result.winner, DELTA) == "best"
    assert {status(result, i, DELTA) for i in range(len(p))} <= {"best", "within", "behind", "dropped"}


def test_screen_drops_the_clearly_worse_only():
    p, best = planted(1, k=8)
    p = np.vstack([p, p[:3] - 0.3])  # three candidates 30 points worse everywhere
    result = Race(StubSystem(p, seed=1), len(p), WEIGHTS, delta=DELTA).run()
    assert {i for i, where in result.dropped_at.items() if where == "screen"} == {8, 9, 10}
    assert result.winner == best


def test_reordering_candidates_changes_nothing():
    p, best = planted(5, k=12)
    order = np.arange(len(p))[::-1]
    a = Race(StubSystem(p, seed=5, shared=0.8), len(p), WEIGHTS, delta=DELTA).run()
    b = Race(StubSystem(p[order], seed=5, shared=0.8, ids=order), len(p), WEIGHTS, delta=DELTA).run()
    assert order[b.winner] == a.winner == best
    assert {int(order[i]): v for i, v in b.score.items()} == a.score
    assert np.array_equal(b.race_mean[np.argsort(order)], a.race_mean)


def test_single_stage_plan_grows_with_candidates_and_shrinks_with_delta():
    assert single_stage_trials(21, 500.0, 1.0, 0.05) > single_stage_trials(2, 500.0, 1.0, 0.05)
    assert single_stage_trials(21, 500.0, 2.0, 0.05) < single_stage_trials(21, 500.0, 1.0, 0.05)
    assert single_stage_trials(1, 500.0, 1.0, 0.05) == 0


def test_two_candidates_is_a_sequential_paired_test():
    p, best = planted(7, k=2)
    result = Race(StubSystem(p, seed=7), 2, WEIGHTS, delta=DELTA).run()
    assert result.winner == best and "screen" not in result.dropped_at.values()


def test_batches_are_enlarged_near_certain_chances_with_a_note():
    p = np.full((4, 2), 0.99)
    p[0] += 0.005
    result = Race(StubSystem(p, seed=1), 4, [1, 1], delta=DELTA).run()
    assert 500 <= result.batch_trials <= 4096  # ~10 expected failures at the screen's pooled ~1 %
    assert any(f"batches enlarged to {result.batch_trials} trials" in n for n in result.notes)
    assert Race(StubSystem(np.full((4, 2), 0.5), seed=1), 4, [1, 1], delta=DELTA).run().batch_trials == 128


def test_exact_twins_go_to_the_lowest_tiebreak_in_any_order():
    """Two candidates with the same chances meet the same dice: their outcomes tie exactly (as a Captain and a
    Librarian that change nothing do); the canonical tiebreak, not the order given, decides."""
    p, best = planted(2, k=6)
    p = np.vstack([p, p[best]])  # candidate 6 is candidate `best`'s twin
    order = np.arange(len(p))[::-1]
    a = Race(StubSystem(p, seed=2), len(p), WEIGHTS, delta=DELTA).run()
    b = Race(StubSystem(p[order], seed=2, ids=order), len(p), WEIGHTS, delta=DELTA, tiebreak=order).run()
    assert a.winner == best and order[b.winner] == best
    assert [int(order[i]) for i in b.confirmed] == a.confirmed
