"""Issue 41 §3, player words: the app's choices show a rule's options as a player reads them (an action as the rules
name it, TP 1.6; "in base contact" for ``bc``, TP 1.12.3; T9A's to-hit above 6 as the roll it is), what leaving an
optional field out means ("no cover", not "(none)"), and a new setup's title follows it (a turn is not an assault);
the TOML the CLI runs keeps the codes."""
import pytest

pn = pytest.importorskip("panel")

from wargame_odds.analysis.app.epic_tab import NEW_TITLE, NEW_TURN_TITLE  # noqa: E402
from wargame_odds.analysis.app.forms import Draft, Form, none_words, option_words  # noqa: E402
from wargame_odds.analysis.app.page import Page  # noqa: E402


def _select(widgets, label):
    """The drop-down named ``label`` among a form's widgets (grids of three)."""
    for grid in widgets:
        for widget in getattr(grid, "objects", [grid]):
            if isinstance(widget, pn.widgets.Select) and widget.label == label:
                return widget
    raise AssertionError(f"no drop-down {label!r}")


def test_rule_options_in_words_and_the_codes_kept():
    assert option_words("engaged", "bc") == "in base contact"
    assert option_words("action", "sustained_fire") == "Sustained Fire"
    assert option_words("to_hit_above_6", "six_then") == "6, then 4+ / 5+ / 6+"
    assert option_words("reaction", "stand_and_shoot") == "stand and shoot"  # any other code: spaces for "_"
    assert option_words("dice", "2d6") == "2D6"
    assert none_words("cover") == "no cover" and none_words("role") == "engaged (the default)"
    assert "(none)" not in none_words("anything else")


def test_a_t9a_choice_shows_words_and_writes_the_code():
    from wargame_odds.analysis.t9a.charge.model import Rules

    draft = Draft({"rules": {}}, changed=lambda path: None, rebuilt=lambda: None)
    select = _select(Form(draft).widgets(Rules, ("rules",)), "to hit above 6")
    assert "6, then 4+ / 5+ / 6+" in select.options and "six_then" not in select.options
    select.value = "impossible"
    assert draft.data["rules"]["to_hit_above_6"] == "impossible"
    select.value = "6, then 4+ / 5+ / 6+"
    assert draft.data["rules"]["to_hit_above_6"] == "six_then"
    dice = _select(Form(draft).widgets(Rules, ("rules",)), "dice")
    assert dice.options[0] == "the rules' default" and "(none)" not in dice.options


def test_names_in_a_choice_stay_as_written():
    """A drop-down of names (user text, not a rule's codes) shows them unchanged: ``my_unit`` is not "my unit"."""
    from wargame_odds.analysis.epic.turn_model import Activation

    draft = Draft({"turn": [{"formation": "my_unit", "action": "engage"}]}, changed=lambda path: None,
                  rebuilt=lambda: None)
    form = Form(draft, lambda model, name: ["my_unit", "other_one"] if name == "formation" else None)
    select = _select(form.widgets(Activation, ("turn", 0), only=("formation", "action")), "formation")
    assert list(select.options) == ["my_unit", "other_one"]
    action = _select(form.widgets(Activation, ("turn", 0), only=("formation", "action")), "action")
    assert "Sustained Fire" in action.options and "sustained_fire" not in action.options


def test_a_new_setups_title_follows_it_to_a_turn():
    page = Page(in_notebook=True)
    tab = page.tabs["epic"]
    tab.start_empty()
    assert tab.draft.data["title"] == NEW_TITLE
    tab._add_activation()
    assert tab.draft.data["title"] == NEW_TURN_TITLE
    tab.draft.set(("title",), "My own title")
    tab._add_activation()
    assert tab.draft.data["title"] == "My own title"  # a title the player wrote stays
