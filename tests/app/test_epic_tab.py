"""Issue 41 §2: the Epic tab's formation-building widgets without a browser (a page as a notebook shows it): the
chosen library formation opens its picker or transport, a refused pick or edit is one message and changes nothing,
and an accepted one is in the setup."""
import pytest

pytest.importorskip("panel")

from wargame_odds.analysis.app.epic_tab import picker_choices  # noqa: E402
from wargame_odds.analysis.app.page import Page  # noqa: E402


@pytest.fixture(scope="module")
def page():
    return Page(in_notebook=True)


def _choose(tab, start: str) -> None:
    tab.choice.value = next(label for label in picker_choices() if label.startswith(start))


def test_a_choice_row_opens_a_count_per_unit_and_refuses_a_wrong_total(page):
    tab = page.tabs["epic"]
    tab.start_empty()
    _choose(tab, "Aspect Warrior · Eldar Biel-Tan")
    assert len(tab.picks) == 8 and tab.transport is None
    tab.picks["dark-reapers"].value = 3
    assert "picked 3 of 8" in tab.options.objects[2].object
    tab.add_library_formation(tab.choice.value, "defender")
    assert "3 units picked; allowed: 8 in all" in page.message.object
    assert tab.draft.data["formations"] == []
    tab.picks["fire-dragons"].value = 5
    tab.add_library_formation(tab.choice.value, "defender")
    assert [(g["unit"], g["count"]) for g in tab.draft.data["formations"][0]["units"]] == [
        ("netea:dark-reapers", 3), ("netea:fire-dragons", 5)]


def test_plus_transport_offers_transports_with_the_count_that_carries_the_formation(page):
    tab = page.tabs["epic"]
    tab.start_empty()
    _choose(tab, "Tactical · Codex Astartes")
    assert tab.picks == {} and tab.transport.value is None
    tab.transport.value = "razorback"  # carries one infantry unit
    assert tab.transport_count.value == 6
    tab.transport.value = "rhino"
    assert tab.transport_count.value == 3
    tab.add_library_formation(tab.choice.value, "attacker")
    assert tab.draft.data["formations"][0]["units"][-1] == {"unit": "netea:rhino", "count": 3, "engaged": "bc"}


def test_a_refused_edit_is_one_message_and_changes_nothing(page):
    from wargame_odds.analysis.app import unit_editor

    tab = page.tabs["epic"]
    tab.start_empty()
    _choose(tab, "Warband · Ghazghkull")
    tab.add_library_formation(tab.choice.value, "defender")
    before = repr(tab.draft.data)
    tab._edit(unit_editor.add_group, 0, None, 1, "bc")
    assert "pick a unit in the list first" in page.message.object
    assert repr(tab.draft.data) == before
    tab._edit(unit_editor.add_group, 0, "netea:grotz", 2, "ff")
    assert tab.draft.data["formations"][0]["units"][-1] == {"unit": "netea:grotz", "count": 2, "engaged": "ff"}
