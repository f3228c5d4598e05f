"""User text is data in every output (issue 33 §2): terminal control sequences and bidi controls in
names and titles are printed escaped in text, ``--csv``, ``--trace``, the text of ``--plot``, error
messages and the report page; CSV text cells are spreadsheet-safe (a leading ``'``), numbers
unchanged; names and titles have a length cap and long values are elided in messages."""
import csv
import io
import json
from pathlib import Path

import pytest

from safety_helpers import SCENARIOS, assert_one_line_error, run_cli

#: ESC[2J (clear the screen), an OSC 0 window title, an OSC 8 hyperlink and the bidi override U+202E.
HOSTILE = "\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\u202eevil"
RAW = ("\x1b", "\x07", "\u202e")
SHOOTING = "shooting = { shots = 10, to_hit = 4, to_wound = 4, weapon_range = 24.0 }"
FORMULAS = ['=HYPERLINK("http://evil","x")', "@SUM(A1)", "+1+1", "-2-2", "\tx"]


def _toml(text: str) -> str:
    return json.dumps(text)  # a TOML basic string (JSON escapes are TOML escapes)


def _t9a(tmp_path: Path, title: str, charger: str, target: str = "Archers") -> Path:
    path = tmp_path / "hostile.toml"
    path.write_text((SCENARIOS / "t9a" / "single_charge_9in.toml").read_text()
                    .replace('"Infantry charge at 9 inches"', _toml(title))
                    .replace('"Swordsmen"', _toml(charger)).replace('"Archers"', _toml(target)))
    return path


def _epic(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "hostile-epic.toml"
    path.write_text((SCENARIOS / "epic" / "assault_marines_vs_warband.toml").read_text()
                    .replace('"Assault Detachment"', _toml(name)))
    return path


def _clean(text: str) -> None:
    for raw in RAW:
        assert raw not in text, repr(text[:400])
    assert "\\x1b" in text, repr(text[:400])


def test_control_and_bidi_characters_are_printed_escaped_in_text_csv_trace_and_plot_text(tmp_path):
    """Text, --csv, --trace, --distributions and the text printed with --plot, of a T9A and an Epic
    scenario and of a sweep: no raw ESC, BEL or U+202E, the escaped form instead."""
    t9a = _t9a(tmp_path, "Charge " + HOSTILE, "Sword" + HOSTILE)
    epic = _epic(tmp_path, "Assault " + HOSTILE)
    runs = [["t9a", t9a], ["t9a", t9a, "--csv"], ["t9a", t9a, "--trace"], ["t9a", t9a, "--distributions"],
            ["t9a", t9a, "--plot", tmp_path / "t9a.png"], ["epic", epic], ["epic", epic, "--csv"],
            ["epic", epic, "--trace"], ["sweep", t9a, "chargers[0].distance", "7", "9"],
            ["sweep", t9a, "chargers[0].distance", "7", "9", "--csv"]]
    for args in runs:
        code, out, err = run_cli(*args, "-n", "4096") if "--trace" not in args else run_cli(*args)
        assert code == 0, (args, err)
        _clean(out)
        for raw in RAW:
            assert raw not in err, (args, err)


def test_control_and_bidi_characters_are_escaped_in_error_messages(tmp_path):
    """A hostile name in a one-line error (an unknown shoot_at target, a file name) is escaped too."""
    path = tmp_path / "bad.toml"
    path.write_text((SCENARIOS / "t9a" / "single_charge_9in.toml").read_text().replace(
        'reaction = "hold"', f'reaction = "stand_and_shoot"\nshoot_at = {_toml("x" + HOSTILE)}\n{SHOOTING}'))
    code, _, err = run_cli("t9a", path, "-n", "4096")
    assert_one_line_error(code, err, "shoot_at")
    _clean(err)
    code, _, err = run_cli("t9a", tmp_path / ("missing" + HOSTILE + ".toml"), "-n", "4096")
    assert_one_line_error(code, err, "file not found")
    _clean(err)


def test_csv_text_cells_are_spreadsheet_safe_and_numbers_unchanged(tmp_path):
    """--csv of a scenario and of a sweep: a text cell starting with = + - @ or a tab gets a leading
    ', so a spreadsheet shows it as text; the estimates are the same numbers."""
    for n, formula in enumerate(FORMULAS):
        folder = tmp_path / str(n)
        folder.mkdir()
        t9a = _t9a(folder, "title", formula, target="=1+1")
        for args in (["t9a", t9a, "--csv"], ["sweep", t9a, "chargers[0].distance", "7", "9", "--csv"]):
            code, out, err = run_cli(*args, "-n", "4096")
            assert code == 0, err
            rows = list(csv.DictReader(io.StringIO(out)))
            names = {r["entity"] for r in rows if r["section"] == "chargers"}
            shown = formula.replace("\t", "\\x09")
            assert names == {"'" + shown}, names
            assert all((v or "x")[0] not in "=+-@\t\r" for r in rows for k, v in r.items()
                       if k not in ("estimate", "ci95_lo", "ci95_hi", "value", "p", "chargers[0].distance")), rows
            estimates = [float(r["estimate"]) for r in rows]
            assert all(0 <= e for e in estimates) and any(0 < e < 1 for e in estimates)


def test_report_page_and_tables_escape_user_text(tmp_path):
    """A report whose title, cell title and charger name hold control, bidi and formula text: the
    page shows them escaped, tables/*.csv are spreadsheet-safe and escaped."""
    t9a = _t9a(tmp_path, "t", "=Sword" + HOSTILE)
    definition = tmp_path / "def" / "r.toml"
    definition.parent.mkdir()
    definition.write_text(f'title = {_toml("Report " + HOSTILE)}\ntrials = 4096\n'
                          f'[[cells]]\nkind = "scenario"\nname = "charge"\nscenario = {_toml(str(t9a))}\n'
                          f'title = {_toml("Cell " + HOSTILE)}\n')
    out = tmp_path / "out"
    code, _, err = run_cli("report", definition, "--out", out)
    assert code == 0, err
    _clean((out / "index.html").read_text(encoding="utf-8"))
    table = (out / "tables" / "charge.csv").read_text(encoding="utf-8")
    _clean(table)
    assert "\n\"'=Sword" in table or "\n'=Sword" in table or ",'=Sword" in table, table[:500]


@pytest.mark.parametrize("where", ["name", "title", "reference"])
def test_names_and_titles_are_capped_and_long_values_elided(tmp_path, where):
    """A 1 MB charger name, title or reference to a name: one short line (exit 2), never the value."""
    huge = "N" * 1_000_000
    if where == "reference":
        path = tmp_path / "bad.toml"
        path.write_text((SCENARIOS / "t9a" / "single_charge_9in.toml").read_text().replace(
            'reaction = "hold"', f'reaction = "stand_and_shoot"\nshoot_at = "{huge}"\n{SHOOTING}'))
    else:
        path = _t9a(tmp_path, huge if where == "title" else "t", huge if where == "name" else "Swordsmen")
    for args in (["t9a", path, "-n", "4096"], ["t9a", path, "--trace"]):
        code, out, err = run_cli(*args)
        assert_one_line_error(code, err, "at most")
        assert len(err) < 1000 and out == ""


def test_a_name_spanning_lines_is_refused(tmp_path):
    """A line break in a name or a title would fake lines of the text output: one line, exit 2."""
    for title, name in (("two\nlines", "Swordsmen"), ("t", "Sword\rsmen")):
        code, _, err = run_cli("t9a", _t9a(tmp_path, title, name), "-n", "4096")
        assert_one_line_error(code, err, "line")
