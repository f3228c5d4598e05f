"""Issue 40 §2 and issue 41 §1: a report folder whose manifest cannot be read (too large, nested too deeply,
not a manifest) is one line, exit 2, nothing computed, written or deleted; a report without the [parquet]
extra writes its CSV tables, plots and page and says in one line that Parquet needs the extra."""
import json
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
import importlib
from wargame_odds.analysis.reports.build import LOCK, MANIFEST, MAX_MANIFEST_BYTES

# the module (the package names its function build)
build = importlib.import_module("wargame_odds.analysis.reports.build")

DEFINITION = """title = "small"
seed = 3
trials = 2048

[[cells]]
kind = "scenario"
name = "charge"
scenario = "t9a/single_charge_9in"
"""


def _tree(root):
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


@pytest.fixture
def definition(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(DEFINITION, encoding="utf-8")
    return path


def _report(definition, out):
    return CliRunner().invoke(main, ["report", str(definition), "--out", str(out)])


@pytest.mark.parametrize("manifest, words", [
    ("[" * 100_000 + "]" * 100_000, "nested more than"),
    ('{"files": [' + '"report.json", ' * (MAX_MANIFEST_BYTES // 15) + '"index.html"]}', "characters long"),
    ('{"files": [["report.json"]]}', "not {"),
    ("{", "not JSON"),
    ("\x00", "not JSON"),
])
def test_an_unreadable_manifest_is_one_line_and_nothing_changes(definition, tmp_path, manifest, words):
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text(manifest, encoding="utf-8")
    (out / "report.json").write_text("mine")
    before = _tree(tmp_path)
    result = _report(definition, out)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr
    assert "nothing was computed, written or deleted" in result.stderr
    assert _tree(tmp_path) == before


def test_the_import_check_finds_a_missing_extra(monkeypatch):
    assert build.parquet_available()
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import fails as if the extra were not installed
    assert not build.parquet_available()


def test_without_the_parquet_extra_a_report_writes_csv_tables_and_its_page(definition, tmp_path, monkeypatch):
    """The extra missing (the import check says so; pandas, imported with pyarrow, must not write Parquet)."""
    monkeypatch.setattr(build, "parquet_available", lambda: False)

    def no_parquet(*args, **kwargs):
        raise AssertionError("to_parquet called without the extra")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", no_parquet)
    out = tmp_path / "out"
    result = _report(definition, out)
    assert result.exit_code == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "parquet" in line.lower()]
    assert notes == ["note: CSV tables only: to write a report's Parquet tables, install the parquet extra: "
                     "pip install 'wargame-odds[parquet]' (pyarrow is not installed)"], result.stderr
    tables = sorted(p.name for p in (out / "tables").iterdir())
    assert tables == ["charge-at-least.csv", "charge-distributions.csv", "charge.csv"]
    assert not pd.read_csv(out / "tables" / "charge.csv").empty
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "tables/charge.csv" in page and ".parquet" not in page
    assert set(json.loads((out / MANIFEST).read_text())["files"]) == {
        LOCK, "index.html", "report.json", "plots/charge.png", *(f"tables/{t}" for t in tables)}
    monkeypatch.undo()  # the extra installed later: the next run adds the Parquet tables
    again = _report(definition, out)
    assert again.exit_code == 0 and "parquet" not in again.stderr.lower(), again.stderr
    assert (out / "tables" / "charge.parquet").is_file()
