"""Issue 37 §3 "meta sensitivity": the smallest change of the meta's weights that lets a rival draw level with #1,
exact on crafted leads, and said in one sentence of a list search's answer."""
import json

import pytest

from wargame_odds.analysis.decisions import list_search_core as ls


@pytest.mark.parametrize("lead, weights, moved, sources, target", [
    ([-0.10, 0.05], [0.5, 0.5], 100 / 6, [0], 1),          # 1/6 of the weight from opponent 0 to opponent 1
    ([-0.2, -0.1, 0.1], [0.2, 0.3, 0.5], 20 / 3, [0], 2),  # taken first from where the rival trails most
    ([-0.2, -0.1, 0.01], [0.5, 0.4, 0.1], 100 * (0.5 + 0.034 / 0.11), [0, 1], 2),  # all of opponent 0, then some of 1
    ([0.1, -0.05], [0.5, 0.5], 0.0, [], None),             # already ahead: nothing to move
    ([-0.1, -0.05], [0.5, 0.5], None, [], None),           # behind against every opponent: no weights make it win
])
def test_weight_to_overtake_is_the_least_weight_moved(lead, weights, moved, sources, target):
    got, got_sources, got_target = ls.weight_to_overtake(lead, weights)
    assert got_sources == sources and got_target == target
    assert got == pytest.approx(moved) if moved is not None else got is None
    if moved:  # after the move the rival is exactly level
        w = list(weights)
        left = moved / 100
        for j in sources:
            take = min(w[j], left)
            w[j], left = w[j] - take, left - take
        w[target] += moved / 100
        assert sum(a * b for a, b in zip(w, lead)) == pytest.approx(0, abs=1e-12)


def test_a_search_states_its_meta_sensitivity():
    result = ls.list_search("epic/decisions/list_search_two_choices", seed=5)
    data = json.loads(result.to_json())
    assert [s["rival"] for s in data["sensitivity"]] == [r["candidate"] for r in data["ranking"][1:]
                                                         if r["status"] != "dropped"]
    said = [s for s in data["sentences"] if s.startswith("Meta sensitivity: ")]
    assert len(said) == 1
    s = data["sensitivity"][0]
    if s["moved"] is not None:
        assert f"{s['moved']:.0f} % of the meta's weight" in said[0] and s["to"] in said[0]
