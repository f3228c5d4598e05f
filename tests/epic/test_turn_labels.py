"""Readable labels of a turn result (issue 15 §3: tables and plots show the turn step by step)."""
import re
from importlib.resources import files
from pathlib import Path

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.output.labels import quantity_label

TURN = Path(str(files("wargame_odds.analysis").joinpath("scenarios", "epic", "turns",
                                                        "devastators_then_assault_marines.toml")))


def test_turn_rows_read_as_activations_without_keys():
    """docs/epic-turn.md §4: every turn entry and sides.no_assault has a label (labels.toml), no
    snake_case key shows, and each activation is its own group in the order of the turn."""
    result = epic.simulate(TURN, trials=200, seed=2, engine="reference")
    table = result.text().split("All estimates (95 % interval in brackets)\n", 1)[1]
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", table), table
    groups = [line for line in table.splitlines() if line.startswith("Activation")]
    assert groups == ["Activation 1 of the turn", "Activation 2 of the turn"]
    turn_rows = result.table().query("section == 'turn'")
    for quantity in {*turn_rows.quantity, "no_assault", "target_blast_markers_after"}:
        assert quantity_label("epic", quantity) != quantity.replace("_", " "), quantity
    rows = [r for r in result.readable_rows() if r["group"] == "Activation 1 of the turn"]
    assert [r["quantity"] for r in rows][:2] == ["acts (not broken or destroyed before its activation)",
                                                 "passes its action test"]
