"""CLI, API and bad input: one clear error line (file, field, allowed), exit status 2."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.gdb as gdb
from wargame_odds.analysis.cli import main

ISSUE = Path("analysis/scenarios/gdb/column_vs_line.toml")
DEFAULT_TABLES = Path("analysis/gdb/tables_default.toml")


def run_cli(*args):
    return CliRunner().invoke(main, ["gdb", *map(str, args)])


def test_issue_scenario_json_shape():
    """Issue §4 JSON: system, placeholder tables, every charger/defender result and outcome."""
    res = run_cli(ISSUE, "--trials", 20000, "--seed", 1, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["system"] == "gdb" and data["tables"] == "placeholder"
    assert set(data["charger"]) >= {"PASS", "HALT", "WAVER", "RETREAT", "ROUT"}
    assert set(data["defender"]) == {"PASS", "WAVER", "RETREAT", "ROUT", "NOT_TESTED"}
    assert abs(sum(v["p"] for v in data["defender"].values()) - 1) < 1e-12
    assert abs(sum(v["p"] for v in data["outcomes"].values()) - 1) < 1e-12
    for v in data["charger"].values():
        assert v["ci95"][0] <= v["p"] <= v["ci95"][1]
    assert any("PLACEHOLDER" in n for n in data["notes"])
    assert data["casualties"]["charger"]["distribution"]["mean"] > 0


def test_text_output_and_trace():
    """CLI text output names the placeholder tables; --trace prints each clause of one charge."""
    res = run_cli(ISSUE, "--trials", 5000)
    assert res.exit_code == 0 and "PLACEHOLDER" in res.stdout
    res = run_cli(ISSUE, "--trace", "--seed", 3)
    assert res.exit_code == 0
    for clause in ("§2.1 step 1", "§2.1 step 2", "Q-A6", "§2.1 step 4", "result"):
        assert clause in res.stdout


def test_user_table_file_relative_to_scenario(tmp_path):
    """§2.3: a scenario may point at its own table file, resolved beside the scenario file."""
    (tmp_path / "tabs").mkdir()
    text = DEFAULT_TABLES.read_text().replace("placeholder = true", "placeholder = false")
    (tmp_path / "tabs" / "mine.toml").write_text(text)
    scen = tmp_path / "s.toml"
    scen.write_text(ISSUE.read_text().replace('tables = "default"', 'tables = "tabs/mine.toml"'))
    res = run_cli(scen, "--trials", 5000, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["tables"] == "user" and not any("PLACEHOLDER" in n for n in data["notes"])


def _scenario_error(tmp_path, old, new):
    path = tmp_path / "bad.toml"
    text = ISSUE.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return run_cli(path, "--trials", 1000)


def _table_error(tmp_path, old, new):
    text = DEFAULT_TABLES.read_text()
    assert old in text
    (tmp_path / "t.toml").write_text(text.replace(old, new, 1))
    (tmp_path / "s.toml").write_text(ISSUE.read_text().replace('tables = "default"', 'tables = "t.toml"'))
    return run_cli(tmp_path / "s.toml", "--trials", 1000)


def _one_clear_line(res, *needles):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert isinstance(res.exception, SystemExit)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize("old,new,needles", [
    ('arm = "infantry"            #', 'arm = "dragoons"            #',
     ("bad.toml", "charger.arm", "allowed", "cavalry")),
    ("distance = 10", "distance = 20", ("bad.toml", "charger.distance", "allowed", "<= charger.charge_move")),
    ('reaction = "fire"', 'reaction = "countercharge"', ("bad.toml", "target.reaction", "allowed", "cavalry")),
    ('reaction = "fire"', 'reaction = "run_away"', ("bad.toml", "target.reaction", "allowed", "form_square")),
    ("strength = 24", "strength = 0", ("bad.toml", "charger.strength", "allowed", ">= 1")),
    ("range = 6", "range = 6\nrage = 3", ("bad.toml", "supports[0].rage", "unknown key")),
    ('formation = "column"', 'formation = "square"', ("bad.toml", "charger.formation", "allowed", "line, column")),
    ('tables = "default"', 'tables = "nowhere.toml"', ("bad.toml", "tables", "not found", "allowed")),
    ("strength = 24", 'strength = "24"', ("bad.toml", "charger.strength", "integer")),
])
def test_bad_scenarios(tmp_path, old, new, needles):
    """Bad scenario → one line naming the file, the field and what is allowed; exit status 2."""
    _one_clear_line(_scenario_error(tmp_path, old, new), *needles)


@pytest.mark.parametrize("old,new,needles", [
    ("min = 6\nmax = 6\nresult = \"HALT\"", "min = 6\nmax = 5\nresult = \"HALT\"",
     ("t.toml", "morale.charger_bands", "allowed")),                                     # min above max
    ("min = 5\nmax = 5\nresult = \"WAVER\"", "min = 5\nmax = 6\nresult = \"WAVER\"",
     ("t.toml", "morale.charger_bands", "overlap", "allowed")),
    ("min = 3\nmax = 4\nresult = \"RETREAT\"", "min = 4\nmax = 4\nresult = \"RETREAT\"",
     ("t.toml", "morale.charger_bands", "3..3 are not covered", "allowed")),
    ("result = \"ROUT\"", "result = \"FLEE\"", ("t.toml", "morale.charger_bands[4].result", "FLEE", "allowed", "HALT")),
    ("min = 5\nmax = 6\nresult = \"WAVER\"", "min = 5\nmax = 6\nresult = \"HALT\"",
     ("t.toml", "morale.defender_bands[1].result", "allowed", "PASS, WAVER, RETREAT, ROUT")),
    ("max = 5\ncasualty_percent = 0", "min = 2\nmax = 5\ncasualty_percent = 0",
     ("t.toml", "fire.bands", "below 2 are not covered", "allowed")),
    ("min = 12\ncasualty_percent = 20", "min = 12\nmax = 20\ncasualty_percent = 20",
     ("t.toml", "fire.bands", "above 20 are not covered", "allowed")),
    ("dice = 2                        # morale", "dice = 0  # morale", ("t.toml", "morale.dice", ">= 1")),
    ('default_scale = "28mm"', 'default_scale = "6mm"', ("t.toml", "default_scale", "allowed", "28mm")),
])
def test_bad_tables(tmp_path, old, new, needles):
    """§2.3: a table with uncovered totals, overlaps or unknown results is rejected in one line."""
    _one_clear_line(_table_error(tmp_path, old, new), *needles)


def test_missing_file():
    _one_clear_line(run_cli("no/such/file.toml"), "no/such/file.toml", "not found")


def test_api_results_and_sweep():
    """Issue §4 API: table, cumulative, HTML, and a tidy sweep over distance and a modifier."""
    model = gdb.load(ISSUE)
    res = gdb.simulate(model, trials=20000, seed=2)
    table = res.table()
    assert {"estimate", "ci95_lo", "ci95_hi"} <= set(table.columns)
    assert "PLACEHOLDER" in res._repr_html_()
    cum = res.cumulative("casualties", "charger", "distribution")
    assert cum.p.iloc[0] == 1.0
    sw = gdb.sweep(model, "charger.distance", [8, 10, 12], trials=20000)
    passes = sw[(sw.section == "charger") & (sw.quantity == "PASS")]
    assert list(passes.value) == [8, 10, 12]
    assert {"field", "value", "estimate", "ci95_lo", "ci95_hi"} <= set(sw.columns)
    sw = gdb.sweep(model, "tables.morale.charger_mods.general_attached", [0, 3], trials=20000)
    p0, p3 = sw[(sw.section == "charger") & (sw.quantity == "PASS")].estimate
    assert p3 > p0
    from wargame_odds.analysis.intake.errors import UserError
    with pytest.raises(UserError, match="no such field"):
        gdb.sweep(model, "charger.speed", [1])
    with pytest.raises(UserError, match="charger.distance"):
        gdb.sweep(model, "charger.distance", [30])


def test_load_from_text():
    """loads() reads TOML text, load() a path."""
    model = gdb.loads(ISSUE.read_text())
    assert model.scenario.charger.name == "2e Legere" and model.tables.placeholder
