"""Issue 12 §4: one field-path grammar for the command line, the API and report definitions."""
import pytest

from wargame_odds.analysis.intake.fieldpath import ByName, parse, with_value
from wargame_odds.analysis.decisions.systems import SYSTEMS
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.reports.definition import set_field, split_field

DATA = {"formations": [{"name": "Marines", "blast_markers": 0}, {"name": "Warband", "blast_markers": 2,
                                                                  "units": [{"count": 6}]}],
        "rules": {"max_rounds": 10}}


@pytest.mark.parametrize("path, parts", [
    ("formations[Warband].blast_markers", ["formations", ByName("Warband"), "blast_markers"]),
    ("formations[1].units[-1].count", ["formations", 1, "units", -1, "count"]),
    ("formations[Assault Detachment].broken", ["formations", ByName("Assault Detachment"), "broken"]),
    ("tables.morale.charger_mods.general_attached", ["tables", "morale", "charger_mods", "general_attached"]),
])
def test_grammar_reads_keys_indexes_and_names(path, parts):
    got = parse(path)
    assert got == parts
    assert [type(p) for p in got] == [type(p) for p in parts]


@pytest.mark.parametrize("bad", ["", ".rules", "rules..max_rounds", "formations[0]x", "[0].x", "formations[]",
                                 "formations.[0]", "formations[0", "rules]"])
def test_grammar_rejects_malformed_paths(bad):
    with pytest.raises(ValueError):
        parse(bad)


def test_by_name_and_by_index_set_the_same_field_everywhere():
    """formations[Warband] and formations[1] are one field for the API/CLI (with_value), the report
    definitions (set_field) and a loaded Epic scenario (the decisions' System adapter)."""
    by_name = with_value(DATA, "formations[Warband].blast_markers", 3, "s.toml")
    by_index = with_value(DATA, "formations[1].blast_markers", 3, "s.toml")
    assert by_name == by_index and by_name["formations"][1]["blast_markers"] == 3
    assert DATA["formations"][1]["blast_markers"] == 2  # a copy
    report_data = {"formations": [dict(f) for f in DATA["formations"]]}
    set_field(report_data, "formations[Warband].blast_markers", 3)
    assert report_data["formations"][1]["blast_markers"] == 3
    assert split_field("formations[Warband].blast_markers") == parse("formations[Warband].blast_markers")


def test_epic_system_sets_a_formation_by_name():
    epic = SYSTEMS["epic"]
    model, source = epic.load("analysis/scenarios/epic/assault_marines_vs_warband.toml")
    names = [f.name for f in model.formations]
    changed = epic.with_value(model, source, f"formations[{names[-1]}].blast_markers", 3)
    assert changed.formations[-1].blast_markers == 3
    assert changed == epic.with_value(model, source, f"formations[{len(names) - 1}].blast_markers", 3)


@pytest.mark.parametrize("path, allowed", [
    ("formations[Orks].blast_markers", "names in formations: Marines, Warband"),
    ("formations[5].blast_markers", "indexes 0..1 of formations"),
    ("rules.max_round", "keys of rules: max_rounds"),
])
def test_missing_field_is_one_error_naming_what_exists(path, allowed):
    with pytest.raises(UserError) as err:
        with_value(DATA, path, 1, "s.toml")
    assert "s.toml" in str(err.value) and path in str(err.value) and allowed in str(err.value)
