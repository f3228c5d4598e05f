"""Issue 37 §2 ("rank gains the same honesty"): rank's options meet each opponent on the same dice (the stream of a
cell never depends on the option), and a paired interval by batch means says how far each option is behind the best
and which are within δ of it."""
import numpy as np
import pytest

from wargame_odds.analysis.decisions import api, rank
from wargame_odds.analysis.intake.errors import UserError

ASSAULT = "netea:space-marine-codex-astartes/assault"
TACTICAL = "netea:space-marine-codex-astartes/tactical"
DEVASTATOR = "netea:space-marine-codex-astartes/devastator"
META = [("netea:ork-war-horde/warband", 2), ("netea:ork-war-horde/kommando-warhorde", 1)]


def _duel(cc: int, armour: int = 5) -> dict:
    """A force of one INF unit (armour, cc, no FF) in base contact (as in test_decisions.py)."""
    return {"name": f"cc{cc}", "units": {f"u{cc}": {"type": "INF", "armour": armour, "cc": cc}},
            "formations": [{"name": f"cc{cc}", "initiative": 1, "points": 10 * (7 - cc),
                            "units": [{"unit": f"u{cc}", "count": 1, "engaged": "bc"}]}]}


def _by_option(result) -> dict:
    return {r["option"]: r for r in result.table().to_dict("records")}


def test_an_options_numbers_do_not_depend_on_the_other_options_or_their_order():
    """Common random numbers: the stream of option i against opponent j is keyed (seed, j, b), never by i."""
    ab = _by_option(rank([ASSAULT, TACTICAL, DEVASTATOR], META, trials=8192, seed=4))
    ba = _by_option(rank([DEVASTATOR, TACTICAL], META, trials=8192, seed=4))
    for name in (TACTICAL.split("/")[-1].title(), DEVASTATOR.split("/")[-1].title()):
        assert ab[name]["score"] == ba[name]["score"] and ab[name]["ci95_lo"] == ba[name]["ci95_lo"]


def test_an_option_against_itself_is_exactly_level_and_within_delta():
    """The same formation twice: the same dice, so every batch gives the same score and the paired difference is 0."""
    table = rank([TACTICAL, TACTICAL, ASSAULT], META, trials=8192, seed=5).table()
    twins = table[table.option.str.startswith("Tactical")]
    assert len(twins) == 2 and twins.score.nunique() == 1
    assert (twins.behind_best == 0).all() and (twins.behind_lo == 0).all() and twins.within_delta.all()


def test_the_paired_interval_covers_the_difference_and_rules_out_a_clear_loser():
    table = rank([TACTICAL, DEVASTATOR], META, trials=20_000, seed=6).table()
    best, other = table.iloc[0], table.iloc[1]
    assert best.behind_best == 0 and best.within_delta
    assert other.behind_lo <= best.score - other.score <= other.behind_hi  # the paired mean is the score difference
    assert other.behind_best == pytest.approx(best.score - other.score, abs=1e-12)
    assert other.behind_lo > 0.01 and not other.within_delta  # Devastators charging are well behind


def test_pairing_narrows_the_interval_of_close_options():
    """Two near-identical options (a duel CC 3+ and CC 4+ unit against the same defenders): the paired interval of
    their difference is narrower than the independent one (the sum of the two scores' variances)."""
    table = rank([_duel(3), _duel(4)], [(_duel(4), 1), (_duel(5), 1)], trials=122_880, seed=7).table()
    other = table.iloc[1]
    paired_half = (other.behind_hi - other.behind_lo) / 2
    independent_half = 1.96 * np.sqrt(sum(((r.ci95_hi - r.ci95_lo) / 3.92) ** 2 for r in table.itertuples()))
    assert paired_half < independent_half / 1.5


def test_a_precision_run_has_no_paired_columns_and_bad_indifference_is_refused():
    table = rank([TACTICAL, ASSAULT], META, precision=0.05, seed=1).table()
    assert "behind_best" not in table
    for bad in (0, -1, 51, float("nan"), "1", True):
        with pytest.raises(UserError, match="indifference"):
            rank([TACTICAL, ASSAULT], META, trials=4096, indifference=bad)


def test_batches():
    assert api.rank_batches(100_000, "kernel") == (30, 3334)
    assert api.rank_batches(500, "reference") == (30, 17)
    assert api.rank_batches(200_000, "kernel") == api.batch_plan(200_000)
