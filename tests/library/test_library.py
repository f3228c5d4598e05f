"""The NetEA unit library: conversion of every unit, library names in scenarios, search commands."""
from importlib.resources import files

import pytest
from click.testing import CliRunner

import wargame_odds.analysis.epic as epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.epic.profiles import UnitProfile, special_rule_catalogue
from wargame_odds.analysis.epic.library.formations import formations
from wargame_odds.analysis.epic.library.netea import field_value, convert, mapping, units

from library_helpers import one_error_line

ALL_UNITS = sorted(units())


def test_library_data_and_licence_are_packaged():
    folder = files("wargame_odds.analysis.epic.library").joinpath("netea")
    assert "ISC License" in folder.joinpath("LICENSE").read_text("utf-8")
    assert "Copyright (c) 2014-2019, David Susco" in folder.joinpath("LICENSE").read_text("utf-8")
    assert len(ALL_UNITS) == 559


@pytest.mark.parametrize("unit_id", ALL_UNITS)
def test_every_unit_converts_or_says_which_rule_it_lacks(unit_id):
    conv = convert(unit_id)
    unit = units()[unit_id]
    catalogue = special_rule_catalogue()
    known = set(catalogue["modelled"]) | set(catalogue["no_assault_effect"])
    if conv.ok:
        assert isinstance(conv.profile, UnitProfile)
        assert conv.summary() == "ok"
    else:
        assert conv.unsupported and all(u.rule and u.reason for u in conv.unsupported)
        assert conv.summary().startswith("cannot model: ")
    if conv.profile is None:  # a type that never assaults
        assert [u.where for u in conv.unsupported] == ["type"]
        return
    # No unit rule disappears silently: kept, ignored with a reason, reported, or a profile field
    # (void shields, power fields, shadowfields, damage capacity) holding the datasheet's value.
    ignored = {r for r, _ in conv.ignored}
    reported = {u.rule for u in conv.unsupported}
    for rule in unit["special_rules"]:
        kept = rule in conv.profile.special
        field = next((f for p, f in mapping()["field_rules"].items() if rule.startswith(p)), None)
        as_field = field is not None and getattr(conv.profile, field) == field_value(unit, field)
        assert kept or as_field or rule in ignored or rule in reported, rule
        assert not (rule in known and rule not in conv.profile.special)
    for rule in conv.ignored:
        assert rule[0] in mapping()["ignored_rules"]


def test_conversions_map_assault_lines():
    nobz = convert("nobz").profile
    assert (nobz.cc, nobz.armour, nobz.special) == (3, 4, ["leader"])
    assert [(e.count, e.range, e.macro_weapon) for e in nobz.extra_attacks] == [(1, "bc", False)]
    terminator = convert("terminator").profile
    assert [(e.count, e.range, e.macro_weapon) for e in terminator.extra_attacks] == [(1, "bc", True)]
    assert convert("wyches").profile.armour == 5  # assault-only alternative armour
    titan = convert("warlord-class-titan")
    assert titan.ok and (titan.profile.damage_capacity, titan.profile.void_shields) == (8, 6)
    thunderbolt = convert("thunderbolt-fighter")  # an aircraft in flight (docs/epic-turn.md §9)
    assert thunderbolt.ok and (thunderbolt.profile.type, thunderbolt.profile.aircraft) == ("AV", "fighter-bomber")
    assert [u.rule for u in convert("drop-pod").unsupported] == ["Special"]


TYPED = """
system = "epic"
[units.tac]
type = "INF"
armour = 4
cc = 4
ff = 4
speed = 15
[units.boy]
type = "INF"
armour = 6
cc = 4
ff = 6
speed = 15
[[formations]]
name = "Marines"
side = "attacker"
initiative = 1
army_rules = ["they-shall-know-no-fear"]
units = [{ unit = "tac", count = 6, engaged = "bc" }]
[[formations]]
name = "Orks"
side = "defender"
initiative = 3
army_rules = ["mob-rule"]
units = [{ unit = "boy", count = 8, engaged = "bc" }]
"""


def test_library_units_simulate_exactly_like_typed_stats():
    """Library units, their army rules inferred (issue 11 §3), give the typed scenario's counts."""
    named = TYPED.replace('"tac"', '"netea:tactical"').replace('"boy"', '"netea:boyz"')
    named = named[:named.index("[[formations]]")].split("[units.tac]")[0] + named[named.index("[[formations]]"):]
    named = "\n".join(line for line in named.splitlines() if not line.startswith("army_rules"))
    typed = epic.simulate(epic.loads(TYPED), trials=5000, seed=4)
    library = epic.simulate(epic.loads(named), trials=5000, seed=4)
    assert set(epic.loads(named).units) == {"netea:tactical", "netea:boyz"}
    assert typed.table().equals(library.table())


def test_library_formation_expands_with_points():
    warband = formations()["netea:ork-war-horde/warband"]
    assert warband.problem is None and warband.points == 200 and warband.initiative == 3
    assert warband.units == (("nobz", 2), ("boyz", 6), ("grotz", 2))
    scenario = epic.loads(TYPED.split("[[formations]]\nname = \"Orks\"")[0]
                         + '[[formations]]\nlibrary = "netea:ork-war-horde/warband"\nside = "defender"\n')
    orks = scenario.formations[1]
    assert (orks.name, orks.points, orks.army_rules, orks.initiative) == ("Warband", 200, ["mob-rule"], 3)
    assert orks.army == "netea:ork-war-horde"
    assert [(g.unit, g.count, g.engaged) for g in orks.units] == [
        ("netea:nobz", 2, "bc"), ("netea:boyz", 6, "bc"), ("netea:grotz", 2, "bc")]


@pytest.mark.parametrize("ref, needle", [("netea:boyzz", "unknown library unit 'netea:boyzz'"),
                                         ("netea:drop-pod", "Special (type: drop pods")])
def test_bad_library_unit_is_one_clear_line(tmp_path, ref, needle):
    path = tmp_path / "bad.toml"
    path.write_text(TYPED.replace('unit = "boy"', f'unit = "{ref}"'))
    result = CliRunner().invoke(main, ["epic", str(path), "-n", "100"])
    one_error_line(result, str(path), "formations[1].units[0].unit", needle, "allowed: ")


def test_search_commands():
    runner = CliRunner()
    out = runner.invoke(main, ["units", "search", "boyz"])
    assert out.exit_code == 0 and "netea:boyz" in out.output and "ok" in out.output
    out = runner.invoke(main, ["units", "search", "drop-pod", "--csv"])
    assert out.exit_code == 0 and "cannot model: Special (type: drop pods" in out.output
    out = runner.invoke(main, ["formations", "search", "warband"])
    assert out.exit_code == 0 and "netea:ork-war-horde/warband" in out.output and "200" in out.output
    assert "mob-rule" in out.output  # the army rules the formation brings (issue 11 §3)
    out = runner.invoke(main, ["units", "show", "nobz"])
    assert out.exit_code == 0 and '"count":1,"range":"bc"' in out.output.replace(" ", "")
    out = runner.invoke(main, ["units", "show", "netea:warlord-class-titan"])  # issue 14 §3
    assert out.exit_code == 0 and "void shields: 6" in out.output and "damage capacity: 8" in out.output
    assert "critical hit: end_phase_breach, splash_hit_on = 4" in out.output
    out = runner.invoke(main, ["units", "show", "gargant"])
    assert "power fields: D3+3" in out.output and "critical hit: end_phase_fire" in out.output
    one_error_line(runner.invoke(main, ["units", "show", "nobzz"]), "units show", "'unit'", "netea:nobz")
