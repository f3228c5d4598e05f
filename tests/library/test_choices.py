"""Issue 41 §2: army-list formations whose units text is a choice ("One Baneblade or Shadowsword", "Up to three
Deathwheels", "one with a Chaos Lord or Sorcerer Lord character") read into parts a player picks from
(analysis/epic/library/choices.py), priced as the list prices them, and the count the docs quote."""
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from library_helpers import one_error_line

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.library.choices import buildable_count, choice_rows, read_row
from wargame_odds.analysis.epic.library.formations import _names, formation_status, formations
from wargame_odds.analysis.epic.library.netea import army_lists

DOCS = Path(__file__).parents[2] / "docs"


def _options(ref: str) -> list[list[tuple]]:
    """(label, units, character, points) of every option of every part of a row."""
    return [[(o.label, o.units, o.character, o.points) for o in p.options] for p in choice_rows()[ref].parts]


def test_every_buildable_formation_is_a_row_of_one_option_parts():
    """A formation the library builds as printed is a choice row with nothing to choose: its units and
    characters, each one option."""
    for ref, form in formations().items():
        if formation_status(form) == "ok":
            row = choice_rows()[ref]
            assert not row.chooses and row.choice is None
            assert [g for p in row.parts for g in p.options[0].units] == list(form.units)
            assert [o.character for p in row.parts for o in p.options if o.character] == [c for _, c in form.characters]


def test_one_of_two_units_and_three_of_one_kind():
    """"One Baneblade or Shadowsword": one of the two; "Three Bombards or Manticores": three of one kind (no
    mixing: the alternatives are of the whole part, as "One Hive Tyrant or two Tyranid Warriors" shows)."""
    assert _options("netea:imperial-guard-steel-legion/super-heavy-tank-platoon") == [
        [("Baneblade", (("baneblade", 1),), None, None), ("Shadowsword", (("shadowsword", 1),), None, None)]]
    assert [o[1] for o in _options("netea:imperial-guard-steel-legion/artillery-battery")[0]] == [
        (("bombard", 3),), (("manticore", 3),)]
    tyranids = choice_rows()["netea:tyranid/tyranid-swarm"]
    assert [o.units for o in tyranids.parts[0].options] == [(("hive-tyrant", 1),), (("tyranid-warriors", 2),)]
    assert (tyranids.choice.low, tyranids.choice.high, tyranids.choice.allowed) == (6, 6, ("hormagaunts",
                                                                                           "termagants"))


def test_up_to_and_between_are_one_option_per_count_priced_as_the_list_prices_them():
    """"Up to three Deathwheels" at "275 points each"; "Between four and eight Raptors" at "175 points for four
    +35 points per extra"; "Four or six Ravagers" at "250 or 350 points"."""
    assert [(o[1], o[3]) for o in _options("netea:chaos-space-marine-black-legion/deathwheels")[0]] == [
        ((("deathwheel", n),), 275 * n) for n in (1, 2, 3)]
    raptors = _options("netea:chaos-space-marine-black-legion/raptor-cult")
    assert [(o[1], o[3]) for o in raptors[0]] == [((("raptors", n),), 175 + 35 * (n - 4)) for n in range(4, 9)]
    assert [(o[0], o[3]) for o in _options("netea:dark-eldar/kabal-flotilla")[0]] == [("4 Ravagers", 250),
                                                                                      ("6 Ravagers", 350)]
    assert [o[1] for o in _options("netea:dark-eldar/ravens")[0]] == [(("raven-fighter", 2),),
                                                                       (("raven-fighter", 3),)]


def test_characters_join_the_group_the_row_says():
    """"one with a Chaos Lord or Sorcerer Lord character" joins the part before it (TP 2.1.1: a character is
    added to a unit); "and one Necron Lord character" and a character named first join the first group."""
    havocs = choice_rows()["netea:chaos-space-marine-black-legion/havocs"]
    assert [[o.label for o in p.options] for p in havocs.parts] == [
        ["4 Havocs"], ["Chaos Lord"], ["2 Chaos Rhinos", "2 Chaos Land Raiders"]]
    assert havocs.parts[1].host == 0
    retinue = _options("netea:chaos-space-marine-black-legion/retinue")
    assert [o[2] for o in retinue[1]] == ["chaos-lord", "sorcerer-lord"]
    cult = choice_rows()["netea:chaos-space-marine-red-corsairs/cult-marines"]
    assert [o.character for o in cult.parts[0].options] == ["chaos-lord", "sorcerer-lord"]
    assert [o.label for o in cult.parts[1].options] == ["8 Berzerkers", "6 Noise Marines", "6 Plague Marines",
                                                         "6 Thousand Sons"]
    assert _options("netea:necron/infantry-phalanx")[1] == [("Necron Lord", (), "necron-lord", None)]


def test_a_package_keeps_its_units_together():
    """"Eight Fire Warriors or Six Fire Warriors and three Devilfish": the Devilfish come with the six only."""
    assert [o[1] for o in _options("netea:tau/fire-warrior-cadre")[0]] == [
        (("fire-warriors", 8),), (("fire-warriors", 6), ("devilfish", 3))]


def test_a_note_after_the_units_is_kept_as_a_note():
    """"Six Death Riders Note: All units in the formation have Scout": six Death Riders, and the note."""
    row = choice_rows()["netea:imperial-guard-death-korps-of-krieg/death-rider-scout-platoon"]
    assert [p.options[0].units for p in row.parts] == [(("death-riders", 6),)]
    assert row.notes == ("All units in the formation have Scout",)


@pytest.mark.parametrize("text, why", [
    ("Any six Leman Russ variants", "not found"),
    ("Two Bunkers and 52cm of Trenches or Minefields", "not found"),
    ("3+2D6 Plague Zombies", "not a number of units"),
])
def test_a_text_that_does_not_read_says_why(text, why):
    names = _names(next(lst for lst in army_lists() if lst["id"] == "imperial-guard-steel-legion")["forces"])
    with pytest.raises(ValueError, match=why):
        read_row(text, names)


def test_the_docs_give_the_number_of_formations_that_can_be_built():
    """docs/library.md and docs/app.md quote the code's count of formations that can be built, and of those that
    need a choice, everywhere they give it."""
    built, choosing = buildable_count()
    assert (built, choosing) == (len(choice_rows()), sum(r.chooses for r in choice_rows().values()))
    quoted = 0
    for page in ("library.md", "app.md"):
        text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
        for m in re.finditer(r"(\d+) of the (?:library's )?(\d+) (?:army-list formations|rows)", text):
            assert (int(m.group(1)), int(m.group(2))) == (built, len(formations())), f"{page}: {m.group(0)}"
            quoted += 1
        for m in re.finditer(r"(\d+) (?:of them )?(?:need|are) (?:a )?choices?", text):
            assert int(m.group(1)) == choosing, f"{page}: {m.group(0)}"
            quoted += 1
    assert quoted >= 4


RAPTORS = "netea:chaos-space-marine-black-legion/raptor-cult"
CHOICE_TOML = """system = "epic"
title = "choice rows from a file"

[[formations]]
library = "netea:chaos-space-marine-black-legion/raptor-cult"
side = "attacker"
choose = CHOOSE

[[formations]]
library = "netea:eldar-biel-tan/aspect-warrior"
side = "defender"
picks = { dark-reapers = 4, howling-banshees = 4 }
"""


def test_a_scenario_file_names_the_choice_and_gets_what_the_app_builds():
    """``choose`` and ``picks`` on a library formation: the same formation the app's picker builds (points, the
    character on the Raptors, the army list's initiative)."""
    from wargame_odds.analysis.app.unit_editor import formation_entry
    from wargame_odds.analysis.epic.library.upgrades import expand_with_upgrades

    entry = {"library": RAPTORS, "side": "attacker", "choose": ["6 Raptors", "Sorcerer Lord"]}
    assert expand_with_upgrades(entry, "formations[0]") == formation_entry(RAPTORS, "attacker",
                                                                           chosen=["6 Raptors", "Sorcerer Lord"])
    aspects = {"library": "netea:eldar-biel-tan/aspect-warrior", "side": "defender",
               "picks": {"netea:dark-reapers": 4, "howling-banshees": 4}}
    assert expand_with_upgrades(aspects, "formations[1]") == formation_entry(
        "netea:eldar-biel-tan/aspect-warrior", "defender", {"dark-reapers": 4, "howling-banshees": 4})


@pytest.mark.parametrize("choose, needles", [
    ('["6 Raptors", "Sorcerer"]', ["formations[0].choose", "'Sorcerer' is not a choice of 'Chaos Lord or Sorcerer "
                                   "Lord'", "allowed: Chaos Lord, Sorcerer Lord"]),
    ('["6 Raptors"]', ["formations[0].choose", "1 choice given", "allowed: one for each of 2"]),
    ('"6 Raptors"', ["formations[0].choose", "'6 Raptors' given", "allowed: one for each of 2"]),
])
def test_a_wrong_choice_in_a_file_is_one_line(tmp_path, choose, needles):
    path = tmp_path / "choice.toml"
    path.write_text(CHOICE_TOML.replace("CHOOSE", choose), encoding="utf-8")
    one_error_line(CliRunner().invoke(main, ["epic", str(path), "-n", "100"]), *needles)


def test_a_choice_row_without_its_choice_says_what_to_choose(tmp_path):
    path = tmp_path / "choice.toml"
    path.write_text(CHOICE_TOML.replace("choose = CHOOSE\n", ""), encoding="utf-8")
    one_error_line(CliRunner().invoke(main, ["epic", str(path), "-n", "100"]), "cannot be built as it is",
                   "choose = [one option of each part]", "Chaos Lord or Sorcerer Lord: Chaos Lord, Sorcerer Lord")
