"""Library units bring their army (issue 11 §3): army rules and initiative from the NetEA army lists."""
import json

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.library.armies import force_army_rules, list_forces_of, list_initiative

from library_helpers import one_error_line

SCENARIO = """
system = "epic"
[[formations]]
name = "Tactical"
side = "attacker"
{marines}
units = [{units}]
[[formations]]
name = "Mob"
side = "defender"
initiative = 3
army_rules = []
units = [{{ unit = "netea:boyz", count = 8, engaged = "bc" }}]
"""
TACTICAL = '{ unit = "netea:tactical", count = 6, engaged = "bc" }'
LEMAN_RUSS = '{ unit = "netea:leman-russ", count = 1, engaged = "bc" }'


def scenario(marines: str, units: str = TACTICAL) -> str:
    return SCENARIO.format(marines=marines, units=units)


def test_tactical_formation_gets_they_shall_know_no_fear_and_says_so():
    """TP-SR They Shall Know No Fear: netea:tactical is listed only by Space Marine forces, all with
    TSKNF, so a formation of them without army or army_rules gets it, and the result notes say so."""
    loaded = epic.loads(scenario("initiative = 1"))
    assert loaded.formations[0].army_rules == ["they-shall-know-no-fear"]
    result = epic.simulate(loaded, trials=2000, seed=1)
    said = [n for n in result.notes if n.startswith("Tactical: ")]
    assert len(said) == 1 and "they-shall-know-no-fear" in said[0] and "netea:tactical" in said[0]
    typed = epic.simulate(epic.loads(scenario('initiative = 1\narmy_rules = ["they-shall-know-no-fear"]')),
                          trials=2000, seed=1)
    assert typed.table().equals(result.table())
    assert not any(n.startswith("Tactical: ") for n in typed.notes)


def test_empty_army_rules_means_none():
    """army_rules = [] is honoured: no inferred rules, no note, with or without army."""
    for marines in ("initiative = 1\narmy_rules = []",
                    'army = "netea:space-marine-codex-astartes"\narmy_rules = []'):
        loaded = epic.loads(scenario(marines))
        assert loaded.formations[0].army_rules == [] and loaded.formations[0].initiative == 1
        assert not loaded.notes


def test_army_gives_the_lists_rules_and_initiative():
    """Army-list initiative rating (TP 1.2.2, army lists) and army rules come from army = LIST;
    the scenario's own initiative and army_rules win."""
    loaded = epic.loads(scenario('army = "netea:space-marine-codex-astartes"'))
    marines = loaded.formations[0]
    assert (marines.army, marines.initiative, marines.army_rules) == (
        "netea:space-marine-codex-astartes", 1, ["they-shall-know-no-fear"])
    assert not loaded.notes
    own = epic.loads(scenario('army = "netea:space-marine-codex-astartes"\ninitiative = 2')).formations[0]
    assert (own.initiative, own.army_rules) == (2, ["they-shall-know-no-fear"])
    orks = epic.loads(scenario('army = "netea:ork-war-horde"\narmy_rules = []',
                              '{ unit = "netea:boyz", count = 4, engaged = "bc" }'))
    assert orks.formations[0].initiative == 3
    assert not orks.notes  # the Ork rating modifiers are Power of the Waaagh! (actions) and Mob Rule


def test_initiative_modifiers_the_engine_does_not_cover_are_noted():
    """Army-list initiative modifiers: the Ork ones are covered (netea_epic.toml says why); a Necron
    formation's rating gets a note asking the user to check it."""
    assert list_initiative("ork-war-horde", ["ork"], "Warband") == (3, [])
    rating, notes = list_initiative("necron", ["necron"], "Warriors")
    assert rating == 1 and len(notes) == 1 and "modifiers" in notes[0] and "netea:necron" in notes[0]


def test_initiative_exceptions_by_force_and_by_formation_type():
    """Army-list initiative exceptions: one naming a whole force (Titan Legion battlegroups of an
    Imperial Guard list: 1+) applies; one naming formation types (Eldar Aspect Warriors) is noted."""
    assert list_initiative("imperial-guard-steel-legion", ["imperial-guard"], "X") == (2, [])
    assert list_initiative("imperial-guard-steel-legion", ["titan-legion"], "X") == (1, [])
    assert list_initiative("space-marine-codex-astartes", ["titan-legion"], "X") == (1, [])
    rating, notes = list_initiative("eldar-biel-tan", ["eldar"], "Guardians")
    assert rating == 2 and len(notes) == 1 and "Aspect Warrior" in notes[0] and "1+" in notes[0]


def test_army_rules_come_from_the_units_own_force():
    """TSKNF belongs to the Space Marine force section, not to the Titan Legion units of the same list;
    the Feral Ork and Gargant Mob 'Mob Rule' is the Ork Mob Rule (TP-SR Mob Rule)."""
    assert list_forces_of("space-marine-codex-astartes", ["warhound-class-titan"], "x") == ["titan-legion"]
    assert force_army_rules("titan-legion") == ()
    assert force_army_rules("space-marine") == ("they-shall-know-no-fear",)
    for force in ("ork", "feral-ork", "gargant-mob", "speed-freek"):
        assert force_army_rules(force) == ("mob-rule",)


@pytest.mark.parametrize("marines, units, needles", [
    ("initiative = 1", f"{TACTICAL}, {LEMAN_RUSS}",
     ("field 'formations[0]'", "formation 'Tactical'", "different army rules", "army = ", "army_rules = []")),
    ('army = "netea:space-marine-codx-astartes"', TACTICAL,
     ("field 'formations[0].army'", "unknown army list", "netea:space-marine-codex-astartes")),
    ('army = "netea:ork-war-horde"', TACTICAL,
     ("field 'formations[0].army'", "netea:tactical is in none of the forces", "netea:space-marine-codex-astartes")),
])
def test_ambiguous_or_wrong_army_is_one_clear_line(tmp_path, marines, units, needles):
    """A formation whose library units' forces disagree on army rules (netea:leman-russ is Imperial
    Guard, netea:tactical Space Marine) is rejected: one line naming it, exit 2."""
    path = tmp_path / "mixed.toml"
    path.write_text(scenario(marines, units))
    one_error_line(CliRunner().invoke(main, ["epic", str(path), "-n", "100"]), str(path), *needles)


def test_notes_reach_the_json(tmp_path):
    path = tmp_path / "tactical.toml"
    path.write_text(scenario("initiative = 1"))
    out = CliRunner().invoke(main, ["epic", str(path), "-n", "500", "--json"])
    assert out.exit_code == 0, out.output
    assert any(n.startswith("Tactical: army rules they-shall-know-no-fear") for n in json.loads(out.stdout)["notes"])


def test_initiative_exception_naming_the_library_formation_type():
    """Army-list initiative exceptions that name formation types apply to a library formation of
    that type (Biel-Tan Phantom and Warlock 1+, Dark Eldar Executor 1+); other types keep the
    list's rating and a note; an 'except for' phrase is never matched."""
    from wargame_odds.analysis.epic.library.armies import _names_type
    from wargame_odds.analysis.epic.library.formations import expand_formation, formations

    for ref in ("netea:eldar-biel-tan/phantom", "netea:eldar-biel-tan/0-1-warlock", "netea:dark-eldar/executor"):
        form = formations()[ref]
        assert (form.initiative, form.initiative_notes) == (1, ()), ref
        assert expand_formation({"library": ref, "side": "attacker"}, "f")["initiative"] == 1
    guardian = formations()["netea:eldar-biel-tan/guardian"]
    assert guardian.initiative == 2 and len(guardian.initiative_notes) == 1
    assert "initiative" not in expand_formation({"library": guardian.ref, "side": "attacker"}, "f")
    assert _names_type("Tzeentch Doomwing, Tzeentch Firelord and Traitor Navy aircraft formations",
                       "Tzeentch Doomwings")
    assert not _names_type("All Mechanicus ally formations, except for Cataphractii", "Cataphractii")


def test_army_names_read_without_the_datas_markup():
    """The data writes "13<sup>th</sup> Black Crusade"; pickers show "13th Black Crusade" (user text is data)."""
    from wargame_odds.analysis.app.epic_tab import picker_choices
    from wargame_odds.analysis.app.list_tab import army_choices
    from wargame_odds.analysis.epic.library.netea import army_lists, army_name

    crusade = next(a for a in army_lists() if "<sup>" in a.get("name", ""))
    assert army_name(crusade).startswith("13th Black Crusade")
    assert army_name({"id": "x", "name": "A &amp; B"}) == "A & B"
    assert army_name({"id": "plain-id"}) == "plain-id"
    labels = list(army_choices()) + list(picker_choices())
    assert any("13th Black Crusade" in label for label in labels)
    assert not any("<" in label or ">" in label for label in labels)
