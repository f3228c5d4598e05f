"""The API bounded like the command line (issue 40 §3): precision 50 and one seed range in every surface, and the
entry points the issue names refusing a wrong type with the project's ArgumentError (docs/limits.md, "The Python
API").  The walk over every public function is tests/safety/test_api_properties.py."""
import tomllib
from pathlib import Path

import pytest

import wargame_odds as wo
from wargame_odds.analysis.run import runner
from wargame_odds.analysis.intake.errors import ArgumentError, UserError
from wargame_odds.analysis.reports.definition import load_report, to_toml
from wargame_odds.analysis.intake.run_limits import MAX_SEED

from safety_helpers import SCENARIOS, assert_one_line_error, run_cli

T9A = SCENARIOS / "t9a" / "single_charge_9in.toml"
DEMO = Path(__file__).resolve().parents[2] / "reports" / "demo.toml"
SEED_WORDS = "0 to 2⁵³ − 1 (9,007,199,254,740,991)"


def test_precision_50_is_accepted_everywhere(tmp_path):
    """docs/limits.md allows 1 to 50 percentage points; 50 was refused ("0.5 is not in the range 0<x<0.5")."""
    result = wo.t9a.simulate(T9A, precision=50, seed=1)
    assert result.info.precision == 0.5 and result.info.precision_reached
    runner.check_argument("precision", 0.5)
    code, out, err = run_cli("t9a", T9A, "--precision", "50", "--json")
    assert code == 0, err
    for above in (50.5, 0.51):
        with pytest.raises(ArgumentError, match="precision must be a fraction above 0 up to 0.5"):
            runner.check_argument("precision", above)


def test_one_wording_for_the_seed_bound_everywhere(tmp_path):
    """The API, both command lines and report definitions share one range, 0 to 2⁵³ − 1, worded the same way
    (the report said "less than or equal to 9007199254740992", the command line "0<=x<=9007199254740992")."""
    assert MAX_SEED == 2**53 - 1
    runner.check_argument("seed", MAX_SEED)
    with pytest.raises(ArgumentError) as refused:
        wo.t9a.trace(T9A, seed=2**53)
    assert SEED_WORDS in str(refused.value)
    for command in (["t9a", T9A, "--trials", "10"], ["compare", SCENARIOS / "epic" / "decisions" /
                                                     "assault_or_tactical.toml", "--trials", "10"]):
        code, _, err = run_cli(*command, "--seed", str(2**53))
        assert_one_line_error(code, err, SEED_WORDS)
    report = tomllib.loads(DEMO.read_text())
    report["seed"] = 2**53
    path = tmp_path / "report.toml"
    path.write_text(to_toml(report))
    with pytest.raises(UserError) as refused:
        load_report(path)
    assert "field 'seed'" in str(refused.value) and SEED_WORDS in str(refused.value)


@pytest.mark.parametrize("call", [
    lambda: wo.sweep(None, "chargers[0].distance", [8]),
    lambda: wo.rank(None, ["netea:ork-war-horde/warband"]),
    lambda: wo.matrix(3, ["netea:ork-war-horde/warband"]),
    lambda: wo.epic.load(SCENARIOS / "epic" / "assault_marines_vs_warband.toml").replace(None, 1),
    lambda: wo.gdb.load(SCENARIOS / "gdb" / "cavalry_vs_square.toml").replace(None, 1),
    lambda: wo.reports.build(DEMO, out=3),
    lambda: wo.reports.load_report(None),
    lambda: wo.reports.cell_key(None),
    lambda: wo.cumulative(None),
    lambda: wo.t9a.simulate(T9A, engine="gpu"),
    lambda: wo.epic.rally(2, army_rules=None),
    lambda: wo.t9a.simulate(T9A, trials=4096).text(distributions="no"),
    lambda: wo.t9a.simulate(T9A, trials=4096).cumulative("no", "such"),
    lambda: wo.t9a.simulate(T9A, trials=4096).to_json(indent="  "),
    lambda: wo.labels.names(None),
    lambda: wo.app({"example": None}),
], ids=["sweep-None", "rank-None", "matrix-3", "epic-replace-None", "gdb-replace-None",
        "reports-build-out-3", "load-report-None", "cell-key-None", "cumulative-None", "engine-gpu",
        "rally-army-rules-None", "text-flag-no", "cumulative-no-such-path", "to-json-indent-text", "labels-names",
        "app-query"])
def test_the_entry_points_the_issue_names_refuse_a_wrong_type_with_the_projects_error(call):
    """Each gave a TypeError, IndexError or AttributeError from inside (or a plain ValueError); now the project's
    error, one line."""
    with pytest.raises((ArgumentError, UserError)) as refused:
        call()
    assert len(str(refused.value).splitlines()) == 1


def test_reports_build_checks_its_output_before_reading_anything(tmp_path):
    """``out=3`` was a TypeError from pathlib after the definition was read; now refused first."""
    with pytest.raises(ArgumentError, match="^out must be an output folder"):
        wo.reports.build(Path("no such report.toml"), out=3)
    assert not any(tmp_path.iterdir())
