"""The List tab's plan box and the page's example box in a real (headless) Chromium.

The plan box (docs/decisions.md, "Turn plans"): a plan chosen for the detachments is the plan the race plays, and the
ranking's table names it.  The example box (docs/app.md): it lists the shipped examples by their titles, shows the
example the active tab holds (following tab switches), and says "your own setup" once the player edits one.  Every
wait is for a state of the page (Playwright's ``expect`` and ``wait_for``), never a fixed time."""
import re

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips, or fails on CI, saying why
    expect = None

from wargame_odds.analysis.app.list_tab import PLANS
from wargame_odds.analysis.app.page import DEFAULT_EXAMPLES, OWN_SETUP, example_choices

ADVANCE = "every detachment shoots: Advance"
EXAMPLE_BOX = "Shipped example (what is loaded)"
TURN = "epic/turns/devastators_shoot_first"


def _title(name: str) -> str:
    """The example box's label of shipped example ``name``."""
    return next(label for label, value in example_choices().items() if value == name)


def _tab(page, title: str):
    """The page's tab headed ``title`` (Bokeh draws each as a ``.bk-tab``)."""
    return page.locator(".bk-tab", has_text=re.compile(f"^{re.escape(title)}$"))


def test_the_plan_chosen_for_the_detachments_is_the_plan_the_ranking_names(app_page):
    """Codex Astartes up to 150 points (Bikes or Scouts) against the default meta, every detachment taking an
    Advance at the opponent: the race runs that plan and its table has a plan column saying "Advance" for each."""
    assert ADVANCE in PLANS
    page = app_page.page
    app_page.open("?tab=list&seed=4")
    cap = page.get_by_label("Points cap", exact=True).filter(visible=True)
    cap.fill("150")
    cap.press("Enter")
    expect(page.get_by_text("2 candidates × 2 opponents = 4 matchups")).to_be_visible()
    plan = page.get_by_label("Turn plan (what each detachment does with its turn)", exact=True)
    expect(plan.locator("option:checked")).to_have_text(next(iter(PLANS)))  # the default: each detachment's job
    plan.select_option(label=ADVANCE)
    expect(plan.locator("option:checked")).to_have_text(ADVANCE)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(re.compile(r"trials in \d")).wait_for(timeout=300_000)
    assert app_page.message() == ""
    ranking = page.locator("table", has=page.locator("th", has_text=re.compile("^plan$")))
    expect(ranking).to_have_count(1)
    rows = ranking.locator("tr", has=page.locator("td"))
    expect(rows).to_have_count(2)  # both candidates: the race keeps what it did not drop, 2 here
    for row in rows.all():
        expect(row.locator("td").nth(2)).to_have_text("Advance")
    expect(page.get_by_text(re.compile("each candidate scored by its plan"))).to_have_count(1)


def test_the_example_box_lists_titles_shows_the_loaded_example_follows_tabs_and_says_your_own_setup(app_page):
    page = app_page.page
    app_page.open()
    box = page.get_by_label(EXAMPLE_BOX, exact=True)
    shown = box.locator("option:checked")
    expect(box.locator("option")).to_have_text(list(example_choices()))  # every example, by its title, in order
    assert all("/" not in label or label.endswith(")") for label in example_choices())
    expect(shown).to_have_text(_title(DEFAULT_EXAMPLES["epic"]))  # the Epic tab opens the default example

    box.select_option(label=_title(TURN))  # a player picks an example by its title: it opens, and the box keeps it
    expect(page).to_have_url(re.compile(r"example=" + re.escape(TURN.replace("/", "%2F"))))
    expect(page.get_by_text("1. Devastators: Sustained Fire at Warband", exact=True)).to_be_visible()
    expect(shown).to_have_text(_title(TURN))

    _tab(page, "GdB charge").click()
    expect(shown).to_have_text(_title(DEFAULT_EXAMPLES["gdb"]))
    _tab(page, "List").click()
    expect(shown).to_have_text(OWN_SETUP)  # the List tab holds no shipped example
    _tab(page, "Epic").click()
    expect(shown).to_have_text(_title(TURN))

    title = page.get_by_label("title", exact=True).filter(visible=True).first
    title.fill("My own turn")
    title.press("Enter")
    expect(page).to_have_url(re.compile("setup="))  # the server has the edit: the address holds the setup
    expect(shown).to_have_text(OWN_SETUP)
    _tab(page, "GdB charge").click()
    expect(shown).to_have_text(_title(DEFAULT_EXAMPLES["gdb"]))
    _tab(page, "Epic").click()
    expect(shown).to_have_text(OWN_SETUP)  # the edit stays the player's own
