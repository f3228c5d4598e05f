"""The Epic turn cell of a report (issue 15 §3-§4: a turn shown step by step in `make demo`'s report),
built on its own small definition."""
import html
import re
from pathlib import Path

import pandas as pd
import pytest

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.output.labels import number, percent
from wargame_odds.analysis.reports import build, cell_key, load_report

TURN_REPORT = """
title = "Turn cell"
seed = 5
trials = 20000

[[cells]]
kind = "scenario"
name = "epic-turn"
scenario = "epic/turns/devastators_then_assault_marines"
trials = 1500
options = { engine = "reference" }
"""
DEMO = Path(__file__).resolve().parents[2] / "reports" / "demo.toml"


@pytest.fixture(scope="module")
def turn_build(tmp_path_factory) -> Path:
    definition = tmp_path_factory.mktemp("turn") / "turn.toml"
    definition.write_text(TURN_REPORT, encoding="utf-8")
    out = definition.parent / "out"
    build(load_report(definition), out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def direct():
    """The same turn run by simulate() on the documented stream (seed, cell_key(name))."""
    return epic.simulate(epic.load("analysis/scenarios/epic/turns/devastators_then_assault_marines.toml"),
                         trials=1500, seed=5, cell=(cell_key("epic-turn"),), engine="reference")


def _page_text(out: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", (out / "index.html").read_text()))


def test_turn_cell_is_the_reference_simulation_of_the_turn(turn_build, direct):
    """A shipped turn scenario named SYSTEM/FOLDER/NAME runs on the reference engine; the stored table
    (turn section included) equals simulate() with the cell's stream."""
    stored = pd.read_parquet(turn_build / "tables" / "epic-turn.parquet")
    pd.testing.assert_frame_equal(stored, direct.table(), check_exact=True)
    assert set(stored[stored.section == "turn"].entity) == {"1", "2"}


def test_turn_cell_headline_shows_each_step_with_its_interval(turn_build, direct):
    """docs/epic-turn.md §4: per activation the action test; for the Devastators' Sustained Fire the
    hits, kills, blast markers placed, the Warband broken and its blast markers after, each with its
    95 % interval; then the assault's sides with no_assault. Nobody else is said to assault."""
    page = " ".join(_page_text(turn_build).split())
    data, table = direct.to_dict(), direct.table()
    shots = table[(table.section == "turn") & (table.entity == "1")].set_index("quantity")
    for quantity in ("hits_mean", "kills_mean", "blast_markers_placed_mean", "target_blast_markers_after_mean"):
        row = shots.loc[quantity]
        assert number(row.estimate, row.ci95_lo, row.ci95_hi) in page, quantity
    for key, entry in data["turn"].items():
        test = entry["action_test_passed"]
        assert f"{key}. {entry['formation']}" in page
        assert f"passes its action test {percent(test['p'], *test['ci95'])}" in page
    broken = data["turn"]["1"]["target_broken"]
    assert f"Warband is broken after it {percent(broken['p'], *broken['ci95'])}" in page
    for key in ("attacker_wins", "defender_wins", "no_assault"):
        assert percent(data["sides"][key]["p"], *data["sides"][key]["ci95"]) in page
    assert "Devastators and Assault Detachment" not in page  # the Devastators stay out of the assault
    assert "Activation 1 of the turn" in page and "engine: reference" in page


def test_demo_report_has_a_turn_cell_on_the_kernel():
    """`make demo` shows one Epic turn on the Numba kernel (the default engine) at the report's trials."""
    report = load_report(DEMO)
    [cell] = [c for c in report.cells if getattr(c, "scenario", "").startswith("epic/turns/")]
    assert cell.kind == "scenario" and not cell.options.get("engine")
