"""A report's list-search cell: the search run with the report's seed, its table (CSV with 95 % intervals), its
plot and its sentences leading the section; bad keys give one line and exit 2."""
import html
import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.decisions import list_search
from wargame_odds.analysis.decisions.list_search_cli import COLUMNS
from wargame_odds.analysis.reports import build, load_report

# Story B's two hand-written candidates (shipped), raced with a wide indifference zone so the test is quick.
REPORT = """
title = "Which detachment?"
seed = 7

[[cells]]
kind = "list-search"
name = "two-choices"
definition = "epic/decisions/list_search_two_choices"
indifference = 5
top = 2
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("list-search-report")
    (folder / "report.toml").write_text(REPORT, encoding="utf-8")
    index = build(folder / "report.toml", out=folder / "out", progress=False)
    return folder, index.parent


@pytest.fixture(scope="module")
def direct():
    """The same search run directly, as ``wargame-odds list-search --seed 7 --top 2`` runs it."""
    return list_search("epic/decisions/list_search_two_choices", seed=7, top=2, indifference=5)


def _section_sentences(page: str, name: str) -> list[str]:
    section = page.split(f'<section id="{name}">', 1)[1].split("</section>", 1)[0]
    headline = section.split('<ul class="headline">', 1)[1].split("</ul>", 1)[0]
    return [html.unescape(s) for s in re.findall(r"<li>(.*?)</li>", headline, flags=re.S)]


def test_the_section_leads_with_the_searchs_sentences_guarantee_included(built, direct):
    _, out = built
    page = (out / "index.html").read_text(encoding="utf-8")
    assert direct.guarantee["met"]
    assert _section_sentences(page, "two-choices") == direct.sentences
    assert direct.guarantee["statement"] in direct.sentences
    assert '<img src="plots/two-choices.png"' in page
    assert (out / "plots" / "two-choices.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_table_is_the_searchs_ranking_with_its_intervals(built, direct):
    _, out = built
    csv = pd.read_csv(out / "tables" / "two-choices.csv")
    assert list(csv.columns) == COLUMNS
    assert {"ci95_lo", "ci95_hi", "behind_lo", "behind_hi"} <= set(csv.columns)
    expected = direct.table()[COLUMNS]
    assert list(csv.candidate) == list(expected.candidate)
    assert list(csv.status) == list(expected.status)
    pd.testing.assert_series_equal(csv.score, expected.score.astype(float), check_exact=False, rtol=1e-12)
    pd.testing.assert_series_equal(csv.ci95_lo, expected.ci95_lo.astype(float), check_exact=False, rtol=1e-12)
    if (out / "tables" / "two-choices.parquet").exists():  # with the [parquet] extra
        parquet = pd.read_parquet(out / "tables" / "two-choices.parquet")
        assert list(parquet.columns) == COLUMNS and list(parquet.candidate) == list(expected.candidate)
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    cell = data["cells"][0]
    assert cell["kind"] == "list-search" and cell["points"][0]["result"]["sentences"] == direct.sentences
    assert data["total_trials"] == direct.race["trials"]


def test_a_second_build_reuses_the_stored_search_and_writes_the_same_bytes(built):
    folder, out = built
    files = ["report.json", "tables/two-choices.csv", "plots/two-choices.png"]
    before = {f: (out / f).read_bytes() for f in files}
    stored = next((out / "cells").rglob("*.json"))
    stamp = stored.stat().st_mtime_ns
    build(folder / "report.toml", out=out, progress=False)
    assert stored.stat().st_mtime_ns == stamp  # read back, not recomputed
    assert {f: (out / f).read_bytes() for f in files} == before


def test_inline_keys_and_a_definition_file_beside_the_report(tmp_path):
    (tmp_path / "meta.toml").write_text(
        'candidates = ["netea:space-marine-codex-astartes/tactical", "netea:space-marine-codex-astartes/assault"]\n'
        '[[opponents]]\nforce = "netea:ork-war-horde/warband"\n', encoding="utf-8")
    (tmp_path / "r.toml").write_text(
        'title = "t"\nseed = 3\n[[cells]]\nkind = "list-search"\nname = "s"\ndefinition = "meta.toml"\n'
        'indifference = 4\ntitle = "Tactical or Assault?"\n', encoding="utf-8")
    report = load_report(tmp_path / "r.toml")
    (spec,) = report.points["s"]
    assert spec["seed"] == 3 and spec["list_search"]["indifference"] == 4
    assert spec["list_search"]["title"] == "Tactical or Assault?"
    assert spec["list_search"]["candidates"][0] == "netea:space-marine-codex-astartes/tactical"


LS = 'title = "t"\n[[cells]]\nkind = "list-search"\nname = "s"\n'
TWO = LS + 'definition = "epic/decisions/list_search_two_choices"\n'
BAD = {
    "an unknown key": (TWO + "wibble = 1\n", "field 'cells[0].wibble'"),
    "no such definition": (LS + 'definition = "epic/decisions/nope"\n',
                           "field 'cells[0].definition': no list-search definition 'epic/decisions/nope'"),
    "an unknown opponent": (LS + 'candidates = ["netea:space-marine-codex-astartes/tactical"]\n'
                            '[[cells.opponents]]\nforce = "netea:ork-war-horde/kommandos"\n',
                            "field 'cells[0].opponents[0].force': unknown library formation"),
    "neither army nor candidates": (LS + '[[cells.opponents]]\nforce = "netea:ork-war-horde/warband"\n',
                                    "field 'cells[0].candidates': neither army nor candidates"),
    "a bad confidence": (TWO + "confidence = 100.0\n", "field 'cells[0].confidence'"),
    "too large a top": (TWO + "top = 1000\n", "field 'cells[0].top'"),
    "a meta without opponents": (LS + 'candidates = ["netea:space-marine-codex-astartes/tactical"]\nopponents = []\n',
                                 "field 'cells[0].opponents'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_list_search_cells_give_one_line_and_exit_2(case, tmp_path):
    text, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), lines
    assert expected in lines[0], lines[0]
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()
