"""Issue 41 §3 (player words): the example box lists the shipped examples by their titles, not their file names, and
keeps showing the example the active tab holds; once the player edits, pastes or uploads a setup it shows "your own
setup".  No browser: the box is the page's Select widget."""
import pytest

pytest.importorskip("panel")

from wargame_odds.analysis.app.page import OWN_SETUP, Page, example_choices, openable_examples  # noqa: E402
from wargame_odds.analysis.app.setups import example_setup  # noqa: E402
from wargame_odds.analysis.intake.examples import examples  # noqa: E402

TURN = "epic/turns/devastators_shoot_first"


def _page(query=None) -> Page:
    return Page(query or {}, in_notebook=True)


def _shown(page: Page) -> str:
    """The label the box shows (what a player reads)."""
    return next(label for label, name in page.example.options.items() if name == page.example.value)


def test_the_box_lists_every_openable_example_by_its_title():
    titles = {e.name: e.title for e in examples()}
    choices = example_choices()
    assert list(choices)[0] == OWN_SETUP and choices[OWN_SETUP] == ""
    assert list(choices.values())[1:] == list(openable_examples())
    for label, name in list(choices.items())[1:]:
        assert label.startswith(titles[name]) and titles[name], (label, name)
        assert name not in label or label.endswith(f"({name})")  # a name only where two titles are the same
    assert len(set(choices)) == len(choices)


def test_the_box_shows_the_example_that_is_loaded_and_keeps_it():
    page = _page()
    assert _shown(page) == "Assault Marines jump an Ork warband"  # the Epic tab opens the default example
    page.example.value = TURN
    assert page.active.example == TURN and page.active.draft.data == example_setup(TURN).data
    assert page.example.value == TURN  # it stays: the box says what is loaded
    assert _shown(page) == "The Devastators shoot first, then the Tacticals, then the Assault Marines jump in"
    page.select("gdb")
    assert page.example.value == "gdb/column_vs_line"  # the active tab's example
    page.select("list")
    assert _shown(page) == OWN_SETUP
    page.select("epic")
    assert page.example.value == TURN


def test_an_edit_or_a_pasted_setup_shows_your_own_setup():
    page = _page({"example": TURN})
    assert page.example.value == TURN
    page.active._changed(("title",))  # what every field of the editor calls after an edit
    assert page.active.example is None and _shown(page) == OWN_SETUP
    page.example.value = TURN  # opening it again loads it again
    assert page.active.example == TURN and page.example.value == TURN
    page.open_pasted(example_setup("t9a/stand_and_shoot").toml())
    assert page.active is page.tabs["t9a"] and _shown(page) == OWN_SETUP


def test_an_address_naming_an_example_shows_it_in_the_box():
    page = _page({"example": "t9a/stand_and_shoot"})
    assert page.active is page.tabs["t9a"] and page.example.value == "t9a/stand_and_shoot"
    assert page.share.value.endswith("?example=t9a%2Fstand_and_shoot")
