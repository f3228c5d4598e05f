"""matrix, sweep, compare, rank and cumulative: cells equal single runs, exact coverage, hand sums."""
import json
import math
from fractions import Fraction

import matplotlib
import numpy as np
import pytest
from scipy import stats

import wargame_odds.analysis.epic as epic
import wargame_odds.analysis.gdb as gdb
import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.decisions import compare, cumulative, matchup, matrix, rank, sweep
from wargame_odds.analysis.epic.model import EpicScenario
from wargame_odds.analysis.output.estimates import wilson_interval

matplotlib.use("Agg")
SCENARIO = "analysis/scenarios/epic/assault_marines_vs_warband.toml"
ASSAULT = "netea:space-marine-codex-astartes/assault"
TERMINATOR = "netea:space-marine-codex-astartes/terminator"
WARBAND = "netea:ork-war-horde/warband"
KOMMANDOS = "netea:ork-war-horde/kommando-warhorde"
N = 2 * 4096 + 123  # crosses stream blocks


def _duel(cc: int, armour: int = 5) -> dict:
    """A force of one INF unit (armour, cc, no FF) in base contact."""
    return {"name": f"cc{cc}", "units": {f"u{cc}": {"type": "INF", "armour": armour, "cc": cc}},
            "formations": [{"name": f"cc{cc}", "initiative": 1, "points": 10 * (7 - cc),
                            "units": [{"unit": f"u{cc}", "count": 1, "engaged": "bc"}]}]}


def exact_duel_attacker_wins(cc_a: int, cc_d: int = 4, armour: int = 5, rounds: int = 10) -> Fraction:
    """P(attacker wins) of a 1-vs-1 assault (docs/epic-engine.md §1-§5), by enumeration.

    Each round both units strike at once (hit on D6 >= CC, then an armour save); a lone kill ends
    the assault (wipe-out or stall), a double kill has no winner, otherwise both sides roll the
    highest of 2D6 with equal modifiers and a tie fights again, up to ``rounds`` rounds.
    """
    fail = Fraction(armour - 1, 6)
    ka, kd = Fraction(7 - cc_a, 6) * fail, Fraction(7 - cc_d, 6) * fail
    highest = [Fraction(h * h - (h - 1) ** 2, 36) for h in range(1, 7)]
    win_roll = sum(highest[a] * highest[d] for a in range(6) for d in range(6) if a > d)
    tie = sum(p * p for p in highest)
    alive = (1 - ka) * (1 - kd)
    per_round = ka * (1 - kd) + alive * win_roll
    return sum(per_round * (alive * tie) ** r for r in range(rounds))


def test_matrix_cells_equal_single_runs_with_the_same_cell_key():
    result = matrix([ASSAULT, _duel(3)], [WARBAND, KOMMANDOS], base=SCENARIO, trials=N, seed=7, cell=(5,))
    table = result.table()
    assert len(result.cells) == 4 and {"ci95_lo", "ci95_hi", "estimate", "side"} <= set(table.columns)
    for (i, j), cell in result.cells.items():
        single = epic.simulate(matchup([ASSAULT, _duel(3)][i], [WARBAND, KOMMANDOS][j], base=SCENARIO),
                               trials=N, seed=7, cell=(5, i, j))
        assert json.loads(single.to_json()) == json.loads(cell.to_json())
        rows = table[(table.attacker == result.attackers[i]) & (table.defender == result.defenders[j])]
        assert rows.estimate.tolist() == single.table().estimate.tolist()
    wide = result.pivot("attacker_wins")
    assert wide.loc["Assault", "Warband"] == result.cells[(0, 0)]["sides", "attacker_wins"].p
    destroyed = result.pivot("destroyed", entity="defender")
    assert destroyed.loc["cc3", "Kommando Warhorde"] == result.cells[(1, 1)]["formations", "Kommando Warhorde",
                                                                            "destroyed"].p
    assert table.points_attacker.tolist()[0] == 175 and set(table.points_defender) == {200, 150}


def test_sweep_cells_equal_single_runs_with_the_same_cell_key():
    values = [1, 3, 5]
    result = sweep(SCENARIO, "formations[2].units[0].count", values, trials=N, seed=3)
    base = epic.load(SCENARIO).model_dump()
    for k, value in enumerate(values):
        base["formations"][2]["units"][0]["count"] = value
        single = epic.simulate(EpicScenario.model_validate(base), trials=N, seed=3, cell=(k,))
        assert json.loads(single.to_json()) == json.loads(result.cells[k].to_json())
        rows = result.table()[result.table().value == value]
        assert rows.estimate.tolist() == single.table().estimate.tolist()
    switch = sweep(SCENARIO, "rules.result_dice", ["highest", "sum"], trials=4096, seed=3)
    assert switch.cells[1].meta["rules"]["result_dice"] == "sum"


def test_sweep_reaches_other_systems():
    path = "analysis/scenarios/gdb/column_vs_line.toml"
    result = sweep(path, "charger.distance", [4.0, 8.0], trials=4096, seed=1)
    model = gdb.load(path)
    for k, value in enumerate([4.0, 8.0]):
        single = gdb.simulate(model.replace("charger.distance", value), trials=4096, seed=1, cell=(k,))
        assert result.cells[k].table().equals(single.table())
    # a note every value carries (the placeholder tables, docs/gdb.md §2.3) is printed once, unlabelled
    placeholder = [n for n in result.cells[0].notes if n.startswith("PLACEHOLDER")]
    assert placeholder and [n for n in result.notes if "PLACEHOLDER" in n] == placeholder
    path = "analysis/scenarios/t9a/single_charge_9in.toml"
    result = sweep(path, "chargers[0].distance", [7.0, 11.0], trials=4096, seed=1)
    text = open(path).read()
    for k, value in enumerate([7.0, 11.0]):
        single = t9a.simulate(t9a.loads(text.replace("distance = 9.0", f"distance = {value}")), trials=4096, seed=1,
                              cell=(k,))
        assert result.cells[k].table().equals(single.table())


def _within_5_sigma(lo, hi, exact):
    """The exact value lies within 5 sigma of a 95 % interval's centre (sigma = half-width / 1.96): a
    fixed-seed check that fails only for a wrong estimate or interval, not once in 20 seeds."""
    return abs((lo + hi) / 2 - exact) < 5 * (hi - lo) / 2 / 1.96


@pytest.mark.parametrize("method, trials", [("batch-means", 1 << 20), ("exact-pairs", 20_000)])
def test_paired_interval_is_narrower_and_both_center_on_the_exact_difference(method, trials):
    exact = float(exact_duel_attacker_wins(3) - exact_duel_attacker_wins(4))
    pa, pb = float(exact_duel_attacker_wins(3)), float(exact_duel_attacker_wins(4))
    result = compare(_duel(3), _duel(4), [_duel(4)], trials=trials, seed=11, method=method)
    paired = result.table().iloc[0]
    independent = compare(_duel(3), _duel(4), [_duel(4)], trials=trials, seed=11, paired=False).table().iloc[0]
    assert result.trials == trials  # 64 batches of 4 blocks, or exactly the trials asked for
    for row in (paired, independent):
        assert _within_5_sigma(row.ci95_lo, row.ci95_hi, exact)
        for p, est in ((pa, row.p_a), (pb, row.p_b)):  # the margins within 5 sigma of the exact values
            assert abs(est - p) < 5 * math.sqrt(p * (1 - p) / trials)
    assert _within_5_sigma(paired.independent_ci95_lo, paired.independent_ci95_hi, exact)
    assert paired.ci95_hi - paired.ci95_lo < 0.6 * (independent.ci95_hi - independent.ci95_lo)
    assert paired.variance_ratio > 3 and paired.trials_saved == pytest.approx((paired.variance_ratio - 1) * trials)
    assert independent.variance_ratio is None


def test_batch_means_do_not_depend_on_chunks_or_threads():
    runs = [compare(_duel(3), _duel(4), [_duel(4), _duel(2)], trials=65 * 4096, seed=5, chunk_trials=chunk,
                    threads=threads) for chunk, threads in ((4096, 1), (None, 2), (4096, 2))]
    assert runs[0].meta["batches"] == 33 and runs[0].trials == 66 * 4096  # batches of 2 blocks: 2 or 1 chunks
    for other in runs[1:]:
        assert other.table().equals(runs[0].table()) and other.batches.equals(runs[0].batches)
        for key, res in runs[0].option_results.items():
            assert json.loads(other.option_results[key].to_json()) == json.loads(res.to_json())


def test_batch_plan_rounds_up_to_at_least_30_equal_batches_of_whole_blocks():
    from wargame_odds.analysis.decisions.api import batch_plan

    assert batch_plan(1) == (30, 4096)
    assert batch_plan(40 * 4096) == (40, 4096)
    assert batch_plan(1_000_000) == (62, 4 * 4096)  # 245 blocks
    assert batch_plan(10_000_000) == (63, 39 * 4096)  # 2442 blocks


@pytest.mark.parametrize("method", ["batch-means", "exact-pairs"])
def test_compare_meta_row_is_the_weighted_sum_of_opponent_rows(method):
    result = compare(_duel(3), _duel(4), [_duel(4), _duel(2)], weights=[3, 1], trials=3000, seed=2, method=method)
    t = result.table()
    w = np.array([0.75, 0.25])
    meta = t.iloc[2]
    assert meta.opponent == "meta (weighted)"
    assert meta.difference == pytest.approx(w @ t.difference[:2])
    assert meta.p_a == pytest.approx(w @ t.p_a[:2])
    if method == "exact-pairs":  # MOVER over the opponents' paired intervals
        lo = meta.difference - math.sqrt(np.sum((w * (t.difference[:2] - t.ci95_lo[:2])) ** 2))
        hi = meta.difference + math.sqrt(np.sum((w * (t.ci95_hi[:2] - t.difference[:2])) ** 2))
    else:  # a t-interval over the weighted per-batch differences
        per_batch = result.batches.pivot(index="batch", columns="opponent", values="difference")[t.opponent[:2]]
        assert per_batch.mean().tolist() == pytest.approx(t.difference[:2].tolist())
        diffs = per_batch.to_numpy() @ w
        half = stats.t.ppf(0.975, len(diffs) - 1) * diffs.std(ddof=1) / math.sqrt(len(diffs))
        lo, hi = diffs.mean() - half, diffs.mean() + half
    assert (meta.ci95_lo, meta.ci95_hi) == pytest.approx((lo, hi))


def test_rank_scores_and_points_efficiency_equal_hand_computations():
    result = rank([_duel(3), _duel(5), _duel(4)], [(_duel(4), 2), (_duel(2), 1)],
                  trials=4096, seed=9)
    cells, table = result.cells, result.table()
    assert table["rank"].tolist() == [1, 2, 3] and table.score.is_monotonic_decreasing
    for row in table.itertuples():
        mine = cells[cells.option == row.option]
        k = np.round(mine.estimate.to_numpy() * mine.trials.to_numpy())
        p = k / mine.trials.to_numpy()
        lo, hi = wilson_interval(k, mine.trials.to_numpy())
        w = np.array([2 / 3, 1 / 3])
        assert row.score == pytest.approx(w @ p)
        assert row.ci95_lo == pytest.approx(w @ p - math.sqrt(np.sum((w * (p - lo)) ** 2)))
        assert row.ci95_hi == pytest.approx(w @ p + math.sqrt(np.sum((w * (hi - p)) ** 2)))
        points = {"cc3": 40, "cc5": 20, "cc4": 30}[row.option]
        assert row.points == points
        assert row.per_100_points == pytest.approx(100 * row.score / points)
        assert row.per_100_points_lo == pytest.approx(100 * row.ci95_lo / points)
    by_points = rank([_duel(3), _duel(5)], [_duel(4)], by="per_100_points", trials=4096, seed=9).table()
    assert by_points.per_100_points.is_monotonic_decreasing


def test_cumulative_tables_match_each_distribution():
    result = epic.simulate(epic.load(SCENARIO), trials=4096, seed=1)
    table = cumulative(result).table()
    for direction in ("at_least", "at_most"):
        rows = table[(table.entity == "Warband") & (table.quantity == "casualties") & (table.direction == direction)]
        expect = result.cumulative("formations", "Warband", "casualties", kind=direction)
        assert rows.p.tolist() == expect.p.tolist() and rows.ci95_hi.tolist() == expect.ci95_hi.tolist()
    dist = result["formations", "Warband", "casualties"]
    rows = table[(table.entity == "Warband") & (table.quantity == "casualties") & (table.direction == "at_least")]
    assert rows.p.iloc[2] == dist.counts[2:].sum() / dist.n
    swept = cumulative(sweep(SCENARIO, "formations[0].blast_markers", [0, 2], trials=4096))
    assert set(swept.table().cell) == {"formations[0].blast_markers = 0", "formations[0].blast_markers = 2"}


def test_every_result_has_the_same_shape():
    results = [matrix([_duel(3)], [_duel(4), _duel(5)], trials=4096),
               sweep(SCENARIO, "formations[0].blast_markers", [0, 1], trials=4096),
               compare(_duel(3), _duel(4), [_duel(4), _duel(5)], trials=500),
               rank([_duel(3), _duel(4)], [_duel(4)], trials=4096),
               cumulative(epic.simulate(epic.load(SCENARIO), trials=4096))]
    for result in results:
        data = json.loads(result.to_json())
        assert data["kind"] == result.kind and data["rows"]
        assert all(("ci95_lo" in row and "ci95_hi" in row) for row in data["rows"])
        assert "<table" in result._repr_html_() and result.to_csv().startswith(result.table().columns[0])
        assert result.plot().axes
    matplotlib.pyplot.close("all")


def test_reference_trial_streams_depend_only_on_the_trial_index():
    """What batch means needs of the reference engine: a trial's dice do not depend on its chunk."""
    from wargame_odds.analysis.decisions.systems import SYSTEMS

    system = SYSTEMS["epic"]
    job = system.job(matchup(_duel(3), _duel(4)), "reference", trial_streams=True)
    whole = job.run_chunk(5, 6, 0, 4096 + 3)
    assert (whole == job.run_chunk(5, 6, 0, 4096) + job.run_chunk(5, 6, 1, 3)).all()
