"""Brute force: the race's pick among 31 enumerated detachments against the best that rank found at 200,000 trials
a cell (tests/decisions/data/list_search_brute_force.json, written by scripts/list_search_brute_force.py)."""
import json
from pathlib import Path

from wargame_odds.analysis.decisions.list_search_core import list_search

FIXTURE = json.loads((Path(__file__).parent / "data" / "list_search_brute_force.json").read_text(encoding="utf-8"))
DELTA = 1.0


def test_the_race_picks_the_brute_force_best_or_one_within_delta():
    scores = FIXTURE["scores"]
    res = list_search(dict(FIXTURE["definition"], indifference=DELTA), seed=9)
    f = res.frame
    assert set(f.candidate) == set(scores) and res.guarantee["met"]
    pick = f[f.status == "best"].candidate.iloc[0]
    best = max(scores, key=lambda n: scores[n]["score"])
    # the fixture's own noise: 5σ of each of the two scores (a 95 % half-width is 1.96σ)
    noise = 5 * ((scores[pick]["ci95_hi"] - scores[pick]["ci95_lo"]) / 3.92
                 + (scores[best]["ci95_hi"] - scores[best]["ci95_lo"]) / 3.92)
    assert scores[best]["score"] - scores[pick]["score"] <= DELTA + noise, (pick, best)
    second = sorted(s["score"] for s in scores.values())[-2]
    if scores[best]["score"] - second >= DELTA + noise:
        assert pick == best
    assert res.race["trials"] < res.race["naive_trials"]


def test_reversed_candidates_and_two_threads_give_the_same_json():
    """The screen, KN and confirmation with 31 candidates: the order and the threads change nothing."""
    def plain(result):
        data = json.loads(result.to_json())
        data.pop("run")
        return data

    definition = dict(FIXTURE["definition"], indifference=DELTA)
    first = plain(list_search(definition, seed=4, threads=1))
    assert plain(list_search(definition, seed=4, threads=2, reverse=True)) == first
    assert first["race"]["dropped_per_look"][0] > 0  # the screen ran and dropped some
