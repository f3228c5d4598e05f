"""Every number bounded, every shape checked, every API argument validated (issue 13 §2).

Each case must give one line naming the file and field (exit 2 on the command line), or an
``ArgumentError`` naming the argument in the Python API; never a traceback, a hang or a MemoryError.
"""
import re

import pytest

import wargame_odds.analysis.epic as epic
import wargame_odds.analysis.gdb as gdb
import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.intake.errors import ArgumentError, UserError

from safety_helpers import SCENARIOS, assert_one_line_error, run_cli

EPIC = (SCENARIOS / "epic" / "assault_marines_vs_warband.toml").read_text()
GDB = (SCENARIOS / "gdb" / "column_vs_line.toml").read_text()
GDB_TABLES = (SCENARIOS.parent / "gdb" / "tables_default.toml").read_text()
T9A = (SCENARIOS / "t9a" / "single_charge_9in.toml").read_text()


def _with(text: str, pattern: str, replacement: str) -> str:
    changed, n = re.subn(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert n == 1, pattern
    return changed


def _error(loader, text: str, tmp_path, named="scenario.toml") -> str:
    """The one-line error of loading ``text`` from a file; it must name the file ``named``."""
    path = tmp_path / "scenario.toml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        loader(path)
    line = str(caught.value)
    assert "\n" not in line and str(tmp_path / named) in line
    return line


@pytest.mark.parametrize("value", ["2147483648", "1000000", str(10**30), "101"])
def test_epic_blast_markers_are_bounded(tmp_path, value):
    """TP 1.13 blast markers size the formation's histograms: at most MAX_BLAST_MARKERS."""
    line = _error(epic.load, _with(EPIC, r"^blast_markers = \d+", f"blast_markers = {value}"), tmp_path)
    assert "blast_markers" in line and ("<= 100" in line or "integer too large" in line)


def test_epic_extra_attacks_count_is_bounded(tmp_path):
    """TP 2.2.3 extra attacks: count 10**9 used to hang the engine."""
    text = EPIC.replace('type = "INF"\narmour = 4\ncc = 3',
                        'type = "INF"\narmour = 4\ncc = 3\nextra_attacks = [{ count = 1000000000 }]', 1)
    line = _error(epic.load, text, tmp_path)
    assert "extra_attacks[0].count" in line and "<= 10" in line


def test_epic_characters_of_the_wrong_shape(tmp_path):
    """TP 2.1.1 characters: ``characters = 5`` is a wrong shape, one line naming the field."""
    text = EPIC.replace('{ unit = "assault", count = 4, engaged = "bc" }',
                        '{ unit = "assault", count = 4, engaged = "bc", characters = 5 }', 1)
    assert "characters" in _error(epic.load, text, tmp_path)


@pytest.mark.parametrize("pattern,replacement,field", [
    (r"^distance = 10$", "distance = inf", "charger.distance"),
    (r"^distance = 10$", "distance = nan", "charger.distance"),
    (r"^charge_move = 12$", "charge_move = 1e300", "charger.charge_move"),
    (r"^(distance = 10)$", r"\1\nfriends_behind = [nan]", "charger.friends_behind"),
    (r"^(in_cover = false)$", r"\1\nform_square_time = -1.0", "target.form_square_time"),
    (r"^(in_cover = false)$", r"\1\ncasualties_this_phase = 1000000000", "target.casualties_this_phase"),
])
def test_gdb_scenario_numbers_are_finite_and_bounded(tmp_path, pattern, replacement, field):
    """charges.md §2: distances, friends behind, times and casualties are finite and bounded."""
    assert field in _error(gdb.load, _with(GDB, pattern, replacement), tmp_path)


def test_gdb_table_numbers_are_bounded(tmp_path):
    """charges.md §2.3 fire table: casualty_percent 10**9 is refused in the table file."""
    (tmp_path / "tables.toml").write_text(_with(GDB_TABLES, r"casualty_percent = \d+", "casualty_percent = 1000000000"))
    line = _error(gdb.load, _with(GDB, r'^tables = "default"', 'tables = "tables.toml"'), tmp_path, "tables.toml")
    assert "casualty_percent" in line and "<= 100" in line


def test_t9a_distance_nan_is_refused(tmp_path):
    """charges.md §3: a charge distance is a finite number of inches."""
    assert "distance" in _error(t9a.load, _with(T9A, r"^distance = [0-9.]+", "distance = nan"), tmp_path)


@pytest.mark.parametrize("args,words", [
    (["epic", SCENARIOS / "epic" / "assault_marines_vs_warband.toml", "--precision", "nan"], ["--precision", "finite"]),
    (["t9a-table", "--distances", "nan"], ["--distances", "finite"]),
    (["t9a-table", "--distances", "0:1e9:1"], ["--distances", "at most 1000 values"]),
    (["t9a-table", "--advance-rates", "4,inf"], ["--advance-rates"]),
    (["epic", "--no-such-option"], ["No such option", "--help"]),
    (["no-such-command"], ["No such command"]),
    (["gdb", SCENARIOS / "gdb" / "column_vs_line.toml", "--trials", "2.5"], ["--trials"]),
])
def test_command_line_numbers_and_usage_errors_give_one_line(args, words):
    """CLI options: nan, inf and unbounded ranges are refused; click's usage errors are one line."""
    code, _, err = run_cli(*args)
    assert_one_line_error(code, err, *words)


@pytest.mark.parametrize("kwargs,name", [
    ({"trials": 2.9}, "trials"), ({"seed": 1.5}, "seed"), ({"trials": True}, "trials"),
    ({"seed": -1}, "seed"), ({"max_trials": 0, "precision": 0.01}, "max_trials"),
    ({"precision": float("nan")}, "precision"), ({"threads": 0}, "threads"), ({"chunk_trials": -5}, "chunk_trials"),
])
def test_python_api_arguments_are_validated(kwargs, name):
    """simulate() refuses fractional, boolean, negative or non-finite run arguments, naming them."""
    model = t9a.loads(T9A)
    with pytest.raises(ArgumentError, match=rf"^{name} must be"):
        t9a.simulate(model, **kwargs)


def test_a_sweep_value_nested_too_deeply_gives_one_line():
    """sweep VALUES are TOML literals: 100,000 open brackets used to raise RecursionError."""
    code, _, err = run_cli("sweep", SCENARIOS / "t9a" / "single_charge_9in.toml", "chargers[0].distance",
                           "[" * 100_000)
    assert_one_line_error(code, err, "nested too deeply")
