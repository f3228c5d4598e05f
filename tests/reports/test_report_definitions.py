"""Report definitions: field paths, TOML text, cell keys, and bad definitions → one line, exit 2."""
import subprocess
import sys
import tomllib

import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.reports import cell_key, load_report
from wargame_odds.analysis.reports.definition import set_field, split_field, to_toml

GOOD_CELL = """
title = "t"
[[cells]]
kind = "scenario"
name = "a"
scenario = "epic/assault_marines_vs_warband"
"""


def test_cell_key_is_a_documented_stable_hash():
    # first 63 bits of SHA-256("epic-assault"): never depends on the process or the worker
    assert cell_key("epic-assault") == 4590118008660599307
    assert cell_key("a") != cell_key("b")


def test_field_paths():
    assert split_field("formations[Warband].units[0].count") == ["formations", "Warband", "units", 0, "count"]
    data = {"formations": [{"name": "A", "units": [{"count": 1}]}, {"name": "B"}]}
    set_field(data, "formations[A].units[0].count", 5)
    set_field(data, "formations[1].blast_markers", 2)
    set_field(data, "rules.max_rounds", 3)
    assert data == {"formations": [{"name": "A", "units": [{"count": 5}]}, {"name": "B", "blast_markers": 2}],
                    "rules": {"max_rounds": 3}}
    for bad in ("formations[C].x", "formations[5].x", "formations.x"):
        with pytest.raises(KeyError):
            set_field(data, bad, 1)


def test_toml_text_round_trips():
    data = {"system": "epic", "title": 'a "quoted" title\nwith ünïcode', "x": 1.5, "flag": False,
            "units": {"boyz": {"cc": 4, "special": ["a", "b"]}},
            "formations": [{"name": "W", "units": [{"unit": "boyz", "count": 3}]}]}
    assert tomllib.loads(to_toml(data)) == data


def test_a_sweep_expands_into_one_point_per_grid_combination(small_definition):
    report = load_report(small_definition)
    points = report.points["t9a-distance"]
    assert [p["overrides"] for p in points] == [
        {"chargers[Swordsmen].distance": d, "rules.dice": r} for d in (7.0, 9.0) for r in ("2d6", "swiftstride")]
    assert len({p["point"] for p in points}) == 4
    assert [p["stream"] for p in points] == [[cell_key("t9a-distance"), k] for k in range(4)]
    assert tomllib.loads(points[3]["scenario_text"])["chargers"][0]["distance"] == 9.0


COMPARE = """
title = "t"
[[cells]]
kind = "compare"
name = "c"
option_a = "netea:space-marine-codex-astartes/assault"
option_b = "netea:space-marine-codex-astartes/tactical"
opponents = [{ force = "netea:ork-war-horde/warband", weight = 3 }, { force = "netea:ork-war-horde/kommando-warhorde" }]
"""

BAD = {
    "unknown scenario": (GOOD_CELL.replace("epic/assault_marines_vs_warband", "epic/no_such_fight"),
                         "field 'cells[0].scenario': no scenario 'epic/no_such_fight'",
                         "epic/assault_marines_vs_warband"),
    "unknown key": (GOOD_CELL + "colour = 'red'\n", "field 'cells[0].colour': unknown key", None),
    "unknown top-level key": ("seeds = 3\n" + GOOD_CELL, "field 'seeds': unknown key", None),
    "sweep over a missing field": (
        GOOD_CELL.replace('"scenario"', '"sweep"') + 'grid = { "formations[Warband].morale" = [1, 2] }\n',
        "field 'cells[0].grid.formations[Warband].morale': epic/assault_marines_vs_warband has no field "
        "'formations[Warband].morale' to sweep", "blast_markers"),
    "sweep through a missing formation": (
        GOOD_CELL.replace('"scenario"', '"sweep"') + 'grid = { "formations[Nobody].blast_markers" = [1] }\n',
        "field 'cells[0].grid.formations[Nobody].blast_markers': epic/assault_marines_vs_warband has no field",
        "a path into the scenario"),
    "empty grid": (GOOD_CELL.replace('"scenario"', '"sweep"') + "grid = {}\n",
                   "field 'cells[0].grid': the grid is empty", "at least one field"),
    "empty value list": (GOOD_CELL.replace('"scenario"', '"sweep"') + 'grid = { "rules.max_rounds" = [] }\n',
                         "field 'cells[0].grid.rules.max_rounds': no values to sweep", "a non-empty list"),
    "value rejected by the scenario": (
        GOOD_CELL.replace('"scenario"', '"sweep"') + 'grid = { "formations[Warband].blast_markers" = [-1] }\n',
        "field 'cells[0].grid.formations[Warband].blast_markers': epic/assault_marines_vs_warband with", ">= 0"),
    "unknown kind": (GOOD_CELL.replace('"scenario"\nname', '"histogram"\nname'),
                     "field 'cells[0].kind': unknown cell kind 'histogram'", "scenario, sweep, matrix"),
    "unknown option": (GOOD_CELL + 'options = { engine = "reference", turbo = true }\n',
                       "field 'cells[0].options.turbo': unknown simulation option", "engine"),
    "unknown library formation": (
        'title = "t"\n[[cells]]\nkind = "matrix"\nname = "m"\nattackers = ["netea:space-marine-codex-astartes/nope"]\n'
        'defenders = ["netea:ork-war-horde/warband"]\n',
        "field 'cells[0].attackers[0]': unknown library formation 'netea:space-marine-codex-astartes/nope'",
        "formations search"),
    "compare with an unknown opponent": (
        COMPARE.replace("kommando-warhorde", "kommandos"),
        "field 'cells[0].opponents[1].force': unknown library formation 'netea:ork-war-horde/kommandos'",
        "formations search"),
    "compare weights that do not sum to a positive number": (
        COMPARE.replace("weight = 3", "weight = 0").replace('warhorde" }', 'warhorde", weight = 0 }'),
        "field 'cells[0].opponents.weight': weights [0.0, 0.0] do not sum to a positive number", "positive sum"),
    "compare without option_b": (COMPARE.replace('option_b = "netea:space-marine-codex-astartes/tactical"\n', ""),
                                 "field 'cells[0].option_b'", None),
    "compare with a simulation option it does not take": (
        COMPARE + "options = { precision = 0.01 }\n", "field 'cells[0].options.precision': unknown simulation option",
        "paired, method, engine, threads, chunk_trials"),
    "empty matrix": ('title = "t"\n[[cells]]\nkind = "matrix"\nname = "m"\nattackers = []\n'
                     'defenders = ["netea:ork-war-horde/warband"]\n', "field 'cells[0].attackers'", None),
    "no cells": ('title = "t"\ncells = []\n', "field 'cells'", None),
    "repeated name": (GOOD_CELL + GOOD_CELL.split("\n", 2)[2], "field 'cells[1].name': two cells are named 'a'",
                      "distinct names"),
    "zero trials": ("trials = 0\n" + GOOD_CELL, "field 'trials'", "> 0"),
    "invalid TOML": ("title = \n", "invalid TOML", None),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_definitions_give_one_line_and_exit_2(case, tmp_path):
    text, expected, allowed = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), lines
    assert expected in lines[0]
    if allowed:
        assert "(allowed: " in lines[0] and allowed in lines[0].split("(allowed: ", 1)[1]
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()


def test_bad_definition_from_a_real_process_has_no_traceback(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD["sweep over a missing field"][0], encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", "from wargame_odds.analysis.cli import main; main()", "report",
                           str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "has no field 'formations[Warband].morale' to sweep" in proc.stderr


def test_a_definition_error_is_a_user_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD["empty grid"][0], encoding="utf-8")
    with pytest.raises(UserError):
        load_report(path)


def test_scheduler_and_workers_together_are_refused(small_definition):
    result = CliRunner().invoke(main, ["report", str(small_definition), "--workers", "2",
                                       "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: command line: field '--workers': cannot be combined with --scheduler "
                                     "(allowed: either --scheduler tcp://HOST:8786 or --workers N)")
