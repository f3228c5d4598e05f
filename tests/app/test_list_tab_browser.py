"""The List tab in a real (headless) Chromium (issue 41 §2, issue 37 §3): an army list, a points cap and a meta;
Run shows the list search's sentences (the guarantee among them), its ranking and its plot, and the downloaded
definition gives the same sentences in ``wargame-odds list-search``; Cancel stops a long race."""
import json
import re

from click.testing import CliRunner

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails on CI, saying why
    expect = None

from wargame_odds.analysis.app.list_tab import DEFAULT_BUDGET
from wargame_odds.analysis.cli import main

CAP = "Points cap"


def test_a_list_search_shows_its_sentences_table_and_plot_and_its_definition_runs_in_the_cli(app_page, tmp_path):
    app_page.open("?tab=list&seed=4")
    app_page.fill(CAP, 150)  # Codex Astartes up to 150 points: Bikes or Scouts
    expect(app_page.page.get_by_text("2 candidates × 2 opponents = 4 matchups")).to_be_visible()
    assert app_page.message() == ""
    text = app_page.run()
    figure = app_page.page.locator("img[src^='data:image/png']").filter(visible=True)
    expect(figure).to_have_count(1)
    app_page.screenshot("list")
    with app_page.page.expect_download() as download:
        app_page.click("Download list search (TOML)")
    saved = tmp_path / "list.toml"
    download.value.save_as(saved)
    run = CliRunner().invoke(main, ["list-search", str(saved), "--seed", "4", "--max-trials", str(DEFAULT_BUDGET),
                                    "--json"])
    assert run.exit_code == 0, run.stderr
    cli = json.loads(run.stdout)
    assert cli["guarantee"]["met"] and cli["guarantee"]["statement"] in cli["sentences"]
    for sentence in cli["sentences"]:
        assert sentence in text, sentence
    for row in cli["ranking"]:
        assert row["candidate"] in text
    assert f"{cli['race']['trials']:,} trials in" in text


def test_cancel_stops_a_long_list_search(app_page):
    app_page.open("?tab=list")
    app_page.fill(CAP, 400)
    app_page.fill("Indifference (percentage points)", 0.1)  # a race of hundreds of candidates to 0.1 points: long
    expect(app_page.page.get_by_text(re.compile(r"^\d+ candidates × 2 opponents"))).to_be_visible()
    app_page.start_run()
    cancel = app_page.page.get_by_role("button", name="Cancel", exact=True)
    cancel.click()
    expect(app_page.page.get_by_text("cancelled: the results shown are those of the last finished run")).to_be_visible()
    expect(cancel).to_be_disabled()
    assert "trials in" not in app_page.text()
