"""Issue 12 §5, list building in points: points destroyed, points lost and their swing in compare and
rank (means with intervals), the estimator section, and the note when batch means raises the trials."""
import pytest

from wargame_odds.analysis.decisions import compare, matchup, rank
from wargame_odds.analysis.decisions.api import POINT_COLUMNS, points_trade
import wargame_odds.analysis.epic as epic


def _duel(cc: int, points: int | None = None) -> dict:
    """One INF unit (armour 5+, CC as given) in base contact, its formation worth ``points``."""
    return {"name": f"cc{cc}", "units": {f"u{cc}": {"type": "INF", "armour": 5, "cc": cc}},
            "formations": [{"name": f"cc{cc}", "initiative": 1, "points": 10 * (7 - cc) if points is None else points,
                            "units": [{"unit": f"u{cc}", "count": 1, "engaged": "bc"}]}]}


def test_points_trade_is_points_times_p_destroyed_with_summed_limits():
    """§5: points destroyed = Σ enemy points × P(destroyed), points lost the same for one's own side,
    swing = destroyed − lost; the interval sums the Wilson limits (perfectly correlated losses)."""
    model = matchup(_duel(3), _duel(4))
    result = epic.simulate(model, trials=20_000, seed=2)
    trade = points_trade(model, result, "attacker")
    own, enemy = result["formations", "cc3", "destroyed"], result["formations", "cc4", "destroyed"]
    assert trade["points_destroyed"] == pytest.approx((30 * enemy.p, 30 * enemy.ci95[0], 30 * enemy.ci95[1]))
    assert trade["points_lost"] == pytest.approx((40 * own.p, 40 * own.ci95[0], 40 * own.ci95[1]))
    d, lost = trade["points_destroyed"], trade["points_lost"]
    assert trade["points_swing"] == pytest.approx((d[0] - lost[0], d[1] - lost[2], d[2] - lost[1]))
    assert 0 < enemy.p < 1 and 0 < own.p < 1  # both can happen: the test sees both terms


def test_points_trade_needs_points_on_every_formation():
    no_points = _duel(3)
    del no_points["formations"][0]["points"]
    model = matchup(no_points, _duel(4))
    assert points_trade(model, epic.simulate(model, trials=4096), "attacker") is None


def test_compare_and_rank_report_points_per_option_and_over_the_meta():
    """§5: compare gives each option's points destroyed / lost / swing against each opponent and as the
    weighted meta; rank gives each option's weighted values; both equal points_trade of the cells."""
    opponents, weights = [_duel(4), _duel(5)], [3, 1]
    result = compare(_duel(3), _duel(2), opponents, weights=weights, trials=4096, method="exact-pairs")
    rows = result.table()
    for j, opponent in enumerate(opponents):
        for option, suffix in (("cc3", "_a"), ("cc2", "_b")):
            model = matchup(_duel(int(option[2:])), opponent)
            trade = points_trade(model, result.option_results[(option, j)], "attacker")
            for name in POINT_COLUMNS:
                row = rows.iloc[j]
                assert (row[f"{name}{suffix}"], row[f"{name}{suffix}_lo"], row[f"{name}{suffix}_hi"]) == \
                    pytest.approx(trade[name])
    meta = rows.iloc[-1]
    w = [0.75, 0.25]
    assert meta["points_swing_a"] == pytest.approx(sum(wj * rows.iloc[j]["points_swing_a"] for j, wj in enumerate(w)))
    ranked = rank([_duel(3), _duel(2)], opponents, weights=weights, trials=4096).table()
    assert {"points_destroyed", "points_lost_lo", "points_swing_hi"} <= set(ranked.columns)
    assert (ranked.points_destroyed_lo <= ranked.points_destroyed).all()
    assert (ranked.points_destroyed <= ranked.points_destroyed_hi).all()


def test_estimator_columns_have_their_own_section_and_raised_trials_are_explained():
    """§5: what pairing bought is printed in its own section, in plain words (issue 28 §3: no `variance_ratio` or
    `trials_saved` in the text; the keys stay in --json), and batch means raising 4,096 trials to 30 batches says
    so in one line."""
    result = compare(_duel(3), _duel(2), [_duel(4)], trials=4096)
    text = str(result)
    main, estimator = text.split("\nDetails for those who ask: what pairing by common random numbers bought "
                                 "(batch-means)")
    assert "independent runs would need" in estimator and "trials saved by pairing" in estimator
    assert "variance_ratio" not in text and "trials_saved" not in text
    assert "variance_ratio" in result.to_json()
    raised = [n for n in result.notes if n.startswith("trials raised from 4,096 to 122,880")]
    assert len(raised) == 1


def test_battle_trade_counts_units_left_kills_and_kills_per_100_points():
    """Issue 28 §3: units left on both sides and enemy units killed (means after the end phase), and kills per 100
    points spent.  A duel of one unit a side: units left + units killed = 1 exactly, in the means and their limits,
    and kills per 100 points = kills × 100 / the option's points."""
    from wargame_odds.analysis.decisions.api import battle_trade

    model = matchup(_duel(3), _duel(4))
    result = epic.simulate(model, trials=20_000, seed=2)
    trade = battle_trade(model, result, "attacker", 30)
    killed = result["formations", "cc4", "destroyed"]
    assert trade["kills"][0] == pytest.approx(killed.p) and trade["enemy_units_left"][0] == pytest.approx(1 - killed.p)
    assert trade["units_left"][0] == pytest.approx(1 - result["formations", "cc3", "destroyed"].p)
    assert trade["kills_per_100_points"] == pytest.approx(tuple(x * 100 / 30 for x in trade["kills"]))
    assert "damage_dealt" not in trade  # no war engine: no damage points
    ranked = rank([_duel(3), _duel(2)], [_duel(4)], trials=4096)
    assert {"units_left", "enemy_units_left_lo", "kills_per_100_points_hi"} <= set(ranked.table().columns)
    assert "What is left and what it cost" in str(ranked) and "kills per 100 points" in str(ranked)
    compared = compare(_duel(3), _duel(2), [_duel(4)], trials=4096)
    assert {"units_left_a", "kills_b", "per_100_points_a"} <= set(compared.table().columns)
    assert "win chance per 100 points" in str(compared)
