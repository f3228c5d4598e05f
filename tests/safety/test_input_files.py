"""Input files: only regular files of bounded size are read; deep or huge TOML gives one line.

Covers issue 13 §2 "Files" and the path/text split: every loader (scenario, report, matrix,
force, base, tables) reads through ``wargame_odds.analysis.intake.scenario.read_file``.
"""
import os

import pytest

import wargame_odds.analysis.epic as epic
import wargame_odds.analysis.gdb as gdb
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.intake.scenario import MAX_FILE_BYTES, MAX_PATH_CHARS, MAX_TOML_DEPTH, parse_toml, read_file

from safety_helpers import SCENARIOS, assert_one_line_error, run_cli as cli


def test_device_file_is_refused_before_reading():
    """/dev/zero as a scenario, report, matrix, compare or tables file: one line, nothing read."""
    for args in (["epic", "/dev/zero"], ["report", "/dev/zero"], ["matrix", "/dev/zero"],
                 ["compare", "/dev/zero"]):
        code, _, err = cli(*args)
        assert_one_line_error(code, err, "/dev/zero", "not a regular file")


def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    code, _, err = cli("gdb", fifo)
    assert_one_line_error(code, err, "scenario.toml", "not a regular file")


def test_file_over_the_size_cap_is_refused_from_its_size(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: the check must not read it
    code, _, err = cli("t9a", big)
    assert_one_line_error(code, err, "big.toml", f"at most {MAX_FILE_BYTES} bytes")


def test_gdb_tables_file_is_read_through_the_same_checks(tmp_path):
    scenario = (SCENARIOS / "gdb" / "column_vs_line.toml").read_text()
    os.mkfifo(tmp_path / "tables.toml")
    with pytest.raises(UserError, match="tables.toml: not a regular file"):
        gdb.loads(scenario.replace('tables = "default"', 'tables = "tables.toml"'), base=tmp_path)


def test_long_path_gives_one_line():
    code, _, err = cli("epic", "x" * 5000 + ".toml")
    assert_one_line_error(code, err, f"at most {MAX_PATH_CHARS} characters")
    assert len(err) < 400


def test_deep_nesting_and_long_keys_give_one_line(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = cli("epic", deep)
    assert_one_line_error(code, err, "deep.toml", "nested too deeply")
    dotted = tmp_path / "dotted.toml"
    dotted.write_text(".".join(["k"] * 50_000) + " = 1\n")
    code, _, err = cli("epic", dotted)
    assert_one_line_error(code, err, "dotted.toml", f"at most {MAX_TOML_DEPTH} levels")
    long_key = tmp_path / "key.toml"
    long_key.write_text("k" * 1_000_000 + " = 1\n")
    code, _, err = cli("epic", long_key)
    assert_one_line_error(code, err, "key.toml", "characters long")
    assert len(err) < 400


def test_inf_nan_and_huge_integers_are_refused_in_any_file():
    for text, field in (("x = nan", "x"), ("[a]\nb = [1.0, -inf]", "a.b[1]"), ("n = 1" + "0" * 30, "n")):
        with pytest.raises(UserError, match=r"field 'a\.b\[1\]'|field 'x'|field 'n'"):
            parse_toml(text + "\n", "f.toml")


def test_a_file_name_with_equals_or_newline_is_a_file(tmp_path):
    """load(path) never reads its argument as TOML text; loads(text) is the text loader."""
    odd = tmp_path / "a = b\nc.toml"
    odd.write_text((SCENARIOS / "epic" / "assault_marines_vs_warband.toml").read_text())
    assert epic.load(str(odd)).title
    with pytest.raises(UserError, match="file not found"):
        epic.load(str(tmp_path / 'system = "epic"\n'))
    assert read_file(odd).startswith(odd.read_text()[:20])


def test_garbage_bytes_give_one_line(tmp_path):
    junk = tmp_path / "junk.toml"
    junk.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = cli("gdb", junk)
    assert_one_line_error(code, err, "junk.toml", "not UTF-8")
