"""Issue 41 §4: `formations search` and `units search` fit an 80-column terminal (they printed 250-column rows);
`--csv` and `--json` still give the whole table."""
import json

import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main


@pytest.mark.parametrize("command", [["formations", "search", "tactical"], ["units", "search", "rhino"],
                                     ["formations", "search"]])
def test_a_library_search_fits_80_columns(command):
    out = CliRunner().invoke(main, command, env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) > 2 and max(map(len, lines)) <= 80


def test_a_listing_keeps_every_field_of_a_row():
    out = CliRunner().invoke(main, ["formations", "search", "codex-astartes/tactical"], env={"COLUMNS": "80"})
    text = " ".join(out.output.split())
    assert text.startswith("netea:space-marine-codex-astartes/tactical name: Tactical; points: 275;")
    assert "army rules: they-shall-know-no-fear;" in text and "status: ok" in text
    rows = json.loads(CliRunner().invoke(main, ["formations", "search", "codex-astartes/tactical", "--json"]).output)
    assert [row["points"] for row in rows] == [275]
