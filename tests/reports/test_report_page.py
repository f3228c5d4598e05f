"""Issue 12 §2: the report page leads every cell with the headline sentences, shows readable
labels and "at least N" tables, folds wide grids, and shows no internal names."""
import html
import json
import re

import pandas as pd

from wargame_odds.analysis.output.headline import sentences, summary
from wargame_odds.analysis.output.labels import percent
from wargame_odds.analysis.reports.build import FOLD_COLUMNS, _sweep_pivot


def _sections(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="([^"]+)">(.*?)</section>', page, flags=re.S))


def _visible_text(fragment: str) -> str:
    """What a reader sees: no tags, no file links, no <code> (scenario paths the user wrote)."""
    fragment = re.sub(r"<code>.*?</code>|<p class=\"files\">.*?</p>|<style>.*?</style>", " ", fragment, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


def test_each_cell_leads_with_the_headline_of_its_stored_result(local_build):
    """Scenario cells: the full headline (TP 1.12.7 winner, §1.12.8 broken/destroyed; GdB contact,
    routs; T9A charge succeeds); sweeps: each point's "who wins" sentences; all with the numbers
    of report.json."""
    facts = json.loads((local_build / "report.json").read_text())
    sections = _sections((local_build / "index.html").read_text())
    for cell in facts["cells"]:
        body = sections[cell["name"]]
        lead = body.split("<img", 1)[0]
        results = [p["result"] for p in cell["points"]]
        if cell["kind"] == "scenario":
            expected = sentences(results[0])
        elif cell["kind"] == "compare":
            continue
        else:
            expected = [s for r in results for s in summary(r)]
        assert expected, cell["name"]
        for sentence in expected:
            assert sentence in html.unescape(lead), (cell["name"], sentence)


def test_no_internal_names_or_keys_on_the_page(local_build):
    """No executor repr, cell key, point key or snake_case result key where a reader looks."""
    page = (local_build / "index.html").read_text()
    text = _visible_text(page)
    assert "cell key" not in text and "Executor" not in text and "computed on this computer" in text
    facts = json.loads((local_build / "report.json").read_text())
    for cell in facts["cells"]:
        assert str(cell["cell_key"]) not in page
        for point in cell["points"]:
            if cell["kind"] in ("sweep", "matrix"):  # their points have keys like 000-blast_markers=0
                assert point["point"] not in text, point["point"]
    keys = set(re.findall(r"\b[a-z]+_[a-z_]+\b(?!\.[a-z])", text))  # a file name (my_tables.toml) is no key
    assert not keys, keys


def test_scenario_cells_show_at_least_tables_for_casualties_and_blast_markers(local_build):
    """TP 1.14.1 blast markers and casualties: the page's "at least N" table of every formation
    carries the stored at-least rows (the CSV/Parquet next to it)."""
    body = _sections((local_build / "index.html").read_text())["epic-terminators"]
    rows = pd.read_parquet(local_build / "tables" / "epic-terminators-at-least.parquet")
    for quantity, heading in (("casualties", "casualties (units lost)"),
                              ("blast_markers_after_assault", "blast markers after the assault")):
        table = body.split(f"<h3>&#34;At least N&#34;: {heading}</h3>", 1)[1].split("</table>", 1)[0]
        for r in rows[rows.quantity == quantity].itertuples():
            line = re.search(rf"<tr><td class=\"num\">{r.value:g}</td>(.*?)</tr>", table)
            assert line and percent(r.p, r.ci95_lo, r.ci95_hi) in line[1], (quantity, r.entity, r.value)


def test_wide_sweeps_fold_into_tables_of_a_few_grid_points():
    """A sweep of 6 grid points shows as tables of at most FOLD_COLUMNS points, every value kept."""
    specs = [{"point": f"{i:03d}-x={i}", "overrides": {"charger.distance": i}} for i in range(6)]
    table = pd.DataFrame({"point": [s["point"] for s in specs], "section": "summary", "entity": "",
                          "quantity": "contact", "kind": "probability", "estimate": [i / 10 for i in range(6)],
                          "ci95_lo": [i / 10 - 0.01 for i in range(6)], "ci95_hi": [i / 10 + 0.01 for i in range(6)]})
    folded = _sweep_pivot("gdb", table, specs, {})
    assert [len(t["columns"]) for t in folded] == [FOLD_COLUMNS, 6 - FOLD_COLUMNS]
    assert folded[0]["columns"][0] == "charger: distance = 0"
    assert folded[0]["rows"][0]["quantity"] == "contact (charge goes in)"
    values = [v for t in folded for v in t["rows"][0]["values"]]
    assert values == [percent(i / 10, i / 10 - 0.01, i / 10 + 0.01) for i in range(6)]
