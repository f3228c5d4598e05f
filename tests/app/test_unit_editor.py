"""Issue 41 §2 without a browser: what a formation card holds and writes (analysis/app/unit_editor.py): Add unit,
profile edits, library choice rows and transports, all ordinary scenario data that the CLI runs with the app's
numbers for the same seed."""
import copy

import pytest
from click.testing import CliRunner

from wargame_odds.analysis.app import unit_editor as ue
from wargame_odds.analysis.app.setups import Setup, example_setup
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.library.formations import expand_formation

TACTICAL = "netea:space-marine-codex-astartes/tactical"
WARBAND = "netea:ork-war-horde/warband"
ASPECT = "netea:eldar-biel-tan/aspect-warrior"
SPEED_FREEKS_WARBAND = "netea:ork-speed-freeks/warband"


def _library_setup() -> dict:
    """Codex Tacticals against an Ork Warband, both from the library, as the Epic tab builds them."""
    return {"system": "epic", "title": "built on the page", "units": {},
            "formations": [ue.formation_entry(TACTICAL, "attacker"), ue.formation_entry(WARBAND, "defender")]}


@pytest.mark.parametrize("ref", [TACTICAL, WARBAND, "netea:space-marine-codex-astartes/assault"])
def test_a_fixed_library_formation_is_what_the_library_expands(ref):
    """A buildable formation without choices is the library's own expansion (formations.expand_formation)."""
    entry = ue.formation_entry(ref, "defender")
    expected = expand_formation({"library": ref}, "x") | {"side": "defender"}
    assert entry == expected


def test_plus_transport_offers_the_lists_ground_transports_and_counts_what_carries_the_infantry():
    """A "plus transport" formation (Tacticals) offers its list's transports; Rhinos carry two infantry units each
    (their datasheet), so six Tactical units need three; the transports are units of the formation (TP 1.7.5)."""
    pick = ue.library_picks()[TACTICAL]
    assert pick.transport and pick.choice is None
    options = ue.transport_options(pick)
    assert options["Rhino (carries 2)"] == "rhino"
    assert "thunderhawk-gunship" not in options.values()  # an aircraft is its own formation, not "plus transport"
    assert ue.transports_needed(pick, "rhino") == 3
    assert ue.transports_needed(pick, "razorback") == 6
    entry = ue.formation_entry(TACTICAL, "attacker", transport=("rhino", 3))
    assert entry["units"][-1] == {"unit": "netea:rhino", "count": 3, "engaged": "bc"}
    setup = Setup("epic", {**_library_setup(), "formations": [entry, ue.formation_entry(WARBAND, "defender")]})
    assert setup.model().units["netea:rhino"].type == "AV"
    with pytest.raises(ue.EditError, match="Trukk is not one of its transports; allowed: .*Rhino"):
        ue.formation_entry(TACTICAL, "attacker", transport=("trukk", 1))
    assert ue.transport_options(ue.library_picks()[WARBAND]) == {}


def test_a_choice_row_takes_its_allowed_units_in_the_numbers_it_allows():
    """'Any eight of the following units: Dark Reapers, ...' (Biel-Tan Aspect Warrior host): eight units of the
    eight aspects in all, no other unit."""
    pick = ue.library_picks()[ASPECT]
    assert (pick.choice.low, pick.choice.high) == (8, 8) and len(pick.choice.allowed) == 8
    entry = ue.formation_entry(ASPECT, "attacker", {"howling-banshees": 4, "striking-scorpions": 4})
    assert entry["units"] == [{"unit": "netea:howling-banshees", "count": 4, "engaged": "bc"},
                              {"unit": "netea:striking-scorpions", "count": 4, "engaged": "bc"}]
    assert entry["army"] == "netea:eldar-biel-tan" and entry["points"] == pick.points
    with pytest.raises(ue.EditError, match="7 units picked; allowed: 8 in all, of Dark Reapers, Dire Avengers"):
        ue.formation_entry(ASPECT, "attacker", {"howling-banshees": 7})
    with pytest.raises(ue.EditError, match="Boyz is not one of its choices"):
        ue.formation_entry(ASPECT, "attacker", {"boyz": 8})
    Setup("epic", {**_library_setup(), "formations": [entry, ue.formation_entry(WARBAND, "defender")]}).model()


def test_a_choice_row_after_fixed_units_keeps_both():
    """'One Nobz, three Boyz and four Trukks, plus any four of the following units: ...' (Speed Freeks)."""
    pick = ue.library_picks()[SPEED_FREEKS_WARBAND]
    assert pick.fixed == (("nobz", 1), ("boyz", 3), ("trukk", 4))
    entry = ue.formation_entry(SPEED_FREEKS_WARBAND, "defender", {"warbikes": 4})
    assert [(g["unit"], g["count"]) for g in entry["units"]] == [
        ("netea:nobz", 1), ("netea:boyz", 3), ("netea:trukk", 4), ("netea:warbikes", 4)]


def test_a_between_row_takes_any_total_in_its_range():
    """'Between four and eight of any of the following units: Chaos Predator, Chaos Land Raider'."""
    ref = "netea:chaos-space-marine-black-legion/armoured-company"
    assert (ue.library_picks()[ref].choice.low, ue.library_picks()[ref].choice.high) == (4, 8)
    assert len(ue.formation_entry(ref, "attacker", {"chaos-predator": 6})["units"]) == 1
    with pytest.raises(ue.EditError, match="9 units picked; allowed: 4 to 8 in all"):
        ue.formation_entry(ref, "attacker", {"chaos-predator": 9})


def test_a_part_to_choose_takes_the_option_the_player_names():
    """'One Baneblade or Shadowsword' (one drop-down); 'Between four and eight Raptors, one with a Chaos Lord or
    Sorcerer Lord character' (two): the count sets the points ('175 points for four +35 points per extra') and the
    character joins the Raptors (TP 2.1.1)."""
    tanks = "netea:imperial-guard-steel-legion/super-heavy-tank-platoon"
    assert [p.text for p in ue.library_picks()[tanks].alternatives] == ["One Baneblade or Shadowsword"]
    assert ue.formation_entry(tanks, "attacker")["units"] == [{"unit": "netea:baneblade", "count": 1, "engaged": "bc"}]
    assert ue.formation_entry(tanks, "attacker", chosen=["Shadowsword"])["units"][0]["unit"] == "netea:shadowsword"
    raptors = ue.formation_entry("netea:chaos-space-marine-black-legion/raptor-cult", "attacker",
                                 chosen=["6 Raptors", "Sorcerer Lord"])
    assert raptors["units"] == [{"unit": "netea:raptors", "count": 6, "engaged": "bc",
                                 "characters": ["netea:sorcerer-lord"]}]
    assert raptors["points"] == 175 + 2 * 35
    with pytest.raises(ue.EditError, match="'Leman Russ' is not a choice of 'One Baneblade or Shadowsword'; "
                                           "allowed: Baneblade, Shadowsword"):
        ue.formation_entry(tanks, "attacker", chosen=["Leman Russ"])
    with pytest.raises(ue.EditError, match="0 choices given; allowed: one for each of 1"):
        ue.formation_entry(tanks, "attacker", chosen=[])


def test_every_option_of_every_choice_row_is_a_setup_the_model_accepts():
    """Each choice row with each option of its parts (and its count choice's lowest total) loads as a setup;
    aircraft and spacecraft rows are turn formations (the model refuses them in an assault, in one sentence)."""
    from wargame_odds.analysis.epic.library.formations import _flies

    built = 0
    for ref, pick in ue.library_picks().items():
        if not (pick.choice or pick.alternatives):
            continue
        for k in range(max([len(p.options) for p in pick.alternatives] or [1])):
            chosen = [p.options[min(k, len(p.options) - 1)].label for p in pick.alternatives]
            picked = {pick.choice.allowed[0]: pick.choice.low} if pick.choice else {}
            entry = ue.formation_entry(ref, "attacker", picked, chosen=chosen)
            if all(_flies(g["unit"].removeprefix("netea:")) for g in entry["units"]):
                continue
            enemy = ue.formation_entry(WARBAND, "defender") | {"name": "Enemy"}
            Setup("epic", {"system": "epic", "title": "t", "units": {}, "formations": [entry, enemy]}).model()
            built += 1
    assert built > 100


def test_add_unit_searches_the_library_and_adds_a_group_where_the_player_says():
    data = _library_setup()
    army_units = ue.unit_options(data, "", "netea:space-marine-codex-astartes")
    assert "netea:rhino" in army_units.values() and "netea:boyz" not in army_units.values()
    found = ue.unit_options(data, "rhino", "netea:space-marine-codex-astartes")
    assert found and all("rhino" in label.lower() for label in found)
    assert "netea:rhino" in found.values()
    assert not any("CH" in label.split(" · ")[1] for label in ue.unit_options(data, "chaplain"))  # characters attach
    ue.add_group(data, 0, "netea:rhino", 2, "ff")
    assert data["formations"][0]["units"][-1] == {"unit": "netea:rhino", "count": 2, "engaged": "ff"}
    model = Setup("epic", data).model()
    assert model.formations[0].units[-1].engaged == "ff"
    for bad, message in (((0, "", 1, "bc"), "pick a unit"), ((0, "netea:rhino", 0, "bc"), "1 to 100"),
                         ((0, "netea:rhino", 1, "near"), "allowed: bc"), ((5, "netea:rhino", 1, "bc"), "no such")):
        with pytest.raises(ue.EditError, match=message):
            ue.add_group(data, *bad)


def test_a_setups_own_units_are_offered_and_shown_as_data():
    data = copy.deepcopy(example_setup("epic/assault_marines_vs_warband").data)
    data["units"]["\u202eevil"] = copy.deepcopy(data["units"]["boyz"])
    labels = ue.unit_options(data, "")
    assert labels["boyz · this setup's unit"] == "boyz"
    assert "\\u202eevil · this setup's unit" in labels


def test_editing_a_library_units_profile_makes_this_formations_own_copy():
    """Armour, CC, FF and a weapon's count: the first edit copies the library profile into [units] under a new
    key that only this formation's groups name (the enemy's Tacticals, if any, keep the library's)."""
    data = _library_setup()
    data["formations"].append(ue.formation_entry(TACTICAL, "defender") | {"name": "Tactical 2", "role": "support"})
    key = ue.set_profile_value(data, 0, "netea:tactical", "armour", 3)
    assert key == "Tactical (edited)"
    assert data["formations"][0]["units"][0]["unit"] == "Tactical (edited)"
    assert data["formations"][2]["units"][0]["unit"] == "netea:tactical"
    assert ue.set_profile_value(data, 0, key, "cc", 2) == key  # later edits change that copy
    assert ue.set_profile_value(data, 0, key, "ff", None) == key  # "–": no FF attack
    line = next(k for k, w in enumerate(ue.profile(data, key)["weapons"]))
    assert ue.set_weapon_count(data, 0, key, line, 2) == key
    model = Setup("epic", data).model()
    edited, library = model.units["Tactical (edited)"], model.units["netea:tactical"]
    assert (edited.armour, edited.cc, edited.ff) == (3, 2, None)
    assert (library.armour, library.cc, library.ff) == (4, 4, 4)
    assert edited.weapons[line].count == 2 and library.weapons[line].count == 1
    assert ue.set_profile_value(data, 2, "netea:tactical", "armour", 4) == "netea:tactical"  # unchanged: no copy
    with pytest.raises(ue.EditError, match="allowed: 2 to 6"):
        ue.set_profile_value(data, 0, key, "armour", 7)
    with pytest.raises(ue.EditError, match="allowed: armour, cc, ff"):
        ue.set_profile_value(data, 0, key, "speed", 3)
    with pytest.raises(ue.EditError, match="allowed: 1 to 20"):
        ue.set_weapon_count(data, 0, key, line, 0)


def test_special_rules_are_toggles_in_player_words_on_this_formations_copy():
    """Every rule the engine models (special_rules.toml [modelled]) is a toggle named in words ("Reinforced
    Armour"); switching one on a library unit edits this formation's copy, as the other profile edits do."""
    from wargame_odds.analysis.epic.profiles import special_rule_catalogue

    assert sorted(ue.special_rules().values()) == sorted(special_rule_catalogue()["modelled"])
    assert ue.special_rules()["Invulnerable Save"] == "invulnerable-save"
    data = _library_setup()
    key = ue.set_special_rule(data, 0, "netea:tactical", "fearless", True)
    assert key == "Tactical (edited)"
    assert ue.set_special_rule(data, 0, key, "invulnerable-save", True) == key
    assert data["units"][key]["special"] == ["fearless", "invulnerable-save"]
    ue.set_special_rule(data, 0, key, "fearless", False)
    model = Setup("epic", data).model()
    assert model.units[key].special == ["invulnerable-save"]
    assert "special" not in ue.profile({}, "netea:tactical")  # the library's profile is unchanged
    with pytest.raises(ue.EditError, match="'walker' is not a rule the page sets; allowed: .*Reinforced Armour"):
        ue.set_special_rule(data, 0, key, "walker", True)


def test_a_war_engines_damage_capacity_and_void_shields():
    """A Warhound's damage capacity and void shields (TP 3.1, TP-SR Imperial Void Shields); only a war engine
    has them."""
    data = _library_setup()
    ue.add_group(data, 0, "netea:warhound-class-titan", 1, "bc")
    key = ue.set_war_engine_value(data, 0, "netea:warhound-class-titan", "damage_capacity", 5)
    assert ue.set_war_engine_value(data, 0, key, "void_shields", 0) == key
    model = Setup("epic", data).model()
    assert (model.units[key].damage_capacity, model.units[key].void_shields) == (5, 0)
    assert ue.profile({}, "netea:warhound-class-titan")["damage_capacity"] == 3
    with pytest.raises(ue.EditError, match="only a war engine has damage capacity; Tactical is INF"):
        ue.set_war_engine_value(data, 0, "netea:tactical", "damage_capacity", 2)
    with pytest.raises(ue.EditError, match="allowed: a whole number from 1 to 20"):
        ue.set_war_engine_value(data, 0, key, "damage_capacity", 0)
    with pytest.raises(ue.EditError, match="allowed: damage_capacity, void_shields"):
        ue.set_war_engine_value(data, 0, key, "shadowfields", 1)


def test_a_character_joins_a_group_and_comes_off_again():
    """A Chaplain on the Tacticals (TP 2.1.1: it adds its weapons and abilities to a unit); the army list's
    characters are offered; a unit that is not a character, a fifth character and a bad index are one message."""
    data = _library_setup()
    offered = ue.character_options(data, "netea:space-marine-codex-astartes")
    assert "netea:chaplain" in offered.values() and "netea:tactical" not in offered.values()
    ue.add_character(data, 0, 0, "netea:chaplain")
    assert data["formations"][0]["units"][0]["characters"] == ["netea:chaplain"]
    model = Setup("epic", data).model()
    assert model.formations[0].units[0].characters == ["netea:chaplain"]
    assert model.units["netea:chaplain"].type == "CH"
    with pytest.raises(ue.EditError, match="'Tactical' is not a character"):
        ue.add_character(data, 0, 0, "netea:tactical")
    for _ in range(3):
        ue.add_character(data, 0, 0, "netea:captain")
    with pytest.raises(ue.EditError, match="4 characters already; allowed: at most 4"):
        ue.add_character(data, 0, 0, "netea:captain")
    ue.remove_character(data, 0, 0, 0)
    assert data["formations"][0]["units"][0]["characters"] == ["netea:captain"] * 3
    with pytest.raises(ue.EditError, match=r"characters\[7\]: no such character"):
        ue.remove_character(data, 0, 0, 7)
    with pytest.raises(ue.EditError, match=r"units\[9\]: no such group"):
        ue.add_character(data, 0, 9, "netea:chaplain")


def test_the_cli_run_of_the_written_toml_gives_the_apps_digits(tmp_path):
    """The setup built with every kind of edit (a choice row, a transport, Add unit, armour, a weapon's count, special
    rules, a character, a war engine's damage capacity), run as the app runs it and as the CLI runs the downloaded TOML
    with the same seed: the same CSV, digit for digit."""
    from wargame_odds.analysis.app import runs
    from wargame_odds.analysis.app.render import render

    data = {"system": "epic", "title": "built on the page", "units": {}, "formations": [
        ue.formation_entry(TACTICAL, "attacker", transport=("rhino", 3)),
        ue.formation_entry(ASPECT, "defender", {"howling-banshees": 4, "dark-reapers": 4})]}
    ue.add_group(data, 0, "netea:devastator", 1, "ff")
    ue.set_profile_value(data, 0, "netea:tactical", "armour", 3)
    ue.set_weapon_count(data, 1, "netea:dark-reapers", 0, 2)
    ue.set_special_rule(data, 0, "Tactical (edited)", "invulnerable-save", True)
    ue.set_special_rule(data, 1, "netea:howling-banshees", "fearless", True)
    ue.add_character(data, 0, 0, "netea:chaplain")
    ue.add_group(data, 1, "netea:revenant-titan", 1, "bc")
    ue.set_war_engine_value(data, 1, "netea:revenant-titan", "damage_capacity", 2)
    data["formations"][1]["units"][0]["engaged"] = "ff"
    setup = Setup("epic", data)
    path = tmp_path / "built.toml"
    path.write_text(setup.toml(), encoding="utf-8")
    shown = render(runs.simulate("epic", setup.model(), trials=3000, seed=11, precision=None))
    cli = CliRunner().invoke(main, ["epic", str(path), "-n", "3000", "--seed", "11", "--csv"])
    assert cli.exit_code == 0, cli.stderr
    assert shown.csv == cli.stdout


def test_a_unit_from_another_army_list_is_one_message_naming_the_lists_that_hold_it():
    from wargame_odds.analysis.intake.errors import UserError

    data = _library_setup()
    ue.add_group(data, 0, "netea:boyz", 2, "bc")  # Ork Boyz in a Codex Astartes formation
    with pytest.raises(UserError, match="netea:boyz is in none of the forces of army list "
                                        "netea:space-marine-codex-astartes .*allowed: .*netea:ork-war-horde"):
        Setup("epic", data).model()


def test_docs_app_md_gives_the_counts_of_the_formations_the_page_builds():
    """docs/app.md's numbers are the code's."""
    from pathlib import Path

    from wargame_odds.analysis.epic.library.formations import formations

    picks = ue.library_picks()
    text = " ".join((Path(__file__).parents[2] / "docs" / "app.md").read_text(encoding="utf-8").split())
    assert (f"{len(picks)} of the library's {len(formations())} rows, of which "
            f"{sum(p.choice is not None or bool(p.alternatives) for p in picks.values())} are choices") in text
    assert f"and {sum(p.transport for p in picks.values())} take a transport" in text
